"""Graders: Python graders from a spec, LLM judges through a backend, and how a grade is
combined from the conduct checks and the verdict."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.backends import BackendOptions, build_backend
from generator.errors import GraderError, SpecError
from generator.graders import (
    DEFAULT_RUBRIC,
    Grader,
    GraderVerdict,
    JudgeGrader,
    PythonGrader,
    build_grader,
    combine,
    parse_verdict,
    rollout_view,
)
from generator.records import (
    Cell,
    CheckResult,
    Message,
    ModelReply,
    ModelRequest,
    TokenUsage,
)
from tests.generator.test_checks import _good_refund, _plan
from tests.support.openai_loopback import OpenAILoopback, TextReply, Usage

PLAN = _plan()
TRANSCRIPT = _good_refund()


@pytest.fixture
def grader_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path where a test writes its grader module."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("grading_")]:
        del sys.modules[name]


def _write(folder: Path, name: str, source: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")


def grade(grader: Grader) -> GraderVerdict:
    return asyncio.run(grader.grade(PLAN, TRANSCRIPT))


# --------------------------------------------------------------------------- python


def test_python_grader_sees_the_rollout_and_is_stamped_by_its_source(grader_module: Path) -> None:
    source = """
        def score(rollout):
            refunded = any(e["status"] == "ok" and e["tool"] == "refund_order"
                           for e in rollout["events"])
            tool_names = [m.get("name") for m in rollout["messages"] if m["role"] == "tool"]
            return {"reward": 1.0 if refunded else 0.0, "reason": f"tools {tool_names}",
                    "markers": ["refund_seen"], "failure_class": None}
    """
    _write(grader_module, "grading_sync", source)
    grader = PythonGrader("python:grading_sync:score")
    digest = hashlib.sha256(textwrap.dedent(source).lstrip("\n").encode()).hexdigest()[:12]
    assert grader.stamp == f"python:grading_sync:score@sha256:{digest}"
    verdict = grade(grader)
    assert (verdict.reward, verdict.reason, verdict.markers) == (
        1.0, "tools ['refund_order']", ("refund_seen",))
    assert verdict.stamp == grader.stamp


def test_async_graders_and_dotted_attributes(grader_module: Path) -> None:
    _write(grader_module, "grading_async", """
        class Rubric:
            @staticmethod
            async def grade(rollout):
                return {"reward": 0.25, "reason": rollout["goal"]["ask"],
                        "failure_class": "slow"}
    """)
    verdict = grade(PythonGrader("python:grading_async:Rubric.grade"))
    assert (verdict.reward, verdict.reason, verdict.failure_class) == (0.25, "I want a refund",
                                                                       "slow")


@pytest.mark.parametrize("body, words", [
    ('return {"reward": 1.5, "reason": "x"}', "field 'reward'"),
    ('return {"reason": "x"}', "field 'reward'"),
    ('return {"reward": 0.5}', "field 'reason'"),
    ("return 0.9", "returned a float"),
    ('raise KeyError("messages")', "raised KeyError"),
])
def test_python_grader_errors_name_the_grader_and_the_field(grader_module: Path, body: str,
                                                            words: str) -> None:
    _write(grader_module, "grading_bad", f"def score(rollout):\n    {body}\n")
    with pytest.raises(GraderError) as caught:
        grade(PythonGrader("python:grading_bad:score"))
    assert "python:grading_bad:score" in str(caught.value) and words in str(caught.value)


def test_python_grader_spec_errors(grader_module: Path) -> None:
    _write(grader_module, "grading_attr", "value = 3\n")
    for spec, words in [("python:no_such_module_xyz:f", "cannot import"),
                        ("python:grading_attr:missing", "no attribute"),
                        ("python:grading_attr:value", "not a function"),
                        ("python:grading_attr", "python:pkg.module:function")]:
        with pytest.raises(SpecError, match=words):
            PythonGrader(spec)


def test_the_rollout_view() -> None:
    plan = _plan()
    plan = type(plan)(**{**plan.__dict__, "cell": Cell("tool", "refund_order", "*", "*"),
                         "situation": {"tool": "refund_order"}})
    view = rollout_view(plan, TRANSCRIPT)
    assert view["cell"] == "tool=refund_order" and view["situation"] == {"tool": "refund_order"}
    assert view["goal"]["facts"] == {"order_id": "ORD-4821"} and view["ended_by"] == "user_done"
    call = view["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "refund_order" and call["type"] == "function"
    assert view["messages"][3] == {"role": "tool", "tool_call_id": "c1", "name": "refund_order",
                                   "content": TRANSCRIPT.messages[3].content}
    assert view["events"][0]["status"] == "ok"


# --------------------------------------------------------------------------- judges


class ScriptedJudge:
    """A chat backend that answers from a script and keeps the requests (a fake)."""

    spec = "scripted:judge-1"
    model = "judge-1"

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply(Message(role="assistant", content=self.answers.pop(0)), "stop",
                          TokenUsage(100, 20), self.model, cost_usd=0.001)

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("answer", [
    '{"reward": 0.9, "reason": "refunded as asked", "failure_class": null}',
    'Here is my verdict:\n```json\n{"reward": 0.9, "reason": "refunded as asked"}\n```',
    'I think {"reward": 0.9, "reason": "refunded as asked"} is fair {not json}.',
])
def test_judge_reads_json_bare_fenced_or_in_prose(answer: str) -> None:
    backend = ScriptedJudge(answer)
    judge = JudgeGrader(backend, DEFAULT_RUBRIC)
    verdict = grade(judge)
    assert (verdict.reward, verdict.reason, verdict.failure_class) == (0.9, "refunded as asked",
                                                                       None)
    (request,) = backend.requests
    assert request.json_output and request.temperature == 0.0 and request.tools == ()
    assert DEFAULT_RUBRIC.strip() in (request.messages[0].content or "")
    shown = request.messages[1].content or ""
    assert "[tool result: refund_order]" in shown and "-> calls refund_order(" in shown
    assert verdict.usage == TokenUsage(100, 20) and verdict.stamp == judge.stamp


def test_judge_stamp_names_backend_rubric_and_temperature() -> None:
    digest = hashlib.sha256(b"Be strict.").hexdigest()[:12]
    judge = JudgeGrader(ScriptedJudge(), "Be strict.", temperature=0.3)
    assert judge.stamp == f"judge:scripted:judge-1 rubric=sha256:{digest} temperature=0.3"
    other = JudgeGrader(ScriptedJudge(), "Be lenient.", temperature=0.3)
    assert other.stamp != judge.stamp
    with pytest.raises(SpecError, match="rubric is empty"):
        JudgeGrader(ScriptedJudge(), "  ")


def test_judge_retries_once_then_raises() -> None:
    backend = ScriptedJudge("I cannot decide.", '{"reward": 0.2, "reason": "no refund"}')
    verdict = grade(JudgeGrader(backend, DEFAULT_RUBRIC))
    assert verdict.reward == 0.2 and len(backend.requests) == 2
    assert verdict.usage == TokenUsage(200, 40) and verdict.cost_usd == pytest.approx(0.002)
    retry = backend.requests[1].messages
    assert retry[-2].content == "I cannot decide." and "not a usable verdict" in (
        retry[-1].content or "")
    broken = ScriptedJudge('{"reward": 7, "reason": "x"}', "still no JSON")
    with pytest.raises(GraderError, match="no usable verdict after a retry"):
        grade(JudgeGrader(broken, DEFAULT_RUBRIC))
    assert len(broken.requests) == 2


def test_judge_through_a_real_openai_compatible_backend() -> None:
    script = [TextReply('{"reward": 0.75, "reason": "mostly right", "failure_class": null}',
                        usage=Usage(300, 25))]
    with OpenAILoopback(script) as srv:
        backend = build_backend("openai:gpt-4o-mini", role="judge",
                                credentials={"OPENAI_API_KEY": "sk-test",
                                             "OPENAI_BASE_URL": srv.base_url},
                                options=BackendOptions(timeout_s=5, max_retries=0))
        judge = build_grader("judge", judge_backend=backend, rubric=None)
        assert isinstance(judge, JudgeGrader)

        async def grade_and_close() -> GraderVerdict:
            try:
                return await judge.grade(PLAN, TRANSCRIPT)
            finally:
                await backend.aclose()

        verdict = asyncio.run(grade_and_close())
    assert verdict.reward == 0.75 and verdict.usage == TokenUsage(300, 25)
    assert judge.stamp.startswith("judge:openai:gpt-4o-mini rubric=sha256:")
    body = srv.requests[0].body
    assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0.0


def test_parse_verdict_gives_none_without_a_reward() -> None:
    assert parse_verdict('{"score": 1}') is None and parse_verdict("") is None
    assert parse_verdict('[{"reward": 1}]') == {"reward": 1}


# --------------------------------------------------------------------------- combining

PASSED = CheckResult("invented_identifier", True, "fine")
FAILED = CheckResult("claimed_success_after_failure", False, "turn 2: claims success")
LATER = CheckResult("repeated_reply", False, "turn 3: repeats itself")
CREDIT = CheckResult("handled_fault", True, "timeout: told the person", credit=True)
JUDGED = GraderVerdict(0.9, "good", ("polite",), None, stamp="judge:x rubric=sha256:ab")


def test_a_failed_check_fails_the_rollout_whatever_the_grader_says() -> None:
    result = combine((PASSED, FAILED, LATER, CREDIT), JUDGED, pass_threshold=0.5)
    assert (result.reward, result.passed, result.failure_class) == (
        0.0, False, "claimed_success_after_failure")
    assert result.reason == FAILED.reason and result.markers == ("polite", "handled_fault")
    assert result.labeled_by == "conduct-checks/1 + judge:x rubric=sha256:ab"
    assert result.checks == (PASSED, FAILED, LATER, CREDIT)


def test_the_verdict_decides_when_the_checks_pass() -> None:
    good = combine((PASSED, CREDIT), JUDGED, pass_threshold=0.5)
    assert (good.reward, good.passed, good.failure_class, good.reason) == (0.9, True, None, "good")
    low = GraderVerdict(0.4, "unhelpful", failure_class="unhelpful", stamp="python:m:f@sha256:1")
    bad = combine((PASSED,), low, pass_threshold=0.5)
    assert (bad.passed, bad.failure_class, bad.labeled_by) == (
        False, "unhelpful", "conduct-checks/1 + python:m:f@sha256:1")
    unnamed = combine((PASSED,), GraderVerdict(0.1, "meh", stamp="g"), pass_threshold=0.5)
    assert unnamed.failure_class == "below_threshold"
    assert combine((PASSED,), GraderVerdict(0.5, "edge", stamp="g"), pass_threshold=0.5).passed


def test_without_a_grader_the_checks_decide() -> None:
    result = combine((PASSED, CREDIT), None, pass_threshold=0.5)
    assert (result.reward, result.passed, result.labeled_by, result.markers) == (
        1.0, True, "conduct-checks/1", ("handled_fault",))


def test_build_grader(grader_module: Path) -> None:
    _write(grader_module, "grading_build", "def f(r):\n    return {'reward': 1, 'reason': ''}\n")
    assert build_grader(None, judge_backend=None, rubric=None) is None
    assert isinstance(build_grader("python:grading_build:f", judge_backend=None, rubric=None),
                      PythonGrader)
    judge = build_grader("judge", judge_backend=ScriptedJudge(), rubric="Be kind.")
    assert isinstance(judge, JudgeGrader) and judge.rubric == "Be kind."
    with pytest.raises(SpecError, match="--judge"):
        build_grader("judge", judge_backend=None, rubric=None)
    with pytest.raises(SpecError, match="not known"):
        build_grader("llm", judge_backend=None, rubric=None)
