"""The service file beside the store (``STORE.serve.json``) is written privately and
believed only when it is this user's own: the command line sends tokens where it says."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracemill.collector_client import api_url
from tracemill.config import Settings
from tracemill.errors import StoreLockedError
from tracemill.service_info import (
    ServiceInfo,
    info_path,
    read_service_info,
    remove_service_info,
    write_service_info,
)

NOBODY = 65534
INFO = ServiceInfo(pid=os.getpid(), grpc="127.0.0.1:1", http="127.0.0.1:2",
                   api="127.0.0.1:3", tls=False)


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """What the service file's logger warns (tracemill's loggers do not propagate)."""
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    logger = logging.getLogger("tracemill.service_info")
    handler = Keep(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def test_the_file_is_written_private_and_through_a_file_of_its_own(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    # a name another user could have placed beforehand, as the old fixed temporary name
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("theirs")
    info_path(db).with_name(info_path(db).name + ".tmp").symlink_to(elsewhere)
    path = write_service_info(db, INFO)
    assert path == info_path(db)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert elsewhere.read_text() == "theirs"
    assert read_service_info(db) == INFO
    write_service_info(db, INFO)  # over an earlier one
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["elsewhere.json", "t.duckdb.serve.json", "t.duckdb.serve.json.tmp"])
    remove_service_info(db, os.getpid())
    assert not path.exists()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_not_believed(tmp_path: Path,
                                                warnings: list[str]) -> None:
    db = tmp_path / "t.duckdb"
    path = write_service_info(db, INFO)
    os.chown(path, NOBODY, NOBODY)
    assert read_service_info(db) is None
    assert warnings == [
        f"ignoring the service file {path}: it belongs to user id {NOBODY}, not to you "
        f"({os.getuid()}), and the tokens would go to whatever address it names; using the "
        "configured addresses instead (remove the file, or run the service as this user)"]
    # the command line falls back to the configured address, as with no file
    settings = Settings(db=db, api_address="127.0.0.1:4999")
    locked = StoreLockedError(str(db), os.getpid(), None)
    assert api_url(settings, locked) == "http://127.0.0.1:4999/api/v1"
    os.chown(path, os.getuid(), os.getgid())
    assert api_url(settings, locked) == "http://127.0.0.1:3/api/v1"


def test_a_symbolic_link_is_not_believed(tmp_path: Path, warnings: list[str]) -> None:
    db = tmp_path / "t.duckdb"
    real = write_service_info(tmp_path / "other.duckdb", INFO)
    info_path(db).symlink_to(real)
    assert read_service_info(db) is None
    assert len(warnings) == 1 and "it is a symbolic link" in warnings[0]
    assert read_service_info(tmp_path / "missing.duckdb") is None
    assert len(warnings) == 1  # no file is no news
