"""The generator's side of the store: runs and their rollouts.

Rollouts are written in small batches as they finish (an Arrow table per batch, one
transaction each), keyed by (run id, plan index): a run that is interrupted or crashes is
resumed by reading back which indices are stored and what they spent, so nothing is
redone and nothing is counted twice.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import orjson
import pyarrow as pa

from generator.records import Rollout
from tracemill.store import load_sql

_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("rollout_id", pa.string()), ("run_id", pa.string()), ("idx", pa.int32()),
    ("purpose", pa.string()), ("cell", pa.string()), ("cell_status", pa.string()),
    ("situation", pa.string()), ("seed", pa.int64()), ("lineage", pa.string()),
    ("persona", pa.string()), ("goal", pa.string()), ("messages", pa.string()),
    ("events", pa.string()), ("ended_by", pa.string()), ("planted", pa.list_(pa.string())),
    ("agent", pa.string()), ("input_tokens", pa.int64()), ("output_tokens", pa.int64()),
    ("cost_usd", pa.float64()), ("model_calls", pa.int32()), ("error", pa.string()),
    ("graded", pa.bool_()), ("reward", pa.float64()), ("passed", pa.bool_()),
    ("failure_class", pa.string()), ("reason", pa.string()),
    ("markers", pa.list_(pa.string())), ("checks", pa.string()),
    ("labeled_by", pa.string()), ("duration_s", pa.float64()),
    ("created_unix_nano", pa.uint64()), ("logprobs", pa.string()),
    ("retries", pa.int32()), ("faults_scheduled", pa.int32()), ("faults_fired", pa.int32()),
    ("mutation_fired", pa.bool_()),
)
_SCHEMA = pa.schema(list(_COLUMNS))


@dataclass(frozen=True)
class StoredProgress:
    """What a run already has in the store (for resuming it)."""

    indices: frozenset[int]
    """Plan indices already stored."""
    input_tokens: int
    """Their input tokens."""
    output_tokens: int
    """Their output tokens."""
    cost_usd: float
    """Their cost."""


def _json(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def rollout_row(run_id: str, agent_spec: str, rollout: Rollout) -> dict[str, object]:
    """The stored row of one rollout."""
    plan, transcript, grade = rollout.plan, rollout.transcript, rollout.grade
    return {
        "rollout_id": f"{run_id}:{plan.index}",
        "run_id": run_id,
        "idx": plan.index,
        "purpose": plan.purpose,
        "cell": plan.cell.label() if plan.cell else None,
        "cell_status": plan.cell_status,
        "situation": _json(dict(plan.situation)),
        "seed": plan.seed,
        "lineage": _json({"cell": plan.cell, "cell_status": plan.cell_status,
                          "source_conversations": plan.source_conversations,
                          "mutation": plan.mutation}),
        "persona": _json(plan.persona),
        "goal": _json({"ask": plan.goal.ask, "tool": plan.goal.tool,
                       "facts": dict(plan.goal.facts), "source_ask": plan.goal.source_ask}),
        "messages": _json(transcript.messages),
        "events": _json(transcript.events),
        "ended_by": transcript.ended_by,
        "planted": list(transcript.planted),
        "agent": agent_spec,
        "input_tokens": transcript.usage.input_tokens,
        "output_tokens": transcript.usage.output_tokens,
        "cost_usd": transcript.cost_usd,
        "model_calls": transcript.model_calls,
        "error": transcript.error,
        "graded": grade is not None,
        "reward": grade.reward if grade else None,
        "passed": grade.passed if grade else None,
        "failure_class": grade.failure_class if grade else None,
        "reason": grade.reason if grade else None,
        "markers": list(grade.markers) if grade else [],
        "checks": _json(grade.checks if grade else ()),
        "labeled_by": grade.labeled_by if grade else None,
        "duration_s": rollout.duration_s,
        "created_unix_nano": time.time_ns(),
        "logprobs": _json(transcript.logprobs) if transcript.logprobs else None,
        "retries": transcript.retries,
        "faults_scheduled": len(plan.mutation.faults),
        "faults_fired": faults_fired(rollout),
        "mutation_fired": transcript.mutation_fired,
    }


def faults_fired(rollout: Rollout) -> int:
    """How many of the rollout's scheduled tool faults the agent actually ran into (a
    fault on a tool's second call does not fire when the tool is called once)."""
    fired = 0
    events = rollout.transcript.events
    for fault in rollout.plan.mutation.faults:
        if any(e.status == fault.condition and fault.tool in ("*", e.tool) for e in events):
            fired += 1
    return fired


def insert_rollouts(cursor: duckdb.DuckDBPyConnection, rows: Sequence[dict[str, object]]) -> None:
    """Store finished rollouts in one transaction (rows already stored are skipped)."""
    if not rows:
        return
    batch = pa.Table.from_pylist(list(rows), schema=_SCHEMA)
    cursor.register("rollout_batch", batch)
    try:
        cursor.execute("BEGIN")
        cursor.execute(load_sql("generator", "insert_rollouts.sql"))
        cursor.execute("COMMIT")
    except BaseException:
        cursor.execute("ROLLBACK")
        raise
    finally:
        cursor.unregister("rollout_batch")


