"""Split + decontaminate + every export of N synthetic rollouts: seconds and peak RSS.

Rows are inserted straight into a fresh store with SQL (a generator run of 100,000
rollouts would take far longer than what it measures): N rollouts over N/25 situations
(target cells with tool faults and world states, and explored ones), multi-turn
transcripts with tool calls whose user text varies per rollout, pass rates that differ
per situation, 3% of rollouts whose mutation did not fire.

    .venv/bin/python bench/exports.py --rollouts 100000

Target: <= 60 s and <= 2 GiB peak RSS at 100,000 rollouts. The run's stored plan holds
every rollout's plan item (as real runs do), which the verifiers export groups into tasks.
``--embedder-sample N`` also times the built-in embedder (``--embedder builtin``, the
``embed`` extra) on N of the rollouts' texts, outside the total, and extrapolates to the
distinct texts the semantic rule would embed.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.exports import FORMATS, ExportData, ExportOptions, export, load_export_data
from generator.split import SplitOptions, split_store
from tracemill.store import open_store

_TOOLS = ('[{"name":"lookup_order","description":"Look up an order.","parameters":'
          '{"type":"object","properties":{"order_id":{"type":"string"}},'
          '"required":["order_id"]},"exemplars":[],"source":"supplied"},'
          '{"name":"issue_refund","description":"Refund.",'
          '"parameters":{"type":"object","properties":{"order_id":{"type":"string"},'
          '"amount":{"type":"number"}},"required":["order_id"]},"exemplars":[],'
          '"source":"supplied"}]')

_RUN = """
INSERT INTO generation_runs (run_id, fingerprint, seed, state, config, plan, record,
    started_unix_nano, ended_unix_nano, plan_body)
VALUES ('bench-run', 'bench', 0, 'finished', '{"agent": "offline"}', '{}', '{}', 1, 2,
        json_object('tools', json($1), 'items', (
            SELECT json_group_array(json_object(
                'index', i, 'purpose', 'target',
                'cell', json_object('axis_a', 'tool', 'value_a', 't' || (i % $3)),
                'cell_status', 'new', 'situation', json_object('tool', 'lookup_order'),
                'seed', i,
                'goal', json_object('ask', 'ask ' || i, 'tool', 'lookup_order',
                                    'facts', json_object('order_id', 'A-' || i),
                                    'source_ask', NULL),
                'persona', json_object('name', 'p', 'texture', 'plain', 'tone', 'calm',
                                       'patience', 3, 'length', 'short',
                                       'stance', 'neutral'),
                'mutation', json_object('kind', 'world_state', 'detail', '',
                                        'world_state', 'entity_exists',
                                        'faults', json_array()),
                'source_conversations', json_array('conv-' || i)))
            FROM range($2) AS t(i))))
"""

# Per rollout i: situation s = i % situations; words vary with i so texts differ.
_ROLLOUTS = """
INSERT INTO rollouts
SELECT 'bench-run:' || i, 'bench-run', i, 'target',
       'tool=t' || (s % 7) || ' & world_state=w' || (s % 11), 'new',
       json_object('tool', 'lookup_order', 'world_state', 'w' || (s % 11)),
       i,
       json_object('cell', NULL, 'source_conversations', json_array('conv-' || i),
                   'mutation', json_object('kind', CASE WHEN s % 3 = 0 THEN 'tool_fault'
                                                        ELSE 'world_state' END,
                                           'world_state', 'w' || (s % 13),
                                           'faults', CASE WHEN s % 3 = 0 THEN json_array(
                                               json_object('tool', 'lookup_order',
                                                           'condition', 'c' || (s % 5)))
                                               ELSE json_array() END)),
       '{}', json_object('ask', 'ask ' || i, 'tool', 'lookup_order',
                         'facts', json_object('order_id', 'A-' || i)),
       json_array(
         json_object('role', 'system', 'content', 'You are a support agent.'),
         json_object('role', 'user', 'content',
                     'Hello I am customer ' || i || ' and order A-' || i
                     || ' has not arrived yet, situation ' || s || ' word ' || (i * 7919 % 100003)
                     || ' please look into it for me today'),
         json_object('role', 'assistant', 'content', NULL, 'tool_calls', json_array(
             json_object('id', 'call_' || i, 'name', 'lookup_order',
                         'arguments', '{"order_id":"A-' || i || '"}'))),
         json_object('role', 'tool', 'content', '{"status":"shipped"}',
                     'tool_call_id', 'call_' || i, 'name', 'lookup_order'),
         json_object('role', 'assistant', 'content',
                     'Order A-' || i || ' has shipped' || repeat(' and more', i % 4)),
         json_object('role', 'user', 'content', 'Thanks ' || (i % 97)),
         json_object('role', 'assistant', 'content', 'You are welcome.')),
       '[]', 'user_done', [], 'offline', 100, 20, 0.0, 3, NULL, true,
       CASE WHEN passed THEN 1.0 ELSE 0.0 END, passed,
       CASE WHEN passed THEN NULL ELSE 'invented_identifier' END, 'reason', [], '[]',
       'conduct-checks/1', 0.1, 1, NULL, 0, 0, 0,
       CASE WHEN i % 33 = 0 THEN false ELSE true END
