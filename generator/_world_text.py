"""Plain-text answers of the simulated world: a tool whose production exemplars are text.

Private to :mod:`generator.world`. Some services answer with a sentence (``Transfer
successful``, ``Certificate certificate_3221322 added to user noah_muller_9847 with amount
50.``), a bare identifier (a user-id lookup) or a number (a calculator). :func:`text_answer`
writes the exemplar anew for one call: a number is the arithmetic the call asked for (an
argument that is an arithmetic expression) or a number like it; a bare identifier is the
record's own id; in a sentence, each token with a digit becomes the call's own argument
written the same way (same letters before the first digit, same length), else a new
token of its shape; words are kept.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

from generator._world_values import id_head, looks_like_id, reshape_token

_TOKEN = re.compile(r"[A-Za-z0-9_#]+(?:[-.][A-Za-z0-9_]+)*")
_ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub,
               ast.Mult, ast.Div, ast.USub, ast.UAdd)


def text_answer(text: str, own_id: str, arguments: Mapping[str, Any], rng: random.Random,
                new_id: Callable[[str], str], shown: set[str]) -> str:
    """The exemplar ``text`` written for this call (module docstring); ``new_id(like)``
    makes an identifier, ``shown`` collects the tokens made up."""
    number = _number(text)
    if number is not None:
        result = next((value for value in map(arithmetic, arguments.values())
                       if value is not None), None)
        return str(round(result if result is not None else number * rng.uniform(0.5, 2), 2))
    if looks_like_id(text.strip()):
        return own_id or new_id(text.strip())
    given = [str(value) for value in arguments.values()
             if isinstance(value, str | int) and not isinstance(value, bool)]

    def swap(match: re.Match[str]) -> str:
        token = match[0]
        if not any(ch.isdigit() for ch in token):
            return token
        same = next((value for value in given if id_head(value) == id_head(token)
                     and len(value) == len(token) and value != token), None)
        if same is not None:
            return same
        if token.replace(".", "", 1).isdigit():
            numbers = [v for v in given if v.replace(".", "", 1).isdigit()]
            return numbers[0] if numbers else token
        made = reshape_token(token, rng)
        shown.add(made)
        return made

    return _TOKEN.sub(swap, text)


def _number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def arithmetic(value: object) -> float | None:
    """The value of an arithmetic expression (``2 * (350 - 122)``), None for anything else
    (parsed, never evaluated by Python: only numbers and + - * / are accepted)."""
    if not isinstance(value, str) or not any(op in value for op in "+-*/"):
        return None
    try:
        tree = ast.parse(value, mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(node, _ARITHMETIC) for node in ast.walk(tree)) or not all(
            isinstance(node.value, int | float) for node in ast.walk(tree)
            if isinstance(node, ast.Constant)):
        return None
    return _evaluate(tree)


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return float(node.value)  # type: ignore[arg-type]  # numbers only, checked
    if isinstance(node, ast.UnaryOp):
        return -_evaluate(node.operand) if isinstance(node.op, ast.USub) \
            else _evaluate(node.operand)
    assert isinstance(node, ast.BinOp)
    left, right = _evaluate(node.left), _evaluate(node.right)
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right
    return left / right if right else float("nan")