def stored_progress(cursor: duckdb.DuckDBPyConnection, run_id: str) -> StoredProgress:
    """Which plan indices of ``run_id`` are stored, and what they spent."""
    rows = cursor.execute(load_sql("generator", "run_progress.sql"), [run_id]).fetchall()
    indices = frozenset(int(r[0]) for r in rows)
    return StoredProgress(indices, sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows),
                          sum(float(r[3]) for r in rows))


@dataclass(frozen=True)
class PreviousRun:
    """A stored run, as a resumed invocation needs it."""

    fingerprint: str
    """Its configuration's identity."""
    state: str
    """running or finished."""
    plan_body: str
    """Its whole plan (JSON, :mod:`generator.plan_codec`)."""
    ledger: dict[str, object] | None
    """The budget summary of its last invocation's record (None before the first ended,
    e.g. after a SIGKILL)."""


def find_resumable(cursor: duckdb.DuckDBPyConnection, fingerprint: str) -> str | None:
    """The newest unfinished run with this fingerprint, if any."""
    row = cursor.execute(load_sql("generator", "find_resumable.sql"), [fingerprint]).fetchone()
    return None if row is None else str(row[0])


def previous_run(cursor: duckdb.DuckDBPyConnection, run_id: str) -> PreviousRun | None:
    """A stored run, or None."""
    row = cursor.execute(load_sql("generator", "previous_run.sql"), [run_id]).fetchone()
    if row is None:
        return None
    ledger = orjson.loads(row[3]) if row[3] else None
    return PreviousRun(str(row[0]), str(row[1]), str(row[2] or ""),
                       ledger if isinstance(ledger, dict) else None)


def start_run(cursor: duckdb.DuckDBPyConnection, run_id: str, fingerprint: str, seed: int,
              config: object, plan: object, plan_body: str) -> None:
    """Record a new run as running, with its whole plan."""
    cursor.execute(load_sql("generator", "start_run.sql"),
                   [run_id, fingerprint, seed, _json(config), _json(plan), plan_body,
                    time.time_ns()])


def finish_run(cursor: duckdb.DuckDBPyConnection, run_id: str, record: object,
               *, finished: bool) -> None:
    """Store the run record; ``finished=False`` leaves the run resumable."""
    cursor.execute(load_sql("generator", "finish_run.sql"),
                   [_json(record), "finished" if finished else "running", time.time_ns(),
                    run_id])


def latest_record(cursor: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    """The stored record (JSON) of a run, or None."""
    row = cursor.execute(load_sql("generator", "run_record.sql"), [run_id]).fetchone()
    return None if row is None or row[0] is None else str(row[0])


@dataclass(frozen=True)
class StoredRollout:
    """What a run record needs of one stored rollout."""

    rollout_id: str
    """``run_id:index``."""
    purpose: str
    """target, explore or guard."""
    cell: str | None
    """The cell label aimed at."""
    cell_status: str | None
    """Its status in the map."""
    situation: dict[str, str]
    """The six axis values."""
    ended_by: str
    """How the conversation ended."""
    planted: tuple[str, ...]
    """Mistakes the offline agent planted."""
    graded: bool
    """Whether it has a grade."""
    passed: bool | None
    """The verdict."""
    failure_class: str | None
    """Why it failed."""
    input_tokens: int
    """Tokens in."""
    output_tokens: int
    """Tokens out."""
    cost_usd: float
    """Money."""
    model_calls: int
    """Model calls of all roles."""
    retries: int
    """Agent calls retried."""
    faults_scheduled: int
    """Tool faults planned."""
    faults_fired: int
    """Tool faults that fired."""
    tools_ok: tuple[str, ...]
    """Tools that answered ok in it."""
    mutation_fired: bool | None
    """Whether its planned mutation took effect (None: not applicable)."""


def stored_rollouts(cursor: duckdb.DuckDBPyConnection, run_id: str) -> list[StoredRollout]:
    """Every stored rollout of a run (the record covers all its invocations)."""
    rows = cursor.execute(load_sql("generator", "run_rollouts.sql"), [run_id]).fetchall()
    return [StoredRollout(
        rollout_id=r[0], purpose=r[1], cell=r[2], cell_status=r[3],
        situation=orjson.loads(r[4]), ended_by=r[5], planted=tuple(r[6]), graded=bool(r[7]),
        passed=r[8], failure_class=r[9], input_tokens=int(r[10]), output_tokens=int(r[11]),
        cost_usd=float(r[12]), model_calls=int(r[13]), retries=int(r[14] or 0),
        faults_scheduled=int(r[15] or 0), faults_fired=int(r[16] or 0),
        tools_ok=tuple(r[17] or ()), mutation_fired=r[18]) for r in rows]


def list_runs(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, object]]:
    """One summary per run, newest first."""
    rows = cursor.execute(load_sql("generator", "list_runs.sql")).fetchall()
    names = ("run_id", "state", "agent", "stop_reason", "rollouts", "failed", "started")
    return [dict(zip(names, row, strict=True)) for row in rows]
