"""The README documents every setting and its example config file is valid."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tracemill.errors
import tracemill.lake
from tracemill.config import Settings, load_settings
from tracemill.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_in_the_readme_with_its_environment_name() -> None:
    text = README.read_text()
    missing = [name for name in Settings.model_fields
               if f"| `{name}` | `TRACEMILL_{name.upper()}` |" not in text]
    assert missing == [], f"add these to the README's settings table: {missing}"


def test_the_readme_config_example_loads(tmp_path: Path) -> None:
    example = re.search(r"```toml\n# tracemill.toml\n(.*?)```", README.read_text(), re.S)
    assert example is not None
    config = tmp_path / "tracemill.toml"
    config.write_text(example.group(1))
    settings = load_settings({}, {}, config)
    assert settings.generate_cron == "0 2 * * *" and "user.email" in settings.redact


def test_the_readme_lists_the_exit_codes_of_the_errors_module() -> None:
    table = tracemill.errors.__doc__
    assert table is not None
    documented = set(re.findall(r"^(\d+)\s{2,}", table, re.M))
    in_readme = set(re.findall(r"^\| (\d+) \|", README.read_text(), re.M))
    assert documented and documented == in_readme


def test_the_lake_module_shows_the_command_line_it_takes() -> None:
    # the command line refuses a lake URL as --db and asks for a lake file
    with pytest.raises(ConfigError, match="lake file"):
        load_settings({"db": "ducklake:postgres:dbname=tm data_path=/srv/lake"}, {})
    doc = tracemill.lake.__doc__ or ""
    assert "--db 'ducklake:" not in doc and "``--db`` is refused" in doc
    assert "--db team.lake" in doc
