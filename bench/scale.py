"""Scale: what grows with the corpus (issue 16), for this tree and a baseline tree, measured in the same run.

For each size (synthetic chunks, random unit vectors as stored embeddings, written straight into SQLite), each tree
runs in fresh processes so start-up and memory are real:

- start → first answer (process start to the first answered question, through `build_app` and the service), RSS
  after it and the peak; for this tree both the first start (no snapshot yet: built and saved) and a restart;
- search p50/p95 through the hybrid retriever (all levels and fusion), with the hashing query embedder;
- adding one document and then a one-line edit of it while a ticker measures event-loop lag: seconds until the
  search finds it, chunks embedded, worst loop stall;
- answers/s at 1, 10 and 50 concurrent conversations with the semantic cache on (real E5 query embedder), query
  embeddings, SQL statements and commits per answered question;
- with --cold-ask: `docbot ask` as a person runs it (the real CLI, the bundled E5 embedder, the language detector),
  process start to exit, wall and CPU seconds and peak RSS, on a data dir that was ingested and started once (the
  snapshot and the title level saved), beside a bare `python -c pass` and a bare `import bot.cli` of this tree;
  two questions: corpus words the language screen cannot place (`this_1000`: the judge loads four languages'
  high-accuracy models) and an ordinary English one (`this_1000_ordinary`).

    .venv/bin/python -m bench.scale --baseline /tmp/base-scale [--sizes 1000,10000,100000] [--skip-throughput]
    .venv/bin/python -m bench.scale --baseline /tmp/base-scale --cold-ask [--sizes ...]

The baseline is a checkout of another commit (`git worktree add /tmp/base-scale 6d24094`); both trees use this
tree's virtualenv. The figures go to stdout as JSON and, with --write, to bench/results/scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DIM = 384
CHUNKS_PER_DOC = 10

CHILD = r'''
import asyncio, json, sys, time, resource
from datetime import UTC, datetime
T0 = float(sys.argv[1]); mode = sys.argv[2]; data = sys.argv[3]; extra = sys.argv[4] if len(sys.argv) > 4 else ""

def rss_mb():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

from bot.app import build_app
from pipeline.messages import Inbound
from bot.settings import Settings
from pipeline.types import SearchRequest
from storage.embedder import E5Embedder, HashingEmbedder

_ids = iter(range(10**9))
def inbound(text, user="U1"):
    n = next(_ids)
    return Inbound(platform="slack", workspace_id="T1", channel_id="C1", thread_id=None,
                   message_id=f"{time.time_ns() // 1000 + n}.000100", user_id=user, user_name=user, text=text,
                   ts=datetime.now(UTC))

class Ticker:
    def __init__(self): self.worst = 0.0; self._stop = False
    async def run(self):
        loop = asyncio.get_running_loop()
        while not self._stop:
            t = loop.time(); await asyncio.sleep(0.005)
            self.worst = max(self.worst, loop.time() - t - 0.005)
    def stop(self): self._stop = True

class CountingE5(E5Embedder):
    calls = 0
    async def embed_queries(self, texts):
        CountingE5.calls += len(texts)
        return await super().embed_queries(texts)

async def main():
    out = {}
    if mode == "e5":  # the bundled embedder's own ceiling on paragraph-sized passages, `extra` engine threads
        import numpy as np
        texts = [" ".join(f"word{(i * 7 + j) % 997} setting" for j in range(45)) for i in range(64)]
        threads = int(extra) if extra else None
        e5 = E5Embedder(threads=threads) if "threads" in E5Embedder.__init__.__code__.co_varnames else E5Embedder()
        await e5.embed_passages(texts[:2])
        t = time.perf_counter(); await e5.embed_passages(texts)
        out["chunks_per_s"] = round(len(texts) / (time.perf_counter() - t), 2)
        print("RESULT " + json.dumps(out)); return
    if mode == "ingest":  # the whole ingest path with the bundled embedder: fixture manual, three collections
        app = await build_app(Settings(data_dir=data))
        t = time.perf_counter(); chunks = 0
        for collection in ("a", "b", "c"):
            chunks += (await app.ingest([extra], collection=collection)).chunks
        out["chunks_per_s"] = round(chunks / (time.perf_counter() - t), 2); out["chunks"] = chunks
        await app.close(); print("RESULT " + json.dumps(out)); return
    if mode == "ceiling":  # the whole ingest path and the embedder alone, on the same texts, in one process
        from bot.app import e5_engines
        class Recording:  # every passage the ingest path embeds (chunks, then the unit and title levels), and the
            def __init__(self, inner):  # wall time it spent inside the embedder
                self.inner, self.texts, self.busy = inner, [], 0.0
            @property
            def dim(self): return self.inner.dim
            @property
            def model_name(self): return self.inner.model_name
            async def embed_queries(self, texts): return await self.inner.embed_queries(texts)
            async def embed_passages(self, texts):
                t = time.perf_counter()
                try: return await self.inner.embed_passages(texts)
                finally: self.busy += time.perf_counter() - t; self.texts += list(texts)
        settings = Settings(data_dir=data)
        engines = e5_engines(settings)
        recording = Recording(E5Embedder(engines=engines))
        await recording.inner.embed_passages(["warm the engines up"] * engines)  # model loads are not ingest's
        app = await build_app(settings, embedder=recording)
        t = time.perf_counter()
        chunks = (await app.ingest([extra])).chunks
        out["ingest_s"] = time.perf_counter() - t; out["chunks_embedded"] = len(recording.texts)
        await app.retriever.wait_for_levels()
        out["with_levels_s"] = time.perf_counter() - t; out["passages_embedded"] = len(recording.texts)
        out["inside_embedder_s"] = recording.busy
        await app.close()
        alone = E5Embedder(engines=engines)
        await alone.embed_passages(["warm the engines up"] * engines)
        t = time.perf_counter()
        from storage.ingest.ingestor import EMBED_GROUP_CHUNKS  # the ingest's own group size
        for i in range(0, len(recording.texts), EMBED_GROUP_CHUNKS):
            await alone.embed_passages(recording.texts[i : i + EMBED_GROUP_CHUNKS])
        out["embedder_alone_s"] = time.perf_counter() - t
        # per chunk of the corpus, everything searchable (its unit and title levels too), against the embedder
        # alone doing the same passages
        out.update(chunks=chunks, engines=engines,
                   ingest_chunks_per_s=chunks / out["with_levels_s"],
                   ceiling_chunks_per_s=chunks / out["embedder_alone_s"],
                   share_of_ceiling=out["embedder_alone_s"] / out["with_levels_s"])
        print("RESULT " + json.dumps(out)); return
    if mode == "prep":  # what `docbot ingest` leaves: the snapshot and the title level saved
        from bot.settings import load_settings
        app = await build_app(load_settings(data_dir=data))
        await app.retriever.wait_for_titles()
        await app.close(); print("RESULT {}"); return
    if mode == "throughput":
        embedder = CountingE5()
    else:
        embedder = HashingEmbedder(384)
    app = await build_app(Settings(data_dir=data), embedder=embedder)
    out["ready_s"] = time.time() - T0
    if mode in ("start", "throughput"):
        reply = await app.service.handle_message(inbound("how do I calibrate the quokka sensor"))
        out["first_answer_s"] = time.time() - T0
        out["rss_mb"], out["peak_mb"] = rss_mb()
        out["first_kind"] = reply.kind.value if reply else None
    if mode == "start":
        words = extra.split(",")
        import random
        rnd = random.Random(1)
        times = []
        for _ in range(60):
            q = " ".join(rnd.sample(words, 4))
            t = time.perf_counter()
            await app.retriever.search(SearchRequest(text=q, top_k=5))
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        out["search_p50_ms"] = times[len(times) // 2]; out["search_p95_ms"] = times[int(len(times) * 0.95)]
    if mode == "edit":
        folder = extra
        ticker = Ticker(); task = asyncio.create_task(ticker.run())
        await asyncio.sleep(0.05)
        for step in ("add", "edit"):
            if step == "edit":
                page = f"{folder}/quokka.md"
                text = open(page).read().replace("first", "second", 1)
                open(page, "w").write(text)
            ticker.worst = 0.0
            t = time.perf_counter()
            report = await app.ingest([folder])
            probe = SearchRequest(text="zanzibarquokka calibration second", top_k=3)
            while True:
                hits = (await app.retriever.search(probe)).hits
                if hits and "quokka" in hits[0].url and (step == "add" or "second" in hits[0].text):
                    break
                await asyncio.sleep(0.01)
            out[f"{step}_searchable_s"] = time.perf_counter() - t
            out[f"{step}_embedded"] = report.embedded
            out[f"{step}_worst_stall_ms"] = ticker.worst * 1000
        ticker.stop(); await task
        out["rss_mb"], out["peak_mb"] = rss_mb()
    if mode == "throughput":
        from sqlalchemy import event
        folder, questions_file = extra.split("|")
        await app.ingest([folder], base_url="https://docs.example.com/manual")
        questions = [json.loads(line)["question"] for line in open(questions_file) if line.strip()][:30]
        counts = {"statements": 0, "commits": 0}
        def bump(name):
            def listener(*_args):
                counts[name] += 1
            return listener
        event.listen(app.db.engine.sync_engine, "before_cursor_execute", bump("statements"))
        event.listen(app.db.engine.sync_engine, "commit", bump("commits"))
        results, kinds = {}, {}
        asked = 0; calls_before = CountingE5.calls
        for concurrency in (1, 10, 50):
            async def conversation(c):
                for k in range(2):
                    question = questions[(c * 2 + k) % len(questions)]
                    reply = await app.service.handle_message(inbound(question, user=f"U{c}"))
                    kind = ("cached " if reply and reply.cached else "") + (reply.kind.value if reply else "none")
                    kinds[kind] = kinds.get(kind, 0) + 1
            t = time.perf_counter()
            await asyncio.gather(*(conversation(c) for c in range(concurrency)))
            results[str(concurrency)] = round(2 * concurrency / (time.perf_counter() - t), 2)
            asked += 2 * concurrency
        out["answers_per_s"] = results
        out["replies"] = kinds
        answered = sum(v for k, v in kinds.items() if "answer" in k) or 1
        out["query_embeddings_per_answered_question"] = round((CountingE5.calls - calls_before) / answered, 2)
        out["statements_per_question"] = round(counts["statements"] / asked, 1)
        out["commits_per_question"] = round(counts["commits"] / asked, 1)
    await app.close()
    print("RESULT " + json.dumps(out))

asyncio.run(main())
'''


def _words(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(rng.integers(4, 10)))) for _ in range(n)]


def make_corpus(path: Path, chunks: int, seed: int = 0, model: str = "hashing") -> list[str]:
    """A migrated SQLite file with `chunks` synthetic chunks (10 per document) and random unit vectors recorded as
    `model`'s (the query embedder the run uses: `build_app` refuses an index of another model); returns the
    vocabulary."""
    import asyncio

    from storage.db import Database

    async def migrate() -> None:
        db = Database(f"sqlite+aiosqlite:///{path}")
        await db.migrate()
        await db.dispose()

    asyncio.run(migrate())
    rng = np.random.default_rng(seed)
    vocab = _words(20_000, rng)
    zipf = np.minimum(rng.zipf(1.2, size=chunks * 90), len(vocab)) - 1
    now = datetime.now(UTC).isoformat()
    con = sqlite3.connect(path)
    docs: list[tuple[Any, ...]] = []
    rows: list[tuple[Any, ...]] = []
    vectors: list[tuple[Any, ...]] = []
    position = 0
    for d in range(chunks // CHUNKS_PER_DOC):
        doc_id = f"doc{d:07d}"
        title = " ".join(vocab[int(i)] for i in zipf[position : position + 3])
        docs.append(
            (doc_id, "default", "synthetic", f"https://docs.example.com/{doc_id}", title, json.dumps([title]), "",
             "", title, "[]", "[]", f"h{d}", now)
        )
        for c in range(CHUNKS_PER_DOC):
            length = 60 + (position % 40)
            text = " ".join(vocab[int(i)] for i in zipf[position : position + length])
            position += length % 90
            chunk_id = f"{doc_id}-{c:04d}"
            rows.append((chunk_id, doc_id, "default", f"s{c}", f"{title} {c}", json.dumps([title]),
                         f"https://docs.example.com/{doc_id}#s{c}", text, c))
        unit = rng.standard_normal((CHUNKS_PER_DOC, DIM)).astype(np.float32)
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        vectors.extend((f"{doc_id}-{c:04d}", model, DIM, unit[c].tobytes()) for c in range(CHUNKS_PER_DOC))
    con.executemany("INSERT INTO documents (id, collection, origin, source, title, crumbs, description, content, "
                    "summary, keypoints, keywords, content_hash, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", docs)
    con.executemany("INSERT INTO chunks (id, doc_id, collection, section, title, crumbs, url, text, ord) "
                    "VALUES (?,?,?,?,?,?,?,?,?)", rows)
    con.executemany("INSERT INTO embeddings (chunk_id, model, dim, vector) VALUES (?,?,?,?)", vectors)
    con.execute("INSERT INTO corpus_versions (collection, version, updated_at) VALUES ('default', 1, ?)", (now,))
    con.commit()
    con.close()
    return vocab[:300]


def e5_template(work: Path, size: int) -> Path:
    """The synthetic corpus of `size` chunks with its vectors recorded as the bundled E5 model's (made once per run):
    for the runs that embed questions with E5 (cold `docbot ask`, throughput)."""
    from storage.embedder import E5_MODEL_NAME

    template = work / f"corpus-{size}-e5.db"
    if not template.exists():
        make_corpus(template, size, model=E5_MODEL_NAME)
    return template


def run_child(root: Path, mode: str, data: Path, extra: str = "", timeout: float = 900) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root), "DOCBOT_LOG_LEVEL": "WARNING"}
    env.pop("OMP_NUM_THREADS", None)
    script = data.parent / "child.py"
    script.write_text(CHILD)
    started = time.time()
    done = subprocess.run(
        [sys.executable, str(script), str(started), mode, str(data), extra],
        cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[7:])
            return result
    return {"error": (done.stderr or done.stdout)[-800:]}


def _data_dir(work: Path, template: Path, name: str) -> Path:
    data = work / name
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    shutil.copy(template, data / "docbot.db")
    return data


def _edit_folder(work: Path) -> Path:
    folder = work / "edit-docs"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    sections = "\n\n".join(f"## Step {i}\n\nTurn the dial {i} times and wait for the light." for i in range(8))
    (folder / "quokka.md").write_text(
        f"# Zanzibarquokka calibration\n\n## Overview\n\nCalibrate the zanzibarquokka sensor first.\n\n{sections}\n"
    )
    return folder


def run(sizes: list[int], baseline: Path, work: Path, throughput: bool) -> dict[str, Any]:
    trees = {"this": REPO, "baseline": baseline}
    figures: dict[str, Any] = {}
    for size in sizes:
        template = work / f"corpus-{size}.db"
        vocab = make_corpus(template, size)
        words = ",".join(vocab)
        for name, root in trees.items():
            key = f"{name}_{size}"
            print(f"[scale] {key}", file=sys.stderr, flush=True)
            data = _data_dir(work, template, key)
            entry: dict[str, Any] = {"first_start": run_child(root, "start", data, words)}
            entry["restart"] = run_child(root, "start", data, words)
            entry["edit"] = run_child(root, "edit", data, str(_edit_folder(work)))
            figures[key] = entry
        if throughput and size == sizes[0]:
            for name, root in trees.items():
                print(f"[scale] throughput {name}_{size}", file=sys.stderr, flush=True)
                data = _data_dir(work, e5_template(work, size), f"tp_{name}_{size}")
                manual = f"{root}/tests/fixtures/manual|{root}/tests/bench/data/manual_qa.jsonl"
                figures[f"{name}_{size}"]["throughput"] = run_child(root, "throughput", data, manual)
    return figures


ASK = "import sys; from bot.cli import main; sys.argv[0] = 'docbot'; main()"
ORDINARY_QUESTION = "How do I change the picture mode of the TV?"


def _timed(argv: list[str], root: Path, timeout: float = 600) -> dict[str, Any]:
    """Wall seconds from spawn to exit, the child's CPU seconds and peak RSS (MB), its exit code."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(root), "DOCBOT_LOG_LEVEL": "WARNING"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = round(after.ru_maxrss / 1024)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_mb": peak, "rc": done.returncode}


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(runs, key=lambda r: float(r["wall_s"]))
    middle = dict(ordered[len(ordered) // 2])
    middle["runs_wall_s"] = [r["wall_s"] for r in runs]
    return middle


def cold_ask(sizes: list[int], baseline: Path, work: Path, repeats: int = 3) -> dict[str, Any]:
    """`docbot ask` from process start to exit at each size, this tree and the baseline tree, beside the bare
    interpreter and a bare import of the CLI, all in this run. Each tree asks on its own copy of the data dir,
    prepared once as an ingest leaves it. ru_maxrss of children is a running maximum, so each figure's peak is
    measured in a fresh `python` that runs the ask as its own child."""
    out: dict[str, Any] = {"loadavg_before": Path("/proc/loadavg").read_text().split()[:3]}
    python = sys.executable
    out["python_pass"] = _median([_timed([python, "-c", "pass"], REPO) for _ in range(repeats)])
    out["import_cli_this"] = _median([_timed([python, "-c", "import bot.cli"], REPO) for _ in range(repeats)])
    out["import_cli_baseline"] = _median([_timed([python, "-c", "import bot.cli"], baseline) for _ in range(repeats)])
    for size in sizes:
        template = e5_template(work, size)
        vocab = _words(20_000, np.random.default_rng(0))[:300]  # make_corpus's first draw with its seed
        questions = {
            # corpus words the language screen cannot place: lingua's high-accuracy models of four languages load
            "": "how do I " + " ".join(vocab[5:9]) + "?",
            # a question in the docs' language that the screen is sure of: what most people's first ask costs
            "_ordinary": ORDINARY_QUESTION,
        }
        for name, root in (("this", REPO), ("baseline", baseline)):
            print(f"[scale] cold ask {name}_{size}", file=sys.stderr, flush=True)
            data = _data_dir(work, template, f"ask_{name}_{size}")
            run_child(root, "prep", data, timeout=1800)
            for kind, question in questions.items():
                runs = []
                for k in range(repeats):
                    argv = [python, "-c", ASK, "ask", f"{question} ({k})", "--data-dir", str(data)]
                    runs.append(_isolated(argv, root))
                out[f"{name}_{size}{kind}"] = _median(runs)
    out["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
    return out


def _isolated(argv: list[str], root: Path) -> dict[str, Any]:
    """`_timed` in a fresh parent, so the peak RSS is this command's alone."""
    code = (
        "import json, sys; from bench.scale import _timed; from pathlib import Path; "
        "print(json.dumps(_timed(json.loads(sys.argv[1]), Path(sys.argv[2]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv), str(root)],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _ceiling_corpus(work: Path) -> Path:
    """The e-manual's 261 sections as a seed file (real prose, ../shared/data), else the fixture manual."""
    from bench.shared import DEFAULT_DATA  # the shared data where the tests look for it ($DOCBOT_SHARED_DATA)

    corpus = DEFAULT_DATA / "emanual" / "raw" / "smart_tv_remote_manual_corpus.json"
    if not corpus.is_file():
        return REPO / "tests" / "fixtures" / "manual"
    sys.path.insert(0, str(REPO))
    from bench.emanual_data import load_corpus

    seed = work / "emanual.jsonl"
    seed.write_text("\n".join(json.dumps(record) for record in load_corpus(corpus)), encoding="utf-8")
    return seed


def embedder_figures(baseline: Path, work: Path) -> dict[str, Any]:
    """The E5 engine's ceiling (one and two OpenMP threads) on synthetic passages, the whole ingest path of each
    tree on the fixture manual, and (this tree) ingest against the embedder alone on the very texts it embedded."""
    out: dict[str, Any] = {}
    for threads in ("1", "2"):
        data = work / f"e5-{threads}"
        data.mkdir(parents=True, exist_ok=True)
        out[f"e5_ceiling_threads_{threads}"] = run_child(REPO, "e5", data, threads)
    for name, root in (("this", REPO), ("baseline", baseline)):
        data = work / f"ingest-{name}"
        data.mkdir(parents=True, exist_ok=True)
        out[f"ingest_{name}"] = run_child(root, "ingest", data, str(root / "tests" / "fixtures" / "manual"))
    data = work / "ceiling"
    data.mkdir(parents=True, exist_ok=True)
    corpus = _ceiling_corpus(work)
    out["ingest_vs_embedder_alone"] = run_child(REPO, "ceiling", data, str(corpus), timeout=1800) | {
        "corpus": corpus.name
    }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the baseline commit")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--embedder", action="store_true", help="only the E5 ceiling and the ingest rate")
    parser.add_argument("--cold-ask", action="store_true", help="only `docbot ask` from process start to exit")
    parser.add_argument("--write", action="store_true", help="also write bench/results/scale.json")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="docbot-scale-") as tmp:
        if args.embedder:
            figures = embedder_figures(args.baseline.resolve(), Path(tmp))
        elif args.cold_ask:
            figures = cold_ask(sizes, args.baseline.resolve(), Path(tmp))
        else:
            figures = run(sizes, args.baseline.resolve(), Path(tmp), not args.skip_throughput)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.write:
        name = "scale-embedder.json" if args.embedder else "scale-cold-ask.json" if args.cold_ask else "scale.json"
        (REPO / "bench" / "results" / name).write_text(text + "\n")


if __name__ == "__main__":
    main()
