"""deploy/Dockerfile read as Docker reads it (no engine here to build it): it installs the
package, copies every package and helper, runs a command the real CLI accepts, and its
ENV is settings tracemill knows."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.deploy._files import (
    DEPLOY,
    IMAGE_HELPERS,
    ROOT,
    dockerfile,
    helper,
    image_command,
    image_env,
    long_flags,
    run,
)
from tracemill.cli import build_parser
from tracemill.config import Settings, load_settings


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_it_copies_every_package_and_installs_the_project() -> None:
    instructions = dockerfile()
    base = next(i for i in instructions if i.keyword == "FROM").arguments
    required = str(_pyproject()["project"]["requires-python"])
    minimum = re.fullmatch(r">=(\d+)\.(\d+)", required)
    found = re.match(r"python:(\d+)\.(\d+)", base)
    assert minimum and found, (required, base)
    assert tuple(map(int, found.groups())) >= tuple(map(int, minimum.groups()))

    copied = {i.arguments.split()[0] for i in instructions if i.keyword == "COPY"}
    includes = _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in includes}
    assert packages <= copied, f"packages not copied into the image: {packages - copied}"
    assert {"pyproject.toml", "README.md"} <= {
        part for i in instructions if i.keyword == "COPY" for part in i.arguments.split()[:-1]}
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
    runs = [i.arguments for i in instructions if i.keyword == "RUN"]
    install = next((r for r in runs if "pip install" in r), None)
    assert install is not None and re.search(r"pip install [^&]*\s\.(\s|$)", install), runs
    assert instructions.index(next(i for i in instructions if i.arguments == install)) > max(
        instructions.index(i) for i in instructions
        if i.keyword == "COPY" and i.arguments.split()[0] in packages)


def test_entrypoint_and_cmd_are_what_the_cli_accepts() -> None:
    command = image_command()
    scripts = _pyproject()["project"]["scripts"]
    assert command[0] in scripts
    build_parser().parse_args(command[1:])  # exits (fails the test) on an unknown option
    help_text = subprocess.run([sys.executable, "-m", "tracemill", command[1], "--help"],
                               capture_output=True, text=True, check=True).stdout
    for flag in long_flags(command):
        assert flag in help_text, f"{flag} is not an option of `tracemill {command[1]}`"


def test_image_env_is_settings_tracemill_knows() -> None:
    env = image_env()
    assert env, "the image sets no TRACEMILL_* environment"
    for name in env:
        key = name.removeprefix("TRACEMILL_").lower()
        assert name.startswith("TRACEMILL_") and key in Settings.model_fields, name
    settings = load_settings({}, env)  # raises on an invalid value
    assert str(settings.db).startswith("/data/")
    volumes = [i.arguments for i in dockerfile() if i.keyword == "VOLUME"]
    assert any("/data" in v for v in volumes), "the store's folder is not a VOLUME"


def test_helpers_are_installed_runnable_and_the_healthcheck_uses_one() -> None:
    instructions = dockerfile()
    copies = {i.arguments.split()[1]: i.arguments.split()[0]
              for i in instructions if i.keyword == "COPY" and len(i.arguments.split()) == 2}
    for name, script in IMAGE_HELPERS.items():
        target = f"/usr/local/bin/{name}"
        assert copies.get(target) == str(script.relative_to(ROOT)), f"{name} is not installed"
        assert any(target in i.arguments and "chmod" in i.arguments
                   for i in instructions if i.keyword == "RUN"), f"{name} is not executable"
        assert script.read_text().startswith("#!/usr/bin/env python3\n")
        shown = run(helper([name, "--help"]))
        assert shown.returncode == 0 and "usage:" in shown.stdout, shown.stderr
    check = next(i for i in instructions if i.keyword == "HEALTHCHECK").exec_form()
    assert check[0] in IMAGE_HELPERS, check
    assert run(helper([*check, "--help"])).returncode == 0
    users = [i.arguments for i in instructions if i.keyword == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert any(i.keyword == "STOPSIGNAL" and i.arguments == "SIGTERM" for i in instructions)


@pytest.mark.parametrize("path", sorted(DEPLOY.rglob("*")), ids=lambda p: str(p.name))
def test_every_tracemill_variable_in_deploy_files_is_a_setting(path: Path) -> None:
    # tracemill refuses to start with an unknown TRACEMILL_* variable, so a misspelt one in
    # a deploy file would stop the service
    if not path.is_file() or path.suffix == ".pyc":
        return
    names = set(re.findall(r"\bTRACEMILL_[A-Z][A-Z_]*\b", path.read_text(errors="replace")))
    known = {f"TRACEMILL_{field.upper()}" for field in Settings.model_fields} | {
        "TRACEMILL_CONFIG"}
    assert names <= known, f"{path.name}: unknown {sorted(names - known)}"


def test_every_tracemill_command_written_in_deploy_files_exists() -> None:
    # commands in comments and docs too: `tracemill generate --budget 200` must still work
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands
    pattern = re.compile(r"\btracemill ([a-z]+)((?: --[a-z][a-z-]*(?:[ =](?!--)[^\s`'\"\]]+)?)*)")
    seen: dict[str, set[str]] = {}
    for path in sorted(DEPLOY.rglob("*")):
        if not path.is_file() or path.suffix == ".pyc":
            continue
        for sub, rest in pattern.findall(path.read_text(errors="replace")):
            if sub in commands:
                seen.setdefault(sub, set()).update(re.findall(r"--[a-z][a-z-]*", rest))
    assert "serve" in seen and "generate" in seen, seen
    for sub, flags in seen.items():
        shown = run(helper(["tracemill", sub, "--help"])).stdout
        for flag in flags:
            assert re.search(rf"{flag}\b", shown), f"`tracemill {sub} {flag}` does not exist"
