"""A verifiers environment: an installable package in the layout of ``verifiers`` 0.4.

``verifiers``' v1 Taskset API (what ``vf init`` scaffolds): ``pyproject.toml`` and a
README at the top, and the package ``tracemill_env/`` exporting its ``Taskset`` subclass
alone in ``__all__``, its tasks scored by ``@vf.reward`` functions (the world's end state,
tracemill's conduct checks) and its tools a ``vf.Toolset`` answering from the task's world
(``servers/tool.py``). The code is copied from :mod:`generator.exports.verifiers_package`;
the tasks go to ``tracemill_env/data/train.jsonl`` and ``held_out.jsonl`` (one world each,
see :mod:`generator.exports._worlds`) and the runs' tools to ``data/runs.json``. The
package depends on tracemill (its world and checks): install tracemill first, then
``pip install DIR``; ``vf.load_environment`` finds it by the id ``tracemill-env``.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from generator.exports._base import ExportError, ExportOptions, FormatResult, write_jsonl
from generator.exports._data import ExportData
from generator.exports._worlds import ExportTask
from tracemill.redact import Redactor

PACKAGE = "tracemill_env"
"""The exported package's import name."""
DISTRIBUTION = "tracemill-env"
"""Its distribution name (and the taskset id ``vf.load_environment`` takes)."""

_PYPROJECT = f"""\
[project]
name = "{DISTRIBUTION}"
version = "0.1.0"
description = "tracemill's rollouts as a verifiers environment (v1 Taskset API)."
requires-python = ">=3.11"
# tracemill rebuilds each task's world and runs its conduct checks: install it first.
dependencies = ["verifiers>=0.4,<0.5", "tracemill"]

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["{PACKAGE}"]
"""


def _readme(counts: dict[str, Any]) -> str:
    return f"""\
# {DISTRIBUTION}

tracemill's rollouts as a [verifiers](https://pypi.org/project/verifiers/) 0.4 environment
(v1 Taskset API), written by `tracemill export --format verifiers`. Each task is one world
tracemill's rollouts ran in: the agent gets the person's opening message and the run's
system prompt, the tools (`{PACKAGE}/servers/tool.py`, a `vf.Toolset`) answer from the
task's simulated world, and two rewards score the finished trace: `end_state` (the records
the calls changed equal those a passing tracemill rollout left; not recorded for a task no
rollout passed) and `conduct` (tracemill's conduct checks, each also a metric).

- train: {counts['train']['tasks']} tasks ({counts['train']['rollouts']} rollouts)
- held out: {counts['held_out']['tasks']} tasks ({counts['held_out']['rollouts']} rollouts)

See `DATA_CARD.md` beside this file for the counts, grades, lineage and decontamination.

```bash
pip install /path/to/tracemill      # the world and checks the rewards run
pip install .
vf-eval {DISTRIBUTION} --env.taskset.split held_out
```

```python
import verifiers.v1 as vf
env = vf.load_environment(vf.resolve_env_config({{"taskset": {{"id": "{DISTRIBUTION}",
                                                                "split": "held_out"}}}}))
```
"""


def _row(task: ExportTask, side: str, masker: Redactor) -> dict[str, Any]:
    """One task's row; with a ``redact`` setting, the plan item (the person's facts, the
    ask) and the references are masked like the messages (the world then answers with the
    masked values, consistently with the transcripts)."""
    return masker.apply(_plain_row(task, side)) if masker else _plain_row(task, side)


def _plain_row(task: ExportTask, side: str) -> dict[str, Any]:
    first = task.rollouts[0]
    opening = next((m for m in first.messages if m["role"] == "user"), None)
    return {
        "id": task.task_id, "name": first.situation, "description": first.situation,
        "prompt": [{"role": "user", "content": str(opening.get("content") or "")}]
        if opening else None,
        "system_prompt": first.system_prompt or None,
        "run_id": task.run_id, "situation_key": first.situation_key, "side": side,
        "item": task.item, "references": [[list(e) for e in ref] for ref in task.references],
        "rollouts": [{"rollout_id": r.rollout_id, "passed": r.passed, "reward": r.reward,
                      "labeled_by": r.labeled_by} for r in task.rollouts],
    }


def write_verifiers(data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
    """The package under ``out``: code, ``data/{train,held_out}.jsonl`` and ``runs.json``."""
    worlds = data.worlds
    if worlds is None:
        raise ExportError("the verifiers export needs the rollouts' worlds: call "
                          "generator.exports.export(), which loads them")
    if not any(worlds.tasks.get(side) for side in ("train", "held_out")):
        why = ", ".join(f"{k} {v}" for k, v in sorted(worlds.left_out.items())) or "none"
        raise ExportError(f"no exported rollout's world can be rebuilt (left out: {why}): a "
                          "verifiers environment answers from tracemill's simulated world, "
                          "so generate with it (the default --world simulated), then split")
    package = out / PACKAGE
    if package.exists():
        shutil.rmtree(package)  # a stale module from an older export must not linger
    template = resources.files("generator.exports.verifiers_package").joinpath(PACKAGE)
    with resources.as_file(template) as source:
        shutil.copytree(source, package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "data"))
    (package / "data").mkdir()
    masker = Redactor(data.redacted)
    files: dict[str, int] = {}
    counts: dict[str, Any] = {"package": PACKAGE, "taskset_id": DISTRIBUTION,
                              "left_out": dict(worlds.left_out)}
    for side in ("train", "held_out"):
        tasks = worlds.tasks.get(side, ())
        kept = [task for task in tasks
                if any(m["role"] == "user" for m in task.rollouts[0].messages)]
        name = f"{PACKAGE}/data/{side}.jsonl"
        files[name] = write_jsonl(out / name, (_row(task, side, masker) for task in kept))
        counts[side] = {"tasks": len(kept),
                        "rollouts": sum(len(t.rollouts) for t in kept),
                        "with_reference_end_state": sum(1 for t in kept if t.references),
                        "without_opening": len(tasks) - len(kept)}
    (package / "data" / "runs.json").write_bytes(orjson.dumps(
        {run: {"tools": tools} for run, tools in worlds.tools.items()}))
    files[f"{PACKAGE}/data/runs.json"] = len(worlds.tools)
    (out / "pyproject.toml").write_text(_PYPROJECT, encoding="utf-8")
    (out / "README.md").write_text(_readme(counts), encoding="utf-8")
    warnings: list[str] = []
    if worlds.left_out:
        warnings.append("rollouts whose world cannot be rebuilt are not in the environment: "
                        + ", ".join(f"{k} {v}" for k, v in sorted(worlds.left_out.items()))
                        + " (external_world: answered by the team's own system, --world)")
    without = sum(counts[s]["tasks"] - counts[s]["with_reference_end_state"]
                  for s in ("train", "held_out"))
    if without:
        warnings.append(f"{without} tasks have no passing rollout: their end_state reward "
                        "is not recorded (only conduct scores them)")
    return FormatResult(files=files, counts=counts, warnings=tuple(warnings))


__all__ = ["DISTRIBUTION", "PACKAGE", "write_verifiers"]
