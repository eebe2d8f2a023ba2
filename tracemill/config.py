"""Settings: one validated object per process, built at the edge.

Precedence, highest first: command-line flags, ``TRACEMILL_*`` environment variables, a
TOML config file, defaults. The file is ``--config PATH`` (or ``TRACEMILL_CONFIG``), else
``./tracemill.toml`` when it exists. Nothing below the command line reads the environment:
:func:`load_settings` is handed the environment mapping by its caller.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from tracemill.errors import ConfigError

ENV_PREFIX = "TRACEMILL_"
DEFAULT_CONFIG_FILE = Path("tracemill.toml")
MiB = 1024 * 1024


class Settings(BaseModel):
    """Every setting of a tracemill process. Environment names are ``TRACEMILL_<FIELD>``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    db: Path = Field(
        default=Path("tracemill.duckdb"),
        description="Path of the store: a DuckDB file, or a lake file holding "
        "`ducklake:postgres:<conninfo> data_path=DIR` (README, 'Past one machine').",
    )
    db_memory_limit: str = Field(
        default="512MB",
        pattern=r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$",
        description="Most memory DuckDB may use for its buffers (e.g. 512MB, 2GB); larger "
        "work spills to disk.",
    )
    db_checkpoint_threshold: str = Field(
        default="1GB",
        pattern=r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$",
        description="Write-ahead log size that triggers a DuckDB checkpoint. DuckDB's 16MB "
        "default made each collector commit re-checkpoint: 20k-row groups stalled 1-13 s "
        "and the file grew 1.6x; at 1GB the same load took 30-40% less time.",
    )
    db_row_group_size: int = Field(
        default=16_384,
        ge=0,
        description="Rows per row group of what this process writes to a DuckDB file (0: "
        "DuckDB's 122,880). The collector commits whole row groups, which DuckDB writes "
        "straight to the file: no checkpoint stalls, ~40% less CPU per stored span than "
        "committing through the log (bench/README.md, 'Session 7'). A lake ignores it.",
    )
    db_compression: Literal["zstd", "auto"] = Field(
        default="zstd",
        description="How a DuckDB file compresses its columns when rows are checkpointed: "
        "'zstd' (strings in zstd: of fat GenAI spans it writes 22% less CPU per span and a "
        "46% smaller file than DuckDB's own choice, dictionary+FSST, for full scans ~2x "
        "slower; bench/README.md, 'Compression') or 'auto' (DuckDB chooses). A lake writes "
        "Parquet and ignores it.",
    )
    grpc_address: str = Field(
        default="127.0.0.1:4317",
        description="host:port of the OTLP/gRPC receiver (port 0 picks a free port).",
    )
    http_address: str = Field(
        default="127.0.0.1:4318",
        description="host:port of the OTLP/HTTP receiver, health and metrics (port 0 picks one).",
    )
    auth_token: SecretStr | None = Field(
        default=None,
        description="When set, both receivers require 'Authorization: Bearer <token>'.",
    )
    tls_cert: Path | None = Field(
        default=None, description="PEM certificate chain; with tls_key, serve TLS on both ports."
    )
    tls_key: Path | None = Field(default=None, description="PEM private key for tls_cert.")
    insecure_listen: bool = Field(
        default=False,
        description="Let `serve` listen beyond loopback without auth_token or TLS (anyone "
        "who reaches the port can write spans and read /stats).",
    )
    max_message_bytes: int = Field(
        default=64 * MiB,
        gt=0,
        description="Largest accepted export request, after decompression "
        "(OTLP recommends 64 MiB).",
    )
    max_queue_bytes: int = Field(
        default=256 * MiB,
        gt=0,
        description="Request bytes that may wait for decoding and commit; beyond it receivers "
        "answer UNAVAILABLE / 503 with a retry hint.",
    )
    max_backlog_bytes: int = Field(
        default=4096 * MiB,
        gt=0,
        description="Acknowledged request bytes that may wait in the spool to be stored as "
        "rows; beyond it receivers answer UNAVAILABLE / 503 with a retry hint.",
    )
    max_commit_items: int = Field(
        default=20_000,
        gt=0,
        description="Most spans and log records stored in one transaction.",
    )
    shutdown_drain_seconds: float = Field(
        default=20.0,
        ge=0,
        description="On SIGTERM, how long to keep storing spooled requests before exiting "
        "(what is left is stored at the next start).",
    )
    decode_workers: int = Field(
        default=0,
        ge=0,
        le=64,
        description="Processes that decode spooled requests in parallel (0: one thread of "
        "the collector process, which measured as fast and ~350 MiB lighter on 2 cores).",
    )
    db_threads: int = Field(
        default=1,
        ge=0,
        le=256,
        description="DuckDB threads of a process that runs a collector (serve, ingest; 0: "
        "DuckDB's default, one per core). 1 measured ~30% less CPU per stored span; the "
        "process's other queries (serve's processing, /stats) then run on one thread too.",
    )
    retry_after_seconds: int = Field(
        default=1, ge=1, le=300, description="Retry delay suggested to clients under back-pressure."
    )
    reward_keys: tuple[str, ...] = Field(
        default=("reward", "tracemill.reward"),
        description="Span attributes read as a conversation's reward (comma-separated in "
        "the environment).",
    )
    pass_threshold: float = Field(
        default=0.5, ge=0, le=1,
        description="A reward or evaluation score at or above it passes.",
    )
    model_version_sources: tuple[
        Literal["agent_version", "service_version", "response_model", "request_model"], ...
    ] = Field(
        default=("agent_version", "service_version", "response_model", "request_model"),
        min_length=1,
        description="Where a conversation's model version comes from, in order of "
        "precedence (comma-separated in the environment).",
    )
    exploration_share: float = Field(
        default=0.2, ge=0, le=1,
        description="Share of a generation budget kept for cells that do not fail.",
    )
    policy_file: Path | None = Field(
        default=None,
        description="A policy document (Markdown or text: numbered items, bullets or headed "
        "sections); the policy_rule axis names the clause a conversation's failure is about.",
    )
    stance_model: str | None = Field(
        default=None,
        description="A model that labels each conversation's user stance after the "
        "patterns (builtin: offline, all-MiniLM-L6-v2 from the embed extra plus a small "
        "trained head; openai:MODEL, anthropic:MODEL, ollama:MODEL, vllm:MODEL@URL, "
        "python:module:function); answers are cached per conversation. None: patterns only.",
    )
    agent: str | None = Field(
        default=None,
        description="The agent under test in `generate`: offline[:MISTAKE_RATE], "
        "python:module:function, openai:MODEL, anthropic:MODEL, ollama:MODEL, "
        "vllm:MODEL@URL or fireworks:MODEL.",
    )
    user_model: str = Field(
        default="template",
        description="The simulated person: template (offline, no key) or a model spec.",
    )
    writer_model: str | None = Field(
        default=None,
        description="A model that paraphrases the asks of failures with no trigger in the "
        "world (none: asks are re-run with other people, not reworded).",
    )
    judge_model: str | None = Field(
        default=None, description="The model behind `grader = judge`."
    )
    grader: str | None = Field(
        default=None,
        description="The grader after the conduct checks: python:module:function or judge "
        "(none: conduct checks only).",
    )
    rubric_file: Path | None = Field(
        default=None, description="A text file with the judge's rubric (none: the default)."
    )
    budget: str = Field(
        default="100",
        description="Budget of a generation run: 200 (rollouts), '50k tokens' or '$5'.",
    )
    seed: int = Field(default=0, description="Seed of a generation run's plan and rollouts.")
    concurrency: int = Field(
        default=32, ge=1, le=1024, description="Simulated conversations in flight."
    )
    time_limit_seconds: float = Field(
        default=0.0, ge=0, description="Stop starting rollouts after this long (0: no limit)."
    )
    max_turns: int = Field(
        default=5, ge=1, le=50, description="Most turns of the simulated person per rollout."
    )
    fault_rate: float = Field(
        default=0.1, ge=0, le=1,
        description="Share of exploration rollouts given a scheduled tool fault; at 0.5 or "
        "more tool faults are covered pairwise instead of sampled.",
    )
    prefer_success: bool = Field(
        default=True,
        description="Exploration rows call tools that succeed unless a fault is sampled "
        "(false: tool conditions enter the covering array).",
    )
    guard_share: float = Field(
        default=0.05, ge=0, le=1,
        description="Share of a generation budget that re-checks fixed cells.",
    )
    tools_file: Path | None = Field(
        default=None,
        description="OpenAI-style function schemas (JSON) for the simulated world; they win "
        "over the schemas inferred from traces.",
    )
    world: str = Field(
        default="simulated",
        description="What answers the agent's tool calls in `generate`: simulated "
        "(tracemill's world), python:module:function or an http(s):// endpoint (your own "
        "staging system).",
    )
    prices_file: Path | None = Field(
        default=None,
        description="Prices per model (TOML or JSON: {model: {input, output}} in USD per "
        "million tokens) over the built-in table.",
    )
    system_prompt_file: Path | None = Field(
        default=None, description="The agent's system prompt for model backends."
    )
    max_rollouts: int = Field(
        default=5000, ge=1,
        description="Most rollouts a token or money budget plans (a rollouts budget plans "
        "exactly its number).",
    )
    saturation_window: int = Field(
        default=250, ge=0,
        description="Stop a run when this many rollouts in a row add no new pair of axis "
        "values and no new failure (0: never).",
    )
    logprobs: bool = Field(
        default=False,
        description="Ask the agent's backend for token log probabilities and store them "
        "with each rollout (OpenAI-compatible backends).",
    )
    request_timeout_seconds: float = Field(
        default=60.0, gt=0, description="Timeout of one model request."
    )
    max_retries: int = Field(
        default=4, ge=0, le=20,
        description="Retries of a model request on 429, 5xx and timeouts (with backoff).",
    )
    process_every_seconds: float = Field(
        default=0.0, ge=0,
        description="In `serve`, rebuild conversations and the failure map this often (0: "
        "only when `tracemill process` or POST /api/v1/process asks).",
    )
    generate_cron: str | None = Field(
        default=None,
        description="In `serve`, start a generation run on this cron schedule (5 fields: "
        "minute hour day month weekday, e.g. '0 2 * * *' nightly at 02:00 UTC; or 6 with "
        "seconds first). Uses agent, budget (or generate_budget) and the other generate "
        "settings; one run at a time, missed runs coalesced into one. None: off.",
    )
    generate_budget: str | None = Field(
        default=None,
        description="Budget of each scheduled generation run (200, '50k tokens', '$5'; "
        "None: the budget setting).",
    )
    api_address: str = Field(
        default="127.0.0.1:4319",
        description="In `serve`, host:port of the admin HTTP API (/api/v1, OpenAPI document "
        "at /api/v1/openapi.json), apart from the ingestion ports. Default: loopback and the "
        "port after http_address's (127.0.0.1:4319; port 0 when http_address has port 0).",
    )
    api_hosts: tuple[str, ...] = Field(
        default=(),
        description="Host names the admin API answers to besides localhost, 127.0.0.1, "
        "[::1] and api_address's host (e.g. tracemill.internal, *.example.com, or * for "
        "any; comma-separated in the environment): a request naming another Host is refused, so "
        "a web page cannot reach the API by pointing its own name at this machine (DNS "
        "rebinding). With api_address on 0.0.0.0 or :: and none named, any name is "
        "answered: the admin token, required there, guards it.",
    )
    admin_token: SecretStr | None = Field(
        default=None,
        description="When set, the admin API requires 'Authorization: Bearer <token>' "
        "(separate from auth_token, which guards ingestion); required when api_address is "
        "beyond loopback.",
    )
    export_dir: Path | None = Field(
        default=None,
        description="In `serve`, the folder under which exports started through the admin "
        "API (and `tracemill export` while the service holds the store) may write; None: "
        "the store's folder.",
    )
    redact: tuple[str, ...] = Field(
        default=(),
        description="Attribute keys whose values are masked as [redacted] in the admin API "
        "(and the page), reports, exports and command output, also where a value is "
        "repeated in a text; case-insensitive shell patterns such as user.email or *.phone "
        "(comma-separated in the environment).",
    )
    cors_origins: tuple[str, ...] = Field(
        default=(),
        description="Origins (https://dash.example.com) whose browsers may call the admin "
        "API; none by default, so pages on other origins cannot read it (comma-separated "
        "in the environment).",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="Least severe log level written."
    )
    log_format: Literal["json", "text"] = Field(
        default="json", description="Structured JSON log lines or plain text, on stderr."
    )

    @model_validator(mode="before")
    @classmethod
    def _default_api_address(cls, data: Any) -> Any:
        # the admin API takes the port after OTLP/HTTP's, on loopback unless placed
        # elsewhere: a collector asked for free ports (tests, several services on one
        # host) gets a free API port too, and OTLP opened to the cluster (0.0.0.0:4318)
        # does not open administration with it
        if isinstance(data, dict) and data.get("api_address") is None:
            try:
                _, port = split_address(str(data.get("http_address", "127.0.0.1:4318")))
            except ValueError:
                return data  # the http_address validator names the problem
            data = {**data, "api_address": f"127.0.0.1:{port + 1 if 0 < port < 65535 else 0}"}
        return data

    @field_validator("db_row_group_size")
    @classmethod
    def _check_row_group_size(cls, value: int) -> int:
        if value % 2048:
            raise ValueError(f"{value:,} rows: DuckDB takes a row group size that is a "
                             "multiple of 2,048 (e.g. 16384), or 0 for its default")
        return value

    @field_validator("grpc_address", "http_address", "api_address")
    @classmethod
    def _check_address(cls, value: str) -> str:
        split_address(value)
        return value

    @field_validator("reward_keys", "model_version_sources", "redact", "cors_origins",
                     "api_hosts", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("api_hosts")
    @classmethod
    def _check_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_host_pattern(name) for name in value)

    @field_validator("generate_cron")
    @classmethod
    def _check_cron(cls, value: str | None) -> str | None:
        if value is not None:
            cron_trigger(value)
        return value

    @field_validator("tls_key")
    @classmethod
    def _check_tls_pair(cls, value: Path | None, info: Any) -> Path | None:
        cert = info.data.get("tls_cert")
        if (value is None) != (cert is None):
            raise ValueError("tls_cert and tls_key must be set together")
        return value


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (a host name other than localhost may resolve
    beyond it, so it counts as exposed)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_address(address: str) -> tuple[str, int]:
    """Split ``host:port`` (``[::1]:4317`` for IPv6) into its parts, or raise ValueError."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"{address!r} is not host:port (for example 127.0.0.1:4317)")
    return host.strip("[]"), int(port_text)


def _host_pattern(name: str) -> str:
    """An ``api_hosts`` entry as the Host header names it: lower case, IPv6 in brackets."""
    name = name.strip().lower()
    if ":" in name.strip("[]"):
        try:
            return f"[{ipaddress.IPv6Address(name.strip('[]'))}]"
        except ValueError:
            pass
    elif name == "*" or (name.startswith("*.") and "*" not in name[1:]) or (
            name and "*" not in name and "/" not in name):
        return name
    raise ValueError(f"{name!r} is not a host name: give a name or address without a port "
                     "(tracemill.internal, 10.0.0.5, fd00::1), a pattern like "
                     "*.example.com, or * for any")


def join_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets (``[::1]:4319``), as URLs need it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def cron_trigger(expression: str) -> Any:
    """An APScheduler ``CronTrigger`` (UTC) for 5 cron fields, or 6 with seconds first;
    raises ValueError naming the expected shape."""
    from apscheduler.triggers.cron import CronTrigger

    fields = expression.split()
    names: tuple[str, ...] = ("minute", "hour", "day", "month", "day_of_week")
    if len(fields) == 6:
        names = ("second", *names)
    elif len(fields) != 5:
        raise ValueError(f"{expression!r} is not a cron expression: give 5 fields (minute "
                         "hour day month weekday, e.g. '0 2 * * *') or 6 with seconds first")
    return CronTrigger(timezone="UTC", **dict(zip(names, fields, strict=True)))


def load_settings(
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    config_file: Path | None = None,
) -> Settings:
    """Merge defaults < config file < environment < flags and validate once.

    ``flags`` holds only the options the user gave (None values are ignored).
    """
    merged: dict[str, Any] = {}
    source: dict[str, str] = {}
    path = config_file or _env_path(environ)
    if path is None and DEFAULT_CONFIG_FILE.is_file():
        path = DEFAULT_CONFIG_FILE
    if path is not None:
        for key, value in _read_config_file(path).items():
            merged[key] = value
            source[key] = f"config file {path}"
    fields = Settings.model_fields
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "CONFIG":
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in fields:
            raise ConfigError(
                f"unknown environment variable {name}; known ones are "
                + ", ".join(ENV_PREFIX + k.upper() for k in fields)
            )
        merged[key] = value
        source[key] = f"environment variable {name}"
    for key, value in flags.items():
        if value is not None:
            merged[key] = value
            source[key] = f"option --{key.replace('_', '-')}"
    if str(merged.get("db", "")).startswith("ducklake:"):
        # the Python API (open_store, Settings) takes the URL; a command needs a file beside
        # which the spool, the lock and the service file live
        raise ConfigError(
            f"db (from {source['db']}): a lake URL is given through a lake file, which names "
            "the same lake for every process and keeps the spool and service files beside "
            "it: write it into one (`echo 'ducklake:postgres:... data_path=DIR' > team.lake`)"
            " and pass --db team.lake")
    try:
        return Settings(**merged)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = str(error["loc"][0]) if error["loc"] else "?"
            where = source.get(key, "default")
            problems.append(f"{key} (from {where}): {error['msg']}")
        raise ConfigError("invalid settings: " + "; ".join(problems)) from None


def _env_path(environ: Mapping[str, str]) -> Path | None:
    value = environ.get(ENV_PREFIX + "CONFIG")
    return Path(value) if value else None


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"config file {path} does not exist; create it or drop --config") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(
            f"config file {path} has unknown keys {', '.join(unknown)}; known keys are "
            + ", ".join(Settings.model_fields)
        )
    return data
