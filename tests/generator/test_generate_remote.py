"""``tracemill generate`` against model servers that speak the providers' real protocols.

The agent under test is an OpenAI-compatible endpoint (``vllm:MODEL@URL`` or ``openai:``
with ``OPENAI_BASE_URL``) served by :class:`~tests.support.openai_loopback.OpenAILoopback`;
the judge is ``anthropic:`` on :class:`~tests.support.anthropic_loopback.AnthropicLoopback`.
Both are real HTTP servers on loopback ports; the command line is the user's.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generator.checks import CHECKS_STAMP
from tests.generator.conftest import CliResult, ReadRollouts, RunCli, StoreCopy
from tests.support.anthropic_loopback import AnthropicLoopback
from tests.support.openai_loopback import (
    ErrorReply,
    IncomingRequest,
    OpenAILoopback,
    RenderedResponse,
    Reply,
    TextReply,
    ToolCall,
    ToolCallReply,
    Usage,
)
from tracemill.cli import main

pytestmark = pytest.mark.integration

VERDICT = json.dumps({"reward": 0.9, "reason": "Looked it up and said what it found.",
                      "failure_class": None})
ANSWER = "I looked that up with our tools; here is what they returned."


class ToolThenText(OpenAILoopback):
    """An agent model that looks something up before it answers.

    A request whose last message is not a tool result, and that offers tools, gets a call
    of the first tool offered; any other request gets the next scripted reply, else
    ``default``. Scripted replies (a 429, say) are served first, whatever the request.
    """

    def __init__(self, *, script: list[Reply] | None = None, default: Reply,
                 tool_usage: Usage | None = None) -> None:
        super().__init__(script or [], default=default)
        self._text = default
        self._tool_usage = tool_usage
        self._chosen = threading.local()  # each request is served on its own thread
        self._calls = 0
        self._calls_lock = threading.Lock()

    def _dispatch(self, request: IncomingRequest) -> RenderedResponse:
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or [{}]
        tools = body.get("tools") or []
        self._chosen.reply = None
        if tools and messages[-1].get("role") != "tool":
            with self._calls_lock:
                self._calls += 1
                call_id = f"call_{self._calls}"
            name = tools[0]["function"]["name"]
            self._chosen.reply = ToolCallReply([ToolCall(id=call_id, name=name)],
                                               usage=self._tool_usage)
        return super()._dispatch(request)

    def _next_reply(self) -> Reply | None:
        chosen: Reply | None = getattr(self._chosen, "reply", None)
        self._chosen.reply = None
        reply = super()._next_reply()
        return chosen if chosen is not None and reply is self._text else reply


def _generate(run_cli: RunCli, db: Path, *args: str, environ: dict[str, str],
              as_json: bool = True) -> CliResult:
    return run_cli(["generate", "--db", str(db), "--no-progress",
                    *(["--json"] if as_json else []), *args], environ)


def _record(result: CliResult) -> dict[str, Any]:
    assert result.code == 0, result.err
    record: dict[str, Any] = result.json()
    return record


def _agent_spec(server: OpenAILoopback, model: str = "loop-model") -> str:
    return f"vllm:{model}@{server.base_url}"


def test_a_remote_agent_graded_by_a_remote_judge(run_cli: RunCli, store_copy: StoreCopy,
                                                 read_rollouts: ReadRollouts,
                                                 tmp_path: Path) -> None:
    db = store_copy("judged.duckdb")
    rubric = "Reward an agent that looks things up before it answers.\n"
    (tmp_path / "rubric.txt").write_text(rubric)
    digest = hashlib.sha256(rubric.encode()).hexdigest()[:12]
    # usage as the servers report it, so the test knows what each role spent
    agent_usage, judge_usage = Usage(100, 10), Usage(1000, 30)
    with (ToolThenText(default=TextReply(ANSWER, usage=agent_usage),
                       tool_usage=agent_usage) as agent,
          AnthropicLoopback(default=TextReply(VERDICT, usage=judge_usage)) as judge):
        record = _record(_generate(
            run_cli, db, "--agent", _agent_spec(agent), "--grader", "judge",
            "--judge", "anthropic:claude-x", "--rubric", str(tmp_path / "rubric.txt"),
            # one turn: the scripted agent says the same words every time, and a second
            # turn would fail the repeated_reply check before the judge is asked
            "--budget", "8", "--max-turns", "1", "--seed", "2",
            environ={"ANTHROPIC_API_KEY": "sk-ant-loopback",
                     "ANTHROPIC_BASE_URL": judge.base_url}))
        agent_requests, judge_requests = agent.requests, judge.requests

    assert (record["written"], record["graded"]) == (8, 8)
    assert record["roles"]["judge"] == "anthropic:claude-x"
    assert not {"agent_errors", "lost_rollouts", "same_model"} & set(record["degraded"])
    stamp = f"{CHECKS_STAMP} + judge:anthropic:claude-x rubric=sha256:{digest} temperature=0"
    rows = read_rollouts(db)
    assert len(rows) == 8
    judged = 0
    for row in rows:
        checks = json.loads(row["checks"])
        if all(check["passed"] for check in checks):
            judged += 1
            assert row["graded"] and row["labeled_by"] == stamp
            assert (row["reward"], row["passed"]) == (0.9, True)  # the judge's verdict
        else:
            # a failed conduct check decides alone: the judge is not paid to agree
            assert row["graded"] and row["labeled_by"] == CHECKS_STAMP
            assert (row["reward"], row["passed"]) == (0.0, False)
        events = json.loads(row["events"])
        assert events, "every conversation called a tool"
        roles = [message["role"] for message in json.loads(row["messages"])]
        assert "tool" in roles and roles[-1] in ("assistant", "user")
    # one judge call per rollout that passed its checks, each with the rubric and the key
    assert judged > 0
    assert len(judge_requests) == judged
    for request in judge_requests:
        assert request.headers["x-api-key"] == "sk-ant-loopback"
        assert request.body["model"] == "claude-x"
        assert rubric.strip() in request.body["system"]
    assert all(r.body["model"] == "loop-model" for r in agent_requests)
    assert any(r.body.get("tools") for r in agent_requests)
    # the judge's tokens are paid for and counted with the rollouts'
    calls = {"agent": len(agent_requests), "judge": len(judge_requests)}
    assert record["input_tokens"] == 100 * calls["agent"] + 1000 * calls["judge"]
    assert record["output_tokens"] == 10 * calls["agent"] + 30 * calls["judge"]
    assert sum(row["input_tokens"] for row in rows) == record["input_tokens"]


def test_a_rate_limited_agent_is_retried(run_cli: RunCli, store_copy: StoreCopy,
                                         read_rollouts: ReadRollouts) -> None:
    db = store_copy("retried.duckdb")
    with ToolThenText(script=[ErrorReply.rate_limited(retry_after_s=0.05)],
                      default=TextReply(ANSWER)) as agent:
        record = _record(_generate(
            run_cli, db, "--agent", _agent_spec(agent), "--budget", "3", "--max-turns", "1",
            "--concurrency", "1", environ={}))
        requests = agent.requests
    first, retry = requests[0], requests[1]
    assert isinstance(first.reply, ErrorReply) and first.reply.status == 429
    assert retry.body == first.body and isinstance(retry.reply, ToolCallReply)
    assert record["written"] == 3
    assert record["retries"] == 1
    assert "agent_error" not in record["ended_by"]
    assert "agent_errors" not in record["degraded"]
    assert record["last_errors"] == {}
    assert all(row["error"] is None and row["ended_by"] != "agent_error"
               for row in read_rollouts(db))


def test_an_agent_that_always_fails_makes_a_loud_record(run_cli: RunCli, store_copy: StoreCopy,
                                                        read_rollouts: ReadRollouts) -> None:
    db = store_copy("failing.duckdb")
    with OpenAILoopback(default=ErrorReply.server_error()) as agent:
        result = _generate(run_cli, db, "--agent", _agent_spec(agent), "--budget", "4",
                           "--max-retries", "1", environ={}, as_json=False)
        requests = agent.requests
    assert result.code == 1
    assert "no rollout could be graded" in result.err
    # what the user reads
    assert "agent_errors" in result.out
    assert "last agent error:" in result.out and "HTTP 500" in result.out
    # one first attempt and one retry per conversation, then it gave up
    assert len(requests) == 8
    assert all(isinstance(r.reply, ErrorReply) for r in requests)

    listing = run_cli(["runs", "--db", str(db), "--json"])
    (run,) = listing.json()
    stored = run_cli(["runs", run["run_id"], "--db", str(db), "--json"])
    record = stored.json()
    assert "agent_errors" in record["degraded"]
    assert record["ended_by"] == {"agent_error": 4}
    assert record["graded"] == 0
    assert "HTTP 500" in record["last_errors"]["agent"]
    assert "2 attempts" in record["last_errors"]["agent"]
    rows = read_rollouts(db)
    assert len(rows) == 4
    assert all(not row["graded"] and row["ended_by"] == "agent_error" and "500" in row["error"]
               for row in rows)


def test_a_run_stops_when_the_agent_keeps_failing(run_cli: RunCli,
                                                  store_copy: StoreCopy) -> None:
    db = store_copy("dead-agent.duckdb")
    with OpenAILoopback(default=ErrorReply.server_error()) as agent:
        result = _generate(run_cli, db, "--agent", _agent_spec(agent), "--budget", "60",
                           "--max-retries", "0", "--concurrency", "2", environ={})
    assert result.code == 1
    record = result.json()
    assert record["stop_reason"] == "agent_failing"
    # ten in a row, plus the one still in flight when the tenth finished
    assert 10 <= record["written"] <= 12
    assert record["budget"]["spent"] <= 12


def test_logprobs_are_stored_when_asked_for(run_cli: RunCli, store_copy: StoreCopy,
                                            read_rollouts: ReadRollouts) -> None:
    db = store_copy("logprobs.duckdb")
    with ToolThenText(default=TextReply(ANSWER, logprobs=(-0.25, -1.5))) as agent:
        record = _record(_generate(run_cli, db, "--agent", _agent_spec(agent), "--budget",
                                   "2", "--max-turns", "1", "--logprobs", environ={}))
        bodies = [r.body for r in agent.requests]
    assert record["written"] == 2
    assert all(body.get("logprobs") is True for body in bodies)
    for row in read_rollouts(db):
        per_reply = json.loads(row["logprobs"])
        assert per_reply[-1] == [-0.25, -1.5]  # the text reply's tokens


@pytest.mark.parametrize("provider", ["vllm", "openai"])
def test_one_model_as_agent_and_judge_is_degraded(run_cli: RunCli, store_copy: StoreCopy,
                                                  provider: str) -> None:
    db = store_copy("same.duckdb")
    # the verdict is also the agent's answer: it is one model
    with ToolThenText(default=TextReply(VERDICT)) as server:
        if provider == "vllm":
            spec, environ = _agent_spec(server, "same-model"), {}
        else:
            spec = "openai:same-model"
            environ = {"OPENAI_API_KEY": "sk-loopback", "OPENAI_BASE_URL": server.base_url}
        record = _record(_generate(run_cli, db, "--agent", spec, "--grader", "judge",
                                   "--judge", spec, "--budget", "3", "--max-turns", "1",
                                   environ=environ))
    assert record["graded"] == 3
    assert "same_model" in record["degraded"]
    (warning,) = [w for w in record["warnings"] if "same-model" in w]
    assert "agent" in warning and "judge" in warning
    assert "give the judge another model" in warning


@dataclass(frozen=True)
class MoneyRun:
    """One run on a money budget against an agent that reports its usage."""

    record: dict[str, Any]
    """The run record ``generate --json`` printed."""
    rows: list[dict[str, Any]]
    """The stored rollouts."""
    billed: float
    """What the server's reported usage costs at the run's prices: the true spend."""


_TEXT_USAGE, _TOOL_USAGE = Usage(300, 50), Usage(280, 20)


@pytest.fixture(scope="module")
def money_run(production_db: Path, tmp_path_factory: pytest.TempPathFactory,
              read_rollouts: ReadRollouts) -> MoneyRun:
    """``--budget '$0.01' --prices FILE`` with a priced vllm agent (run once per module)."""
    folder = tmp_path_factory.mktemp("money")
    db = folder / "money.duckdb"
    shutil.copy(production_db, db)
    prices = folder / "prices.json"
    prices.write_text(json.dumps({"loop-model": {"input": 0.5, "output": 1.0}}))
    printed = io.StringIO()
    with ToolThenText(default=TextReply(ANSWER, usage=_TEXT_USAGE),
                      tool_usage=_TOOL_USAGE) as agent:
        with contextlib.redirect_stdout(printed):
            code = main(["generate", "--db", str(db), "--no-progress", "--json",
                         "--agent", _agent_spec(agent), "--budget", "$0.01",
                         "--prices", str(prices), "--max-turns", "2"], environ={})
        requests = agent.requests
    assert code == 0

    def cost(usage: Usage) -> float:
        return (usage.prompt_tokens * 0.5 + usage.completion_tokens * 1.0) / 1e6

    billed = sum(cost(_TOOL_USAGE if isinstance(r.reply, ToolCallReply) else _TEXT_USAGE)
                 for r in requests)
    return MoneyRun(json.loads(printed.getvalue()), read_rollouts(db), billed)


def test_a_money_budget_is_never_overspent(money_run: MoneyRun) -> None:
    record, billed = money_run.record, money_run.billed
    budget = record["budget"]
    assert (budget["kind"], budget["limit"]) == ("usd", 0.01)
    # most of the budget was used, none of it twice, and never more than the limit
    assert 0.005 < billed <= 0.01
    assert budget["spent"] == pytest.approx(billed)
    assert record["cost_usd"] == pytest.approx(billed, abs=1e-6)
    assert sum(row["cost_usd"] for row in money_run.rows) == pytest.approx(billed)
    assert "budget_overrun" not in record["degraded"]
    assert record["graded"] > 0


def test_a_spent_money_budget_stops_the_run(money_run: MoneyRun) -> None:
    stubs = [row for row in money_run.rows
             if not any(m["role"] == "assistant" for m in json.loads(row["messages"]))]
    assert money_run.record["stop_reason"] == "budget"
    # at most the rollouts that were in flight when the budget ran out
    assert len(stubs) <= 32
