"""Tool schemas for the simulated world: loaded from files, rebuilt from traces, checked,
and filled with the values a simulated person would know.

Private to :mod:`generator.world`, which re-exports :func:`load_tool_file`,
:func:`tool_from_structure` and :func:`sample_facts`.

- :func:`load_tool_file` reads OpenAI-style function schemas: a JSON list of
  ``{"type": "function", "function": {name, description, parameters}}`` or of bare
  ``{name, description, parameters}`` (an object with a ``tools`` list, or one tool
  object, is accepted too). A malformed file raises :class:`ToolSchemaError` naming the
  file, the tool's index and name, and the problem.
- :func:`tool_from_structure` turns a DuckDB ``json_group_structure`` of the arguments seen
  in traces into a schema: every observed key is a property, and the keys named like
  identifiers (:func:`~generator._world_values.is_id_like`) are required: an observed tool
  has no declared ``required`` list, and an identifier is the argument a call cannot do
  without, while optional-looking keys (notes, flags) often appear in only some calls.
- :func:`check_value` is the argument check the world answers ``rejected`` from.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from generator._world_values import (
    CITIES,
    EMAIL_RE,
    FIRST_NAMES,
    REASONS,
    STREETS,
    SURNAMES,
    THINGS,
    UUID_RE,
    find_placeholder,
    is_id_like,
    looks_like_placeholder,
    random_digits,
    random_email,
    reshape,
    reshape_token,
    schema_at,
    similar_int,
    subject_noun,
    words,
)
from generator.errors import ToolSchemaError
from generator.records import ToolSpec

# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Problem:
    """Why arguments were rejected."""

    message: str
    """What is wrong and how to fix it, for the agent to read."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Fields added to the refusal (``argument``, ``allowed``, ``missing``...)."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__)


def _is(kind: Any, value: Any) -> bool:
    actual = _json_type(value)
    if kind == "number":
        return actual in ("integer", "number")
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return kind == actual or kind not in ("string", "integer", "boolean", "array", "object",
                                         "null", "number")


def _format_problem(value: str, fmt: Any) -> str | None:
    if fmt == "email" and not EMAIL_RE.match(value):
        return "an email address like name@provider.tld"
    if fmt == "uuid" and not UUID_RE.match(value):
        return "a UUID"
    try:
        if fmt == "date":
            date.fromisoformat(value)
        elif fmt == "date-time":
            datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return "an ISO 8601 " + ("date (YYYY-MM-DD)" if fmt == "date" else "date-time")
    return None


def check_value(value: Any, schema: Mapping[str, Any], path: str) -> Problem | None:
    """The first way ``value`` breaks ``schema`` (types, enums, formats, required), if any."""
    if not isinstance(schema, Mapping):
        return None
    label = path or "the arguments"
    for union in ("anyOf", "oneOf"):
        options = [o for o in schema.get(union) or () if isinstance(o, Mapping)]
        problems = [check_value(value, option, path) for option in options]
        if options and all(problems):
            return problems[0]
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    if kinds and not any(_is(kind, value) for kind in kinds):
        return Problem(f"Argument {label!r} must be {' or '.join(map(str, kinds))}, "
                       f"got {_json_type(value)}.", {"argument": label})
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return Problem(f"Argument {label!r} must be one of: "
                       f"{', '.join(map(str, enum))}; got {value!r}.",
                       {"argument": label, "allowed": enum})
    if isinstance(value, str) and schema.get("format"):
        wanted = _format_problem(value, schema.get("format"))
        if wanted:
            return Problem(f"Argument {label!r} must be {wanted}; got {value!r}.",
                           {"argument": label})
    if isinstance(value, dict):
        return _check_object(value, schema, path)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        for index, item in enumerate(value):
            problem = check_value(item, items, f"{path}[{index}]")
            if problem:
                return problem
    return None


def _check_object(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> Problem | None:
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    prefix = f"{path}." if path else ""
    required = [r for r in schema.get("required") or () if isinstance(r, str)]
    missing = [prefix + r for r in required if value.get(r) is None]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        return Problem(f"Missing required argument{plural}: {', '.join(missing)}.",
                       {"missing": missing})
    if schema.get("additionalProperties") is False:
        unknown = [prefix + key for key in value if key not in props]
        if unknown:
            return Problem(f"Unknown argument(s): {', '.join(unknown)}; this tool takes: "
                           f"{', '.join(props) or 'no arguments'}.", {"unknown": unknown})
    for key, item in value.items():
        sub = props.get(key)
        if item is None and key not in required:
            continue  # an explicit null for an optional argument means "not given"
        problem = check_value(item, sub, prefix + key) if isinstance(sub, Mapping) else None
        if problem:
            return problem
    return None


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str]:
    """The arguments as an object, or None and the parse problem (blank counts as {})."""
    if not text.strip():
        return {}, ""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return None, str(exc)
    if not isinstance(value, dict):
        return None, f"got a JSON {type(value).__name__}, not an object"
    return value, ""


