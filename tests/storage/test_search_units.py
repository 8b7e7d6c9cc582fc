"""The unit level: each chunk's sentences, table rows and list items embedded in the background, saved beside the
search snapshot, read back at a restart instead of embedded again, and raising a cross-language question's dense
score toward its best unit; a failing embedder leaves the search working without it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from pipeline.types import SearchHit, SearchRequest
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever
from storage.search.units import text_units
from tests.helpers.held_embedder import HeldPassages

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"
BASE = "https://docs.example.com/manual"
# The fixture manual is English; declaring its docs German makes a request with language "ru" cross-language while
# the hashing embedder (bag of words, no languages) keeps the cosines predictable: a text equal to a sentence has
# cosine 1 with that unit.
DOCS_LANGUAGE = "de"


class FailingPassages(HashingEmbedder):
    """Questions embed; every passage call (titles, units) fails, as a crashed embedding engine would."""

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise RuntimeError("embedding engine down")


def retriever(
    db: Database, embedder: HashingEmbedder, folder: Path | None, index: LocalVectorIndex | None = None
) -> HybridRetriever:
    index = index or LocalVectorIndex(64)
    return HybridRetriever(db, embedder, index, docs_language=DOCS_LANGUAGE, snapshot_dir=folder)


async def ingested(db: Database, folder: Path | None) -> tuple[HybridRetriever, HashingEmbedder]:
    embedder, index = HashingEmbedder(), LocalVectorIndex(64)
    first = retriever(db, embedder, folder, index)
    await Ingestor(db, embedder, index, on_change=first.reload).ingest([str(MANUAL)], base_url=BASE)
    await first.wait_for_levels()
    return first, embedder


def level_files(folder: Path) -> tuple[Path, Path]:
    """Where the title and unit levels are saved beside the snapshot (the hashing embedder's 64 dimensions)."""
    return folder / "titles-64.npz", folder / "units-64.npz"


def a_long_chunk_sentence(retriever: HybridRetriever) -> tuple[str, str]:
    """A chunk of several units and its longest unit."""
    corpus = retriever.corpus
    assert corpus is not None
    for row, chunk in enumerate(corpus.chunks):
        units = text_units(corpus.text(row))
        if len(units) >= 4:
            return chunk.id, max(units, key=len)
    raise AssertionError("the fixture manual has no chunk of four sentences")


@pytest.mark.integration
async def test_units_are_saved_beside_the_snapshot_and_read_back_at_a_restart(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    first, _ = await ingested(db, folder)
    assert all(saved.is_file() for saved in level_files(folder))

    embedder = HashingEmbedder()
    restarted = retriever(db, embedder, folder)
    await restarted.load()
    await restarted.wait_for_levels()
    assert embedder.passages_embedded == 0  # chunks, titles and units all from the folder
    _, sentence = a_long_chunk_sentence(restarted)
    request = SearchRequest(text=sentence, language="ru", top_k=3)
    assert [h.chunk_id for h in (await restarted.search(request)).hits] == [
        h.chunk_id for h in (await first.search(request)).hits
    ]


@pytest.mark.integration
async def test_a_cross_language_question_is_raised_toward_its_best_sentence(db: Database) -> None:
    found, _ = await ingested(db, None)
    chunk_id, sentence = a_long_chunk_sentence(found)

    def dense_of(hits: Sequence[SearchHit]) -> float:
        return next(h.level_scores["dense"] for h in hits if h.chunk_id == chunk_id)

    same_language = (await found.search(SearchRequest(text=sentence, language=DOCS_LANGUAGE, top_k=5))).hits
    cross = (await found.search(SearchRequest(text=sentence, language="ru", top_k=5))).hits
    passage = dense_of(same_language)  # the question/passage cosine alone
    assert passage < 0.9
    # titles first (never lower), then 2/3 of the way to the unit's cosine of 1
    assert dense_of(cross) >= 1 - (1 - passage) / 3 - 1e-5
    assert cross[0].chunk_id == chunk_id


@pytest.mark.integration
async def test_without_title_and_unit_vectors_a_cross_language_search_still_answers(
    db: Database, tmp_path: Path
) -> None:
    await ingested(db, None)  # the chunks and their vectors in the database
    folder = tmp_path / "replica"
    replica = retriever(db, FailingPassages(), folder)  # reads the stored chunk vectors, then cannot embed levels
    await replica.load()
    await replica.wait_for_levels()
    assert not any(saved.exists() for saved in level_files(folder))
    _, sentence = a_long_chunk_sentence(replica)
    same_language = (await replica.search(SearchRequest(text=sentence, language=DOCS_LANGUAGE, top_k=5))).hits
    cross = (await replica.search(SearchRequest(text=sentence, language="ru", top_k=5))).hits
    assert cross and [h.chunk_id for h in cross] == [h.chunk_id for h in same_language]
    assert cross[0].level_scores["dense"] == pytest.approx(same_language[0].level_scores["dense"])  # nothing raised


@pytest.mark.integration
async def test_close_stops_the_background_levels_and_the_next_start_embeds_what_is_missing(
    db: Database, tmp_path: Path
) -> None:
    await ingested(db, None)  # the chunks and their vectors in the database
    folder = tmp_path / "index"
    embedder = HeldPassages()
    stopped = retriever(db, embedder, folder)
    await stopped.load()  # restores nothing, reads the stored chunk vectors, starts the levels in the background
    await asyncio.wait_for(embedder.held.wait(), timeout=60)
    await stopped.close()
    assert embedder.cancelled.is_set()  # stopped, not left waiting for the loop's end
    assert not any(saved.exists() for saved in level_files(folder))
    _, sentence = a_long_chunk_sentence(stopped)
    assert (await stopped.search(SearchRequest(text=sentence, language="ru", top_k=3))).hits  # still searches

    restarted_embedder = HashingEmbedder()
    restarted = retriever(db, restarted_embedder, folder)
    await restarted.load()
    await restarted.wait_for_levels()
    assert restarted_embedder.passages_embedded > 0  # what the closed one did not finish
    assert all(saved.is_file() for saved in level_files(folder))


@pytest.mark.integration
async def test_only_a_question_in_another_language_than_the_docs_reads_as_cross_language(db: Database) -> None:
    found, _ = await ingested(db, None)
    _, sentence = a_long_chunk_sentence(found)
    assert found.reads_cross_language(SearchRequest(text=sentence, language="ru"))
    assert not found.reads_cross_language(SearchRequest(text=sentence, language=DOCS_LANGUAGE))
    # the pipeline's English form of the question is searched as monolingual
    assert not found.reads_cross_language(SearchRequest(text=sentence, language="ru", text_eng=sentence))
    unloaded = retriever(db, HashingEmbedder(), None)
    assert not unloaded.reads_cross_language(SearchRequest(text=sentence, language="ru"))  # nothing loaded yet


@pytest.mark.integration
async def test_a_question_in_the_docs_language_is_ordered_by_its_best_unit_and_graded_without_it(
    db: Database, tmp_path: Path
) -> None:
    # the same words in the same order in both pages, so the keyword levels (pairs of adjacent words too) and a
    # bag-of-words chunk vector tie; only b.md has the asked sentence as one sentence
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(
        "# Remote\n\n## Pairing\n\nHold the pairing button. For five seconds the light blinks twice when it is done.\n"
    )
    (docs / "b.md").write_text(
        "# Remote\n\n## Pairing\n\nHold the pairing button for five seconds. The light blinks twice when it is done.\n"
    )
    embedder, index = HashingEmbedder(), LocalVectorIndex(64)
    found = HybridRetriever(db, embedder, index, docs_language=DOCS_LANGUAGE)
    await Ingestor(db, embedder, index, on_change=found.reload).ingest([str(docs)], base_url=BASE)
    await found.wait_for_levels()
    unraised = HybridRetriever(db, FailingPassages(), LocalVectorIndex(64), docs_language=DOCS_LANGUAGE)
    await unraised.load()  # the same chunks and vectors; its unit level cannot be embedded
    await unraised.wait_for_levels()
    request = SearchRequest(text="Hold the pairing button for five seconds.", language=DOCS_LANGUAGE, top_k=2)
    plain, ordered = await unraised.search(request), await found.search(request)

    assert plain.hits[0].score == pytest.approx(plain.hits[1].score)  # a tie without units
    assert ordered.hits[0].url.endswith("b.md#pairing") and ordered.hits[0].score > ordered.hits[1].score
    assert ordered.quality == plain.quality  # graded by the score without the units
    assert (ordered.top_score, ordered.margin) == pytest.approx((plain.top_score, plain.margin))
