"""Commands refuse what cannot work before touching anything; exit codes are documented."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

import tracemill.errors
from tracemill.cli import main

READ_COMMANDS = [
    ["map"], ["map", "--json"], ["conversations"], ["report", "--fail-on", "new"], ["stats"],
    ["runs"], ["rollouts"], ["process"], ["generate", "--agent", "offline"], ["split"],
    ["export", "--format", "sft", "--out", "x"], ["eval", "--agent", "offline"], ["judges"],
    ["label", "labels.csv"],
]


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=lambda a: "-".join(a))
def test_reading_commands_refuse_a_missing_store_and_suggest_one(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["migrate", "--db", "tracemill.duckdb"], environ={}) == 0
    capsys.readouterr()
    code = main([*argv, "--db", "tracemil.duckdb"], environ={})
    err = capsys.readouterr().err
    assert code == 2, err
    assert "no store at tracemil.duckdb; did you mean tracemill.duckdb?" in err
    assert "Traceback" not in err
    assert not (tmp_path / "tracemil.duckdb").exists()


def test_a_missing_store_with_nothing_close_says_how_to_make_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["map", "--db", str(tmp_path / "prod.duckdb")], environ={})
    err = capsys.readouterr().err
    assert code == 2 and "no store at" in err and "tracemill migrate" in err
    assert not (tmp_path / "prod.duckdb").exists()


def test_ingest_of_a_missing_file_creates_nothing(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "new.duckdb"
    code = main(["ingest", str(tmp_path / "nope.json"), "--db", str(db)], environ={})
    err = capsys.readouterr().err
    assert code == 2 and "nope.json" in err and "nothing was stored" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("reuse_port", [False, True], ids=["plain", "so-reuseport"])
def test_serve_refuses_a_taken_port(reuse_port: bool, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    # a listener that shares ports (as gRPC's default does) is found too
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if reuse_port:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = f"127.0.0.1:{holder.getsockname()[1]}"
    try:
        code = main(["serve", "--db", str(tmp_path / "s.duckdb"), "--grpc-address", taken,
                     "--http-address", "127.0.0.1:0", "--api-address", "127.0.0.1:0"],
                    environ={})
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert code == 3
    assert err.count("\n") == 1 and taken in err and "--grpc-address" in err
    assert not (tmp_path / "s.duckdb").exists()


def test_exit_codes_are_documented_once_and_in_the_readme() -> None:
    doc = tracemill.errors.__doc__ or ""
    codes = {int(c) for c in re.findall(r"^(\d+)\s{2,}", doc, flags=re.MULTILINE)}
    assert codes == {0, 1, 2, 3, 130, 141}
    assert (tracemill.errors.EXIT_GATE_FAILED, tracemill.errors.EXIT_USAGE,
            tracemill.errors.EXIT_UNAVAILABLE, tracemill.errors.EXIT_CLOSED_PIPE) == (1, 2, 3, 141)
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Exit codes"):]
    for code in codes:
        assert re.search(rf"^\| {code} \|", section, flags=re.MULTILINE), code

