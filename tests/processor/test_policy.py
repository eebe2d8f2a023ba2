"""Policy documents: clauses parsed from Markdown/text, and the policy_rule axis they name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from processor.axes import policy_rule
from processor.errors import PolicyFileError
from processor.options import ProcessOptions
from processor.outcomes import Evaluation, Outcome
from processor.policy import Clause, clause_index, load_policy, match_clause, parse_policy
from processor.records import Step
from processor.run import process
from tests.support.otlp import genai_span, kv, trace_request
from tracemill.cli import main
from tracemill.config import Settings
from tracemill.store import open_store

POLICY = """\
# Support policy

Agents help customers with orders.

## 1. Refunds

1.1 Refunds above the refund limit of $100 require a manager's approval.
1.2 Refunds are only issued to the original payment method,
    never to a gift card.

## Identity

- Verify the customer's identity with the order email before changing an address.
- Never reveal another customer's order details.

§3 Escalate legal threats to a human.
"""

CLAUSES = tuple((clause.id, clause.text) for clause in parse_policy(POLICY))


def test_numbered_bullets_and_headed_sections() -> None:
    clauses = parse_policy(POLICY)
    assert [clause.id for clause in clauses] == [
        "support-policy", "1.1", "1.2", "verify-the-customer-s", "never-reveal-another-customer",
        "3"]
    assert clauses[0].text == "Support policy: Agents help customers with orders."
    assert clauses[2].text == ("Refunds are only issued to the original payment method, "
                               "never to a gift card.")
    assert clauses[5].text == "Escalate legal threats to a human."


def test_plain_text_paragraphs_and_repeated_ids() -> None:
    text = "1) Be polite.\n2) Be brief.\n\nBe polite always.\n\n* Be polite always.\n"
    assert parse_policy(text) == (
        Clause("1", "Be polite."), Clause("2", "Be brief."),
        Clause("be-polite-always", "Be polite always."),
        Clause("be-polite-always-2", "Be polite always."))
    assert parse_policy("Refund within 30 days.\n\nShip in two days.") == (
        Clause("refund-within-30-days", "Refund within 30 days."),
        Clause("ship-in-two-days", "Ship in two days."))
    # a number inside prose is no item: it needs a '.', ')' or '§'
    assert [c.id for c in parse_policy("100 dollars is the limit.")] == ["100-dollars-is-the"]


@given(st.text(max_size=300))
def test_any_text_parses_to_unique_ids(text: str) -> None:
    clauses = parse_policy(text)
    assert len({clause.id for clause in clauses}) == len(clauses)
    assert all(clause.id and clause.text.strip() for clause in clauses)
    assert parse_policy(text) == clauses  # stable


def test_empty_missing_and_unreadable_files_name_the_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("# Only a heading\n\n\n")
    with pytest.raises(PolicyFileError, match=re.escape(f"policy file {empty} holds no clause")):
        load_policy(empty)
    with pytest.raises(PolicyFileError, match=re.escape("nope.md does not exist")):
        load_policy(tmp_path / "nope.md")
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(PolicyFileError, match=re.escape(f"cannot read policy file {binary}")):
        load_policy(binary)


def _outcome(*evaluations: Evaluation, failure_class: str | None = None) -> Outcome:
    failed = [e for e in evaluations if e.passed is False]
    return Outcome(outcome="fail" if failed or failure_class else None, reward=None,
                   source=None, labeled_by=None,
                   failure_class=failure_class or (failed[0].name if failed else None),
                   evaluations=evaluations)


def _evaluation(name: str, explanation: str | None, passed: bool | None = False) -> Evaluation:
    return Evaluation(name=name, score=0.0, label=None, explanation=explanation,
                      passed=passed, channel="span_event")


def test_failing_evaluation_explanation_names_the_clause() -> None:
    refund = _outcome(_evaluation(
        "judge", "The agent issued a refund of $250, above the $100 limit, with no approval."))
    assert policy_rule(refund, CLAUSES, None, ()) == "1.1"
    # the same conversation without a policy document keeps the evaluation's name
    assert policy_rule(refund, (), None, ()) == "judge"
    # a passing evaluation is not read while a failing one exists
    mixed = _outcome(_evaluation("tone", "Legal threats were escalated to a human.", True),
                     _evaluation("judge", "Refund exceeded the limit without approval."))
    assert policy_rule(mixed, CLAUSES, None, ()) == "1.1"
    # an evaluation named after a clause names it outright
    assert policy_rule(_outcome(_evaluation("1.2", None)), CLAUSES, None, ()) == "1.2"
    assert policy_rule(_outcome(failure_class="Verify the customer's"), CLAUSES, None,
                       ()) == "verify-the-customer-s"


def test_unrelated_text_falls_back() -> None:
    unrelated = _outcome(_evaluation("tone", "The reply was curt and used slang."))
    assert policy_rule(unrelated, CLAUSES, "Here you go.", ()) == "tone"
    assert policy_rule(_outcome(), CLAUSES, "Your parcel ships tomorrow.", ()) == "unspecified"
    # one shared word is not enough
    index = clause_index(CLAUSES)
    assert match_clause(index, ["a refund"]) is None


def test_reply_and_steps_when_the_evaluations_say_nothing() -> None:
    step = Step(tool="update_address", call_id="c1", arguments='{"email": "a@b.c"}',
                result='{"ok": true}', status="ok", error=None, bound_by="call_id",
                span_id=None)
    assert policy_rule(_outcome(), CLAUSES, "I changed the address after checking your "
                       "identity.", (step,)) == "verify-the-customer-s"
    assert policy_rule(_outcome(_evaluation("quality", None)), CLAUSES,
                       "I told them about another customer's order details.",
                       ()) == "never-reveal-another-customer"


def _conversation_span(conversation: str, explanation: str) -> Span:
    span = genai_span(conversation=conversation)
    span.attributes.append(kv("gen_ai.output.messages", json.dumps([{
        "role": "assistant", "parts": [{"type": "text", "content": "Done."}]}])))
    event = span.events.add()
    event.name = "gen_ai.evaluation.result"
    event.time_unix_nano = span.end_time_unix_nano
    event.attributes.extend([kv("gen_ai.evaluation.name", "judge"),
                             kv("gen_ai.evaluation.score.value", 0.0),
                             kv("gen_ai.evaluation.explanation", explanation)])
    return span


def test_process_and_map_name_the_clause(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "policy.duckdb"
    store = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=0), store, Metrics())
    pipeline.start()
    try:
        request = trace_request([
            _conversation_span("refund", "Refunded $400, over the refund limit, no approval."),
            _conversation_span("slang", "The reply used slang.")])
        pipeline.intake.export_blocking("traces", request.SerializeToString(), "test")
    finally:
        pipeline.close(drain_all=True)
    try:
        process(store, ProcessOptions(policy_clauses=CLAUSES))
        rows = dict(store.query("SELECT conversation_id, policy_rule FROM conversations"))
        assert rows == {"refund": "1.1", "slang": "judge"}
        process(store, ProcessOptions())  # another policy: rebuilt
        rows = dict(store.query("SELECT conversation_id, policy_rule FROM conversations"))
        assert rows == {"refund": "judge", "slang": "judge"}
    finally:
        store.close()
    policy = tmp_path / "policy.md"
    policy.write_text(POLICY)
    assert main(["map", "--db", str(db), "--policy", str(policy), "--cells", "--json", "--all"],
                environ={}) == 0
    cells = json.loads(capsys.readouterr().out)
    assert any("policy_rule=1.1" in cell["cell"] for cell in cells)
    assert main(["map", "--db", str(db), "--policy", str(tmp_path / "gone.md")],
                environ={}) == 2
    assert "gone.md does not exist" in capsys.readouterr().err
