"""PineconeIndex against the fake Pinecone (tests/fakes/pinecone_server.py) through the real SDK over loopback HTTP."""

from __future__ import annotations

import asyncio
import math
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np
import pytest
from pinecone import AsyncPinecone
from pydantic import SecretStr

from storage.pinecone_index import (
    MAX_IDS_PER_DELETE,
    MAX_VECTORS_PER_UPSERT,
    PineconeIndex,
    PineconeIndexMismatch,
    reindex_to_pinecone,
)
from storage.vector_index import VectorIndexUnavailable, VectorRecord
from tests.fakes.pinecone_server import MAX_REQUEST_BYTES, FakePinecone

pytestmark = pytest.mark.integration

INDEX = "docbot-test"
DIM = 8


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def chunk(doc: str, n: int, *, collection: str = "default", dim: int = DIM, seed: int = 0) -> VectorRecord:
    return VectorRecord(
        id=f"{doc}#{n}",
        vector=unit(zlib.crc32(f"{doc}/{n}/{seed}".encode()), dim),
        doc_id=doc,
        section=f"section-{n}",
        title=f"{doc} part {n}",
        crumbs=("Manual", doc, f"Part {n}"),
        url=f"https://docs.example.test/{doc}#section-{n}",
        collection=collection,
    )


# Requests of a megabyte or two: the fake parses each one on a busy test worker, far slower than the 0.2 s request
# timeout the fault tests below use to cut a sleeping fake (two loaded runs side by side once timed out an upsert).
BULK: dict[str, Any] = {"request_timeout_s": 30.0, "write_deadline_s": 120.0, "query_deadline_s": 30.0}


@pytest.fixture
async def fake() -> AsyncIterator[FakePinecone]:
    async with FakePinecone() as server:
        server.timeout_sleep_s = 0.4
        yield server


@pytest.fixture
async def make_index(fake: FakePinecone) -> AsyncIterator[Callable[..., PineconeIndex]]:
    made: list[PineconeIndex] = []

    def make(**overrides: Any) -> PineconeIndex:
        options: dict[str, Any] = {
            "api_key": SecretStr(fake.api_key),
            "index_name": INDEX,
            "dimension": DIM,
            "host": fake.url,
            "ready_poll_s": 0.01,
            "request_timeout_s": 0.2,
            "query_deadline_s": 0.8,
            "write_deadline_s": 2.0,
        }
        options.update(overrides)
        index = PineconeIndex(**options)
        made.append(index)
        return index

    yield make
    for index in made:
        await index.close()


# ---- index creation and shape -----------------------------------------------------------------------------------


