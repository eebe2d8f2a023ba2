"""What the processor's commands print on a terminal: situations, cells, conversations.

Plain text for people; ``--json`` prints the records themselves
(:mod:`processor.map_records`, :mod:`processor.conversation_records`). Conversation text
is untrusted: control characters (terminal escape sequences among them) are shown as
``\\x1b``-style escapes, never written raw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from processor.conversation_records import ConversationRecord
from processor.map_records import CellRecord, PeriodRecord, SituationRecord, members_text

__all__ = [
    "cells_table",
    "conversation_text",
    "conversations_table",
    "rate_text",
    "safe",
    "situation_text",
    "situations_text",
]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
NOT_CAPTURED = "(content not captured)"


def safe(text: str) -> str:
    """``text`` with control characters other than newline and tab escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def rate_text(period: PeriodRecord) -> str:
    """``49/70 = 70% [58%, 79%]``, or ``not graded``."""
    if not period.graded or period.fail_rate is None:
        return "not graded"
    text = f"{period.failed}/{period.graded} = {period.fail_rate:.0%}"
    if period.interval is not None:
        text += f" [{period.interval.low:.0%}, {period.interval.high:.0%}]"
    return text


def _period_name(period: PeriodRecord, fallback: str) -> str:
    return period.version if period.version is not None else fallback


def situations_text(situations: Sequence[SituationRecord], limit: int,
                    source: str | None = None) -> str:
    """The situations, worst first: label and status, latest vs previous with n and
    interval, and the reason."""
    lines = []
    if source:
        lines.append(source)
    if not situations:
        lines.append("no situations: nothing fails more than the rest "
                     "(`tracemill map --cells` shows every pair cell)")
        return "\n".join(lines)
    first = situations[0]
    latest, previous = first.latest.version, first.previous.version
    if latest is not None and previous is not None:
        lines.append(f"comparing {latest} with {previous}")
    elif previous is None:
        lines.append("one model version: comparing the later half of its conversations with "
                     "the earlier half")
    counts: dict[str, int] = {}
    for situation in situations:
        counts[situation.status] = counts.get(situation.status, 0) + 1
    lines.append(f"{len(situations)} situations: "
                 + ", ".join(f"{n} {status}" for status, n in counts.items()))
    for situation in situations[:limit]:
        lines.append("")
        lines += _situation_lines(situation)
    if len(situations) > limit:
        lines.append(f"\n... {len(situations) - limit} more (--limit, --json)")
    return "\n".join(lines)


def _situation_lines(situation: SituationRecord) -> list[str]:
    flag = " (low support)" if situation.low_support else ""
    lines = [f"{situation.status.upper()}{flag}  {situation.label}  [{situation.situation_id}]"]
    now = _period_name(situation.latest, "latest")
    before = _period_name(situation.previous, "previous")
    if situation.compared == "baseline":
        rest = situation.latest.baseline
        lines.append(f"    {now}: {rate_text(situation.latest)}   rest of {now}: "
                     + ("-" if rest is None else f"{rest:.0%}"))
    else:
        lines.append(f"    {now}: {rate_text(situation.latest)}   "
                     f"{before}: {rate_text(situation.previous)}")
    lines.append(f"    {safe(situation.reason)}")
    lines.append(f"    {situation.conversations} conversations, budget share "
                 f"{situation.budget_share:.1%}")
    return lines


def situation_text(situation: SituationRecord,
                   examples: Iterable[ConversationRecord]) -> str:
    """One situation in full, with its example conversations."""
    lines = _situation_lines(situation)
    lines.append("    coordinates: " + ", ".join(
        f"{c.axis}={c.value}" for c in situation.coordinates))
    if situation.difference is not None:
        lines.append(f"    difference [{situation.difference.low:+.0%}, "
                     f"{situation.difference.high:+.0%}]"
                     + ("" if situation.p_value is None else f", p = {situation.p_value:.3g}"))
    if situation.cells:
        lines.append(f"    stands for {len(situation.cells)} cells: " + "; ".join(
            situation.cells[:6]) + (" ..." if len(situation.cells) > 6 else ""))
    lines.append("")
    shown = list(examples)
    if shown:
        lines.append("examples:")
        lines.append(conversations_table(shown))
    elif situation.examples:
        lines.append("examples: " + ", ".join(safe(i) for i in situation.examples)
                     + " (`tracemill conversations show ID`)")
    lines.append(f"all {members_text(situation)}: tracemill map --situation "
                 f"{situation.situation_id} --conversations")
    return "\n".join(lines)