def canonical_arguments(arguments: Mapping[str, Any]) -> bytes:
    """The arguments as bytes that compare equal when the arguments do (keys sorted)."""
    return orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)


# --------------------------------------------------------------------------- facts

_CLOCK = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)  # dates of facts sit before this day


def sample_facts(tool: ToolSpec, rng: random.Random,
                 observed_arguments: Sequence[str] = ()) -> dict[str, str]:
    """What a person asking for ``tool`` knows: its required and identifier-like arguments.

    Shaped like ``observed_arguments`` (JSON texts of production arguments) when a key was
    observed (``A-1001`` → ``A-7316``), else drawn from the schema (enum, format, type and
    the parameter's name; an identifier-like name gets an identifier, ``BOO-48213`` for
    ``booking_ref``). Never a placeholder, never a value the schema rejects. Facts are text:
    a nested object or a list of objects is JSON text (``{"first_name":"Ana",...}``), which
    the person states in words and an agent passes as the object; a list of plain values is
    joined with commas; a flag is ``yes``/``no``.
    """
    props = tool.parameters.get("properties") or {}
    required = {r for r in tool.parameters.get("required") or () if isinstance(r, str)}
    observed = _observed(observed_arguments)
    facts: dict[str, str] = {}
    for name, schema in props.items():
        schema = schema if isinstance(schema, Mapping) else {}
        if name in required or is_id_like(name, schema):
            value = _value_for(name, schema, tool.name, rng, observed.get(name, []))
            facts[name] = _as_fact(value)
    return facts


def _observed(texts: Sequence[str]) -> dict[str, list[Any]]:
    seen: dict[str, list[Any]] = {}
    for text in texts:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            for key, item in value.items():
                if item is not None:
                    seen.setdefault(key, []).append(item)
    return seen


def _value_for(name: str, schema: Mapping[str, Any], tool: str, rng: random.Random,
               seen: list[Any]) -> Any:
    for attempt in range(8):
        if seen and attempt < 3:
            value = _reshaped(rng.choice(seen), name, rng)
        else:
            value = _sample(name, schema, tool, rng)
        if check_value(value, schema, name) is None \
                and find_placeholder({name: value}, {"properties": {name: schema}}) is None \
                and (isinstance(value, dict | list) or not looks_like_placeholder(
                    _as_fact(value), name)):  # 8.88 would read as a filler
            return value
    return f"{subject_noun(tool, name)[:3].upper() or 'REC'}-{random_digits(rng, 6)}"


def _reshaped(value: Any, name: str, rng: random.Random) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return similar_int(value, rng)
    if isinstance(value, float):
        return round(value * rng.uniform(0.6, 1.4), 2)
    if isinstance(value, str):
        if is_id_like(name, None) and not any(ch.isdigit() for ch in value):
            return reshape_token("0" + value, rng)[1:]  # letters only: redraw them all
        return reshape(value, rng, _CLOCK)
    if isinstance(value, dict):
        return {key: _reshaped(item, key, rng) for key, item in value.items()}
    if isinstance(value, list):
        return [_reshaped(item, name, rng) for item in value[:3]]
    return value


