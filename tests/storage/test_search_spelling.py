"""A question's terms respelt the way the docs write them (storage/search/spelling.py), on real keyword levels and
through the hybrid retriever after a real ingest: the section a person means ranks first although they typed
"wifi", "blue tooth", "coax" or "pairring"."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.types import SearchRequest
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever
from storage.search.keyword import KeywordLevel
from storage.search.spelling import spelled_as_docs

TEXTS = [
    "Connect to a Wi-Fi network from the network menu.",
    "Pair Bluetooth headphones from the sound output menu.",
    "Connect the coaxial antenna cable to the ANT IN port.",
    "The Play button starts playback. Fresh air keeps the set cool.",
    "Watch TV PLUS channels without a subscription.",
]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("Is it WiFi?", ["wi", "fi"]),  # written as two adjacent terms in the docs
        ("does it have tvplus", ["tv", "plus"]),
        ("blue tooth headphones", ["bluetooth", "headphon"]),  # two words the docs write as one
        ("does it have a coax input", ["coaxial", "input"]),  # an abbreviation of a docs term
        ("pairring headphones", ["pair", "headphon"]),  # misspelt: one edit from a docs term
        ("connect to the network", ["connect", "network"]),  # known terms stay as they are
    ],
)
def test_unknown_terms_are_respelt_as_the_docs_write_them(question: str, terms: list[str]) -> None:
    assert spelled_as_docs(question, KeywordLevel(TEXTS)) == terms


@pytest.mark.unit
def test_what_the_docs_do_not_place_stays_unknown() -> None:
    level = KeywordLevel(TEXTS)
    # "air" and "play" are both known but never stand together; a four-letter name is not corrected to a near word
    assert spelled_as_docs("airplay or vudu", level) == ["airplay", "vudu"]
    # two known words stay two, though the docs also have their concatenation
    assert spelled_as_docs("network menu", KeywordLevel([*TEXTS, "The networkmenu daemon."])) == ["network", "menu"]


@pytest.mark.integration
async def test_the_section_a_person_means_ranks_first_whatever_they_typed(db: Database, tmp_path: Path) -> None:
    embedder, index = HashingEmbedder(64), LocalVectorIndex(64)
    retriever = HybridRetriever(db, embedder, index)
    ingestor = Ingestor(db, embedder, index, on_change=retriever.reload)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "network.md").write_text(
        "# Network\n\n## Wireless\n\nConnect the television to a Wi-Fi network from the settings.\n\n"
        "## Wired\n\nConnect the television to the router with a LAN cable from the settings.\n"
    )
    (docs / "antenna.md").write_text(
        "# Antenna\n\n## Aerial\n\nScrew the coaxial cable into the television's aerial input.\n\n"
        "## Scanning\n\nScan for channels after the cable is connected from the settings.\n"
    )
    await ingestor.ingest([str(docs)], collection="default")
    for question, section in [
        ("can i connect the television with wifi", "network.md#wireless"),
        ("where does the coax cable go", "antenna.md#aerial"),
    ]:
        response = await retriever.search(SearchRequest(text=question, language="en"))
        assert response.hits[0].url.endswith(section), (question, [h.url for h in response.hits])


@pytest.mark.unit
def test_a_contraction_without_its_apostrophe_stays_a_function_word() -> None:
    level = KeywordLevel([*TEXTS, "If it doesn't work, restart it. Don't unplug it."])
    assert spelled_as_docs("what if that doesnt work", level) == ["doesnt", "work"]
    assert spelled_as_docs("it dont connect", level) == ["dont", "connect"]  # not "don" "t", as the docs have it
