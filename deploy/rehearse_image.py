"""Rehearse deploy/Dockerfile without a Docker engine, then run every command the docs name inside the result.

No Docker engine runs where docbot is developed, so the image cannot be built there. This builds the same file tree
instead: each stage of the Dockerfile starts as a copy of a Debian bookworm root (whose python3 is 3.11, the
python:3.11-slim base's Python), and the stage's instructions are carried out in order with chroot — RUN as the
stage's user with the stage's environment, COPY from a clean export of the commit (or `--from` a stage, with
`--chown`), WORKDIR, ENV, USER. Then, as the image's user, with the image's environment, working directory and entry
point, it runs what the docs tell an operator to run in the image: `doctor`, `ingest` of the fixture manual,
`ask --json`, `eval`, the Slack demo, and `run` until the HEALTHCHECK command passes, /readyz answers and a signed
Slack request is acknowledged. Last, it checks that nothing was written outside the volumes that compose.yaml and the
Kubernetes Deployment mount writable (both make the root file system read-only).

    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm /tmp/imgroot
    .venv/bin/python deploy/rehearse_image.py --base /tmp/imgroot --work /tmp/rehearsal   # as root, PyPI reachable

What differs from `docker build`: the base (Debian's python3.11 with a `python` link, instead of python.org's build),
no layer cache, and no isolation of the network, the process table or the cgroup limits.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dockerfile_parse import DockerfileParser
from slack_sdk.signature import SignatureVerifier

REPO = Path(__file__).resolve().parents[1]
# What python:3.11-slim itself sets (its Dockerfile): the stages inherit it.
SLIM_ENV = {"PATH": "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
# The writable mounts of deploy/compose.yaml (tmpfs) and deploy/k8s/deployment.yaml (volumeMounts): the root file
# system is read-only in both, so the commands may write nowhere else.
WRITABLE = ("/tmp", "/app/data")
QUESTION = "How do I pair the remote with the hub?"
SIGNING_SECRET = "rehearsal-signing-secret"  # noqa: S105 - a throwaway value for the rehearsal's own requests
HTTP_PORT = 18080


@dataclass
class Stage:
    name: str
    root: Path
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    user: str = "0"
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)


def say(line: str) -> None:
    print(line, flush=True)


def export_context(work: Path) -> Path:
    """The build context as a fresh clone has it: the committed tree, without caches or a developer's .venv."""
    context = work / "context"
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    # Modes as a checkout under the usual umask 022 has them (git archive's own default is 002).
    git = ["git", "-C", str(REPO), "-c", "tar.umask=022", "archive", "HEAD"]
    archive = subprocess.run(git, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(context)], input=archive, check=True)
    return context


def new_stage(name: str, base: Path, work: Path, index: int) -> Stage:
    root = work / f"stage-{index}-{name}"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["cp", "-a", str(base), str(root)], check=True)
    python = root / "usr/local/bin/python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.symlink_to("/usr/bin/python3")
    # RUN steps reach the package index through the build host's network, as `docker build` does: its resolver and
    # the certificates it trusts (a proxy's, where there is one).
    shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", root / "etc/ssl/certs/ca-certificates.crt")
    return Stage(name=name, root=root, env=dict(SLIM_ENV))


def ids(stage: Stage, spec: str) -> tuple[int, int]:
    """`user[:group]` (names or numbers) as the stage's /etc/passwd and /etc/group define them."""
    user, _, group = spec.partition(":")

    def lookup(table: str, name: str) -> tuple[int, int]:
        for line in (stage.root / "etc" / table).read_text().splitlines():
            fields = line.split(":")
            if fields[0] == name:
                return int(fields[2]), int(fields[3]) if table == "passwd" else int(fields[2])
        raise SystemExit(f"{name} is not in the stage's /etc/{table}")

    uid, gid = (int(user), 0) if user.isdigit() else lookup("passwd", user)
    if group:
        gid = int(group) if group.isdigit() else lookup("group", group)[0]
    return uid, gid


def chroot_command(stage: Stage, argv: Sequence[str], env: dict[str, str] | None = None) -> list[str]:
    uid, gid = ids(stage, stage.user)
    environment = [f"{key}={value}" for key, value in (env or stage.env).items()]
    shell = f"cd {shlex.quote(stage.workdir)} && exec {shlex.join(argv)}"
    return ["chroot", f"--userspec={uid}:{gid}", str(stage.root), "/usr/bin/env", "-i", *environment,
            "/bin/sh", "-c", shell]  # fmt: skip


