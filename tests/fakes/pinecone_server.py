"""A fake Pinecone speaking the REST formats the `pinecone` 10.x SDK sends (API version 2026-07).

The control plane (list/describe/create/delete index) listens on one ephemeral loopback port; every index gets its own
data plane (upsert, query, delete, describe_index_stats) on another, the way Pinecone Local does, and `describe` hands
that address back as the index `host`. Every request is recorded; failures can be injected (timeout, 429, 5xx, 401);
writes can be made visible to reads only after a delay, to show eventual consistency.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

API_KEY_HEADER = "Api-Key"
MAX_UPSERT_VECTORS = 1000
MAX_REQUEST_BYTES = 2 * 1024 * 1024
MAX_DELETE_IDS = 1000
MAX_TOP_K = 10_000


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One request as the fake saw it (the API key is never recorded, only whether it matched)."""

    plane: str  # "control" or "data"
    index: str | None  # the data plane's index, None on the control plane
    method: str
    path: str
    body: dict[str, Any] | None
    body_bytes: int
    status: int
    api_version: str | None

    @property
    def namespace(self) -> str | None:
        return None if self.body is None else self.body.get("namespace")

    def summary(self) -> str:
        """One line, with vectors reduced to their count, for printing and for the docs."""
        where = f"{self.plane}:{self.index}" if self.index else self.plane
        body = _summarise(self.body)
        return f"{where} {self.method} {self.path}{' ' + body if body else ''} -> {self.status}"


@dataclass(slots=True)
class _Failure:
    kind: str  # "timeout", "429", "500", "503", "401"
    remaining: int | None  # None: every matching request
    plane: str | None  # None: both planes
    path: str | None  # None: every path


@dataclass(slots=True)
class _Stored:
    values: np.ndarray
    metadata: dict[str, Any]
    visible_at: float


@dataclass(slots=True)
class FakeIndex:
    name: str
    dimension: int
    metric: str
    cloud: str
    region: str
    host: str = ""
    describes_until_ready: int = 0
    namespaces: dict[str, dict[str, _Stored]] = field(default_factory=dict)
    tombstones: dict[str, dict[str, float]] = field(default_factory=dict)  # namespace -> id -> visible_at
    runner: web.AppRunner | None = None

    def model(self) -> dict[str, Any]:
        ready = self.describes_until_ready <= 0
        return {
            "name": self.name,
            "host": self.host or None,
            "status": {"ready": ready, "state": "Ready" if ready else "Initializing"},
            "schema": {
                "fields": {"_values": {"type": "dense_vector", "dimension": self.dimension, "metric": self.metric}}
            },
            "deployment": {"deployment_type": "managed", "cloud": self.cloud, "region": self.region},
            "deletion_protection": "disabled",
            "tags": None,
        }

    def visible(self, namespace: str, now: float) -> dict[str, _Stored]:
        """What a read sees now: writes whose visibility time has passed, minus deletes that have landed."""
        stored = self.namespaces.get(namespace, {})
        gone = self.tombstones.get(namespace, {})
        return {
            vid: rec for vid, rec in stored.items() if rec.visible_at <= now and not (vid in gone and gone[vid] <= now)
        }


