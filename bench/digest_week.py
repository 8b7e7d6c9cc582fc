"""The weekly digest over a synthetic week of traffic (issue 31): 500 questions through the whole bot (offline,
the bundled e5) on the e-manual, then the digest, with every cluster printed for checking by hand.

    .venv/bin/python -m bench.digest_week [--data DIR] [--distances 0.04,0.05,0.06] [--out bench/results/digest-week.md]

The week: 250 real shoppers' questions about Samsung TVs (emanual/amazon_user_questions.jsonl, mostly not answered by
the manual; many ask the same things in other words), 200 of the manual's expert questions (Normal ones and their
Paraphrased versions, so the same question comes in several wordings), 50 off-topic questions written here. A fixed
seed picks them; 5 % of the answers are rated not helpful; three refused threads get an expert's answer drafted.

Printed: the digest as the maintainers get it, every group of more than one question (for the hand check), and for
the expert questions, whose paraphrases are known, pairwise precision and recall of the grouping at each distance.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench import emanual
from bench.shared import DEFAULT_DATA, cached_embedder

SEED = 31
AMAZON = Path("emanual") / "amazon_user_questions.jsonl"
OFF_TOPIC = [
    "What's the weather going to be like in Lisbon this weekend?", "Can you recommend a good pizza place nearby?",
    "Who won the football world cup in 2018?", "How many calories are in a banana?",
    "Write me a poem about autumn leaves", "What is the capital of Australia?",
    "How do I file my taxes online?", "Translate 'good morning' into Japanese", "What time is it in Tokyo right now?",
    "How do I bake sourdough bread?", "Tell me a joke about cats", "What's a good name for a golden retriever?",
    "How far is the moon from the earth?", "Which stocks should I buy this year?", "How do I fix a leaking tap?",
    "What is the best laptop for programming?", "Can you help me with my chemistry homework?",
    "How do I change a flat tyre on my bike?", "What's the plot of Hamlet?", "How do I get rid of ants in the kitchen?",
    "Is it going to rain tomorrow?", "What should I cook for dinner tonight?", "How do vaccines work?",
    "Recommend a podcast about history", "How do I learn to play the guitar?", "What's the meaning of life?",
    "How tall is the Eiffel Tower?", "How do I renew my passport?", "What are the rules of chess?",
    "Where can I buy cheap flights to Rome?", "How do I train for a marathon?", "Who painted the Mona Lisa?",
    "What's the difference between a virus and bacteria?", "How many players are on a basketball team?",
    "How do I make cold brew coffee?", "Give me a workout plan for beginners", "What's the speed of light?",
    "How do I unclog a drain?", "Which programming language should I learn first?", "How do I grow tomatoes?",
    "What is bitcoin?", "How do I write a cover letter?", "Why is the sky blue?", "How do I meditate?",
    "What is the population of Brazil?", "How do I remove a red wine stain?", "What's the best way to learn French?",
    "How long do I boil an egg?", "What's the tallest mountain in Africa?", "How do I set up a fish tank?",
]  # fmt: skip


def week_of_questions(data: Path, rng: random.Random) -> list[dict[str, str]]:
    """500 questions, shuffled: (question, source) with source amazon / manual / paraphrase / off_topic, and for the
    manual's questions the `gold` (its answer text: a question and its paraphrases share it)."""
    shoppers = [json.loads(line)["question"].strip() for line in (data / AMAZON).read_text().splitlines() if line]
    shoppers = [q for q in dict.fromkeys(shoppers) if 3 <= len(q.split()) <= 40]
    rows = [json.loads(line) for line in (data / emanual.QA).read_text().splitlines() if line.strip()]
    normal = {r["answer"]: r for r in rows if r["qa_set"] == "Normal Q&A"}
    paraphrased = [r for r in rows if r["qa_set"] == "Paraphrased Q&A" and r["answer"] in normal]
    pairs = rng.sample(paraphrased, 100)  # 100 questions asked twice, in two wordings
    week = [{"question": q, "source": "amazon", "gold": ""} for q in rng.sample(shoppers, 250)]
    for row in pairs:
        week.append({"question": normal[row["answer"]]["question"].strip(), "source": "manual", "gold": row["answer"]})
        week.append({"question": row["question"].strip(), "source": "paraphrase", "gold": row["answer"]})
    week += [{"question": q, "source": "off_topic", "gold": ""} for q in OFF_TOPIC]
    rng.shuffle(week)
    assert len(week) == 500, len(week)
    return week


def pairwise(groups: list[list[int]], gold: list[str]) -> tuple[float, float, int]:
    """Precision and recall of "asked the same thing" pairs, over the questions with a known answer."""
    known = [i for i, g in enumerate(gold) if g]
    same = {(a, b) for a, b in itertools.combinations(known, 2) if gold[a] == gold[b]}
    together = {(min(a, b), max(a, b)) for g in groups for a, b in itertools.combinations(g, 2) if gold[a] and gold[b]}
    hits = len(same & together)
    return (hits / len(together) if together else 1.0), (hits / len(same) if same else 1.0), len(same)


