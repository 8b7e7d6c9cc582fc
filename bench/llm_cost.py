"""LLM calls and tokens per answered question, default vs fast configuration, and semantic-cache hit rate.

Runs docbot's LLM strategies through the real openai SDK against the scripted OpenAI-compatible server (loopback,
ephemeral port), over questions about the fixture manual (`tests/fixtures/manual`; the e-manual QA set is not on
this machine). The roles run in the manager's answer path: lang, translation, essence, guardrails, retrieval (a
small keyword ranker over the manual's sections; the agent's second guardrails pass judges the evidence without a
model), response and quality, with one regenerate round when quality asks for it. Tokens are the scripted server's
estimate (about four characters per token) of the real prompts.

    .venv/bin/python -m bench.llm_cost            # cost figures
    .venv/bin/python -m bench.llm_cost --cache    # plus cache hit rate on paraphrases (E5 embedder)
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import time
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.fakes.openai_server import Request, ScriptedOpenAI, Step, json_reply, plausible_model, schema_name
from pipeline.agents.base import Strategy
from pipeline.envelope import Context, Payload
from pipeline.llm.client import OpenAIChat
from pipeline.llm.strategies import build_strategies
from pipeline.types import LLMUsage, QualityDecision, Role, SourceReference

MANUAL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "manual"
UNDERSTANDING = (Role.LANG, Role.TRANSLATION, Role.ESSENCE, Role.GUARDRAILS)
TOP_K = 4

QUESTIONS: tuple[str, ...] = (
    "How do I pair the remote with the hub?",
    "The remote light flashes red when I press a key, what does that mean?",
    "How does voice search work?",
    "How can I make a separate profile for my kids?",
    "I forgot my parental control PIN, what now?",
    "How do I connect Bluetooth headphones?",
    "Is there a mode that keeps dialogue clear at night?",
    "Which output resolution should I pick?",
    "Can the screen saver show my photos?",
    "Can I mount the hub on the wall?",
    "What comes in the box?",
    "How do I join my wifi network?",
    "My connection keeps dropping, how do I fix it?",
    "What does error E-2041 mean?",
    "The hub says storage is full, what should I do?",
    "How do I install a software update?",
    "How do I restore factory settings?",
    "What does the hub record about me?",
    "Wie kann ich meinen Sprachverlauf löschen?",
    "¿Cómo puedo cambiar el volumen de la barra de sonido?",
    "Comment est-ce que je nettoie le boîtier et la télécommande ?",
    "Как подключить hub к сети через кабель Ethernet?",
    "Wie wähle ich einen guten Platz für den Hub?",
    "¿Qué hago si no hay imagen en el televisor?",
)

PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("How do I pair the remote with the hub?", "How can I pair my remote with the hub?"),
    ("How do I connect Bluetooth headphones?", "How do I connect my Bluetooth headphones?"),
    ("How do I restore factory settings?", "How can I restore the factory settings?"),
    ("What does error E-2041 mean?", "What does the error E-2041 mean?"),
    ("How do I install a software update?", "How do I install software updates?"),
    ("How do I join my wifi network?", "How can I join my wifi network?"),
    ("What comes in the box?", "What is in the box?"),
    ("Can I mount the hub on the wall?", "Is it possible to mount the hub on a wall?"),
    ("I forgot my parental control PIN, what now?", "What should I do if I forgot the parental control PIN?"),
    ("My connection keeps dropping, how do I fix it?", "How do I fix a connection that keeps dropping?"),
    # looser rewordings
    ("How does voice search work?", "Can I search by speaking into the remote?"),
    ("The hub says storage is full, what should I do?", "I'm out of space on the hub, help"),
    ("Which output resolution should I pick?", "What resolution is best for my TV?"),
    ("What does the hub record about me?", "Does the hub listen to what I say?"),
)


NEAR_MISSES: tuple[tuple[str, str], ...] = (  # close wording, different answers
    ("What does error E-2041 mean?", "What does error E-3307 mean?"),
    ("How do I set the volume to 20?", "How do I set the volume to 80?"),
    ("How do I pair the remote with the hub?", "How do I unpair the remote from the hub?"),
)


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    crumbs: tuple[str, ...]
    url: str
    text: str
    words: frozenset[str]


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"\w+", text.lower()) if len(w) > 2)


def load_sections(root: Path = MANUAL) -> list[Section]:
    sections: list[Section] = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".md", ".txt"):
            continue
        text = path.read_text(encoding="utf-8")
        parts = re.split(r"^## ", text, flags=re.M)
        top = parts[0].lstrip("# ").splitlines()[0] if parts[0].strip() else path.stem
        for part in parts[1:] or [text]:
            title, _, body = part.partition("\n")
            rel = path.relative_to(root).as_posix()
            sections.append(Section(title, (top, title), f"manual/{rel}", body.strip(), _words(title + " " + body)))
    return sections


def retrieve(question: str, sections: Sequence[Section], k: int = TOP_K) -> tuple[SourceReference, ...]:
    query = _words(question)
    ranked = sorted(sections, key=lambda s: len(query & s.words), reverse=True)[:k]
    return tuple(
        SourceReference(i, f"c{i}", s.url, s.title, s.crumbs, s.url, s.text, 1.0 / i)
        for i, s in enumerate(ranked, start=1)
    )


def scripted_model(regenerate_every: int) -> Callable[[Request], Step]:
    """The cooperative model, except that quality asks to regenerate every `regenerate_every`-th first answer."""

    def respond(request: Request) -> Step:
        text = str(request["messages"][-1]["content"])
        if regenerate_every and schema_name(request) == "quality_verdict" and "Here is what" in text:
            documents = text.split("<question>")[0]  # the same in both configurations
            if zlib.crc32(documents.encode()) % regenerate_every == 0 and "[regenerated]" not in text:
                return json_reply({"decision": "regenerate", "unsupported_claims": [], "notes": "too vague"})
        if schema_name(request) == "answer" and "rejected the previous answer" in str(request["messages"][0]):
            return json_reply(
                {"answer": "Here is what the documentation says [1]. [regenerated]", "insufficient": False}
            )
        return plausible_model(request)

    return respond


@dataclass(frozen=True, slots=True)
class QuestionCost:
    calls: int
    tokens: int
    by_role: dict[Role, int]


async def answer(strategies: dict[Role, Strategy], question: str, sections: Sequence[Section]) -> QuestionCost:
    context = Context(docs_language="en", deadline=time.monotonic() + 60)
    payload = Payload(text=question)
    usage = LLMUsage()
    by_role: Counter[Role] = Counter()

    async def step(role: Role) -> None:
        nonlocal payload, usage
        result = await strategies[role](payload, context)
        payload, usage = result.payload, usage + result.usage
        by_role[role] += result.usage.total_tokens

    for role in UNDERSTANDING:
        await step(role)
    if payload.within_scope is not False:
        payload = payload.evolve(source_references=retrieve(payload.text_eng or payload.text, sections))
        for _round in range(2):  # the first answer and at most one regenerate round
            await step(Role.RESPONSE)
            await step(Role.QUALITY)
            if payload.quality_decision is not QualityDecision.REGENERATE:
                break
    return QuestionCost(usage.calls, usage.total_tokens, dict(by_role))


def p95(values: Sequence[int]) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))])


async def measure(fast: bool, regenerate_every: int) -> list[QuestionCost]:
    sections = load_sections()
    async with ScriptedOpenAI(scripted_model(regenerate_every)) as server:
        chat = OpenAIChat(api_key="bench", base_url=server.base_url, timeout_s=5, max_retries=0)
        strategies = build_strategies(chat, fast=fast)
        costs = [await answer(strategies, q, sections) for q in QUESTIONS]
        await chat.close()
        assert sum(c.calls for c in costs) == server.chat_calls, "usage must count every call the server saw"
    return costs


def report(name: str, costs: Sequence[QuestionCost]) -> None:
    calls, tokens = [c.calls for c in costs], [c.tokens for c in costs]
    print(
        f"{name:<8} questions={len(costs):>3}  calls median={statistics.median(calls):.1f} p95={p95(calls):.0f}  "
        f"tokens median={statistics.median(tokens):.0f} p95={p95(tokens):.0f}  total tokens={sum(tokens)}"
    )
    roles = Counter[Role]()
    for cost in costs:
        roles.update(cost.by_role)
    share = ", ".join(f"{r.value}={n / len(costs):.0f}" for r, n in roles.most_common() if n)
    print(f"{'':<8} mean tokens per role: {share}")


async def cache_hit_rate(thresholds: Sequence[float]) -> None:
    from storage.embedder import E5Embedder
    from storage.semantic_cache import SemanticCache

    embedder = E5Embedder()
    await embedder.embed_queries(["warm up"])
    print(f"\nsemantic cache on {len(PARAPHRASES)} paraphrase pairs (E5 small, memory):")
    for threshold in thresholds:
        cache = SemanticCache(None, embedder, threshold)
        for original in [o for o, _ in PARAPHRASES] + [o for o, _ in NEAR_MISSES]:
            await cache.store(
                original,
                ("manual",),
                1,
                response=f"answer to {original}",
                language="en",
                sources=(),
                quality_decision=QualityDecision.APPROVE,
            )
        hits = wrong = 0
        latencies: list[float] = []
        for original, paraphrase in PARAPHRASES:
            started = time.perf_counter()
            found = await cache.lookup(paraphrase, ("manual",), 1, language="en")
            latencies.append((time.perf_counter() - started) * 1000)
            hits += found is not None and found.question == original
            wrong += found is not None and found.question != original
        unrelated = [q for q in QUESTIONS if q not in {o for o, _ in PARAPHRASES}]
        false_hits = sum([await cache.lookup(q, ("manual",), 1, language="en") is not None for q in unrelated])
        repeats = sum([await cache.lookup(o, ("manual",), 1, language="en") is not None for o, _ in PARAPHRASES])
        near = sum([await cache.lookup(other, ("manual",), 1, language="en") is not None for _, other in NEAR_MISSES])
        print(
            f"  threshold {threshold:.2f}: paraphrase hits {hits}/{len(PARAPHRASES)}, wrong answers {wrong}, "
            f"exact repeats {repeats}/{len(PARAPHRASES)}, false hits on other questions {false_hits}/{len(unrelated)}, "
            f"near misses answered wrongly {near}/{len(NEAR_MISSES)}, "
            f"lookup median {statistics.median(latencies):.1f} ms"
        )


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--regenerate-every", type=int, default=5, help="quality asks to regenerate 1 in N (0: never)")
    parser.add_argument("--cache", action="store_true", help="also measure the semantic cache (loads E5)")
    args = parser.parse_args(argv)
    print(f"{len(QUESTIONS)} fixture-manual questions, scripted server, regenerate 1 in {args.regenerate_every or '∞'}")
    for name, fast in (("default", False), ("fast", True)):
        report(name, await measure(fast, args.regenerate_every))
    if args.cache:
        await cache_hit_rate((0.95, 0.92, 0.90))


if __name__ == "__main__":
    asyncio.run(main())