def _sample(name: str, schema: Mapping[str, Any], tool: str, rng: random.Random) -> Any:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return rng.choice(enum)
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    kind = next((k for k in kinds if k != "null"), None)
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if is_id_like(name, schema):
            return rng.randint(10000, 99999)
        low = low if isinstance(low, int) else 1
        return rng.randint(low, high if isinstance(high, int) and high >= low else low + 4)
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        low = float(low) if isinstance(low, int | float) else 5.0
        high = float(high) if isinstance(high, int | float) and high >= low else low + 295.0
        return round(rng.uniform(low, high), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [_sample(name.rstrip("s"), schema_at(schema, "items"), tool, rng)]
    if kind == "object" or (kind is None and isinstance(schema.get("properties"), Mapping)):
        props = schema_at(schema, "properties")
        required = [r for r in schema.get("required") or () if r in props] or list(props)
        return {key: _sample(key, schema_at(props, key), tool, rng) for key in required}
    return _sample_text(name, schema, tool, rng)


def _sample_text(name: str, schema: Mapping[str, Any], tool: str, rng: random.Random) -> str:
    fmt, parts = schema.get("format"), words(name)
    last = parts[-1] if parts else ""
    moment = _CLOCK - timedelta(days=rng.randrange(2, 90), minutes=rng.randrange(1440))
    if fmt == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if fmt == "date" or (not fmt and last in ("date", "day", "birthday", "on")):
        return moment.strftime("%Y-%m-%d")
    if fmt == "date-time" or (not fmt and last in ("at", "time", "timestamp", "datetime")):
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if fmt == "email" or "email" in parts:
        return random_email(rng)
    if is_id_like(name, schema, "KEY-48213"):  # a record's handle: an identifier, never a noun
        if "pnr" in parts or "locator" in parts:  # airline record locators: 6 letters/digits
            return "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ23456789") for _ in range(6))
        named = subject_noun("", name)
        noun = subject_noun(tool, None) if named == "record" else named
        return f"{re.sub(r'[^A-Za-z]', '', noun)[:3].upper() or 'REC'}-{random_digits(rng, 5)}"
    if "phone" in parts or "mobile" in parts:
        return f"+1 415 555 {rng.randint(1000, 1999)}"
    if last in ("name", "surname") and not ({"product", "item", "file"} & set(parts)):
        first, surname = rng.choice(FIRST_NAMES).capitalize(), rng.choice(SURNAMES)
        return first if "first" in parts else surname if {"last", "surname"} & set(parts) \
            else f"{first} {surname}"
    if {"city", "destination", "origin", "town"} & set(parts):
        return rng.choice(CITIES)
    if {"address", "street", "line1"} & set(parts):
        return f"{rng.randint(2, 298)} {rng.choice(STREETS)}"
    if {"zip", "postcode", "postal"} & set(parts):
        return random_digits(rng, 5)
    if "reason" in parts:
        return rng.choice(REASONS)
    if "currency" in parts:
        return rng.choice(("EUR", "USD", "GBP"))
    if {"message", "note", "notes", "comment", "body", "text", "description", "subject"} \
            & set(parts):
        return f"Question about my {rng.choice(THINGS)}"
    return rng.choice(THINGS)


def _as_fact(value: Any) -> str:
    """A value as fact text (see :func:`sample_facts`)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dict) or (isinstance(value, list) and any(
            isinstance(item, dict | list) for item in value)):
        return orjson.dumps(value).decode()  # structure kept: the agent passes the object
    if isinstance(value, list):
        return ", ".join(_as_fact(item) for item in value)
    return str(value)


# --------------------------------------------------------------------------- structures

_DUCKDB_TYPES = {"VARCHAR": "string", "BIGINT": "integer", "UBIGINT": "integer",
                 "INTEGER": "integer", "UINTEGER": "integer", "HUGEINT": "integer",
                 "SMALLINT": "integer", "TINYINT": "integer", "DOUBLE": "number",
                 "FLOAT": "number", "BOOLEAN": "boolean"}


def _from_structure(node: Any) -> dict[str, Any]:
    if isinstance(node, dict):
        return {"type": "object",
                "properties": {key: _from_structure(item) for key, item in node.items()}}
    if isinstance(node, list):
        return {"type": "array", "items": _from_structure(node[0]) if node else {}}
    if isinstance(node, str):
        name = node.strip().upper()
        if name.startswith("DECIMAL"):
            return {"type": "number"}
        if name == "UUID":
            return {"type": "string", "format": "uuid"}
        if name in _DUCKDB_TYPES:
            return {"type": _DUCKDB_TYPES[name]}
    return {}  # NULL, JSON or a type DuckDB adds later: any value


def tool_from_structure(name: str, structure_json: str, *, description: str = "",
                        exemplars: Sequence[str] = (), source: str = "observed") -> ToolSpec:
    """A tool from the argument structure the processor observed (module docstring)."""
    try:
        structure = orjson.loads(structure_json) if structure_json.strip() else None
    except orjson.JSONDecodeError as exc:
        raise ToolSchemaError(
            f"the observed argument structure of tool {name!r} is not JSON ({exc}): "
            f"{structure_json[:80]!r}; rebuild the tool catalog with `tracemill process`"
        ) from None
    props = {key: _from_structure(item) for key, item in structure.items()} \
        if isinstance(structure, dict) else {}
    parameters = {"type": "object", "properties": props,
                  "required": [key for key, schema in props.items() if is_id_like(key, schema)]}
    text = description or " ".join(words(name)).capitalize() + "."
    return ToolSpec(name=name, description=text, parameters=parameters,
                    exemplars=tuple(exemplars), source=source)


# --------------------------------------------------------------------------- files

_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
_KNOWN_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")


def load_tool_file(path: Path) -> tuple[ToolSpec, ...]:
    """The tools of an OpenAI-style function schema file (module docstring)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ToolSchemaError(f"cannot read the tool file {path}: {exc.strerror or exc}") \
            from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ToolSchemaError(f"{path} is not valid JSON ({exc}); it must hold a JSON list "
                              "of OpenAI-style function schemas") from None
    if isinstance(data, dict):
        data = data["tools"] if isinstance(data.get("tools"), list) else [data]
    if not isinstance(data, list):
        raise ToolSchemaError(f"{path} holds a JSON {_json_type(data)}; it must hold a JSON "
                              "list of OpenAI-style function schemas")
    if not data:
        raise ToolSchemaError(f"{path} holds an empty list: give at least one tool")
    tools: list[ToolSpec] = []
    for index, entry in enumerate(data):
        tool = _tool_entry(path, index, entry)
        if any(other.name == tool.name for other in tools):
            raise ToolSchemaError(f"{path}: tool {index} ({tool.name}) repeats a name an "
                                  "earlier tool has; tool names must be unique")
        tools.append(tool)
    return tuple(tools)


