"""deploy/systemd checked by systemd itself: `systemd-analyze verify` (and `security
--offline`) on the unit with its TLS drop-in, ExecStart pointed at this checkout's real
`tracemill` entry point (systemd checks that the binary exists)."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy._files import DEPLOY
from tracemill.cli import build_parser
from tracemill.config import Settings

UNITS = DEPLOY / "systemd"
SERVICE = UNITS / "tracemill.service"
INSTALLED = "/opt/tracemill/.venv/bin/tracemill"


def _analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.skip("SKIPPED LOUDLY: systemd-analyze is not installed here, so the systemd "
                    "units were NOT verified (Debian: apt-get install systemd)")
    return found


def _copy(tmp_path: Path) -> Path:
    """The unit folder with ExecStart's binary replaced by this venv's `tracemill`."""
    target = tmp_path / "systemd"
    shutil.copytree(UNITS, target)
    entry = Path(sys.executable).parent / "tracemill"
    assert entry.is_file(), f"no tracemill entry point at {entry}"
    unit = target / "tracemill.service"
    text = unit.read_text()
    assert INSTALLED in text
    unit.write_text(text.replace(INSTALLED, str(entry)))
    return unit


def _directives(path: Path) -> dict[str, list[str]]:
    """Every ``Key=value`` of a unit file, repeated keys kept in order."""
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    analyze = _analyze()
    unit = _copy(tmp_path)
    result = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr
    # the check is not vacuous: a misspelt directive in the drop-in is reported
    dropin = unit.parent / "tracemill.service.d" / "tls.conf"
    dropin.write_text(dropin.read_text() + "LoadCredentials=x:/y\n")
    broken = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                            check=False)
    assert "LoadCredentials" in broken.stderr, broken.stderr


def test_security_exposure_is_low(tmp_path: Path) -> None:
    analyze = _analyze()
    unit = _copy(tmp_path)
    result = subprocess.run([analyze, "security", "--offline=yes", "--no-pager", str(unit)],
                            capture_output=True, text=True, check=False)
    if "--offline" in result.stderr and "unrecognized" in result.stderr:
        pytest.skip(f"SKIPPED LOUDLY: this systemd-analyze has no --offline: {result.stderr}")
    score = re.search(r"Overall exposure level for \S+: ([\d.]+)", result.stdout)
    assert score, result.stdout[-2000:] + result.stderr
    assert float(score.group(1)) <= 2.0, result.stdout[-3000:]


def test_unit_starts_after_the_network_with_its_own_user_and_state() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(SERVICE.read_text())
    assert "network-online.target" in unit["Unit"]["Wants"].split()
    assert "network-online.target" in unit["Unit"]["After"].split()
    service = _directives(SERVICE)
    assert service["DynamicUser"] == ["yes"] and "User" not in service
    state = service["StateDirectory"][0]
    db = next(v for v in service["Environment"] if v.startswith("TRACEMILL_DB="))
    assert db.split("=", 1)[1].startswith(f"/var/lib/{state}/"), db
    assert service["WorkingDirectory"] == [f"/var/lib/{state}"]
    # the drain on SIGTERM fits in the stop timeout
    stop = int(service["TimeoutStopSec"][0].rstrip("s"))
    assert stop > Settings().shutdown_drain_seconds


def test_exec_start_and_environment_are_what_tracemill_accepts() -> None:
    service = _directives(SERVICE)
    argv = shlex.split(service["ExecStart"][0])
    assert argv[0] == INSTALLED
    build_parser().parse_args(argv[1:])
    dropin = _directives(UNITS / "tracemill.service.d" / "tls.conf")
    names = [v.split("=", 1)[0] for v in service["Environment"] + dropin["Environment"]]
    for name in names:
        assert name.removeprefix("TRACEMILL_").lower() in Settings.model_fields, name
    # the drop-in's files are the credentials it loads
    credentials = {v.split(":", 1)[0] for v in dropin["LoadCredential"]}
    for value in dropin["Environment"]:
        assert value.split("=", 1)[1].removeprefix("%d/") in credentials, value
