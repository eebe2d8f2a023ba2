"""Outcomes: labels over evaluations over reward attributes; unread scores are reported."""

from __future__ import annotations

from typing import Any

from processor.outcomes import Label, decide, unread_scores
from processor.records import LogRow, SpanRow

KEYS = ("reward", "tracemill.reward")


def _span(attributes: dict[str, Any], events: tuple[dict[str, Any], ...] = (), *,
          root: bool = True, span_id: str = "1" * 16) -> SpanRow:
    return SpanRow(trace_id="a" * 32, span_id=span_id, parent_span_id=None if root else "2" * 16,
                   name="invoke_agent", operation="invoke_agent", start_unix_nano=1,
                   end_unix_nano=2, status_code=0, status_message=None, error_type=None,
                   attributes=attributes, events=events)


def _evaluation(name: str, label: str | None = None, score: float | None = None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": name}
    if label is not None:
        attributes["gen_ai.evaluation.score.label"] = label
    if score is not None:
        attributes["gen_ai.evaluation.score.value"] = score
    return {"name": "gen_ai.evaluation.result", "time_unix_nano": 5, "attributes": attributes}


def test_reward_attribute_with_threshold() -> None:
    passed = decide([_span({"reward": 0.7})], [], [], reward_keys=KEYS, threshold=0.5)
    assert passed.outcome == "pass"
    failed = decide([_span({"tracemill.reward": 0.2})], [], [], reward_keys=KEYS, threshold=0.5)
    assert (failed.outcome, failed.reward, failed.source) == ("fail", 0.2,
                                                              "attribute:tracemill.reward")
    assert decide([_span({"reward": True})], [], [], reward_keys=KEYS,
                  threshold=0.5).outcome == "pass"


def test_evaluation_events_logs_and_spans() -> None:
    event = decide([_span({}, (_evaluation("refund_policy", label="fail"),))], [], [],
                   reward_keys=KEYS, threshold=0.5)
    assert (event.outcome, event.failure_class, event.source) == (
        "fail", "refund_policy", "evaluation:refund_policy")
    log = LogRow(trace_id="a" * 32, span_id="1" * 16, time_unix_nano=9,
                 event_name="gen_ai.evaluation.result", body=None,
                 attributes={"gen_ai.evaluation.name": "tone",
                             "gen_ai.evaluation.score.value": 0.9})
    from_log = decide([_span({})], [log], [], reward_keys=KEYS, threshold=0.5)
    assert from_log.outcome == "pass" and from_log.evaluations[0].channel == "log_record"
    standalone = _span({"gen_ai.evaluation.name": "no_fabrication",
                        "gen_ai.evaluation.score.value": 0.0}, root=False, span_id="3" * 16)
    assert decide([_span({}), standalone], [], [], reward_keys=KEYS,
                  threshold=0.5).outcome == "fail"


def test_any_failing_evaluation_fails_and_labels_win() -> None:
    events = (_evaluation("tone", label="pass"), _evaluation("identity_check", score=0.0))
    mixed = decide([_span({"reward": 1.0}, events)], [], [], reward_keys=KEYS, threshold=0.5)
    assert (mixed.outcome, mixed.failure_class) == ("fail", "identity_check")
    labelled = decide([_span({"reward": 0.0}, events)], [],
                      [Label(passed=True, reward=None, kind="human", labeled_by="ana")],
                      reward_keys=KEYS, threshold=0.5)
    assert (labelled.outcome, labelled.source, labelled.labeled_by) == (
        "pass", "label:human", "ana")


def test_ungraded_and_unread_scores() -> None:
    spans = [_span({"score": 0.3, "user.rating": 4, "gen_ai.usage.input_tokens": 5,
                    "name": "x"})]
    outcome = decide(spans, [], [], reward_keys=KEYS, threshold=0.5)
    assert outcome.outcome is None and outcome.source is None
    assert unread_scores(spans, KEYS) == ["score", "user.rating"]
    assert unread_scores(spans, ("score",)) == ["user.rating"]