def _tool_entry(path: Path, index: int, entry: Any) -> ToolSpec:
    where = f"{path}: tool {index}"
    if not isinstance(entry, dict):
        raise ToolSchemaError(f"{where} is a JSON {_json_type(entry)}, not an object")
    function = entry
    if "function" in entry or entry.get("type") is not None:
        if entry.get("type", "function") != "function":
            raise ToolSchemaError(f'{where}: "type" is {entry.get("type")!r}; only '
                                  '"function" tools are supported')
        function = entry.get("function", entry)
        if not isinstance(function, dict):
            raise ToolSchemaError(f'{where}: "function" must be an object with "name", '
                                  '"description" and "parameters"')
    name = function.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolSchemaError(f'{where}: "name" must be 1-128 letters, digits, "_", "." or '
                              f'"-"; got {name!r}')
    where = f"{where} ({name})"
    description = function.get("description", "")
    if not isinstance(description, str):
        raise ToolSchemaError(f'{where}: "description" must be a string')
    parameters = function.get("parameters", function.get("input_schema"))
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise ToolSchemaError(f'{where}: "parameters" must be a JSON schema with "type": '
                              '"object"')
    _check_object_schema(where, "parameters", parameters)
    return ToolSpec(name=name, description=description, parameters=parameters,
                    source="supplied")


def _check_object_schema(where: str, at: str, schema: dict[str, Any]) -> None:
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise ToolSchemaError(f'{where}: "{at}.properties" must be an object mapping argument '
                              "names to schemas")
    for key, sub in props.items():
        _check_property(where, f"{at}.properties.{key}", sub)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ToolSchemaError(f'{where}: "{at}.required" must be a list of argument names')
    unknown = [r for r in required if r not in props]
    if unknown:
        raise ToolSchemaError(f'{where}: "{at}.required" names {", ".join(unknown)}, not '
                              f'declared in "{at}.properties"')


def _check_property(where: str, at: str, schema: Any) -> None:
    if not isinstance(schema, dict):
        raise ToolSchemaError(f'{where}: "{at}" must be a schema object, got a JSON '
                              f"{_json_type(schema)}")
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds is not None else []
    bad = [kind for kind in kinds if kind not in _KNOWN_TYPES]
    if bad:
        raise ToolSchemaError(f'{where}: "{at}.type" is {bad[0]!r}; use one of '
                              f"{', '.join(_KNOWN_TYPES)}")
    enum = schema.get("enum")
    if enum is not None and (not isinstance(enum, list) or not enum):
        raise ToolSchemaError(f'{where}: "{at}.enum" must be a non-empty list of values')
    if "object" in kinds or "properties" in schema:
        _check_object_schema(where, at, schema)
    if isinstance(schema.get("items"), dict):
        _check_property(where, f"{at}.items", schema["items"])