async def test_missing_index_is_created_serverless_cosine_with_embedder_dimension(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index(cloud="gcp", region="europe-west4")
    await index.open()

    creates = fake.calls_to("/indexes", plane="control")
    assert len(creates) == 1 and creates[0].method == "POST" and creates[0].status == 201
    assert creates[0].body == {
        "name": INDEX,
        "schema": {"fields": {"_values": {"type": "dense_vector", "dimension": DIM, "metric": "cosine"}}},
        "deployment": {"deployment_type": "managed", "cloud": "gcp", "region": "europe-west4"},
    }
    describes = fake.calls_to(f"/indexes/{INDEX}", plane="control")
    assert [c.status for c in describes] == [404, 200, 200]  # missing, then polled until ready
    assert all(c.api_version == "2026-07" for c in fake.calls)
    assert await index.count() == 0


async def test_existing_index_is_used_without_creating(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    await fake.add_index(INDEX, dimension=DIM)
    await make_index().open()
    assert fake.calls_to("/indexes", plane="control") == []


@pytest.mark.parametrize(("dimension", "metric"), [(16, "cosine"), (DIM, "dotproduct")])
async def test_existing_index_of_another_shape_raises_a_typed_error(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex], dimension: int, metric: str
) -> None:
    await fake.add_index(INDEX, dimension=dimension, metric=metric)
    index = make_index()
    with pytest.raises(PineconeIndexMismatch) as caught:
        await index.open()
    assert (caught.value.actual_dimension, caught.value.actual_metric) == (dimension, metric)
    assert caught.value.expected_dimension == DIM
    assert fake.calls_to("/indexes", plane="control") == []
    # at question time the mismatch becomes "unavailable", so search still answers from keywords
    with pytest.raises(VectorIndexUnavailable) as unavailable:
        await index.query(unit(1), top_k=3, collections=["default"])
    assert unavailable.value.reason == "misconfigured"


# ---- batching ---------------------------------------------------------------------------------------------------


async def test_upsert_of_2500_small_vectors_is_three_requests_within_the_count_limit(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index(**BULK)
    records = [chunk(f"doc{i // 10}", i % 10) for i in range(2500)]
    await index.upsert(records)

    upserts = fake.calls_to("/vectors/upsert")
    assert sorted(len(c.body["vectors"]) for c in upserts if c.body) == [500, 1000, 1000]
    assert all(c.status == 200 and c.body_bytes <= MAX_REQUEST_BYTES for c in upserts)
    assert fake.stored_ids(INDEX, "default") == {r.id for r in records}


async def test_upsert_of_384_dim_vectors_stays_under_two_megabytes_per_request(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index(dimension=384, **BULK)
    records = [chunk(f"doc{i // 10}", i % 10, dim=384) for i in range(2500)]
    await index.upsert(records)

    upserts = fake.calls_to("/vectors/upsert")
    total = sum(c.body_bytes for c in upserts)
    assert all(c.status == 200 for c in upserts)
    assert max(c.body_bytes for c in upserts) <= MAX_REQUEST_BYTES
    assert all(len(c.body["vectors"]) <= MAX_VECTORS_PER_UPSERT for c in upserts if c.body)
    assert len(upserts) == math.ceil(total / max(c.body_bytes for c in upserts))  # batches are full, not tiny
    assert len(fake.stored_ids(INDEX, "default")) == 2500
    print(f"\n2500 x 384-dim vectors: {len(upserts)} upsert requests, largest {max(c.body_bytes for c in upserts)} B")


async def test_delete_of_many_ids_is_split_within_the_id_limit(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index(**BULK)
    records = [chunk("big", i) for i in range(1500)]
    await index.upsert(records)
    await index.delete([r.id for r in records], "default")
    deletes = fake.calls_to("/vectors/delete")
    assert [len(c.body["ids"]) for c in deletes if c.body] == [MAX_IDS_PER_DELETE, 500]
    assert fake.stored_ids(INDEX, "default") == set()


# ---- collections ------------------------------------------------------------------------------------------------


async def test_each_collection_is_its_own_namespace_with_full_metadata(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    await index.upsert([chunk("a", 0), chunk("b", 0, collection="team-a"), chunk("c", 0, collection="team-a")])

    by_namespace = {c.namespace: c.body["vectors"] for c in fake.calls_to("/vectors/upsert") if c.body}
    assert {ns: [v["id"] for v in vs] for ns, vs in by_namespace.items()} == {
        "default": ["a#0"],
        "team-a": ["b#0", "c#0"],
    }
    assert by_namespace["team-a"][0]["metadata"] == {
        "chunk_id": "b#0",
        "doc_id": "b",
        "section": "section-0",
        "crumbs": ["Manual", "b", "Part 0"],
        "url": "https://docs.example.test/b#section-0",
        "title": "b part 0",
        "collection": "team-a",
    }


async def test_query_of_a_restricted_collection_set_filters_inside_pinecone(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    target = chunk("secret", 0, collection="hr")
    allowed = [chunk("pub", i, collection="eng") for i in range(5)]
    await index.upsert([target, *allowed])
    fake.clear_calls()

    matches = await index.query(target.vector, top_k=3, collections=["eng"])

    queries = fake.calls_to("/query")
    assert [(c.namespace, c.body["filter"], c.body["topK"]) for c in queries if c.body] == [
        ("eng", {"collection": {"$eq": "eng"}}, 3)
    ]
    assert len(matches) == 3 and {m.id for m in matches} <= {r.id for r in allowed}  # the closest (hr) is not seen


async def test_query_across_collections_queries_each_namespace_and_merges_by_score(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    records = [chunk("x", i, collection="eng") for i in range(6)] + [chunk("y", i, collection="ops") for i in range(6)]
    await index.upsert(records)
    fake.clear_calls()
    query = records[7].vector

    matches = await index.query(query, top_k=4, collections=["ops", "eng", "ops"])

    assert sorted(c.namespace or "" for c in fake.calls_to("/query")) == ["eng", "ops"]
    expected = sorted(records, key=lambda r: -float(np.dot(query, r.vector)))[:4]
    assert [m.id for m in matches] == [r.id for r in expected]
    assert matches[0].id == records[7].id and matches[0].score == pytest.approx(1.0, abs=1e-5)
    assert await index.query(query, top_k=4, collections=[]) == []


# ---- re-ingest, deletes, idempotency ----------------------------------------------------------------------------


async def test_reingest_of_a_changed_document_removes_its_old_vectors(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    await index.upsert([chunk("pairing", i) for i in range(3)] + [chunk("battery", i) for i in range(2)])
    old_battery = [f"battery#{i}" for i in range(2)]

    await index.delete(old_battery, "default")
    await index.upsert([chunk("battery", 0, seed=1)])

    assert fake.stored_ids(INDEX, "default") == {"pairing#0", "pairing#1", "pairing#2", "battery#0"}
    best = await index.query(chunk("battery", 0, seed=1).vector, top_k=1, collections=["default"])
    assert best[0].id == "battery#0"

    await index.delete_documents(["pairing"], "default")  # by metadata filter, whatever the chunk ids were
    assert fake.stored_ids(INDEX, "default") == {"battery#0"}
    assert fake.calls_to("/vectors/delete")[-1].body == {
        "namespace": "default",
        "filter": {"doc_id": {"$in": ["pairing"]}},
    }


async def test_upserting_the_same_records_twice_changes_nothing(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    records = [chunk("doc", i) for i in range(20)]
    await index.upsert(records)
    first = await index.query(records[3].vector, top_k=5, collections=["default"])
    await index.upsert(records)
    await index.delete(["never-existed"], "default")

    assert await index.count() == 20
    assert await index.query(records[3].vector, top_k=5, collections=["default"]) == first


# ---- eventual consistency ---------------------------------------------------------------------------------------


async def test_a_query_right_after_upsert_may_miss_new_vectors_but_never_fails(
    make_index: Callable[..., PineconeIndex], fake: FakePinecone
) -> None:
    fake.visibility_delay_s = 3600.0  # until settle()
    index = make_index()
    record = chunk("fresh", 0)
    await index.upsert([record])

    assert await index.query(record.vector, top_k=3, collections=["default"]) == []  # not visible yet: no error
    assert await index.count() == 0
    fake.settle()
    assert [m.id for m in await index.query(record.vector, top_k=3, collections=["default"])] == ["fresh#0"]
    assert await index.count() == 1

    await index.delete([record.id], "default")  # a delete is eventually consistent too
    assert [m.id for m in await index.query(record.vector, top_k=3, collections=["default"])] == ["fresh#0"]
    fake.settle()
    assert await index.query(record.vector, top_k=3, collections=["default"]) == []


async def test_the_fake_lists_indexes_in_the_sdk_format(fake: FakePinecone) -> None:
    await fake.add_index("one", dimension=DIM)
    await fake.add_index("two", dimension=384, metric="dotproduct")
    async with AsyncPinecone(api_key=fake.api_key, host=fake.url) as client:
        listed = {i.name: (i.schema.fields["_values"], i.host) async for i in client.indexes.list()}
    assert {name: (f.dimension, f.metric) for name, (f, _) in listed.items()} == {
        "one": (DIM, "cosine"),
        "two": (384, "dotproduct"),
    }
    assert listed["one"][1] == fake.indexes["one"].host


# ---- failures ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("timeout", "timeout"), ("429", "rate_limited"), ("500", "server_error"), ("503", "server_error")],
)
async def test_persistent_failures_are_retried_then_unavailable_within_the_deadline(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex], kind: str, reason: str
) -> None:
    index = make_index(query_deadline_s=0.6)
    await index.open()
    fake.fail(kind, plane="data", path="/query")

    # The fake fails for ever: the index must give up by itself (its deadline), not wait for the fake to recover.
    # The generous bound only keeps a broken deadline from hanging the suite; it is not a timing claim.
    with pytest.raises(VectorIndexUnavailable) as caught:
        await asyncio.wait_for(index.query(unit(1), top_k=3, collections=["default"]), timeout=60)

    assert caught.value.reason == reason and caught.value.operation == "query"
    attempts = len(fake.calls_to("/query"))
    assert attempts >= 2  # retried (by the SDK's transport, by tenacity, or both)
    await asyncio.sleep(0.2)
    assert len(fake.calls_to("/query")) == attempts  # and nothing keeps retrying after the question gave up


async def test_a_wrong_api_key_fails_fast_without_retrying(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    await fake.add_index(INDEX, dimension=DIM)
    index = make_index(api_key=SecretStr("wrong-key-1234"))
    with pytest.raises(VectorIndexUnavailable) as caught:
        await index.query(unit(1), top_k=3, collections=["default"])
    assert caught.value.reason == "auth" and caught.value.attempts == 1
    assert len(fake.calls) == 1  # one request: a wrong key is not worth retrying
    assert "wrong-key" not in str(caught.value) and "wrong-key" not in repr(index)


async def test_an_auth_failure_on_the_data_plane_is_unavailable_too(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    await index.open()
    fake.fail("401", plane="data")
    with pytest.raises(VectorIndexUnavailable) as caught:
        await index.upsert([chunk("a", 0)])
    assert caught.value.reason == "auth" and len(fake.calls_to("/vectors/upsert")) == 1


async def test_a_transient_failure_is_retried_and_the_call_succeeds(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    await index.upsert([chunk("a", 0)])
    fake.fail("503", times=2, plane="data", path="/query")
    matches = await index.query(chunk("a", 0).vector, top_k=1, collections=["default"])
    assert [m.id for m in matches] == ["a#0"]
    assert [c.status for c in fake.calls_to("/query")] == [503, 503, 200]


async def test_an_unreachable_control_plane_is_unavailable(make_index: Callable[..., PineconeIndex]) -> None:
    index = make_index(host="http://127.0.0.1:9", query_deadline_s=0.5)  # nothing listens on the discard port
    with pytest.raises(VectorIndexUnavailable) as caught:
        await index.query(unit(1), top_k=3, collections=["default"])
    assert caught.value.reason in ("connection", "timeout")


# ---- doctor -----------------------------------------------------------------------------------------------------


async def test_check_reports_a_wrong_dimension(fake: FakePinecone, make_index: Callable[..., PineconeIndex]) -> None:
    await fake.add_index(INDEX, dimension=384)
    health = await make_index().check()
    assert health.exists and health.dimension == 384 and health.metric == "cosine"
    assert not health.ok and any("dimension is 384" in p and str(DIM) in p for p in health.problems)


async def test_check_reports_counts_of_a_healthy_index(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    await index.upsert([chunk("a", i) for i in range(3)] + [chunk("b", 0, collection="ops")])
    health = await index.check()
    assert health.ok and health.ready and health.vector_count == 4
    assert health.namespaces == {"default": 3, "ops": 1}


async def test_check_of_a_missing_or_unreachable_index_says_so_without_creating(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    health = await make_index().check()
    assert not health.exists and "does not exist" in health.problems[0]
    assert fake.indexes == {}
    down = await make_index(host="http://127.0.0.1:9", query_deadline_s=0.3).check()
    assert not down.ok and "unreachable" in down.problems[0]


# ---- migration --------------------------------------------------------------------------------------------------


async def test_reindex_moves_stored_vectors_without_reembedding(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index(**BULK)
    records = [chunk(f"d{i // 4}", i % 4, collection="eng" if i % 3 else "ops") for i in range(1200)]
    stale = chunk("old-model", 0, dim=DIM * 2)

    async def stored() -> AsyncIterator[VectorRecord]:
        for record in [*records, stale]:
            yield record

    report = await reindex_to_pinecone(stored(), index, chunk_size=500)

    assert (report.read, report.upserted, report.skipped_wrong_dimension) == (1201, 1200, 1)
    assert report.per_collection == {"eng": 800, "ops": 400} and report.target_count == 1200
    assert report.upsert_requests == len(fake.calls_to("/vectors/upsert")) >= 3
    assert fake.stored_ids(INDEX, "eng") | fake.stored_ids(INDEX, "ops") == {r.id for r in records}
    uploaded = {v["id"]: v["values"] for c in fake.calls_to("/vectors/upsert") if c.body for v in c.body["vectors"]}
    assert np.allclose(uploaded[records[5].id], records[5].vector, atol=1e-7)  # the stored vector, not a new one

    again = await reindex_to_pinecone(records, index)  # a plain iterable works too, and a rerun is harmless
    assert again.upserted == 1200 and again.target_count == 1200


# ---- the recorded calls the docs show ---------------------------------------------------------------------------


async def test_recorded_calls_of_ingest_reingest_and_filtered_query(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    docs = {"pairing": 3, "battery": 2}
    await index.upsert([chunk(doc, i, collection="manual") for doc, n in docs.items() for i in range(n)])
    ingest = [c.summary() for c in fake.calls]
    ingest_calls = [(c.plane, c.method, c.path, c.status) for c in fake.calls]
    fake.clear_calls()

    # re-ingest: "battery" changed and now has one section; "pairing" is unchanged, so nothing is sent for it
    await index.delete([f"battery#{i}" for i in range(2)], "manual")
    await index.upsert([chunk("battery", 0, collection="manual", seed=1)])
    reingest = [c.summary() for c in fake.calls]
    reingest_calls = [(c.plane, c.method, c.path, c.status) for c in fake.calls]
    fake.clear_calls()

    await index.query(chunk("pairing", 1, collection="manual").vector, top_k=2, collections=["manual"])
    query = [c.summary() for c in fake.calls]

    print("\n-- ingest\n" + "\n".join(ingest))
    print("-- re-ingest with one changed document\n" + "\n".join(reingest))
    print("-- filtered query\n" + "\n".join(query))
    assert ingest_calls == [
        ("control", "GET", f"/indexes/{INDEX}", 404),
        ("control", "POST", "/indexes", 201),
        ("control", "GET", f"/indexes/{INDEX}", 200),
        ("control", "GET", f"/indexes/{INDEX}", 200),
        ("data", "POST", "/vectors/upsert", 200),
    ]
    assert reingest_calls == [("data", "POST", "/vectors/delete", 200), ("data", "POST", "/vectors/upsert", 200)]
    assert '"filter": {"collection": {"$eq": "manual"}}' in query[0] and '"namespace": "manual"' in query[0]


async def test_scores_for_ids_scores_exactly_the_given_chunks_within_the_allowed_collections(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    index = make_index()
    records = [chunk("x", i, collection="eng") for i in range(6)] + [chunk("y", 0, collection="hr")]
    await index.upsert(records)
    fake.clear_calls()
    query = unit(99)

    scores = await index.scores_for_ids(query, ["x#1", "x#4", "y#0", "missing"], ["eng"])

    assert set(scores) == {"x#1", "x#4"}  # y#0 lives in a collection the caller may not see
    for chunk_id, score in scores.items():
        stored = next(r for r in records if r.id == chunk_id)
        assert score == pytest.approx(float(np.dot(query, stored.vector)), abs=1e-5)
    (call,) = fake.calls_to("/query")
    assert call.body is not None and call.body["filter"] == {
        "$and": [{"collection": {"$eq": "eng"}}, {"chunk_id": {"$in": ["x#1", "x#4", "y#0", "missing"]}}]
    }
    assert await index.scores_for_ids(query, [], ["eng"]) == {}


async def test_a_question_does_not_wait_for_an_index_that_is_still_initialising(
    fake: FakePinecone, make_index: Callable[..., PineconeIndex]
) -> None:
    (await fake.add_index(INDEX, dimension=DIM)).describes_until_ready = 10**6
    index = make_index(query_deadline_s=0.3)
    # The index never becomes ready: the question must give up by itself (bounded only against a hung suite).
    with pytest.raises(VectorIndexUnavailable) as caught:
        await asyncio.wait_for(index.query(unit(1), top_k=3, collections=["default"]), timeout=60)
    assert (caught.value.operation, caught.value.reason) == ("open", "timeout")
    fake.indexes[INDEX].describes_until_ready = 0
    index.query_deadline_s = 5.0  # the point is that it opens now; a loaded CI box needs more than 0.3 s for it
    assert await index.query(unit(1), top_k=3, collections=["default"]) == []  # ready now: opens and answers