async def run(data: Path, distances: list[float]) -> str:
    from bot.app import build_app
    from bot.jobs.clusters import cluster_by_meaning
    from bot.jobs.digest import build_digest, render_digest
    from bot.settings import Settings
    from pipeline.messages import Inbound, InboundKind, ReplyKind
    from pipeline.types import ActionKind
    from storage.answers.model import AnswerDraft

    rng = random.Random(SEED)
    week = week_of_questions(data, rng)
    manual = emanual.load(data)
    lines: list[str] = []

    def say(text: str = "") -> None:
        lines.append(text)
        print(text, flush=True)

    with tempfile.TemporaryDirectory(prefix="docbot-digest-week-") as scratch:
        seed = Path(scratch) / "emanual.jsonl"
        seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in manual.corpus), encoding="utf-8")
        settings = Settings(_env_file=None, data_dir=Path(scratch) / "data", user_rate_limit="1000/minute",
                            workspace_rate_limit="100000/minute")  # fmt: skip
        app = await build_app(settings, embedder=cached_embedder("e5"))
        try:
            await app.ingest([str(seed)])
            await app.retriever.wait_for_levels()
            started = datetime.now(UTC)
            clock = time.perf_counter()
            kinds: Counter[str] = Counter()
            by_source: Counter[tuple[str, str]] = Counter()
            refused: list[tuple[Inbound, str]] = []
            for number, item in enumerate(week):
                asked = Inbound("slack", "T1", "C-help", None, f"{1800000000 + number}.000100", f"U{number}",
                                f"user{number}", item["question"], datetime.now(UTC))  # fmt: skip
                reply = await app.service.handle_message(asked)
                assert reply is not None
                kinds[reply.kind.value] += 1
                by_source[(item["source"], reply.kind.value)] += 1
                if reply.kind is ReplyKind.REFUSAL and item["source"] == "amazon":
                    refused.append((asked, item["question"]))
                if reply.kind is ReplyKind.ANSWER and rng.random() < 0.05:
                    (down,) = [a for a in reply.actions if a.kind is ActionKind.NOT_HELPFUL]
                    press = Inbound("slack", "T1", "C-help", asked.message_id, f"{1800000000 + number}.000200",
                                    asked.user_id, asked.user_name, "", datetime.now(UTC), kind=InboundKind.ACTION,
                                    action_id=down.id)  # fmt: skip
                    await app.service.handle_action(press)
            seconds = time.perf_counter() - clock
            for number, (asked, question) in enumerate(refused[:3]):
                await app.team.answers.draft(AnswerDraft(
                    question=question, answer="An answer from the team for the digest's review section.",
                    platform="slack", workspace_id="T1", channel_id="C-help", channel_name="help",
                    thread_key=asked.thread_key, answer_message_id=f"expert-{number}", author_id="U-ALICE",
                    author_name="alice", answered_at=datetime.now(UTC), collection="default",
                ))  # fmt: skip
            say(f"# Digest of a synthetic week ({len(week)} questions, seed {SEED})")
            say()
            say(f"Replies: {dict(kinds)}; {seconds:.0f} s for the 500 questions ({seconds / len(week) * 1000:.0f} ms "
                "each, offline pipeline, e5 cached).")  # fmt: skip
            say("By source and reply: " + ", ".join(f"{s}/{k} {n}" for (s, k), n in sorted(by_source.items())))
            until = datetime.now(UTC) + timedelta(minutes=1)
            since = started - timedelta(minutes=1)
            for distance in distances:
                building = time.perf_counter()
                digest = await build_digest(app.db, app.embedder, app.team.answers.store, since=since, until=until,
                                            max_distance=distance)  # fmt: skip
                built = time.perf_counter() - building
                groups = [c for c in digest.clusters if len(c.gaps) > 1]
                say()
                say(f"## Cosine distance {distance}: {digest.gaps} unserved questions, {len(groups)} groups of more "
                    f"than one ({sum(len(c.gaps) for c in groups)} questions), "
                    f"{len(digest.clusters) - len(groups)} alone; the digest built in {built:.2f} s")  # fmt: skip
                gold_of = {item["question"]: item["gold"] for item in week}
                questions = [g.question for c in digest.clusters for g in c.gaps]
                vectors = await app.embedder.embed_queries([" ".join(q.split()) for q in questions])
                grouped = cluster_by_meaning(vectors, max_distance=distance)
                precision, recall, pairs_known = pairwise(grouped, [gold_of.get(q, "") for q in questions])
                say(f"Expert questions among them, same-question pairs known: {pairs_known}; grouped pairwise "
                    f"precision {precision:.2f}, recall {recall:.2f}")  # fmt: skip
                if distance == distances[0]:
                    say()
                    say("### The digest as posted")
                    say()
                    say(render_digest(digest)[0])
                say()
                say("### Every group of more than one question")
                source_of = {item["question"]: item["source"] for item in week}
                for number, cluster in enumerate(groups, start=1):
                    say(f"{number}. ({len(cluster.gaps)}) {cluster.representative}")
                    for gap in cluster.gaps[1:]:
                        say(f"    - [{source_of.get(gap.question, '?')}] {gap.question}")
        finally:
            await app.close()
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--distances", default="", help="comma-separated cosine distances (default: the digest's)")
    parser.add_argument("--out", type=Path, default=None, help="also write the printout here (Markdown)")
    args = parser.parse_args(argv)
    from bot.jobs.clusters import DEFAULT_MAX_DISTANCE

    for rel in (AMAZON, emanual.QA, emanual.CORPUS):
        if not (args.data / rel).is_file():
            print(f"shared data missing: {args.data / rel} (set --data or DOCBOT_SHARED_DATA)", file=sys.stderr)
            return 2
    distances = [float(d) for d in args.distances.split(",") if d.strip()] or [DEFAULT_MAX_DISTANCE]
    text = asyncio.run(run(args.data, distances))
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

