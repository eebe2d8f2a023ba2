"""Benchmark: generation against an OpenAI-compatible server that answers in 200 ms.

Starts ``bench/openai_stub_server.py`` as its own process (its CPU is not ours), builds a
processed store from the synthetic production stream, and per run:

* **baseline** — a bare ``httpx.AsyncClient`` keeping ``--concurrency`` chat-completion
  requests in flight for ``--seconds``: the calls/s and client CPU per call that the
  server and the HTTP library allow on this machine;
* **tracemill** — the real ``run_generation`` with agent ``vllm:stub@<server>``, the
  template person and conduct checks, ``--rollouts`` rollouts at ``--concurrency``
  conversations: conversations in flight (the server's peak of concurrent requests; one
  conversation has at most one model call open), model calls/s, and tracemill's own
  overhead per model call = this process's CPU time (simulation, world, person, grading,
  storing, HTTP client) divided by model calls; and the mean number of model calls in
  flight over the whole run (calls/s x delay).

It prints medians and the ratios to the server's ceiling (concurrency / delay calls/s)
and to the bare client. Targets (issue 4): >= 32 conversations in flight, overhead
<= 5 ms per model call.

    python bench/generator_loopback.py                       # 3 runs
    python bench/generator_loopback.py --runs 1 --rollouts 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generator_offline import build_store

from generator.backends import BackendOptions
from generator.backends._http import CONNECTIONS_PER_CLIENT
from generator.budget import Budget
from generator.plan import PlanOptions
from generator.run import RunConfig, run_generation
from generator.simulate import Limits
from tracemill.store import open_store

_REQUEST = {
    "model": "stub",
    "messages": [{"role": "system", "content": "You are a support agent. " * 20},
                 {"role": "user", "content": "Where is my order A-48213? " * 4}],
    "tools": [{"type": "function", "function": {
        "name": "lookup_order", "description": "Look up an order by id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}}],
    "max_tokens": 1024,
}


def _cpu() -> float:
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


async def baseline(url: str, concurrency: int, seconds: float) -> dict[str, float]:
    """Bare httpx: calls/s and client CPU per call at the same concurrency, over clients
    of at most 16 connections each as the backends use."""
    shards = -(-concurrency // CONNECTIONS_PER_CLIENT)
    per_client = -(-concurrency // shards)
    limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
    calls = 0
    latencies: list[float] = []
    clients = [httpx.AsyncClient(base_url=url, limits=limits, timeout=30)
               for _ in range(shards)]
    deadline = time.monotonic() + seconds

    async def loop(client: httpx.AsyncClient) -> None:
        nonlocal calls
        while time.monotonic() < deadline:
            began = time.perf_counter()
            answer = await client.post("/chat/completions", json=_REQUEST)
            answer.raise_for_status()
            answer.json()
            latencies.append(time.perf_counter() - began)
            calls += 1

    cpu = _cpu()
    started = time.perf_counter()
    await asyncio.gather(*(loop(clients[i % shards]) for i in range(concurrency)))
    wall = time.perf_counter() - started
    cpu = _cpu() - cpu
    for client in clients:
        await client.aclose()
    return {"calls_per_s": calls / wall, "cpu_ms_per_call": 1000 * cpu / calls,
            "latency_ms": 1000 * statistics.median(latencies)}


def stub_stats(base: str) -> dict[str, int]:
    return dict(httpx.get(f"{base}/stats").json())


def tracemill_run(base_db: Path, work: Path, url: str, server: str, rollouts: int,
                  concurrency: int, delay: float) -> dict[str, float]:
    db = work / "run.duckdb"
    for path in (db, db.with_name(db.name + ".wal")):
        path.unlink(missing_ok=True)
    shutil.copy(base_db, db)
    httpx.post(f"{server}/reset")
    config = RunConfig(agent=f"vllm:stub@{url}", budget=Budget("rollouts", rollouts), seed=1,
                       concurrency=concurrency, saturation_window=0,
                       limits=Limits(max_turns=5), plan=PlanOptions(seed=1),
                       backend=BackendOptions(concurrency=concurrency, timeout_s=30))
    store = open_store(db)
    try:
        cpu = _cpu()
        started = time.perf_counter()
        record = asyncio.run(run_generation(store, config, {}, progress=False))
        wall = time.perf_counter() - started
        cpu = _cpu() - cpu
    finally:
        store.close()
    stats = stub_stats(server)
    calls = max(1, stats["requests"])
    return {"rollouts": float(record.written), "wall_s": wall, "model_calls": float(calls),
            "calls_per_s": calls / wall, "max_in_flight": float(stats["max_in_flight"]),
            "cpu_ms_per_call": 1000 * cpu / calls,
            "mean_in_flight": calls / wall * delay,
            "agent_errors": float(record.ended_by.get("agent_error", 0))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=400, help="Rollouts per run.")
    parser.add_argument("--concurrency", type=int, default=64, help="Conversations in flight.")
    parser.add_argument("--delay", type=float, default=0.2, help="Server answer delay (s).")
    parser.add_argument("--seconds", type=float, default=10, help="Baseline duration.")
    parser.add_argument("--runs", type=int, default=3, help="Runs; medians are printed.")
    args = parser.parse_args()
    stub = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("openai_stub_server.py")),
         "--delay", str(args.delay)], stdout=subprocess.PIPE, text=True)
    try:
        assert stub.stdout is not None
        port = int(stub.stdout.readline().split()[1])
        server = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                stub_stats(server)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        url = f"{server}/v1"
        base_runs, runs = [], []
        with tempfile.TemporaryDirectory() as work_dir:
            work = Path(work_dir)
            base_db = build_store(work)
            for index in range(args.runs):
                base_runs.append(asyncio.run(baseline(url, args.concurrency, args.seconds)))
                runs.append(tracemill_run(base_db, work, url, server, args.rollouts,
                                          args.concurrency, args.delay))
                print(f"run {index + 1}: baseline {json.dumps(base_runs[-1])}\n"
                      f"        tracemill {json.dumps(runs[-1])}", flush=True)
    finally:
        stub.terminate()
        stub.wait(timeout=10)
    b = {key: statistics.median(r[key] for r in base_runs) for key in base_runs[0]}
    t = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    ceiling = args.concurrency / args.delay
    print(f"\nmedian over {args.runs} runs; server delay {args.delay * 1000:.0f} ms, "
          f"concurrency {args.concurrency}, {args.rollouts} rollouts per run")
    print(f"  conversations in flight (server peak)   {t['max_in_flight']:>8.0f}   target >= 32")
    print(f"  tracemill CPU per model call (ms)        {t['cpu_ms_per_call']:>8.2f}   "
          "target <= 5 (everything: simulate, grade, store, HTTP)")
    print(f"  bare httpx CPU per call (ms)             {b['cpu_ms_per_call']:>8.2f}")
    print(f"  mean model calls in flight               {t['mean_in_flight']:>8.1f}   "
          "(calls/s x delay, over the whole run incl. planning and the last stragglers)")
    print(f"  model calls/s: tracemill {t['calls_per_s']:.1f}, bare httpx "
          f"{b['calls_per_s']:.1f}, server ceiling {ceiling:.1f}")
    print(f"  tracemill / ceiling                      {t['calls_per_s'] / ceiling:>8.2f}")
    print(f"  tracemill / bare httpx                   {t['calls_per_s'] / b['calls_per_s']:>8.2f}")
    print(f"  agent errors                             {t['agent_errors']:>8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
