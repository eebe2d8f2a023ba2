"""Budgets parse from what users type, and the ledger never spends past one."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.budget import (
    MESSAGE_OVERHEAD_TOKENS,
    Budget,
    BudgetLedger,
    Reservation,
    estimate_tokens,
)
from generator.errors import BudgetError


@pytest.mark.parametrize(("text", "kind", "limit"), [
    ("200", "rollouts", 200), ("200 rollouts", "rollouts", 200), (" 1 rollout ", "rollouts", 1),
    ("50000 tokens", "tokens", 50_000), ("50k tokens", "tokens", 50_000),
    ("50K Tokens", "tokens", 50_000), ("1.5m tokens", "tokens", 1_500_000),
    ("50_000 tokens", "tokens", 50_000), ("50,000 tokens", "tokens", 50_000),
    ("$5", "usd", 5.0), ("$0.25", "usd", 0.25), ("5 usd", "usd", 5.0), ("5usd", "usd", 5.0),
    ("2.5 dollars", "usd", 2.5), ("$ 5", "usd", 5.0), ("1k", "rollouts", 1000),
])
def test_budgets_parse(text: str, kind: str, limit: float) -> None:
    budget = Budget.parse(text)
    assert (budget.kind, budget.limit) == (kind, limit)
    assert Budget.parse(str(budget)) == budget


@pytest.mark.parametrize(("text", "words"), [
    ("", "cannot read"), ("lots", "cannot read"), ("5 euros", "cannot read"),
    ("$5 tokens", "cannot read"), ("0", "positive"), ("0 tokens", "positive"),
    ("$0", "positive"), ("-5", "positive"), ("$-1", "positive"), ("1.5", "whole"),
    ("10.5 tokens", "whole"), ("nan", "cannot read"), ("inf tokens", "cannot read"),
])
def test_bad_budgets_say_what_to_write(text: str, words: str) -> None:
    with pytest.raises(BudgetError, match=words) as caught:
        Budget.parse(text)
    if words == "cannot read":
        assert "50k tokens" in str(caught.value) and "$5" in str(caught.value)


def test_a_budget_cannot_be_built_wrong_either() -> None:
    with pytest.raises(BudgetError):
        Budget("rollouts", 0)
    with pytest.raises(BudgetError):
        Budget("rollouts", 2.5)
    with pytest.raises(BudgetError):
        Budget("euros", 5)  # type: ignore[arg-type]


def test_rollouts_budget_counts_started_rollouts() -> None:
    ledger = BudgetLedger(Budget("rollouts", 3))
    assert [ledger.try_start_rollout() for _ in range(5)] == [True, True, True, False, False]
    assert ledger.exhausted and ledger.spent == 3 and ledger.remaining == 0
    ledger.release_rollout()  # one never ran: it is given back
    assert not ledger.exhausted and ledger.try_start_rollout()
    # model calls are not limited by a rollouts budget
    reservation = ledger.reserve(10_000.0)
    assert reservation is not None and reservation.amount == 0
    ledger.settle(reservation, 10_000.0, tokens=1234, usd=0.5)
    summary = ledger.summary()
    assert (summary.kind, summary.spent, summary.rollouts_started) == ("rollouts", 3, 3)
    assert (summary.tokens, summary.usd, summary.overruns) == (1234, 0.5, 0)
    with pytest.raises(ValueError, match="settled twice"):
        ledger.settle(reservation, 0.0)


def test_token_budget_reserves_then_settles_what_was_used() -> None:
    ledger = BudgetLedger(Budget("tokens", 1000))
    first = ledger.reserve(600)
    assert first is not None and ledger.reserved == 600 and ledger.remaining == 400
    assert ledger.reserve(500) is None  # would pass the limit while the first is held
    assert not ledger.exhausted  # it may fit once the first settles
    ledger.settle(first, 250)
    assert (ledger.spent, ledger.reserved, ledger.remaining) == (250, 0, 750)
    second = ledger.reserve(500)
    assert second is not None
    ledger.settle(second, 0)  # a call that failed before using anything
    assert ledger.reserve(800) is None  # can never fit: nothing else is held
    assert ledger.exhausted
    assert ledger.reserve(700) is not None  # smaller calls still fit
    assert ledger.summary().tokens == 250


def test_money_budget_is_exact_in_cents() -> None:
    ledger = BudgetLedger(Budget("usd", 0.3))
    held = [ledger.reserve(0.1) for _ in range(3)]
    assert all(held) and ledger.reserve(0.01) is None
    for reservation in held:
        assert reservation is not None
        ledger.settle(reservation, 0.1)
    assert ledger.spent <= 0.3 and math.isclose(ledger.spent, 0.3)
    assert ledger.exhausted and not ledger.try_start_rollout()
    assert math.isclose(ledger.summary().usd, 0.3)


def test_overrun_is_recorded_and_flagged(caplog: pytest.LogCaptureFixture) -> None:
    ledger = BudgetLedger(Budget("tokens", 100))
    reservation = ledger.reserve(50)
    assert reservation is not None
    with caplog.at_level(logging.WARNING, logger="generator.budget"):
        ledger.settle(reservation, 120)
    assert ledger.summary().overruns == 1 and ledger.spent == 120
    assert "ignored max_tokens" in caplog.text
    assert ledger.exhausted and ledger.remaining == 0


def test_resumed_spend_is_charged() -> None:
    ledger = BudgetLedger(Budget("tokens", 1000))
    ledger.charge_stored(rollouts=4, tokens=900, usd=0.01)
    summary = ledger.summary()
    assert (summary.spent, summary.rollouts_started, summary.tokens) == (900, 4, 900)
    assert ledger.reserve(101) is None and ledger.reserve(100) is not None


Op = tuple[str, float, float]


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["tokens", "usd"]),
       limit=st.floats(min_value=0.01, max_value=5000),
       ops=st.lists(st.tuples(st.sampled_from(["reserve", "settle"]),
                              st.floats(min_value=0, max_value=800),
                              st.floats(min_value=0, max_value=1)), max_size=60))
def test_ledger_never_overspends(kind: str, limit: float, ops: list[Op]) -> None:
    if kind == "tokens":
        limit = float(max(1, round(limit)))
    budget = Budget(kind, limit)  # type: ignore[arg-type]
    ledger = BudgetLedger(budget)
    open_: list[Reservation] = []
    for op, amount, share in ops:
        if op == "reserve":
            before = ledger.spent + ledger.reserved
            reservation = ledger.reserve(amount)
            if reservation is None:
                # refused only when it would not fit
                slack = 1.0 if kind == "tokens" else 1e-6  # amounts round up to whole units
                assert before + amount > limit - slack
            else:
                assert reservation.amount >= amount
                open_.append(reservation)
        elif open_:
            reservation = open_.pop(int(share * len(open_)) % len(open_))
            ledger.settle(reservation, reservation.amount * share)
        assert ledger.spent <= limit
        assert ledger.spent + ledger.reserved <= limit * (1 + 1e-12)
        assert ledger.remaining >= 0
    for reservation in open_:
        ledger.settle(reservation, reservation.amount)
    summary = ledger.summary()
    assert summary.spent <= limit and summary.overruns == 0


def test_concurrent_tasks_and_threads_never_overspend() -> None:
    ledger = BudgetLedger(Budget("tokens", 20_000))
    used: list[float] = []
    lock = threading.Lock()

    async def rollout(seed: int) -> None:
        rng = random.Random(seed)
        while True:
            reservation = ledger.reserve(rng.randint(50, 900))
            if reservation is None:
                return
            await asyncio.sleep(0)  # the call is in flight: others reserve meanwhile
            actual = float(rng.randint(0, int(reservation.amount)))
            ledger.settle(reservation, actual)
            with lock:
                used.append(actual)

    async def many(offset: int) -> None:
        await asyncio.gather(*(rollout(offset + i) for i in range(40)))

    threads = [threading.Thread(target=asyncio.run, args=(many(100 * t),)) for t in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.spent == sum(used) <= 20_000
    assert ledger.reserved == 0
    assert ledger.summary().tokens == sum(used)


@given(st.text(max_size=300), st.text(max_size=300))
def test_token_estimate_is_conservative_and_monotone(a: str, b: str) -> None:
    estimate = estimate_tokens(a)
    encoded = a.encode("utf-8")
    ascii_chars = sum(byte < 0x80 for byte in encoded)
    assert estimate >= math.ceil(ascii_chars / 3) + MESSAGE_OVERHEAD_TOKENS
    assert estimate >= len(a) // 3  # never fewer tokens than a third of the characters
    assert estimate_tokens(a + b) >= estimate
    assert estimate_tokens(a + b) <= estimate + estimate_tokens(b)


def test_token_estimate_examples() -> None:
    assert estimate_tokens("") == MESSAGE_OVERHEAD_TOKENS
    assert estimate_tokens("abcdefg") == 3 + MESSAGE_OVERHEAD_TOKENS
    # CJK: 3 bytes a character, counted 1.5 tokens a character
    assert estimate_tokens("退款请求") == 6 + MESSAGE_OVERHEAD_TOKENS
