"""Benchmark: OTLP ingest into a DuckLake (PostgreSQL catalog) with one and two collectors,
next to the single DuckDB file.

Each scenario starts fresh: ``python -m tracemill serve`` processes on free ports (a new
PostgreSQL database per lake scenario, one lake file per collector), two loader threads
in this process sending OTLP/gRPC exports of 100 GenAI spans built beforehand
(tests/lake/load.py), split evenly over the collectors. It times from the first request
until every acknowledged span is stored as a row (each collector's /metrics), then stops
the collectors and checks the store: every acknowledged span once.

* ``file``: one collector on a DuckDB file (today's default);
* ``lake x1``: one collector on the lake;
* ``lake x2``: two collectors on the same lake, each with its own lake file and spool.

Needs the lake venv and a PostgreSQL server; ``.ci/lake`` runs it against the one it
starts. By hand::

    .venv-lake/bin/python bench/lake_ingest.py --pg "host=127.0.0.1 port=5432 user=tm" \\
        --pg-bin /usr/lib/postgresql/15/bin --spans 40000

The machine is shared: read the figures as rough, and the ratios between rows as the
point.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _server import fetch_metrics, metrics_client

from tests.collector.serving import ServeProcess
from tests.lake.conftest import create_database, lake_file
from tests.lake.load import Loader
from tracemill.store import open_store

SPANS_PER_REQUEST = 100


@dataclass(frozen=True)
class Result:
    """One scenario's figures."""

    name: str
    """file, lake x1, lake x2."""
    spans: int
    """Spans acknowledged (and checked stored once)."""
    acknowledged_s: float
    """Seconds until the last export was acknowledged."""
    stored_s: float
    """Seconds until every acknowledged span was a row."""


def _all_stored(clients: list[httpx.Client]) -> bool:
    samples = [fetch_metrics(client) for client in clients]
    return all(sample.all_stored for sample in samples)


def run(name: str, stores: list[Path], check: Path, spans: int, work: Path) -> Result:
    """Serve ``stores`` (one collector each), load them with ``spans`` spans, check ``check``."""
    collectors = [ServeProcess(store, work, log_file=work / f"{name}-{n}.log")
                  for n, store in enumerate(stores)]
    requests = spans // SPANS_PER_REQUEST // 2
    loaders = [Loader(collectors[n % len(collectors)].grpc, requests=requests,
                      spans_per_request=SPANS_PER_REQUEST, name=f"load{n}")
               for n in range(2)]
    clients = [metrics_client(collector.http) for collector in collectors]
    try:
        for loader in loaders:
            loader.prepare()
        started = time.perf_counter()
        for loader in loaders:
            loader.start()
        for loader in loaders:
            loader.join()
            if loader.error:
                raise SystemExit(f"{name}: {loader.error}")
        acknowledged_s = time.perf_counter() - started
        while not _all_stored(clients):
            time.sleep(0.05)
        stored_s = time.perf_counter() - started
    finally:
        for client in clients:
            client.close()
        for collector in collectors:
            code, log = collector.stop()
            if code != 0:
                print(log[-3000:], file=sys.stderr)
    acknowledged = set().union(*(loader.acknowledged for loader in loaders))
    store = open_store(check, read_only=True)
    try:
        total, distinct = store.query(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans")[0]
    finally:
        store.close()
    if total != distinct or distinct < len(acknowledged):
        raise SystemExit(f"{name}: {len(acknowledged)} acknowledged, {distinct} stored, "
                         f"{total - distinct} twice")
    return Result(name, len(acknowledged), acknowledged_s, stored_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", required=True, metavar="CONNINFO",
                        help="libpq key=value pairs of a PostgreSQL server, without dbname "
                             "(host=127.0.0.1 port=5432 user=tm); the user may create "
                             "databases.")
    parser.add_argument("--pg-bin", type=Path, default=Path("/usr/lib/postgresql/15/bin"),
                        help="Folder holding createdb (default Debian's PostgreSQL 15).")
    parser.add_argument("--spans", type=int, default=40_000,
                        help="Spans per scenario (default 40000).")
    args = parser.parse_args(argv)
    os.environ["LAKE_TEST_PG_BIN"] = str(args.pg_bin)
    results = []
    with tempfile.TemporaryDirectory(prefix="tracemill-lake-bench-") as folder:
        work = Path(folder)
        single = work / "single.duckdb"
        results.append(run("file", [single], single, args.spans, work))
        for collectors in (1, 2):
            database = create_database(args.pg)
            data = work / f"data-{collectors}"
            stores = [lake_file(work / f"x{collectors}-c{n}.lake", args.pg, database, data)
                      for n in range(collectors)]
            open_store(stores[0]).close()  # create the catalog before the collectors race
            check = lake_file(work / f"x{collectors}-reader.lake", args.pg, database, data)
            results.append(run(f"lake x{collectors}", stores, check, args.spans, work))
    print(f"{'store':<10} {'spans':>8} {'acked spans/s':>14} {'stored spans/s':>15}")
    for result in results:
        acked = result.spans / result.acknowledged_s
        print(f"{result.name:<10} {result.spans:>8,} {acked:>14,.0f} "
              f"{result.spans / result.stored_s:>15,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
