"""deploy/compose.yaml parsed (no Docker engine here), and its healthcheck run as written
against a real `tracemill serve` configured as the compose file configures it: TLS on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.deploy._files import (
    DEPLOY,
    ROOT,
    helper,
    image_env,
    run,
    serving,
    tls_files,
    with_free_ports,
    yaml_documents,
)
from tracemill.config import load_settings

COMPOSE = DEPLOY / "compose.yaml"
pytestmark = pytest.mark.integration


def _compose() -> dict[str, Any]:
    documents = yaml_documents(COMPOSE)
    assert len(documents) == 1
    return documents[0]


def _interpolate(value: str, variables: dict[str, str]) -> str:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error}."""
    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if name in variables:
            return variables[name]
        if op == ":?":
            raise AssertionError(f"compose would stop: {name} unset ({arg})")
        return arg or ""
    return re.sub(r"\$\{([A-Z_]+)(?:(:-|:\?)([^}]*))?\}", one, value)


def test_compose_file_is_well_formed() -> None:
    compose = _compose()
    tracemill = compose["services"]["tracemill"]
    build = tracemill["build"]
    assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == (
        DEPLOY / "Dockerfile").resolve()
    for volume in tracemill["volumes"]:
        name = _interpolate(volume, {}).split(":")[0]
        assert name.startswith((".", "/")) or name in compose["volumes"], volume
    # the agent speaks TLS to the name the certificate carries, with the shared token
    agent = compose["services"]["agent"]["environment"]
    assert agent["OTEL_EXPORTER_OTLP_ENDPOINT"].startswith("https://tracemill:")
    assert "${TRACEMILL_AUTH_TOKEN}" in agent["OTEL_EXPORTER_OTLP_HEADERS"]
    depends = compose["services"]["agent"]["depends_on"]["tracemill"]
    assert depends["condition"] == "service_healthy"
    # the grace period outlasts the drain tracemill does on SIGTERM
    grace = int(str(tracemill["stop_grace_period"]).rstrip("s"))
    env = {**image_env(), **_environment(tracemill, {"TRACEMILL_AUTH_TOKEN": "t"})}
    assert grace > load_settings({}, env).shutdown_drain_seconds


def _environment(service: dict[str, Any], variables: dict[str, str]) -> dict[str, str]:
    return {name: _interpolate(str(value), variables)
            for name, value in service["environment"].items()}


def test_compose_healthcheck_passes_against_tls_and_a_plain_http_probe_would_not(
        tmp_path: Path) -> None:
    compose = _compose()
    tracemill = compose["services"]["tracemill"]
    variables = {"TRACEMILL_AUTH_TOKEN": "compose-token"}
    env = {**image_env(), **_environment(tracemill, variables)}
    assert env.get("TRACEMILL_TLS_CERT"), "the compose file no longer turns TLS on"

    # the TLS folder as compose mounts it: a certificate for the name agents dial
    mounts = [_interpolate(volume, {}).split(":") for volume in tracemill["volumes"]]
    host_folder = (COMPOSE.parent / next(m[0] for m in mounts if m[1] == "/tls")).resolve()
    assert host_folder.is_relative_to(DEPLOY)
    folder = tmp_path / "tls"
    chain, key, _ = tls_files(folder, "tracemill")
    for name, path in (("TRACEMILL_TLS_CERT", chain), ("TRACEMILL_TLS_KEY", key)):
        container_path = Path(env[name])
        assert container_path.parent == Path("/tls"), env[name]
        path.rename(folder / container_path.name)
        env[name] = str(folder / container_path.name)
    env["TRACEMILL_DB"] = str(tmp_path / "tracemill.duckdb")
    env = with_free_ports(env)  # 0.0.0.0 as in the image, on free ports

    test = tracemill["healthcheck"]["test"]
    assert test[0] == "CMD", test
    with serving(["tracemill", "serve", "--log-format", "json"], env, tmp_path) as server:
        probe_env = {**env, "TRACEMILL_HTTP_ADDRESS": server.http}
        passed = run(helper(test[1:]), probe_env)
        assert passed.returncode == 0, passed.stderr
        assert passed.stdout.startswith("https://127.0.0.1:"), passed.stdout
        # what the old healthcheck did: plain HTTP to a TLS port fails
        plain = run(helper([*test[1:], "--no-tls"]), probe_env)
        assert plain.returncode == 1 and "TLS" in plain.stderr, plain.stderr
        alive = run(helper([test[1], "healthz"]), probe_env)
        assert alive.returncode == 0, alive.stderr
    down = run(helper(test[1:]), probe_env)
    assert down.returncode == 1 and "refused" in down.stderr.lower(), down.stderr


def test_healthcheck_names_a_bad_address() -> None:
    bad = run(helper(["tracemill-healthcheck", "--address", "nonsense"]))
    assert bad.returncode == 2
    assert "not host:port" in bad.stderr and "TRACEMILL_HTTP_ADDRESS" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_compose_file_needs_no_file_outside_deploy() -> None:
    text = COMPOSE.read_text()
    for reference in re.findall(r"(?<![\w$])\.\./[\w./-]+", text):
        assert (COMPOSE.parent / reference).resolve().is_relative_to(ROOT), reference
