"""Answer usefulness through the whole bot (issue 14): gold section cited and token recall of a reference answer.

    PYTHONPATH=<tree> python bench/answers_eval.py docs  --out R.json   # bench/data/docbot_qa.jsonl over docs/
    PYTHONPATH=<tree> python bench/answers_eval.py emanual --out R.json # the e-manual QA over its corpus

Runs on whatever tree is first on PYTHONPATH (the baseline is the same script run against an older checkout), in a
fresh SQLite database under /tmp, semantic cache off (similarity 1.0) so paraphrases are answered, not replayed.

- gold cited: a citation URL ends with the gold (`page.md#anchor`, or `emanual/section_n`; `a|b` accepts either);
- recall: share of the reference's content words (lower-cased word tokens minus a small stopword list) that appear
  in the reply text (citation list included, as a person reads it);
- a record with `thread` (a list of messages) is asked turn by turn in one thread; the last reply is scored.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EMANUAL = Path("/work/shared/data/emanual")
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "as",
        "you",
        "your",
        "can",
        "do",
        "does",
        "how",
        "what",
        "which",
        "when",
        "where",
        "why",
        "who",
        "will",
        "would",
        "should",
        "could",
        "i",
        "me",
        "my",
        "we",
        "our",
        "us",
        "not",
        "no",
        "if",
        "then",
        "than",
        "so",
        "but",
        "into",
        "out",
        "up",
        "about",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "have",
        "has",
        "had",
        "also",
        "just",
        "any",
        "all",
        "some",
        "such",
        "only",
        "more",
        "most",
        "other",
        "each",
        "per",
        "via",
    ]
)
_WORD = re.compile(r"[^\W_]+", re.U)


def content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOP and len(w) > 1}


def recall(reference: str, answer: str) -> float:
    wanted = content_words(reference)
    if not wanted:
        return 1.0
    return len(wanted & content_words(answer)) / len(wanted)


def cites(urls: list[str], gold: str) -> bool:
    options = [g.strip() for g in gold.split("|") if g.strip()]
    for url in urls:
        for g in options:
            if "#" in g:
                if url.endswith(g) or url.endswith("/" + g):
                    return True
            elif url.split("#", 1)[0].endswith(g):
                return True
    return False


def reply_text(reply: Any) -> str:
    if reply is None:
        return ""
    parts = [reply.text]
    for action in getattr(reply, "actions", ()) or ():
        parts.append(getattr(action, "label", ""))
    return "\n".join(parts)


def emanual_items() -> tuple[Path, list[dict[str, Any]]]:
    sys.path.insert(0, str(ROOT))
    from bench.emanual_data import _gold, load_corpus

    corpus = load_corpus(EMANUAL / "raw" / "smart_tv_remote_manual_corpus.json")
    seed = Path(tempfile.mkdtemp(prefix="answers_emanual_")) / "emanual.json"
    seed.write_text(json.dumps(corpus), encoding="utf-8")
    items = []
    for line in (EMANUAL / "smart_tv_remote_qa.cleaned.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        gold = _gold({"section_path": row["section_hierarchy"], "answer": row["answer"]}, corpus)
        items.append(
            {
                "id": row["id"],
                "set": row["qa_set"],
                "question": row["question"],
                "answer": row["answer"],
                "gold": gold or "",
            }
        )
    return seed, items


def docs_items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def run(
    corpus: Path, items: list[dict[str, Any]], data_dir: Path, limit: int | None, *, ingest: bool = True
) -> list[dict[str, Any]]:
    from bot.app import build_app
    from bot.settings import load_settings
    from pipeline.messages import Inbound

    settings = load_settings(
        data_dir=data_dir, cache_similarity=1.0, user_rate_limit="100000/minute", workspace_rate_limit="100000/minute"
    )
    app = await build_app(settings)
    rows = []
    try:
        if ingest:
            await app.ingest([str(corpus)], collection="default", base_url=None)
        token = f"ans{time.time_ns()}"
        for number, item in enumerate(items[:limit] if limit else items):
            turns = item.get("thread") or [item["question"]]
            thread = f"{token}-t{number}"
            reply = None
            for turn, text in enumerate(turns):
                inbound = Inbound(
                    platform="console",
                    workspace_id=f"w{number}",
                    channel_id="eval",
                    thread_id=thread,
                    message_id=f"{thread}-{turn}",
                    user_id=f"u{number}",
                    user_name="eval",
                    text=text,
                    ts=datetime.now(UTC),
                )
                reply = await app.service.handle_message(inbound)
            urls = [c.url for c in reply.citations] if reply is not None else []
            text = reply_text(reply)
            rows.append(
                {
                    "id": item.get("id", number),
                    "set": item.get("set", "all"),
                    "kind": reply.kind.value if reply else "",
                    "gold_cited": cites(urls, item["gold"]) if item.get("gold") else None,
                    "recall": recall(item["answer"], text),
                    "answer": text,
                    "urls": urls,
                }
            )
            if number % 50 == 0:
                print(f"{number}/{len(items)}", file=sys.stderr, flush=True)
    finally:
        await app.close()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["set"]].append(row)
        groups["ALL"].append(row)
    out = {}
    for name, members in sorted(groups.items()):
        gold = [r for r in members if r["gold_cited"] is not None]
        out[name] = {
            "n": len(members),
            "gold_cited": round(sum(r["gold_cited"] for r in gold) / len(gold), 3) if gold else float("nan"),
            "recall": round(sum(r["recall"] for r in members) / len(members), 3),
            "answers": sum(r["kind"] == "answer" for r in members),
            "clarifications": sum(r["kind"] == "clarification" for r in members),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("which", choices=["docs", "emanual"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--qa", type=Path, default=ROOT / "bench" / "data" / "docbot_qa.jsonl")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--reuse", type=Path, help="database folder of a run with the same chunks")
    args = parser.parse_args()
    if args.which == "emanual":
        corpus, items = emanual_items()
    else:
        corpus, items = args.docs, docs_items(args.qa)
    data_dir = args.reuse or Path(tempfile.mkdtemp(prefix="answers_eval_"))
    rows = asyncio.run(run(corpus, items, data_dir, args.limit, ingest=args.reuse is None))
    result = {"summary": summary(rows), "rows": rows}
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
