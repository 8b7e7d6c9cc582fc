"""Envelope codec: exact round trip through JSON text."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from pipeline.codec import CodecError, envelope_from_json, envelope_to_json
from pipeline.envelope import Envelope, EnvelopeError, Hop, Payload
from pipeline.types import (
    ActionKind,
    ContextType,
    LLMUsage,
    QualityDecision,
    Role,
    SearchHit,
    SearchQuality,
    SourceReference,
    StrategyUsed,
    SuggestedAction,
)

pytestmark = pytest.mark.unit


def rich_envelope() -> Envelope:
    when = datetime(2026, 11, 22, 14, 3, 10, 123456, tzinfo=UTC)
    found = SearchHit(
        chunk_id="c#1", doc_id="d", section="pairing", title="Pairing", crumbs=("Guide", "Remote"),
        url="https://d/x#pairing", text="Hold the Link key.", score=0.7312345678901234, collection="tv",
        level_scores={"dense": 0.81, "keywords": 0.0},
    )
    payload = Payload(
        text="¿Cómo emparejo el mando? 遥控器",
        language="es",
        confidence=0.97,
        text_eng=None,
        canonical_question="¿Cómo emparejo el mando?",
        context_type=ContextType.FOLLOW_UP,
        within_scope=True,
        scope_reason="search good",
        search_results=(found,),
        search_quality=SearchQuality.GOOD,
        augmented_prompt="<sources>…</sources>",
        source_references=(SourceReference(1, "c#1", "d", "Pairing", ("Guide",), "https://d/x", "Hold.", 0.73),),
        response="> Hold. [1]",
        quality_decision=QualityDecision.REGENERATE,
        quality_notes=("line 1 cites [3]",),
        needs_clarification=True,
        clarification_reason="ambiguous",
        clarification_message="Which one?",
        suggested_actions=(SuggestedAction("Pairing"), SuggestedAction("Rephrase", ActionKind.REPHRASE, "")),
        chosen_action=SuggestedAction("Pairing", ActionKind.SEARCH, "Guide › Pairing"),
    )
    return Envelope(
        conversation_id="slack:T1:C1:1700000000.1",
        message_id="1700000000.2",
        payload=payload,
        create_ts=when,
        update_ts=when,
        process_count=7,
        total_processing_time=0.125,
        sender_role=Role.CLARIFICATION,
        target_role=None,
        rounds={"research": 1},
        errors=[EnvelopeError(Role.SEARCH, "timeout", "search did not finish")],
        hops=[Hop(Role.LANG, "language=es", when, 1.5, 0.25, StrategyUsed.LLM_FAILED, LLMUsage(10, 2, 1), None)],
    )


def test_round_trip_is_exact_through_json_text() -> None:
    original = rich_envelope()
    restored = envelope_from_json(json.loads(json.dumps(envelope_to_json(original))))
    assert restored == original
    assert isinstance(restored.payload.search_results, tuple)
    assert restored.payload.search_results[0].level_scores == {"dense": 0.81, "keywords": 0.0}
    assert restored.hops[0].started_at.tzinfo is not None


def test_minimal_envelope_round_trips() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    minimal = Envelope("c", "m", Payload(text="hi"), when, when)
    assert envelope_from_json(envelope_to_json(minimal)) == minimal


@pytest.mark.parametrize(
    "mangle",
    [
        lambda d: d.update(version=99),
        lambda d: d.pop("payload"),
        lambda d: d["payload"].update(search_quality="splendid"),
        lambda d: d.update(process_count="seven"),
    ],
)
def test_bad_input_is_a_codec_error(mangle: object) -> None:
    data = envelope_to_json(rich_envelope())
    mangle(data)  # type: ignore[operator]
    with pytest.raises(CodecError):
        envelope_from_json(data)
