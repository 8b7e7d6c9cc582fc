"""The seed's JSON output contract for `docbot ask --json`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pipeline.messages import Reply, ReplyKind

_STATUS = {
    ReplyKind.ANSWER: "answered",
    ReplyKind.CLARIFICATION: "needs_clarification",
    ReplyKind.REFUSAL: "refused",
    ReplyKind.NOTICE: "error",
}


def reply_contract(reply: Reply | None, *, started: datetime, finished: datetime) -> dict[str, Any]:
    """`answer`, `citations` [text, url, chunk_id, confidence], `metadata`, `validation`, `status`, `error_message`."""
    wall_ms = round((finished - started).total_seconds() * 1000, 1)
    if reply is None:
        return {
            "answer": "",
            "citations": [],
            "metadata": {"latency_ms": {"total": wall_ms}},
            "validation": {},
            "status": "error",
            "error_message": "the message was not answered",
        }
    summary = reply.summary
    cited = {c.number for c in reply.citations}
    return {
        "answer": reply.text,
        "citations": [
            {"text": c.text, "url": c.url, "chunk_id": c.chunk_id, "confidence": round(c.confidence, 4)}
            for c in reply.citations
        ],
        "metadata": {
            "conversation_id": reply.conversation_id,
            "run_id": reply.run_id,
            "language": reply.language,
            "kind": reply.kind.value,
            "chunks_retrieved": summary.chunks_retrieved if summary else 0,
            "chunks_cited": len(reply.citations),
            "latency_ms": {
                "total": wall_ms,
                "pipeline": summary.total_ms if summary else None,
                "per_role": dict(summary.role_ms) if summary else {},
            },
            "llm": {
                "calls": summary.llm_calls if summary else 0,
                "prompt_tokens": summary.prompt_tokens if summary else 0,
                "completion_tokens": summary.completion_tokens if summary else 0,
                "tokens_estimated": summary.tokens_estimated if summary else False,
            },
            # how the answer fell short of the configuration (an LLM role answered offline, keyword-only search)
            "fallback": {
                "note": reply.note,
                "notes": list(summary.fallback_notes) if summary else [],
                "degraded": bool(summary.fallback_notes) if summary else False,
            },
            "cached": reply.cached,
            "suggested_actions": [{"label": a.label, "kind": a.kind.value} for a in reply.actions],
        },
        "validation": {
            "search_quality": summary.search_quality if summary else None,
            "quality_decision": summary.quality_decision if summary else None,
            "citations_resolved": all(f"[{n}]" in reply.text for n in cited),
            "errors": list(summary.errors) if summary else [],
        },
        "status": _STATUS[reply.kind],
        "error_message": reply.text if reply.kind is ReplyKind.NOTICE else None,
    }
