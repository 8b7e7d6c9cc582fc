"""The semantic cache on SQLite and PostgreSQL, with a deterministic hashing embedder."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from pipeline.types import QualityDecision, SourceReference
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.semantic_cache import SemanticCache
from storage.tables import SemanticCacheRow

pytestmark = pytest.mark.integration

SOURCES = (SourceReference(1, "c1", "d1", "Pairing", ("Remote", "Pairing"), "https://d/pair", "Hold OK.", 0.9),)
QUESTION = "How do I pair the remote control with the TV?"


async def store(cache: SemanticCache, question: str = QUESTION, *, version: int = 1, **overrides: object) -> bool:
    fields: dict[str, object] = {
        "response": "Hold OK for five seconds [1].",
        "language": "en",
        "sources": SOURCES,
        "quality_decision": QualityDecision.APPROVE,
    } | overrides
    return await cache.store(question, ("manual", "faq"), version, **fields)  # type: ignore[arg-type]


async def test_an_approved_answer_is_returned_for_the_same_question(db: Database) -> None:
    cache = SemanticCache(db, HashingEmbedder())
    assert await cache.lookup(QUESTION, ("faq", "manual"), 1, language="en") is None
    assert await store(cache)
    found = await cache.lookup(QUESTION, ("faq", "manual"), 1, language="en")  # collection order does not matter
    assert found is not None
    assert found.response == "Hold OK for five seconds [1]." and found.sources == SOURCES
    assert found.similarity == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("decision", [None, QualityDecision.REGENERATE, QualityDecision.CLARIFY])
async def test_only_approved_answers_are_stored(db: Database, decision: QualityDecision | None) -> None:
    cache = SemanticCache(db, HashingEmbedder())
    assert not await store(cache, quality_decision=decision)
    assert await cache.lookup(QUESTION, ("manual", "faq"), 1, language="en") is None


async def test_other_collections_and_versions_do_not_match(db: Database) -> None:
    cache = SemanticCache(db, HashingEmbedder())
    await store(cache)
    assert await cache.lookup(QUESTION, ("manual",), 1, language="en") is None
    assert await cache.lookup(QUESTION, ("manual", "faq"), 2, language="en") is None


async def test_threshold_decides_for_paraphrases(db: Database) -> None:
    paraphrase = "How do I pair the remote control with my TV?"
    strict, loose = SemanticCache(db, HashingEmbedder(), 0.99), SemanticCache(db, HashingEmbedder(), 0.7)
    await store(strict)
    assert await strict.lookup(paraphrase, ("manual", "faq"), 1, language="en") is None
    found = await loose.lookup(paraphrase, ("manual", "faq"), 1, language="en")  # loaded from the table
    assert found is not None and 0.7 <= found.similarity < 0.99
    assert await loose.lookup("What batteries does the remote take?", ("manual", "faq"), 1, language="en") is None


async def test_entries_persist_and_count_hits(db: Database) -> None:
    await store(SemanticCache(db, HashingEmbedder()))
    fresh = SemanticCache(db, HashingEmbedder())
    assert await fresh.lookup(QUESTION, ("manual", "faq"), 1, language="en") is not None
    assert await fresh.lookup(QUESTION, ("manual", "faq"), 1, language="en") is not None
    async with db.session() as session:
        assert await session.scalar(select(SemanticCacheRow.hits)) == 2


async def test_a_version_bump_retires_old_entries(db: Database) -> None:
    cache = SemanticCache(db, HashingEmbedder())
    await store(cache, version=1)
    await store(cache, "What batteries does it take?", version=2)
    assert await cache.lookup(QUESTION, ("manual", "faq"), 2, language="en") is None
    assert await cache.forget_older(("faq", "manual"), 2) == 1
    async with db.session() as session:
        assert await session.scalar(select(func.count()).select_from(SemanticCacheRow)) == 1


async def test_a_question_in_another_language_never_gets_the_cached_answer(db: Database) -> None:
    cache = SemanticCache(db, HashingEmbedder())
    await store(cache, language="de")
    assert await cache.lookup(QUESTION, ("manual", "faq"), 1, language="en") is None
    assert await cache.lookup(QUESTION, ("manual", "faq"), 1, language="de") is not None


@pytest.mark.unit
async def test_numbers_and_codes_must_match() -> None:
    cache = SemanticCache(None, HashingEmbedder(), threshold=0.5)
    await store(cache, "How do I set the volume to 20?")
    await store(cache, "What does error E-2041 mean?")
    assert await cache.lookup("How do I set the volume to 80?", ("manual", "faq"), 1, language="en") is None
    assert await cache.lookup("What does error E-3307 mean?", ("manual", "faq"), 1, language="en") is None
    found = await cache.lookup("what does the error e-2041 mean", ("manual", "faq"), 1, language="en")
    assert found is not None and found.question == "What does error E-2041 mean?"


@pytest.mark.unit
async def test_memory_only_cache_works_without_a_database() -> None:
    cache = SemanticCache(None, HashingEmbedder())
    await store(cache)
    await store(cache, "What batteries does it take?", response="Two AAA [1].")
    found = await cache.lookup("what batteries does it take", ("manual", "faq"), 1, language="en")
    assert found is not None and found.response == "Two AAA [1]."


@pytest.mark.unit
async def test_a_known_vector_is_used_instead_of_embedding_again() -> None:
    embedder = HashingEmbedder()
    cache = SemanticCache(None, embedder)
    vector = (await embedder.embed_queries([QUESTION]))[0]
    await store(cache, vector=vector)
    assert await cache.lookup(QUESTION, ("manual", "faq"), 1, language="en", vector=vector) is not None
    assert embedder.queries_embedded == 1


@pytest.mark.unit
async def test_lookups_compare_only_entries_of_the_same_language_and_codes() -> None:
    embedder = HashingEmbedder()
    cache = SemanticCache(None, embedder)
    for i in range(50):
        await store(cache, f"How do I set the volume to {i}?", language="de" if i % 2 else "en")
    embedder.queries_embedded = 0
    assert await cache.lookup("How do I pair it?", ("manual", "faq"), 1, language="en") is None
    assert embedder.queries_embedded == 0  # no entry with these codes in English: nothing to compare, no embedding
    found = await cache.lookup("How do I set the volume to 7?", ("manual", "faq"), 1, language="de")
    assert found is not None and found.question == "How do I set the volume to 7?"


@pytest.mark.unit
def test_threshold_must_be_a_cosine() -> None:
    with pytest.raises(ValueError):
        SemanticCache(None, HashingEmbedder(), threshold=1.5)


async def test_answers_of_one_answerer_are_never_served_for_another(db: Database) -> None:
    offline = SemanticCache(db, HashingEmbedder(), answerer="offline")
    llm = SemanticCache(db, HashingEmbedder(), answerer="llm:http://127.0.0.1:8080/v1:smollm2")
    await store(offline)
    assert await llm.lookup(QUESTION, ("manual", "faq"), 1, language="en") is None  # LLM mode switched on
    await store(llm, response="Press and hold OK [1].")
    found = await SemanticCache(db, HashingEmbedder(), answerer="offline").lookup(
        QUESTION, ("manual", "faq"), 1, language="en"
    )  # and back: the offline answer, not the model's
    assert found is not None and found.response == "Hold OK for five seconds [1]."


async def test_a_version_bump_retires_every_answerers_old_entries(db: Database) -> None:
    await store(SemanticCache(db, HashingEmbedder(), answerer="llm:a"), version=1)
    cache = SemanticCache(db, HashingEmbedder(), answerer="offline")
    await store(cache, version=1)
    await store(cache, "What batteries does it take?", version=2)
    assert await cache.forget_older(("faq", "manual"), 2) == 2
    async with db.session() as session:
        assert await session.scalar(select(func.count()).select_from(SemanticCacheRow)) == 1
