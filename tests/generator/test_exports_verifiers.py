"""``tracemill export --format verifiers``: the package's layout and tasks here, and
verifiers 0.4 loading and scoring it in its own virtual environment.

verifiers needs openai 2.x and this environment pins 3.x, so the load check runs in
``.venv-verifiers`` (built by ``.ci/verifiers``) through a subprocess; when that
environment is missing the second test skips and says which script builds it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.exports.verifiers import DISTRIBUTION, PACKAGE
from generator.rollout_views import chat_messages
from tests.generator.conftest import ReadRollouts, RunCli, StoreCopy
from tests.generator.test_exports import _export, _jsonl, _sides, _store

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv-verifiers" / "bin" / "python"
LOAD_TEST = ROOT / "tests" / "verifiers_env" / "test_verifiers_load.py"


def _exported(run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts,
              out: Path) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    db = _store(run_cli, store_copy)
    card = _export(run_cli, db, out, "verifiers")
    return card, read_rollouts(db), db


def test_package_layout_and_tasks(run_cli: RunCli, store_copy: StoreCopy,
                                  read_rollouts: ReadRollouts, tmp_path: Path) -> None:
    out = tmp_path / "vf"
    card, stored, db = _exported(run_cli, store_copy, read_rollouts, out)
    by_id = {r["rollout_id"]: r for r in stored}
    sides = _sides(db)
    pyproject = (out / "pyproject.toml").read_text()
    assert f'name = "{DISTRIBUTION}"' in pyproject and '"verifiers>=0.4,<0.5"' in pyproject
    init = (out / PACKAGE / "__init__.py").read_text()
    assert '__all__ = ["TracemillTaskset"]' in init
    for name in ("taskset.py", "world.py", "servers/tool.py", "data/runs.json"):
        assert (out / PACKAGE / name).is_file(), name
    assert not list((out / PACKAGE).rglob("__pycache__"))
    runs = json.loads((out / PACKAGE / "data" / "runs.json").read_text())
    seen: set[str] = set()
    for side in ("train", "held_out"):
        rows = _jsonl(out / PACKAGE / "data" / f"{side}.jsonl")
        counts = card["format_counts"][side]
        assert rows and len(rows) == counts["tasks"] == card["files"][
            f"{PACKAGE}/data/{side}.jsonl"]
        assert sum(len(r["rollouts"]) for r in rows) == counts["rollouts"]
        assert counts["rollouts"] == card[side]["rollouts"]  # every exported rollout is in
        for row in rows:
            assert row["side"] == side and row["run_id"] in runs
            assert row["prompt"][0]["role"] == "user" and row["prompt"][0]["content"]
            members = [by_id[r["rollout_id"]] for r in row["rollouts"]]
            # one world: the same plan item (seed, facts, world state, faults) each time
            assert len({(m["seed"], m["goal"]) for m in members}) == 1
            assert {sides[m["rollout_id"]] for m in members} == {side}
            assert all(m["mutation_fired"] is not False for m in members)
            assert row["item"]["seed"] == members[0]["seed"]
            # a reference end state exactly when one of its rollouts passed
            assert bool(row["references"]) == any(m["passed"] for m in members)
            seen |= {m["rollout_id"] for m in members}
    assert len(seen) == card["train"]["rollouts"] + card["held_out"]["rollouts"]


def _cases(out: Path, stored: list[dict[str, Any]], path: Path) -> None:
    """What the load test checks: each side's task ids in order and, for up to 40
    exported rollouts, their chat messages, grade and the end state their events left."""
    by_id = {r["rollout_id"]: r for r in stored}
    task_ids: dict[str, list[str]] = {}
    rollouts: list[dict[str, Any]] = []
    for side in ("train", "held_out"):
        rows = _jsonl(out / PACKAGE / "data" / f"{side}.jsonl")
        task_ids[side] = [r["id"] for r in rows]
        for row in rows:
            for member in row["rollouts"]:
                raw = by_id[member["rollout_id"]]
                events = json.loads(raw["events"])
                effects = sorted({(e["tool"], e["effect"], e["entity_id"] or "")
                                  for e in events if e["effect"] is not None})
                rollouts.append({"rollout_id": raw["rollout_id"], "task_id": row["id"],
                                 "passed": raw["passed"], "labeled_by": raw["labeled_by"],
                                 "messages": chat_messages(json.loads(raw["messages"])),
                                 "effects": [list(e) for e in effects]})
    passed = [r for r in rollouts if r["passed"]][:20]
    failed = [r for r in rollouts if not r["passed"]][:20]
    path.write_text(json.dumps({"task_ids": task_ids, "rollouts": passed + failed}))


def test_verifiers_loads_and_scores_the_export(run_cli: RunCli, store_copy: StoreCopy,
                                               read_rollouts: ReadRollouts,
                                               tmp_path: Path) -> None:
    if not VENV_PYTHON.exists():
        pytest.skip(f"VERIFIERS LOAD CHECK NOT RUN: {VENV_PYTHON} is missing; build it with "
                    ".ci/verifiers (verifiers==0.4.0 needs openai 2.x, kept out of .venv)")
    out = tmp_path / "vf"
    _, stored, _ = _exported(run_cli, store_copy, read_rollouts, out)
    cases = tmp_path / "cases.json"
    _cases(out, stored, cases)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"TRACEMILL_VERIFIERS_CASES": str(cases), "HF_HUB_OFFLINE": "1"}
    if os.environ.get("TRACEMILL_VERIFIERS_INSTALL") == "1":  # .ci/verifiers: pip install it
        install = subprocess.run([str(VENV_PYTHON), "-m", "pip", "install", "--quiet",
                                  "--no-deps", "--force-reinstall", str(out)],
                                 capture_output=True, text=True, timeout=600, check=False)
        assert install.returncode == 0, install.stderr[-3000:]
    else:  # the export as it lies
        env["PYTHONPATH"] = str(out)
    result = subprocess.run(
        [str(VENV_PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
         "-o", "addopts=", "-W", "error::pytest.PytestUnraisableExceptionWarning",
         "--rootdir", str(LOAD_TEST.parent), str(LOAD_TEST)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "4 passed" in result.stdout, result.stdout[-3000:]


def test_rollouts_of_a_teams_own_world_are_refused(run_cli: RunCli, store_copy: StoreCopy,
                                                   tmp_path: Path) -> None:
    db = store_copy("staging.duckdb")
    generated = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--agent",
                         "offline", "--budget", "20", "--seed", "3",
                         "--world", "python:tests.support.staging_world:answer"])
    assert generated.code == 0, generated.err
    assert run_cli(["split", "--db", str(db)]).code == 0
    refused = run_cli(["export", "--db", str(db), "--format", "verifiers", "--out",
                       str(tmp_path / "vf")])
    assert refused.code == 2 and refused.out == ""
    (line,) = refused.err.strip().splitlines()
    assert "external_world" in line and "--world simulated" in line
    assert not (tmp_path / "vf" / PACKAGE).exists()