FROM (SELECT i, i % $2 AS s,
             (hash(i) % 100) < 20 + (i % $2) % 60 AS passed
      FROM range($1) AS t(i))
"""


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _time_embedder(data: ExportData, sample: int) -> None:
    """Texts per second of the built-in embedder, and what the semantic rule would take."""
    from generator.decontaminate import load_builtin_embedder

    t = time.perf_counter()
    embedder, missing = load_builtin_embedder()
    if embedder is None:
        print(f"embedder not timed: {missing}")
        return
    loaded = time.perf_counter() - t
    rows = data.train + data.held_out
    texts = [row.user_text for row in rows[:sample]]
    t, cpu = time.perf_counter(), time.process_time()
    embedder(texts)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    distinct = len({row.user_text for row in rows})
    rate = len(texts) / seconds
    print(f"built-in embedder: loaded in {loaded:.1f} s; {len(texts)} texts in "
          f"{seconds:.1f} s wall ({cpu:.1f} s CPU) = {rate:.0f} texts/s; the semantic rule "
          f"here would embed {distinct} distinct texts: ~{distinct / rate:.0f} s more "
          "(linear in texts)")


def main() -> int:
    """Build the store, then time each step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=100_000, help="Rollouts to insert.")
    parser.add_argument("--embedder-sample", type=int, default=0, metavar="N",
                        help="Also time the built-in embedder on N texts (0: skip).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        store = open_store(db)
        cursor = store.cursor()
        started = time.perf_counter()
        situations = max(2, args.rollouts // 25)
        cursor.execute(_RUN, [_TOOLS, args.rollouts, situations])
        cursor.execute(_ROLLOUTS, [args.rollouts, situations])
        print(f"inserted {args.rollouts} rollouts in {time.perf_counter() - started:.1f} s")
        steps: dict[str, tuple[float, float]] = {}
        t0, c0 = time.perf_counter(), time.process_time()
        report = split_store(cursor, SplitOptions(held_out=0.2, seed=0))
        steps["split"] = time.perf_counter() - t0, time.process_time() - c0
        t, c = time.perf_counter(), time.process_time()
        data = load_export_data(cursor)
        steps["load + decontaminate"] = time.perf_counter() - t, time.process_time() - c
        for name in FORMATS:
            t, c = time.perf_counter(), time.process_time()
            export(cursor, name, Path(tmp) / name,
                   ExportOptions(allow_length_bias=True), data=data)
            steps[f"export {name}"] = time.perf_counter() - t, time.process_time() - c
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        store.close()
        if args.embedder_sample:
            _time_embedder(data, args.embedder_sample)
    for step, (seconds, used) in steps.items():
        print(f"  {step:<24} {seconds:6.1f} s wall {used:6.1f} s CPU")
    print(f"situations {report.situations} ({report.held_out} held out); train rows "
          f"{len(data.train)}, held-out rows {len(data.held_out)}; decontamination "
          f"removed {data.decontamination.removed}")
    print(f"total {total:.1f} s wall, {cpu:.1f} s CPU (DuckDB's threads included; target "
          f"<= 60 s), peak RSS {_rss_mib():.0f} MiB (target <= 2048)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
