"""Language detection on short questions (issue 14): `PYTHONPATH=<tree> python bench/answers_lang.py`.

bench/data/docbot_lang.jsonl: 200 short English questions naming identifiers from docs/, and questions in ru, es,
de, zh, fr. Each goes through the offline lang role with an empty thread; accuracy per language is printed as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path

from pipeline.agents.lang import LangAgent
from pipeline.envelope import Context, Payload

DATA = Path(__file__).resolve().parent / "data" / "docbot_lang.jsonl"


async def main() -> None:
    agent = LangAgent()
    hits: dict[str, list[bool]] = defaultdict(list)
    wrong: list[tuple[str, str, str | None]] = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        result = await agent.run(Payload(text=row["text"]), Context())
        ok = result.payload.language == row["lang"]
        hits[row["lang"]].append(ok)
        if not ok:
            wrong.append((row["lang"], row["text"], result.payload.language))
    summary = {lang: {"n": len(v), "accuracy": round(sum(v) / len(v), 3)} for lang, v in hits.items()}
    print(json.dumps({"summary": summary, "wrong": wrong[:40]}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
