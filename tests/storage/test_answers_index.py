"""Team answers in the index through the real ingestion path (tiny hashing embedder, local index, the hybrid
retriever) on SQLite and PostgreSQL: only approved answers are searchable, in their own collection; a rejection or an
expiry takes them out; a changed section they rely on sends them back to review with the diff; the scheduled sync
repairs what a crash or an index outage left behind."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from pipeline.types import SearchRequest
from storage.answers.lifecycle import TeamAnswers
from storage.answers.mentions import MentionReader
from storage.answers.model import (
    AnswerDraft,
    AnswerStatus,
    DocMention,
    ExpiryCause,
    Outcome,
    Reviewer,
    TeamAnswer,
)
from storage.answers.publish import AnswerPublisher
from storage.answers.store import AnswerStore
from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow, EmbeddingRow
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor, corpus_version
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever
from storage.vector_index import VectorIndexUnavailable, VectorRecord

pytestmark = pytest.mark.integration

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"
BASE = "https://docs.example.com/"
BLUETOOTH = f"{BASE}audio/sound.md#connecting-bluetooth-headphones"
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
BOB = Reviewer("slack:U-BOB", "bob")
QUESTION = "Can the hub send sound to two pairs of Bluetooth headphones and the soundbar at once?"
ANSWER = ("No: while headphones are connected the soundbar is muted too. Use the Multi-Output option in "
          "Settings > Sound > Expert if you need both; it arrived with firmware 2.4.")  # fmt: skip


class FlakyIndex(LocalVectorIndex):
    """The local index, failing while `down` (as Pinecone does in an outage)."""

    down = False

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if self.down:
            raise VectorIndexUnavailable("local", "upsert", "server_error", attempts=3)
        await super().upsert(records)

    async def delete(self, ids: Sequence[str], collection: str) -> None:
        if self.down:
            raise VectorIndexUnavailable("local", "delete", "server_error", attempts=3)
        await super().delete(ids, collection)


@dataclass
class Kit:
    db: Database
    folder: Path
    index: FlakyIndex
    ingestor: Ingestor
    retriever: HybridRetriever
    answers: TeamAnswers

    async def ingest_manual(self) -> None:
        report = await self.ingestor.ingest([str(self.folder)], base_url=BASE)
        assert report.changed, report.summary()

    async def found(self, question: str, collections: tuple[str, ...] = ("default",)) -> list[str]:
        response = await self.retriever.search(SearchRequest(question, collections=collections, top_k=8))
        return [hit.doc_id for hit in response.hits]


@pytest.fixture
async def kit(db: Database, tmp_path: Path) -> AsyncIterator[Kit]:
    folder = tmp_path / "manual"
    shutil.copytree(MANUAL, folder)
    embedder, index = HashingEmbedder(), FlakyIndex(64)
    retriever = HybridRetriever(db, embedder, index)
    holder: list[TeamAnswers] = []

    async def changed() -> None:
        await retriever.reload()
        await holder[0].on_documents_changed()

    ingestor = Ingestor(db, embedder, index, on_change=changed)
    clock = [T0]
    answers = TeamAnswers(AnswerStore(db), AnswerPublisher(db, ingestor), MentionReader(db),
                          ttl=timedelta(days=30), clock=lambda: clock[0])  # fmt: skip
    holder.append(answers)
    await retriever.load()
    yield Kit(db, folder, index, ingestor, retriever, answers)
    await retriever.close()


def draft(
    message: str = "m1", *, answer: str = ANSWER, collection: str = "default", mentions: tuple[DocMention, ...] = ()
) -> AnswerDraft:
    return AnswerDraft(
        question=QUESTION, answer=answer, platform="slack", workspace_id="T1", channel_id="C-help",
        thread_key="slack:T1:C-help:1", answer_message_id=message, author_id="U-ALICE", author_name="alice",
        answered_at=T0, collection=collection, channel_name="help",
        thread_url="https://example.slack.com/archives/C-help/p1", mentions=mentions,
    )  # fmt: skip


async def rows(db: Database, answer: TeamAnswer) -> tuple[int, int, int]:
    async with db.session() as session:
        count = select(func.count())
        docs = await session.scalar(count.select_from(DocumentRow).where(DocumentRow.id == answer.doc_id))
        chunks = await session.scalar(count.select_from(ChunkRow).where(ChunkRow.doc_id == answer.doc_id))
        vectors = await session.scalar(
            select(func.count()).select_from(EmbeddingRow).join(ChunkRow, ChunkRow.id == EmbeddingRow.chunk_id)
            .where(ChunkRow.doc_id == answer.doc_id)
        )  # fmt: skip
    return int(docs or 0), int(chunks or 0), int(vectors or 0)


async def test_only_an_approved_answer_is_searchable_and_only_in_its_collection(kit: Kit) -> None:
    await kit.ingest_manual()
    answer, _ = await kit.answers.draft(draft())
    assert answer.doc_id not in await kit.found(QUESTION)
    assert await rows(kit.db, answer) == (0, 0, 0)
    chunks_before = await kit.index.count()

    version = await corpus_version(kit.db, "default")
    step = await kit.answers.approve(answer.id, BOB)
    assert step.outcome is Outcome.DONE and step.indexed is True
    assert await rows(kit.db, answer) == (1, 1, 1)
    assert await corpus_version(kit.db, "default") == version + 1  # caches keyed by the version are stale now
    assert (await kit.found(QUESTION))[0] == answer.doc_id
    assert answer.doc_id not in await kit.found(QUESTION, ("other",))

    step = await kit.answers.reject(answer.id, BOB, "the firmware note is wrong")
    assert step.outcome is Outcome.DONE and step.indexed is True
    assert await rows(kit.db, answer) == (0, 0, 0)
    assert await kit.index.count() == chunks_before
    assert answer.doc_id not in await kit.found(QUESTION)


async def test_an_edit_of_an_approved_answer_is_indexed_at_once(kit: Kit) -> None:
    await kit.ingest_manual()
    answer, _ = await kit.answers.draft(draft())
    await kit.answers.approve(answer.id, BOB)
    step = await kit.answers.edit(answer.id, BOB, answer="Yes since firmware 3.0: Settings, Sound, Multi-Output.")
    assert step.outcome is Outcome.DONE and step.indexed is True
    async with kit.db.session() as session:
        text = await session.scalar(select(ChunkRow.text).where(ChunkRow.doc_id == answer.doc_id))
    assert text == "Yes since firmware 3.0: Settings, Sound, Multi-Output."


async def test_moving_an_answer_to_another_collection_takes_it_out_of_the_first(kit: Kit) -> None:
    await kit.ingest_manual()
    answer, _ = await kit.answers.draft(draft())
    await kit.answers.approve(answer.id, BOB)
    await kit.answers.reject(answer.id, BOB)
    step = await kit.answers.approve(answer.id, BOB, collection="support")
    assert step.outcome is Outcome.DONE
    assert answer.doc_id in await kit.found(QUESTION, ("support",))
    assert answer.doc_id not in await kit.found(QUESTION, ("default",))
    async with kit.db.session() as session:
        held = set(await session.scalars(select(DocumentRow.collection).where(DocumentRow.id == answer.doc_id)))
    assert held == {"support"}


async def test_sync_repairs_what_a_step_without_its_index_change_left_behind(kit: Kit) -> None:
    await kit.ingest_manual()
    published, _ = await kit.answers.draft(draft("m1"))
    await kit.answers.approve(published.id, BOB)
    forgotten, _ = await kit.answers.draft(draft("m2", answer="Approved while the process died before indexing it."))
    await kit.answers.store.approve(forgotten.id, BOB, expires_at=None)  # the status changed, the index did not
    await kit.answers.store.reject(published.id, BOB)  # and this one left the index holding a rejected answer

    report = await kit.answers.sync()
    assert (report.published, report.withdrawn) == (1, 1)
    assert await rows(kit.db, published) == (0, 0, 0)
    assert (await rows(kit.db, forgotten))[0] == 1
    again = await kit.answers.sync()
    assert (again.published, again.withdrawn) == (0, 0)  # unchanged: a hash comparison, nothing re-embedded


async def test_an_index_outage_during_a_rejection_changes_nothing_and_a_later_try_works(kit: Kit) -> None:
    await kit.ingest_manual()
    answer, _ = await kit.answers.draft(draft())
    await kit.answers.approve(answer.id, BOB)
    kit.index.down = True
    step = await kit.answers.reject(answer.id, BOB)
    assert step.outcome is Outcome.INDEX_FAILED and step.indexed is False
    current = await kit.answers.store.get(answer.id)
    assert current is not None and current.status is AnswerStatus.APPROVED  # still said as it is: approved, indexed
    kit.index.down = False
    assert (await kit.answers.reject(answer.id, BOB)).outcome is Outcome.DONE
    assert await rows(kit.db, answer) == (0, 0, 0)


async def test_an_index_outage_during_an_approval_is_published_by_the_next_sync(kit: Kit) -> None:
    await kit.ingest_manual()
    answer, _ = await kit.answers.draft(draft())
    kit.index.down = True
    step = await kit.answers.approve(answer.id, BOB)
    assert step.outcome is Outcome.DONE and step.indexed is False
    assert await rows(kit.db, answer) == (0, 0, 0)  # the vectors go first: nothing half-written
    kit.index.down = False
    assert (await kit.answers.sync()).published == 1
    assert (await kit.found(QUESTION))[0] == answer.doc_id


async def test_a_changed_section_sends_the_answer_back_to_review_with_the_diff(kit: Kit) -> None:
    await kit.ingest_manual()
    mentions = await kit.answers.mentions.resolve(text=f"See <{BLUETOOTH}|the manual>. {ANSWER}")
    assert [(m.title, m.url) for m in mentions] == [("Connecting Bluetooth headphones", BLUETOOTH)]
    answer, _ = await kit.answers.draft(draft(mentions=mentions))
    await kit.answers.approve(answer.id, BOB)
    sound = kit.folder / "audio" / "sound.md"

    # another section of the same page changes: the answer stands, its stored hash moves on
    sound.write_text(sound.read_text().replace("Night mode compresses", "Night mode gently compresses"))
    await kit.ingest_manual()
    kept = await kit.answers.store.get(answer.id)
    assert kept is not None and kept.status is AnswerStatus.APPROVED
    assert kept.mentions[0].content_hash != mentions[0].content_hash

    # the section it relies on changes: back to review, out of the index, with the difference
    sound.write_text(sound.read_text().replace("Up to two headphones", "Up to four headphones"))
    await kit.ingest_manual()
    expired = await kit.answers.store.get(answer.id)
    assert expired is not None and expired.status is AnswerStatus.EXPIRED
    assert expired.expired_by is ExpiryCause.DOCUMENT_CHANGED and "Connecting Bluetooth headphones" in (
        expired.reason or "")
    assert expired.diff is not None
    removed = [line for line in expired.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in expired.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert any("Up to two headphones" in line for line in removed)
    assert any("Up to four headphones" in line for line in added)
    assert await rows(kit.db, expired) == (0, 0, 0)
    assert answer.doc_id not in await kit.found(QUESTION)


async def test_a_removed_page_sends_the_answer_back_as_removed(kit: Kit) -> None:
    await kit.ingest_manual()
    mentions = await kit.answers.mentions.resolve(text=f"The manual's page: {BASE}audio/sound.md.")
    assert [m.section for m in mentions] == [""]  # the whole page
    answer, _ = await kit.answers.draft(draft(mentions=mentions))
    await kit.answers.approve(answer.id, BOB)
    (kit.folder / "audio" / "sound.md").unlink()
    await kit.ingest_manual()
    expired = await kit.answers.store.get(answer.id)
    assert expired is not None and expired.expired_by is ExpiryCause.DOCUMENT_REMOVED
    assert expired.diff is not None and "removed from the documentation" in expired.diff


async def test_answers_past_their_time_go_back_to_review(kit: Kit) -> None:
    await kit.ingest_manual()
    answer, _ = await kit.answers.draft(draft())
    step = await kit.answers.approve(answer.id, BOB)
    assert step.answer is not None and step.answer.expires_at == T0 + timedelta(days=30)
    assert await kit.answers.expire_due(T0 + timedelta(days=29)) == []
    (aged,) = await kit.answers.expire_due(T0 + timedelta(days=31))
    assert aged.outcome is Outcome.DONE and aged.answer is not None
    assert aged.answer.expired_by is ExpiryCause.AGE and aged.answer.status is AnswerStatus.EXPIRED
    assert answer.doc_id not in await kit.found(QUESTION)


async def test_the_cited_chunks_of_the_thread_are_mentions_as_the_channel_may_see_them(kit: Kit) -> None:
    await kit.ingest_manual()
    async with kit.db.session() as session:
        chunk = await session.scalar(select(ChunkRow.id).where(ChunkRow.url == BLUETOOTH))
    assert chunk is not None
    (near,) = await kit.answers.mentions.resolve(text=ANSWER, near_chunk_ids=[chunk])
    assert near.url == BLUETOOTH and "Up to two headphones" in near.excerpt
    assert await kit.answers.mentions.resolve(text=ANSWER, near_chunk_ids=[chunk], collections=("secret",)) == ()