def copy(stage: Stage, value: str, context: Path, stages: dict[str, Stage]) -> None:
    words = shlex.split(value)
    flags = dict(word[2:].split("=", 1) for word in words if word.startswith("--"))
    *sources, destination = [word for word in words if not word.startswith("--")]
    source_root = stages[flags["from"]].root if "from" in flags else context
    target = posixpath.join(stage.workdir, destination)
    uid, gid = ids(stage, flags.get("chown", "0:0"))
    for source in sources:
        origin = source_root / source.lstrip("/")
        if origin.is_dir():  # Docker copies a directory's contents, not the directory itself
            into = stage.root / target.lstrip("/")
            into.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-a", f"{origin}/.", str(into)], check=True)
        else:
            into = stage.root / target.lstrip("/")
            if destination.endswith("/"):
                into.mkdir(parents=True, exist_ok=True)
                into = into / origin.name
            into.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, into)
        subprocess.run(["chown", "-R", f"{uid}:{gid}", str(into)], check=True)


def build(dockerfile: Path, base: Path, work: Path) -> Stage:
    context = export_context(work)
    parser = DockerfileParser(path=str(dockerfile), parent_env=SLIM_ENV)
    stages: dict[str, Stage] = {}
    stage: Stage | None = None
    for item, known in zip(parser.structure, parser.context_structure, strict=True):
        instruction, value = item["instruction"], item["value"]
        if instruction == "COMMENT":
            continue
        if instruction == "FROM":
            words = value.split()
            name = words[2] if len(words) > 2 and words[1].lower() == "as" else f"stage{len(stages)}"
            stage = stages[name] = new_stage(name, base, work, len(stages))
            say(f"FROM {words[0]} (as Debian bookworm + python3) -> {stage.root}")
            continue
        assert stage is not None, "an instruction before FROM"
        stage.env = {**SLIM_ENV, **known.envs}
        if instruction == "WORKDIR":
            stage.workdir = posixpath.join(stage.workdir, value)
            (stage.root / stage.workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
        elif instruction == "USER":
            stage.user = value
        elif instruction == "COPY":
            copy(stage, value, context, stages)
        elif instruction == "RUN":
            say(f"RUN {value[:100]}")
            subprocess.run(chroot_command(stage, ["/bin/sh", "-c", value]), check=True)
        elif instruction in ("ENTRYPOINT", "CMD"):
            setattr(stage, instruction.lower(), json.loads(value))
        elif instruction == "HEALTHCHECK":
            stage.healthcheck = json.loads(value.split("CMD", 1)[1])
        elif instruction not in ("ENV", "EXPOSE", "LABEL", "ARG"):
            raise SystemExit(f"the rehearsal does not know {instruction}: teach it before trusting it")
        say(f"{instruction} done")
    assert stage is not None, "no FROM"
    return stage


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file outside the writable volumes (and /proc, /dev) with its modification time and size."""
    seen: dict[str, tuple[int, int]] = {}
    skip = {root / part.lstrip("/") for part in (*WRITABLE, "/proc", "/dev")}
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if Path(directory, d) not in skip]
        for name in files:
            path = Path(directory, name)
            stat = path.lstat()
            seen[str(path.relative_to(root))] = (stat.st_mtime_ns, stat.st_size)
    return seen


def in_image(stage: Stage, argv: Sequence[str], env: dict[str, str] | None = None,
             timeout: float = 900) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`argv` inside the stage's root, as its user, in its working directory, with `env` (default: its own)."""
    command = chroot_command(stage, argv, env)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def docbot(image: Stage, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """The image's entry point with `args`, as `docker run IMAGE ARGS...` runs it."""
    return in_image(image, [*image.entrypoint, *args])


def checked(name: str, result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    if result.returncode != 0:
        say(f"FAIL {name}: exit {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n"
            f"{result.stderr[-3000:]}")  # fmt: skip
        raise SystemExit(1)
    say(f"ok   {name}")
    return result


def signed(body: bytes) -> dict[str, str]:
    """Headers of a request Slack signed with the rehearsal's secret (slack_sdk's own signing)."""
    stamp = str(int(time.time()))
    signature = SignatureVerifier(SIGNING_SECRET).generate_signature(timestamp=stamp, body=body) or ""
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature, "Content-Type": "application/json"}


def http(url: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers or {})  # noqa: S310 - loopback only
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def waited(condition: str, probe: Iterator[bool], limit_s: float = 300) -> None:
    deadline = time.monotonic() + limit_s
    for done in probe:
        if done:
            say(f"ok   {condition}")
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL {condition}: not within {limit_s:.0f} s")
        time.sleep(1)


def serve_and_probe(image: Stage) -> None:
    """`docbot run` (the image's CMD) with Slack over HTTP: HEALTHCHECK, /readyz, a signed request, SIGTERM."""
    env = {**image.env, "SLACK_BOT_TOKEN": "xoxb-rehearsal", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
           "SLACK_API_URL": "http://127.0.0.1:9/api/", "DOCBOT_HTTP_PORT": str(HTTP_PORT)}  # fmt: skip
    server = subprocess.Popen(chroot_command(image, [*image.entrypoint, *image.cmd], env),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    health = [part.replace("8080", str(HTTP_PORT)) for part in image.healthcheck]

    def healthy() -> Iterator[bool]:
        while server.poll() is None:
            yield in_image(image, health, env, timeout=10).returncode == 0
        output = server.stdout.read() if server.stdout else ""
        raise SystemExit(f"FAIL docbot run exited {server.returncode}: {output[-3000:]}")

    try:
        waited("HEALTHCHECK command passes against `docbot run`", healthy())
        status, _ = http(f"http://127.0.0.1:{HTTP_PORT}/readyz")
        assert status == 200, f"/readyz answered {status}"
        say("ok   /readyz 200")
        body = json.dumps({"type": "url_verification", "challenge": "rehearsal-challenge", "token": "x"}).encode()
        status, answer = http(f"http://127.0.0.1:{HTTP_PORT}/slack/events", body, signed(body))
        assert status == 200 and b"rehearsal-challenge" in answer, (status, answer[:200])
        say("ok   signed Slack url_verification acknowledged")
        status, _ = http(f"http://127.0.0.1:{HTTP_PORT}/slack/events", body, {"Content-Type": "application/json"})
        assert status in (400, 401), f"an unsigned request answered {status}"
        say(f"ok   unsigned Slack request refused ({status})")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=70)  # compose's stop_grace_period
        except subprocess.TimeoutExpired:
            server.kill()
            raise SystemExit("FAIL docbot run did not stop within 70 s of SIGTERM") from None
    assert code == 0, f"docbot run exited {code} on SIGTERM"
    say("ok   SIGTERM: docbot run stopped cleanly")


def rehearse(image: Stage) -> None:
    before = tree(image.root)
    checked("doctor", docbot(image, ["doctor"]))
    checked("ingest tests/fixtures/manual", docbot(image, ["ingest", "/app/tests/fixtures/manual"]))
    answer = json.loads(checked("ask --json", docbot(image, ["ask", QUESTION, "--json"])).stdout)
    assert answer["status"] == "answered" and answer["citations"], answer
    say(f"     answer cites {answer['citations'][0].get('url') or answer['citations'][0]}")
    checked("eval bench/data/fixture_qa_en.jsonl", docbot(image, ["eval", "/app/bench/data/fixture_qa_en.jsonl"]))
    checked("python -m bot.slack_demo", in_image(image, ["python", "-m", "bot.slack_demo"]))
    serve_and_probe(image)
    after = tree(image.root)
    changed = sorted(path for path in after.keys() | before.keys() if before.get(path) != after.get(path))
    if changed:
        raise SystemExit(f"FAIL written outside {', '.join(WRITABLE)} (read-only in compose and k8s): {changed[:20]}")
    say(f"ok   nothing written outside {', '.join(WRITABLE)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="a debootstrapped Debian bookworm root")
    parser.add_argument("--work", type=Path, default=Path("/tmp/rehearsal"))
    parser.add_argument("--dockerfile", type=Path, default=REPO / "deploy" / "Dockerfile")
    options = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: the rehearsal uses chroot")
    options.work.mkdir(parents=True, exist_ok=True)
    image = build(options.dockerfile, options.base, options.work)
    rehearse(image)
    say("the image's file tree runs every documented command")


if __name__ == "__main__":
    main()