def cells_table(cells: Sequence[CellRecord], limit: int) -> str:
    """The pair cells, one a line."""
    lines = [f"{'status':<11} {'latest':<24} {'previous':<24} {'share':>6}  cell"]
    for cell in cells[:limit]:
        flag = "*" if cell.low_support else ""
        lines.append(f"{cell.status + flag:<11} {rate_text(cell.latest):<24} "
                     f"{rate_text(cell.previous):<24} {cell.budget_share:>6.1%}  {cell.cell}")
    if len(cells) > limit:
        lines.append(f"... {len(cells) - limit} more (--limit, --json)")
    if any(cell.low_support for cell in cells[:limit]):
        lines.append("* low support: too few graded conversations in the latest period")
    return "\n".join(lines)


def _one_line(text: str | None, width: int) -> str:
    if text is None:
        return NOT_CAPTURED
    flat = safe(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def conversations_table(records: Sequence[ConversationRecord]) -> str:
    """One line per conversation, under a header."""
    lines = [f"{'conversation':<26} {'outcome':<8} {'version':<10} {'tool':<20} "
             f"{'condition':<18} {'stance':<12} first ask"]
    for record in records:
        lines.append(f"{safe(record.conversation_id)[:26]:<26} "
                     f"{record.outcome or 'ungraded':<8} "
                     f"{safe(record.model_version or '-')[:10]:<10} "
                     f"{safe(record.tool)[:20]:<20} {safe(record.tool_condition)[:18]:<18} "
                     f"{safe(record.user_stance)[:12]:<12} {_one_line(record.first_ask, 60)}")
    if not records:
        lines.append("(no conversations match)")
    return "\n".join(lines)


def _indented(text: Any) -> list[str]:
    if text is None:
        return [f"    {NOT_CAPTURED}"]
    return [f"    {line}" for line in safe(str(text)).splitlines() or [""]]


def _message_lines(message: dict[str, Any]) -> list[str]:
    role = message.get("role")
    if role == "assistant":
        lines = []
        calls = message.get("tool_calls") or []
        if message.get("content") is not None or not calls:
            lines += ["[assistant]", *_indented(message.get("content"))]
        for call in calls:
            function = call.get("function") or {}
            lines.append(f"[assistant → tool call] {safe(str(function.get('name')))} "
                         f"(id {safe(str(call.get('id')))})")
            lines += _indented(function.get("arguments"))
        return lines
    if role == "tool":
        name = message.get("name") or "tool"
        return [f"[tool result] {safe(str(name))} (id {safe(str(message.get('tool_call_id')))})",
                *_indented(message.get("content"))]
    return [f"[{safe(str(role))}]", *_indented(message.get("content"))]


def conversation_text(record: ConversationRecord) -> str:
    """The ordered conversation: messages, then evaluations, outcome and coordinates."""
    lines = [f"conversation {safe(record.conversation_id)}   model version "
             f"{safe(record.model_version or '-')}   traces {', '.join(record.trace_ids)}"]
    if record.content_missing:
        lines.append("some content was not captured by the instrumentation")
    lines.append("")
    if not record.messages:
        lines.append("(no messages recorded; steps below)")
    for message in record.messages:
        lines += _message_lines(message)
    if not record.messages and record.steps:
        for step in record.steps:
            lines.append(f"[step] {safe(str(step.get('tool')))} {step.get('status')}")
            lines += _indented(step.get("result"))
    if record.errors:
        lines.append("")
        lines.append("errors: " + ", ".join(safe(error) for error in record.errors))
    lines.append("")
    lines.append("evaluations:" if record.evaluations else "evaluations: none")
    for evaluation in record.evaluations:
        passed = evaluation.get("passed")
        verdict = "pass" if passed is True else "fail" if passed is False else "undecided"
        parts = [safe(str(evaluation.get("name") or "(unnamed)")), verdict]
        if evaluation.get("score") is not None:
            parts.append(f"score {evaluation['score']}")
        if evaluation.get("label"):
            parts.append(f"label {safe(str(evaluation['label']))}")
        lines.append("    " + ", ".join(parts))
        if evaluation.get("explanation"):
            lines += _indented(evaluation["explanation"])
    outcome = record.outcome or "ungraded"
    source = f" ({safe(record.outcome_source)})" if record.outcome_source else ""
    by = f" by {safe(record.labeled_by)}" if record.labeled_by else ""
    lines.append(f"outcome: {outcome}{source}{by}")
    lines.append(f"coordinates: tool={safe(record.tool)}  tool_condition="
                 f"{safe(record.tool_condition)}  world_state={safe(record.world_state)}  "
                 f"history={safe(record.history)}  user_stance={safe(record.user_stance)}  "
                 f"policy_rule={safe(record.policy_rule)}")
    if record.tools:
        focal = ""
        if record.focal_step is not None and record.focal_step < len(record.steps):
            focal = f" (went wrong at step {record.focal_step + 1}: " \
                    f"{safe(str(record.steps[record.focal_step].get('tool')))})"
        lines.append("tools called: " + ", ".join(safe(t) for t in record.tools) + focal)
    lines.append("situations: " + (", ".join(record.situations) or "none"))
    return "\n".join(lines)