class FakePinecone:
    """Start with `await fake.start()` (or `async with FakePinecone(...) as fake`); `fake.url` is the control plane."""

    def __init__(self, *, api_key: str = "test-key", visibility_delay_s: float = 0.0) -> None:
        self.api_key = api_key
        self.visibility_delay_s = visibility_delay_s
        self.calls: list[RecordedCall] = []
        self.indexes: dict[str, FakeIndex] = {}
        self.timeout_sleep_s = 5.0
        self._failures: list[_Failure] = []
        self._control: web.AppRunner | None = None
        self.url = ""

    # ---- lifecycle -------------------------------------------------------------------------------------------

    async def start(self) -> FakePinecone:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/indexes", self._list_indexes)
        app.router.add_post("/indexes", self._create_index)
        app.router.add_get("/indexes/{name}", self._describe_index)
        app.router.add_delete("/indexes/{name}", self._delete_index)
        self._control = web.AppRunner(app, access_log=None)
        self.url = await _serve(self._control)
        return self

    async def close(self) -> None:
        for index in self.indexes.values():
            if index.runner is not None:
                await index.runner.cleanup()
        if self._control is not None:
            await self._control.cleanup()

    async def __aenter__(self) -> FakePinecone:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ---- test controls ---------------------------------------------------------------------------------------

    async def add_index(
        self, name: str, *, dimension: int, metric: str = "cosine", cloud: str = "aws", region: str = "us-east-1"
    ) -> FakeIndex:
        """An index that already exists before the code under test runs."""
        index = FakeIndex(name=name, dimension=dimension, metric=metric, cloud=cloud, region=region)
        await self._serve_index(index)
        self.indexes[name] = index
        return index

    def fail(self, kind: str, *, times: int | None = None, plane: str | None = None, path: str | None = None) -> None:
        """Make matching requests fail: `timeout` (no answer in time), `429`, `500`, `503`, `401`."""
        if kind not in ("timeout", "429", "500", "503", "401"):
            raise ValueError(f"unknown failure kind {kind!r}")
        self._failures.append(_Failure(kind, times, plane, path))

    def settle(self) -> None:
        """Make every pending write and delete visible now (ends the eventual-consistency window)."""
        for index in self.indexes.values():
            for stored in index.namespaces.values():
                for record in stored.values():
                    record.visible_at = min(record.visible_at, 0.0)
            for graveyard in index.tombstones.values():
                for vid in graveyard:
                    graveyard[vid] = min(graveyard[vid], 0.0)

    def heal(self) -> None:
        self._failures.clear()

    def calls_to(self, path: str, *, plane: str | None = None) -> list[RecordedCall]:
        return [c for c in self.calls if c.path == path and (plane is None or c.plane == plane)]

    def clear_calls(self) -> None:
        self.calls.clear()

    def stored_ids(self, index: str, namespace: str) -> set[str]:
        """Every id a read will eventually see (ignores the visibility delay)."""
        fake = self.indexes[index]
        return set(fake.visible(namespace, float("inf")))

    # ---- plumbing --------------------------------------------------------------------------------------------

    async def _serve_index(self, index: FakeIndex) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        handlers: dict[str, Callable[[FakeIndex, dict[str, Any]], web.Response]] = {
            "/vectors/upsert": self._upsert,
            "/query": self._query,
            "/vectors/delete": self._delete,
            "/describe_index_stats": self._stats,
        }
        for path, handler in handlers.items():
            app.router.add_post(path, self._data_handler(index, handler))
        index.runner = web.AppRunner(app, access_log=None)
        index.host = await _serve(index.runner)

    def _data_handler(
        self, index: FakeIndex, handler: Callable[[FakeIndex, dict[str, Any]], web.Response]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._handle(request, "data", index.name, lambda body: handler(index, body or {}))

        return handle

    async def _handle(
        self,
        request: web.Request,
        plane: str,
        index_name: str | None,
        respond: Callable[[dict[str, Any] | None], web.Response],
    ) -> web.StreamResponse:
        raw = await request.read()
        body: dict[str, Any] | None = json.loads(raw) if raw else None
        failure = self._take_failure(plane, request.path)
        if request.headers.get(API_KEY_HEADER) != self.api_key:
            response = _error(401, "UNAUTHENTICATED", "Invalid API Key")
        elif failure == "timeout":
            self._record(request, plane, index_name, body, len(raw), 0)  # 0: no answer in time
            await asyncio.sleep(self.timeout_sleep_s)
            return _error(504, "DEADLINE_EXCEEDED", "timed out")
        elif failure == "401":
            response = _error(401, "UNAUTHENTICATED", "Invalid API Key")
        elif failure is not None:
            status = int(failure)
            response = _error(status, "RESOURCE_EXHAUSTED" if status == 429 else "UNAVAILABLE", "injected failure")
            if status == 429:
                response.headers["Retry-After"] = "0"
        elif len(raw) > MAX_REQUEST_BYTES:
            response = _error(413, "OUT_OF_RANGE", f"request size {len(raw)} exceeds the limit of {MAX_REQUEST_BYTES}")
        else:
            response = respond(body)
        self._record(request, plane, index_name, body, len(raw), response.status)
        return response

    def _record(
        self, request: web.Request, plane: str, index: str | None, body: dict[str, Any] | None, size: int, status: int
    ) -> None:
        self.calls.append(
            RecordedCall(
                plane=plane,
                index=index,
                method=request.method,
                path=request.path,
                body=body,
                body_bytes=size,
                status=status,
                api_version=request.headers.get("X-Pinecone-Api-Version"),
            )
        )

    def _take_failure(self, plane: str, path: str) -> str | None:
        for failure in self._failures:
            if (failure.plane in (None, plane)) and (failure.path in (None, path)):
                if failure.remaining is not None:
                    if failure.remaining <= 0:
                        continue
                    failure.remaining -= 1
                return failure.kind
        return None

    # ---- control plane ---------------------------------------------------------------------------------------

    async def _list_indexes(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(
            request,
            "control",
            None,
            lambda _: web.json_response({"indexes": [i.model() for i in self.indexes.values()]}),
        )

    async def _describe_index(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]

        def respond(_: dict[str, Any] | None) -> web.Response:
            index = self.indexes.get(name)
            if index is None:
                return _error(404, "NOT_FOUND", f"Resource {name} not found")
            model = index.model()
            index.describes_until_ready -= 1
            return web.json_response(model)

        return await self._handle(request, "control", None, respond)

    async def _create_index(self, request: web.Request) -> web.StreamResponse:
        created: list[FakeIndex] = []

        def respond(body: dict[str, Any] | None) -> web.Response:
            body = body or {}
            name = body.get("name")
            fields = (body.get("schema") or {}).get("fields") or {}
            dense = [f for f in fields.values() if f.get("type") == "dense_vector"]
            deployment = body.get("deployment") or {"cloud": "aws", "region": "us-east-1"}
            if not isinstance(name, str) or len(dense) != 1:
                return _error(400, "INVALID_ARGUMENT", "name and exactly one dense_vector field are required")
            if name in self.indexes:
                return _error(409, "ALREADY_EXISTS", f"Resource {name} already exists")
            index = FakeIndex(
                name=name,
                dimension=int(dense[0]["dimension"]),
                metric=str(dense[0].get("metric", "cosine")),
                cloud=str(deployment.get("cloud")),
                region=str(deployment.get("region")),
                describes_until_ready=1,
            )
            created.append(index)
            self.indexes[name] = index
            return web.json_response(index.model(), status=201)

        response = await self._handle(request, "control", None, respond)
        for index in created:  # the new index gets its data plane once the create is accepted
            await self._serve_index(index)
        return response

    async def _delete_index(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        removed: list[FakeIndex] = []

        def respond(_: dict[str, Any] | None) -> web.Response:
            index = self.indexes.pop(name, None)
            if index is None:
                return _error(404, "NOT_FOUND", f"Resource {name} not found")
            removed.append(index)
            return web.Response(status=202)

        response = await self._handle(request, "control", None, respond)
        for index in removed:
            if index.runner is not None:
                await index.runner.cleanup()
        return response

    # ---- data plane ------------------------------------------------------------------------------------------

    def _upsert(self, index: FakeIndex, body: dict[str, Any]) -> web.Response:
        vectors = body.get("vectors") or []
        namespace = body.get("namespace", "")
        if len(vectors) > MAX_UPSERT_VECTORS:
            return _error(400, "INVALID_ARGUMENT", f"upsert of {len(vectors)} vectors exceeds {MAX_UPSERT_VECTORS}")
        arrays = [np.asarray(vector["values"], dtype=np.float32) for vector in vectors]
        for values in arrays:
            if values.shape != (index.dimension,):
                return _error(
                    400, "INVALID_ARGUMENT", f"Vector dimension {values.shape[0]} does not match {index.dimension}"
                )
        visible_at = time.monotonic() + self.visibility_delay_s
        stored = index.namespaces.setdefault(namespace, {})
        for vector, values in zip(vectors, arrays, strict=True):
            stored[vector["id"]] = _Stored(values, dict(vector.get("metadata") or {}), visible_at)
            index.tombstones.get(namespace, {}).pop(vector["id"], None)
        return web.json_response({"upsertedCount": len(vectors)})

    def _delete(self, index: FakeIndex, body: dict[str, Any]) -> web.Response:
        namespace = body.get("namespace", "")
        ids = body.get("ids")
        if ids is not None and len(ids) > MAX_DELETE_IDS:
            return _error(400, "INVALID_ARGUMENT", f"delete of {len(ids)} ids exceeds {MAX_DELETE_IDS}")
        stored = index.namespaces.get(namespace, {})
        if body.get("deleteAll"):
            targets: Iterable[str] = list(stored)
        elif ids is not None:
            targets = ids
        elif body.get("filter"):
            targets = [vid for vid, rec in stored.items() if matches_filter(rec.metadata, body["filter"])]
        else:
            return _error(400, "INVALID_ARGUMENT", "ids, filter or deleteAll is required")
        gone_at = time.monotonic() + self.visibility_delay_s
        graveyard = index.tombstones.setdefault(namespace, {})
        for vid in targets:
            if vid in stored:
                graveyard[vid] = gone_at
        return web.json_response({})

    def _query(self, index: FakeIndex, body: dict[str, Any]) -> web.Response:
        top_k = int(body.get("topK", 10))
        if not 1 <= top_k <= MAX_TOP_K:
            return _error(400, "INVALID_ARGUMENT", f"topK must be between 1 and {MAX_TOP_K}")
        namespace = body.get("namespace", "")
        query = np.asarray(body.get("vector") or [], dtype=np.float32)
        if query.shape != (index.dimension,):
            return _error(
                400, "INVALID_ARGUMENT", f"Vector dimension {query.shape[0]} does not match {index.dimension}"
            )
        candidates = [
            (vid, rec)
            for vid, rec in index.visible(namespace, time.monotonic()).items()
            if body.get("filter") is None or matches_filter(rec.metadata, body["filter"])
        ]
        scored = sorted(((_score(index.metric, query, rec.values), vid, rec) for vid, rec in candidates), reverse=True)
        matches = []
        for score, vid, rec in scored[:top_k]:
            match: dict[str, Any] = {"id": vid, "score": score, "values": []}
            if body.get("includeMetadata"):
                match["metadata"] = rec.metadata
            matches.append(match)
        return web.json_response({"matches": matches, "namespace": namespace, "usage": {"readUnits": 1}})

    def _stats(self, index: FakeIndex, body: dict[str, Any]) -> web.Response:
        now = time.monotonic()
        counts = {ns: len(index.visible(ns, now)) for ns in index.namespaces}
        counts = {ns: n for ns, n in counts.items() if n}
        return web.json_response(
            {
                "namespaces": {("__default__" if ns == "" else ns): {"vectorCount": n} for ns, n in counts.items()},
                "dimension": index.dimension,
                "indexFullness": 0.0,
                "totalVectorCount": sum(counts.values()),
                "metric": index.metric,
                "vectorType": "dense",
            }
        )


def matches_filter(metadata: dict[str, Any], flt: dict[str, Any]) -> bool:
    """Pinecone's metadata filter language: `$eq $ne $in $nin $gt $gte $lt $lte $exists $and $or`, implicit `$eq`."""
    for key, condition in flt.items():
        if key == "$and":
            if not all(matches_filter(metadata, sub) for sub in condition):
                return False
        elif key == "$or":
            if not any(matches_filter(metadata, sub) for sub in condition):
                return False
        elif isinstance(condition, dict):
            if not all(_compare(metadata.get(key), op, arg, key in metadata) for op, arg in condition.items()):
                return False
        elif not _compare(metadata.get(key), "$eq", condition, key in metadata):
            return False
    return True


def _compare(value: Any, op: str, arg: Any, present: bool) -> bool:
    values = value if isinstance(value, list) else [value]  # a list field matches when any element does
    if op == "$exists":
        return present is bool(arg)
    if op == "$eq":
        return present and arg in values
    if op == "$ne":
        return arg not in values
    if op == "$in":
        return present and any(v in arg for v in values)
    if op == "$nin":
        return not any(v in arg for v in values)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if not present or not isinstance(value, int | float):
            return False
        return {"$gt": value > arg, "$gte": value >= arg, "$lt": value < arg, "$lte": value <= arg}[op]
    raise ValueError(f"unsupported filter operator {op}")


def _score(metric: str, query: np.ndarray, values: np.ndarray) -> float:
    if metric == "dotproduct":
        return float(np.dot(query, values))
    if metric == "euclidean":
        return float(np.linalg.norm(query - values))
    denom = float(np.linalg.norm(query) * np.linalg.norm(values)) or 1.0
    return float(np.dot(query, values)) / denom


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}, "status": status}, status=status)


async def _serve(runner: web.AppRunner) -> str:
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert server is not None
    port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return f"http://127.0.0.1:{port}"


def _summarise(body: dict[str, Any] | None) -> str:
    if body is None:
        return ""
    shown: dict[str, Any] = {}
    for key, value in body.items():
        if key == "vectors":
            ids = [v["id"] for v in value]
            shown["vectors"] = f"{len(ids)} [{', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}]"
        elif key == "vector":
            shown["vector"] = f"<{len(value)} floats>"
        elif key == "schema":
            shown["schema"] = value
        else:
            shown[key] = value
    return json.dumps(shown, ensure_ascii=False)
