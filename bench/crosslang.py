"""Cross-language retrieval on the e-manual: the same questions in English and in ru, es, de, zh, fr.

    python -m bench.crosslang [--data DIR] [--split tune|test|all] [--shoppers]

`bench/data/crosslang_emanual_<lang>.jsonl` holds 56 e-manual questions (Normal QA set, one per gold section, drawn
with a fixed seed) translated by hand, each with its English original, its gold section and a split: the even rows
`tune` (used to choose the fusion settings), the odd rows `test` (reported; never tuned on). Each language's hit@1
and hit@5 are compared with the English originals of the same questions, as a ratio (target: >= 0.90 at hit@1).
With `--shoppers`, the questions are the answerable ones of the shoppers' questions translated into nine languages
(`shoppers_translated_<lang>.jsonl`, split as labelled), with their English originals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import emanual
from bench.retrieval import DATA, SYSTEMS, load_jsonl, run_questions, summarise
from pipeline.types import Embedder

LANGUAGES = ("ru", "es", "de", "zh", "fr")
SPLITS = ("tune", "test")


def questions(split: str | None = None) -> list[dict[str, Any]]:
    """The translated questions plus their English originals (lang `en`), each with `group` = its split."""
    return _with_originals("crosslang_emanual", LANGUAGES, split)


SHOPPERS_LANGUAGES = ("es", "de", "ru", "zh", "fr", "it", "pt", "ja", "ko")


def shoppers_questions(split: str | None = None) -> list[dict[str, Any]]:
    """The answerable translated shoppers' questions (`shoppers_translated_<lang>.jsonl`, split as labelled) and
    their English originals: real questions, where the e-manual translations are the manual's own wording."""
    return _with_originals("shoppers_translated", SHOPPERS_LANGUAGES, split, answerable_only=True)


def _with_originals(
    prefix: str, languages: Sequence[str], split: str | None, *, answerable_only: bool = False
) -> list[dict[str, Any]]:
    """The rows of `<prefix>_<lang>.jsonl` of `split` (each with its `english` original, once per id, first) as
    questions: `gold` as the retrieval bench reads it ("a|b"), `group` = the split."""
    out: list[dict[str, Any]] = []
    english: dict[str, dict[str, Any]] = {}
    for lang in languages:
        for row in load_jsonl(DATA / f"{prefix}_{lang}.jsonl"):
            if (answerable_only and not row["answerable"]) or (split is not None and row["split"] != split):
                continue
            gold = row["gold"] if isinstance(row["gold"], str) else "|".join(row["gold"])
            out.append({"question": row["question"], "gold": gold, "lang": lang, "group": row["split"]})
            english[row["id"]] = {"question": row["english"], "gold": gold, "lang": "en", "group": row["split"]}
    return list(english.values()) + out


def figures(summary: dict[str, Any]) -> dict[str, Any]:
    """Per language: n, hit@1 and hit@5 of each system, and ours' hit@1 / hit@5 as a ratio of English's."""
    by_lang = summary["by_language"]
    english = by_lang["en"]["ours"]
    out: dict[str, Any] = {}
    for lang in dict.fromkeys(("en", *LANGUAGES, *SHOPPERS_LANGUAGES)):
        rows = by_lang.get(lang)
        if not rows:
            continue
        ours = rows["ours"]
        out[lang] = {
            "n": ours["n"],
            **{f"{s}_hit@1": round(rows[s]["hit@1"], 3) for s in rows},
            **{f"{s}_hit@5": round(rows[s]["hit@5"], 3) for s in rows},
            "ratio@1": round(ours["hit@1"] / english["hit@1"], 3) if english["hit@1"] else None,
            "ratio@5": round(ours["hit@5"] / english["hit@5"], 3) if english["hit@5"] else None,
        }
    return out


async def run(data: Path, embedder: Embedder, *, split: str | None = "test",
              systems: Sequence[str] = SYSTEMS, shoppers: bool = False) -> dict[str, Any]:  # fmt: skip
    """`{"split": ..., "languages": {lang: figures}}` over the e-manual corpus read from `data`: the e-manual's
    translated questions, or with `shoppers` the translated shoppers' questions."""
    manual = emanual.load(data)
    asked = shoppers_questions(split) if shoppers else questions(split)
    results = await run_questions(manual.corpus, asked, systems, embedder=embedder)
    return {"split": split or "all", "languages": figures(summarise(results))}


def main(argv: Sequence[str] | None = None) -> None:
    from bench.shared import DEFAULT_DATA, cached_embedder

    parser = argparse.ArgumentParser(prog="python -m bench.crosslang", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="test")
    parser.add_argument("--shoppers", action="store_true", help="the translated shoppers' answerable questions")
    args = parser.parse_args(argv)
    split = None if args.split == "all" else args.split
    systems = (*SYSTEMS, "fixed")
    result = asyncio.run(run(args.data, cached_embedder("e5"), split=split, systems=systems, shoppers=args.shoppers))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
