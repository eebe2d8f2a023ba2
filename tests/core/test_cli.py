"""The command line: documented everywhere, settings precedence, clear errors."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tracemill.cli import build_parser, main
from tracemill.config import Settings, load_settings
from tracemill.errors import ConfigError


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_command_and_option_has_help() -> None:
    parser = build_parser()
    commands = _subparsers(parser)
    assert set(commands) >= {"serve", "ingest", "stats", "migrate", "process", "map",
                             "conversations", "report", "label", "generate", "runs", "judges"}
    helps = {choice.dest: choice.help for choice in next(
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction))._choices_actions}
    undocumented = [name for name in commands if not helps.get(name)]
    for name, sub in commands.items():
        for action in sub._actions:
            if not action.help or action.help == argparse.SUPPRESS:
                undocumented.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    for action in parser._actions:
        if not action.help:
            undocumented.append(f"tracemill {'/'.join(action.option_strings) or action.dest}")
    assert undocumented == []


def test_every_setting_is_described() -> None:
    assert [name for name, field in Settings.model_fields.items() if not field.description] == []


def test_flags_beat_environment_beat_file_beat_defaults(tmp_path: Path) -> None:
    config = tmp_path / "tracemill.toml"
    config.write_text('db = "from-file.duckdb"\ngrpc_address = "127.0.0.1:1"\n'
                      'http_address = "127.0.0.1:2"\n')
    environ = {"TRACEMILL_GRPC_ADDRESS": "127.0.0.1:3", "TRACEMILL_HTTP_ADDRESS": "127.0.0.1:4"}
    settings = load_settings({"http_address": "127.0.0.1:5", "db": None}, environ, config)
    assert settings.db == Path("from-file.duckdb")
    assert settings.grpc_address == "127.0.0.1:3"
    assert settings.http_address == "127.0.0.1:5"
    assert settings.max_message_bytes == 64 * 1024 * 1024
    assert load_settings({}, {"TRACEMILL_CONFIG": str(config)}).db == Path("from-file.duckdb")


@pytest.mark.parametrize(("config_text", "environ", "needle"), [
    ("dbb = 'x'\n", {}, "unknown keys dbb"),
    ("db = \n", {}, "is not valid TOML"),
    ("", {"TRACEMILL_GRPC_ADRESS": "x"}, "unknown environment variable TRACEMILL_GRPC_ADRESS"),
    ("", {"TRACEMILL_MAX_MESSAGE_BYTES": "lots"},
     "max_message_bytes (from environment variable TRACEMILL_MAX_MESSAGE_BYTES)"),
    ("grpc_address = 'localhost'\n", {}, "is not host:port"),
    ("tls_key = 'k.pem'\n", {}, "tls_cert and tls_key must be set together"),
])
def test_bad_settings_name_the_key_and_source(tmp_path: Path, config_text: str,
                                              environ: dict[str, str], needle: str) -> None:
    config = tmp_path / "tracemill.toml"
    config.write_text(config_text)
    with pytest.raises(ConfigError) as caught:
        load_settings({}, environ, config)
    assert needle in str(caught.value)


def test_errors_exit_non_zero_with_one_line_and_no_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["stats", "--db", str(tmp_path / "missing.duckdb")], environ={})
    err = capsys.readouterr().err
    assert code == 2
    assert "no store at" in err and "Traceback" not in err
    code = main(["migrate", "--config", str(tmp_path / "nope.toml")], environ={})
    assert code == 2
    assert "config file" in capsys.readouterr().err


def test_migrate_then_stats_on_a_fresh_store(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "fresh.duckdb"
    assert main(["migrate", "--db", str(db)], environ={}) == 0
    assert "applied collector 001_otlp" in capsys.readouterr().out
    assert main(["migrate", "--db", str(db)], environ={}) == 0
    assert "applied" not in capsys.readouterr().out
    assert main(["stats", "--db", str(db), "--json"], environ={}) == 0
    assert '"spans": 0' in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"], environ={})
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("tracemill ")
