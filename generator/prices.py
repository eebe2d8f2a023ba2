"""What model calls cost: USD per million input and output tokens, per model.

:meth:`PriceTable.default` holds list prices for a handful of well-known models; users
override them (and add their own models, fine-tunes and self-hosted endpoints) with a TOML
or JSON file read by :meth:`PriceTable.load`::

    # prices.toml
    ["gpt-4o-mini"]
    input = 0.15
    output = 0.60

    ["accounts/fireworks/models/llama-v3p1-8b-instruct"]
    input = 0.20
    output = 0.20

A lookup also finds a dated model name under its base name: the price of ``gpt-4o-mini``
serves ``gpt-4o-mini-2024-07-18``, and that of ``claude-3-5-haiku`` serves
``claude-3-5-haiku-20241022``. An exact entry for the dated name wins.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from generator.errors import BudgetError
from generator.records import TokenUsage

__all__ = ["DEFAULT_PRICES", "ModelPrice", "PriceTable", "base_model_name"]


@dataclass(frozen=True)
class ModelPrice:
    """The price of one model's tokens."""

    input: float
    """USD per million input (prompt) tokens."""
    output: float
    """USD per million output (completion) tokens."""

    def cost(self, usage: TokenUsage) -> float:
        """USD for ``usage``."""
        return (usage.input_tokens * self.input + usage.output_tokens * self.output) / 1e6


DEFAULT_PRICES: Mapping[str, ModelPrice] = MappingProxyType({
    # OpenAI
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "o4-mini": ModelPrice(1.10, 4.40),
    "gpt-5": ModelPrice(1.25, 10.00),
    "gpt-5-mini": ModelPrice(0.25, 2.00),
    "gpt-5-nano": ModelPrice(0.05, 0.40),
    # Anthropic
    "claude-opus-4-1": ModelPrice(15.00, 75.00),
    "claude-sonnet-4": ModelPrice(3.00, 15.00),
    "claude-sonnet-4-5": ModelPrice(3.00, 15.00),
    "claude-haiku-4-5": ModelPrice(1.00, 5.00),
    "claude-3-5-haiku": ModelPrice(0.80, 4.00),
    # Fireworks (serverless)
    "accounts/fireworks/models/llama-v3p1-8b-instruct": ModelPrice(0.20, 0.20),
    "accounts/fireworks/models/llama-v3p1-70b-instruct": ModelPrice(0.90, 0.90),
})
"""Built-in list prices (USD per 1M tokens) as of 2026. They go stale: override them with
``PriceTable.load(path)`` for anything that spends real money."""

# A trailing date: -2024-07-18 (OpenAI) or -20241022 (Anthropic).
_DATE_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def base_model_name(model: str) -> str:
    """``model`` without a trailing release date (``gpt-4o-mini-2024-07-18`` → ``gpt-4o-mini``)."""
    return _DATE_SUFFIX.sub("", model)


@dataclass(frozen=True)
class PriceTable:
    """Prices per model; immutable. Build with :meth:`default`, :meth:`load` or
    :meth:`with_prices`."""

    prices: Mapping[str, ModelPrice] = field(default_factory=lambda: DEFAULT_PRICES)
    """Model name → price. Dated names fall back to their base name on lookup."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))

    @classmethod
    def default(cls) -> PriceTable:
        """The built-in list prices (see :data:`DEFAULT_PRICES`)."""
        return cls(DEFAULT_PRICES)

    @classmethod
    def empty(cls) -> PriceTable:
        """A table that knows no model (every call is unpriced)."""
        return cls({})

    @classmethod
    def load(cls, path: str | Path, *, base: PriceTable | None = None) -> PriceTable:
        """``base`` (default: the built-in prices) overridden by the prices in ``path``.

        ``path`` is a ``.toml`` or ``.json`` file mapping model names to
        ``{input = USD per 1M tokens, output = USD per 1M tokens}``. Raises
        :class:`~generator.errors.BudgetError` naming the file and the key at fault.
        """
        path = Path(path)
        data = _read_price_file(path)
        overrides = {model: _parse_price(path, model, entry) for model, entry in data.items()}
        return (base if base is not None else cls.default()).with_prices(overrides)

    def with_prices(self, overrides: Mapping[str, ModelPrice]) -> PriceTable:
        """A copy with ``overrides`` added or replacing existing entries."""
        return PriceTable({**self.prices, **overrides})

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of ``model`` (exact name first, then its undated base), or None."""
        price = self.prices.get(model)
        if price is None:
            price = self.prices.get(base_model_name(model))
        return price

    def has(self, model: str) -> bool:
        """True when :meth:`cost` can price ``model``."""
        return self.lookup(model) is not None

    def cost(self, model: str, usage: TokenUsage) -> float:
        """USD for ``usage`` tokens of ``model``; :class:`BudgetError` if it has no price."""
        price = self.lookup(model)
        if price is None:
            raise BudgetError(
                f"no price for model {model!r}: add it to a prices file "
                f'(["{model}"] input = ..., output = ... in USD per 1M tokens) '
                "and pass it with --prices"
            )
        return price.cost(usage)


def _read_price_file(path: Path) -> Mapping[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BudgetError(f"cannot read prices file {path}: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(raw.decode("utf-8"))
        elif suffix == ".json":
            data = json.loads(raw)
        else:
            raise BudgetError(
                f"prices file {path}: unknown format {suffix or '(no suffix)'!r}; "
                "use a .toml or .json file"
            )
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise BudgetError(f"prices file {path} is not valid {suffix[1:].upper()}: {exc}") from exc
    if not isinstance(data, dict):
        raise BudgetError(
            f"prices file {path}: expected a table of models, "
            '{"model": {"input": X, "output": Y}}, not ' + type(data).__name__
        )
    return data


def _parse_price(path: Path, model: str, entry: Any) -> ModelPrice:
    where = f"prices file {path}, model {model!r}"
    if not model.strip():
        raise BudgetError(f"prices file {path}: a model name is empty")
    if not isinstance(entry, dict):
        raise BudgetError(
            f"{where}: expected {{input = X, output = Y}} (USD per 1M tokens), "
            f"not {type(entry).__name__}"
        )
    unknown = sorted(set(entry) - {"input", "output"})
    if unknown:
        raise BudgetError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                          "only 'input' and 'output' (USD per 1M tokens) are read")
    values: dict[str, float] = {}
    for key in ("input", "output"):
        if key not in entry:
            raise BudgetError(f"{where}: missing {key!r} (USD per 1M {key} tokens)")
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BudgetError(f"{where}, key {key!r}: expected a number, got {value!r}")
        if not math.isfinite(value) or value < 0:
            raise BudgetError(f"{where}, key {key!r}: expected a price >= 0, got {value!r}")
        values[key] = float(value)
    return ModelPrice(values["input"], values["output"])
