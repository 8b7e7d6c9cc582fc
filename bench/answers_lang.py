"""Language detection on short questions (issue 14): `PYTHONPATH=<tree> python bench/answers_lang.py`.

bench/data/docbot_lang.jsonl: 200 short English questions naming identifiers from docs/, and questions in ru, es,
de, zh, fr; the 56 hand-translated e-manual questions per language of bench/data/crosslang_emanual_*.jsonl (with
their English originals), reported apart as "crosslang"; and the 40 translated shoppers' questions per language of
bench/data/shoppers_translated_*.jsonl (with their English originals, as real people typed them), reported per
half as "shoppers-tune" and "shoppers-test". Each goes through the offline lang role with an empty thread; accuracy
per language is printed as JSON.

"real-shoppers": the 3,169 questions of ../shared/data/emanual/amazon_user_questions.jsonl as shoppers typed them,
unlabelled (nearly all English, a few dozen Spanish): the verdicts other than English are counted and listed in
full, to be read by hand (skipped when the shared file is absent).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path

from bench.retrieval import load_jsonl
from pipeline.agents.lang import LangAgent
from pipeline.envelope import Context, Payload

DATA = Path(__file__).resolve().parent / "data"
REAL_SHOPPERS = Path(__file__).resolve().parents[2] / "shared" / "data" / "emanual" / "amazon_user_questions.jsonl"


def question_sets() -> dict[str, list[tuple[str, str]]]:
    """(expected language, text) per set: the docbot questions, the cross-language e-manual questions and the
    translated shoppers' questions (per half)."""
    docbot = [(row["lang"], row["text"]) for row in load_jsonl(DATA / "docbot_lang.jsonl")]
    crosslang: list[tuple[str, str]] = []
    for path in sorted(DATA.glob("crosslang_emanual_*.jsonl")):
        for row in load_jsonl(path):
            crosslang.append((row["lang"], row["question"]))
            crosslang.append(("en", row["english"]))
    shoppers: dict[str, list[tuple[str, str]]] = {"shoppers-tune": [], "shoppers-test": []}
    for path in sorted(DATA.glob("shoppers_translated_*.jsonl")):
        for row in load_jsonl(path):
            half = shoppers[f"shoppers-{row['split']}"]
            half += [(row["lang"], row["question"]), ("en", row["english"])]
    return {"docbot": docbot, "crosslang": crosslang, **shoppers}


async def main() -> None:
    agent = LangAgent()
    report: dict[str, object] = {}
    for name, questions in question_sets().items():
        hits: dict[str, list[bool]] = defaultdict(list)
        wrong: list[tuple[str, str, str | None]] = []
        for lang, text in dict.fromkeys(questions):  # an English original shared by five translations counts once
            result = await agent.run(Payload(text=text), Context())
            ok = result.payload.language == lang
            hits[lang].append(ok)
            if not ok:
                wrong.append((lang, text, result.payload.language))
        summary = {lang: {"n": len(v), "accuracy": round(sum(v) / len(v), 3)} for lang, v in hits.items()}
        report[name] = {"summary": summary, "wrong": wrong[:40]}
    report["real-shoppers"] = await not_english(agent)
    print(json.dumps(report, ensure_ascii=False, indent=1))


async def not_english(agent: LangAgent) -> dict[str, object]:
    """The real shoppers' questions read as another language than English, each with its verdict."""
    if not REAL_SHOPPERS.exists():
        return {"skipped": f"{REAL_SHOPPERS} not found"}
    texts = list(dict.fromkeys(row["question"] for row in load_jsonl(REAL_SHOPPERS)))
    verdicts = []
    for text in texts:
        result = await agent.run(Payload(text=text), Context())
        if result.payload.language != "en":
            verdicts.append((result.payload.language, text))
    return {"questions": len(texts), "not_english": len(verdicts), "verdicts": verdicts}


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
