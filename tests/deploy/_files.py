"""The deploy files as data, and real `tracemill serve` processes configured like them.

Each deploy file is read as its tool reads it (YAML documents, Dockerfile instructions,
systemd directives); what a container would run is derived from the image's ENV plus the
file's own environment, and checked with tracemill's own settings loader and CLI parser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
HEALTHCHECK = DEPLOY / "healthcheck.py"
TRIGGER = DEPLOY / "trigger_generation.py"
#: Commands the image installs, and the repository file each one is.
IMAGE_HELPERS = {"tracemill-healthcheck": HEALTHCHECK,
                 "tracemill-trigger-generation": TRIGGER}
TRACEMILL_IMAGE = "registry.example/tracemill"


def yaml_documents(path: Path) -> list[dict[str, Any]]:
    """The non-empty YAML documents of ``path``."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kubernetes_objects() -> list[tuple[Path, dict[str, Any]]]:
    """Every object in deploy/kubernetes/*.yaml with the file it came from."""
    found = [(path, doc) for path in sorted(KUBERNETES.glob("*.yaml"))
             for doc in yaml_documents(path)]
    assert found, f"no Kubernetes objects under {KUBERNETES}"
    return found


def pod_spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The pod template's spec of a Deployment or CronJob (None for other kinds)."""
    if obj["kind"] == "Deployment":
        spec: dict[str, Any] = obj["spec"]["template"]["spec"]
        return spec
    if obj["kind"] == "CronJob":
        spec = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return spec
    return None


def tracemill_containers() -> list[tuple[str, dict[str, Any]]]:
    """(``file/object/container``, container) for every container of the tracemill image."""
    found = []
    for path, obj in kubernetes_objects():
        spec = pod_spec(obj)
        if spec is None:
            continue
        for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
            if container["image"].startswith(TRACEMILL_IMAGE):
                found.append((f"{path.name}/{obj['metadata']['name']}/{container['name']}",
                              container))
    assert found, "no container runs the tracemill image"
    return found


# --- the Dockerfile ---------------------------------------------------------------------

@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction."""

    keyword: str
    """FROM, RUN, COPY, ... (upper case)."""
    arguments: str
    """The rest of the logical line, continuations joined."""

    def exec_form(self) -> list[str]:
        """The JSON (exec) form of CMD/ENTRYPOINT/HEALTHCHECK CMD as a list."""
        text = self.arguments
        if self.keyword == "HEALTHCHECK":
            text = text[text.index(" CMD ") + len(" CMD "):]
        value = json.loads(text)
        assert isinstance(value, list), f"{self.keyword} is not in exec form: {text}"
        return [str(part) for part in value]


def dockerfile() -> list[Instruction]:
    """The instructions of deploy/Dockerfile (comments dropped, continuations joined)."""
    logical: list[str] = []
    pending = ""
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    out = []
    for line in logical:
        keyword, _, rest = line.strip().partition(" ")
        out.append(Instruction(keyword.upper(), " ".join(rest.split())))
    return out


def image_env() -> dict[str, str]:
    """The environment the image's ENV instructions set."""
    env: dict[str, str] = {}
    for instruction in dockerfile():
        if instruction.keyword == "ENV":
            for token in shlex.split(instruction.arguments):
                name, sep, value = token.partition("=")
                assert sep, f"ENV {instruction.arguments!r}: use NAME=value"
                env[name] = value
    return env


def image_command(args: list[str] | None = None) -> list[str]:
    """ENTRYPOINT + (``args`` or CMD), as the image would run it."""
    entry = cmd = None
    for instruction in dockerfile():
        if instruction.keyword == "ENTRYPOINT":
            entry = instruction.exec_form()
        elif instruction.keyword == "CMD":
            cmd = instruction.exec_form()
    assert entry is not None and cmd is not None
    return [*entry, *(cmd if args is None else args)]


# --- what a container of the image would run --------------------------------------------

def container_env(container: Mapping[str, Any]) -> dict[str, str]:
    """The image's ENV overlaid with a Kubernetes container's ``env`` (secret values become
    ``secret:<name>/<key>``, as real non-empty strings)."""
    env = image_env()
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            env[item["name"]] = f"secret:{ref['name']}/{ref['key']}"
    return env


def helper(command: list[str]) -> list[str]:
    """A command as run in the image, with the image's helper scripts mapped to the
    repository files they are copied from."""
    head, *rest = command
    if head in IMAGE_HELPERS:
        return [sys.executable, str(IMAGE_HELPERS[head]), *rest]
    if head == "tracemill":
        return [sys.executable, "-m", "tracemill", *rest]
    raise AssertionError(f"{command}: not a command the image provides")


def tls_files(folder: Path, *names: str) -> tuple[Path, Path, Path]:
    """A throwaway authority and a certificate for ``names``: (chain, key, authority)."""
    folder.mkdir(parents=True, exist_ok=True)
    authority = trustme.CA()
    leaf = authority.issue_cert(*names)
    chain, key, ca = folder / "chain.pem", folder / "key.pem", folder / "ca.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    leaf.private_key_pem.write_to_path(str(key))
    authority.cert_pem.write_to_path(str(ca))
    return chain, key, ca


def with_free_ports(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with every TRACEMILL_*_ADDRESS on port 0 (same host): a test must not bind
    the fixed ports the deploy files use."""
    out = dict(env)
    for name in ("TRACEMILL_GRPC_ADDRESS", "TRACEMILL_HTTP_ADDRESS", "TRACEMILL_API_ADDRESS"):
        if name in out:
            host = out[name].rpartition(":")[0]
            out[name] = f"{host}:0"
    return out


class Serve:
    """A real ``tracemill serve`` subprocess with the given command line and environment."""

    def __init__(self, argv: list[str], env: Mapping[str, str], workdir: Path) -> None:
        ready = workdir / f"ready-{time.monotonic_ns()}.json"
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}
        self.process = subprocess.Popen(
            [*helper(argv), "--ready-file", str(ready)], cwd=workdir,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**clean, **env})
        deadline = time.monotonic() + 90
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"serve did not start: {self.process.communicate()}")
            time.sleep(0.05)
        info = json.loads(ready.read_text())
        self.grpc: str = info["grpc"]
        self.http: str = info["http"]
        self.api: str = info["api"]

    def stop(self) -> tuple[int, str]:
        """SIGTERM and wait: (exit code, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=120)
        return self.process.returncode, err


@contextlib.contextmanager
def serving(argv: list[str], env: Mapping[str, str], workdir: Path) -> Iterator[Serve]:
    """A :class:`Serve` that must stop cleanly (exit 0) at the end."""
    server = Serve(argv, env, workdir)
    try:
        yield server
    finally:
        code, err = server.stop()
        assert code == 0, err


def run(command: list[str], env: Mapping[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (already mapped by :func:`helper`) with a clean tracemill env."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env={**clean, **(env or {})}, check=False)


def long_flags(argv: list[str]) -> list[str]:
    """The ``--flags`` of a command line (``--a=b`` counts as ``--a``)."""
    return [re.sub(r"=.*", "", arg) for arg in argv if arg.startswith("--")]
