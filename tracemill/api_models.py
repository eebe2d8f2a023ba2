"""The records the admin API (:mod:`tracemill.api`) takes and answers, besides those it
shares with the command line (map situations and cells, conversations, reports, rollouts).

Every field carries a description: they become the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from collector.stats import StoreStats
from generator.exports import FORMATS, exporter
from processor.conversation_records import ConversationRecord
from processor.report import TraceReport
from tracemill.errors import TracemillError

__all__ = ["JSON_SAFE", "ErrorBody", "ExportJobOut", "GenerationJobOut", "LabelIn",
           "LabelsStored", "ReportOut", "ScheduledJobOut", "SplitIn", "StartExport", "StartRun",
           "Status", "VersionOut"]

JSON_SAFE = 2**53 - 1
"""The largest integer a JSON number carries exactly in every client (RFC 7493, I-JSON):
integer fields are bounded by it, so a bound read as a double is the bound. Bounded at
2^63, a seed of -9223372036854776000 is the minimum as a double and below it as an
integer: a client could not tell it was out of range."""


class ScheduledJobOut(BaseModel):
    """A job on the service's schedule."""

    name: str = Field(description="refresh-map or generate.")
    schedule: str = Field(description="Its cron expression or interval.")
    next_run: str | None = Field(description="Next run time, ISO 8601 UTC.")


class GenerationJobOut(BaseModel):
    """A generation run started in this service (by the schedule or the API)."""

    job_id: str = Field(description="The service's id for the request.")
    trigger: str = Field(description="schedule or api.")
    budget: str = Field(description="Its budget.")
    state: str = Field(description="queued, running, stopping, stopped, finished or failed.")
    run_id: str | None = Field(description="The generation run, once it has settled on one "
                               "(a new run once planned, or the unfinished run it resumes).")
    error: str | None = Field(description="Why it failed.")
    rollouts: int = Field(description="Rollouts the run has stored so far.")
    started_unix_nano: int = Field(description="When it started (0: queued).")
    ended_unix_nano: int | None = Field(description="When it ended.")
    finished: int = Field(0, description="Rollouts the run has finished so far, ahead of "
                          "`rollouts` by those not yet committed (a resumed run's earlier "
                          "rollouts included).")


class Status(BaseModel):
    """What the service holds and what it will do next."""

    counts: StoreStats = Field(description="What the store holds (as `tracemill stats`).")
    situations: int = Field(description="Situations in the failure map.")
    conversations: int = Field(description="Processed conversations.")
    runs: int = Field(description="Generation runs recorded.")
    schedule: list[ScheduledJobOut] = Field(description="Scheduled jobs and next run times.")
    jobs: list[GenerationJobOut] = Field(description="Generation runs this process started.")
    map_error: str | None = Field(description="The last map refresh's error, if it failed.")


class ReportOut(BaseModel):
    """A trace or regression report with the example conversations its HTML shows."""

    report: TraceReport = Field(description="The report (as `report`'s report.json).")
    examples: dict[str, list[ConversationRecord]] = Field(
        description="Per situation id, up to three example conversations in full.")


class StartExport(BaseModel):
    """An export of the stored split to write on the service's machine."""

    format: str = Field(description="The export format (`tracemill export --format`).",
                        json_schema_extra={"enum": list[JsonValue](sorted(FORMATS))})
    out: str = Field(min_length=1, description="Folder to write into: relative to "
                     "export_dir, or an absolute path inside it.",
                     json_schema_extra={"pattern": "^[^\\x00]*$"})  # checked by _path
    loss_mask: Literal["per-message", "final-turn"] = Field(
        default="per-message", description="SFT: every agent turn, or only the final one.")
    seed: int = Field(default=0, ge=-JSON_SAFE, le=JSON_SAFE,
                      description="Seed of preference pairings (at most 2^53 - 1 either way).")
    allow_length_bias: bool = Field(default=False, description="Write length-biased "
                                    "preference pairs anyway (warned in the card).")

    @field_validator("out")
    @classmethod
    def _path(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("a folder name cannot hold a NUL character")
        return value

    @field_validator("format")
    @classmethod
    def _known(cls, value: str) -> str:
        try:
            exporter(value)
        except TracemillError as exc:  # names the known formats
            raise ValueError(str(exc)) from None
        return value


class ExportJobOut(BaseModel):
    """An export the service writes or wrote."""

    export_id: str = Field(description="The service's id for it.")
    format: str = Field(description="The export format.")
    out: str = Field(description="The folder it writes into, on the service's machine.")
    state: str = Field(description="queued, running, finished or failed.")
    card: dict[str, Any] | None = Field(description="Its data card, once landed.")
    error: str | None = Field(description="Why it failed.")
    started_unix_nano: int = Field(description="When it started (0: queued).")
    ended_unix_nano: int | None = Field(description="When it ended.")


class StartRun(BaseModel):
    """A generation run to start now."""

    budget: str | None = Field(default=None, description="200 (rollouts), '50k tokens' or "
                               "'$5' (default: generate_budget, else budget).")


_Text = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]


def _given(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": [name], "properties": {name: schema}}


class LabelIn(BaseModel):
    """Late feedback on one conversation, trace or rollout (thumbs up or down): one of the
    three ids, and passed and/or reward."""

    model_config = ConfigDict(json_schema_extra={"allOf": [
        {"anyOf": [_given(name, {"type": "string", "minLength": 1})
                   for name in ("conversation_id", "trace_id", "rollout_id")]},
        {"anyOf": [_given("passed", {"type": "boolean"}), _given("reward", {"type": "number"})]},
    ]})

    conversation_id: _Text = Field(default=None, description="The conversation.")
    trace_id: _Text = Field(default=None, description="Or a trace id.")
    rollout_id: _Text = Field(default=None, description="Or a rollout (RUN_ID:INDEX).")
    passed: bool | None = Field(default=None, strict=True, description="The verdict.")
    reward: float | None = Field(default=None, strict=True, description="Or a reward.")
    kind: Literal["human", "program", "model"] = Field(default="human",
                                                       description="human, program or model.")
    labeled_by: str = Field(min_length=1, description="Who made it.")
    note: str | None = Field(default=None, description="Free text.")

    @model_validator(mode="after")
    def _check(self) -> LabelIn:
        if not (self.conversation_id or self.trace_id or self.rollout_id):
            raise ValueError("needs conversation_id, trace_id or rollout_id")
        if self.passed is None and self.reward is None:
            raise ValueError("needs passed or reward")
        return self


class ErrorBody(BaseModel):
    """An error answer."""

    error: str = Field(description="What went wrong and what to do.")


class LabelsStored(BaseModel):
    """What POST /labels stored."""

    stored: int = Field(description="Labels stored.")
    unknown: list[str] = Field(description="Targets that name nothing processed yet.")


class VersionOut(BaseModel):
    """One model version of the processed conversations."""

    version: str | None = Field(description="The model version (None: conversations that "
                                            "name none).")
    first_seen_unix_nano: int = Field(description="Start of its first conversation.")
    conversations: int = Field(description="Its conversations.")
    graded: int = Field(description="Of them, graded ones.")


class SplitIn(BaseModel):
    """How to draw the held-out side (the options of `tracemill split`)."""

    held_out: float = Field(default=0.2, gt=0, lt=1,
                            description="Share of situations held out (between 0 and 1).")
    seed: int = Field(default=0, ge=-JSON_SAFE, le=JSON_SAFE,
                      description="Seed of the draw (at most 2^53 - 1 either way: an integer "
                                  "every JSON client carries exactly).")
    reset: bool = Field(default=False, description="Forget the stored split and draw a "
                                                   "new one.")
