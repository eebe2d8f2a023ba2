"""A lookup that returns a record in a failed state of its own read as a success.

A get-status call whose body describes a payment that failed, a charge that was declined
or a check run that concluded in failure answered fine: the record's state is data about
the world (:attr:`processor.results.ResultReading.record_state`), not a fault of the
lookup. The same bodies from an action, and error envelopes that echo an id, stay faults.
Bodies follow the APIs' documented shapes.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from processor.results import read_result

# Stripe: GET /v1/charges/:id of a declined charge (trimmed to the documented members)
STRIPE_CHARGE = {
    "id": "ch_3MmlLrLkdIwHu7ix0snN0B15", "object": "charge", "amount": 1099,
    "amount_captured": 0, "captured": False, "currency": "usd",
    "customer": "cus_NbvCnObOQ42rdy", "failure_balance_transaction": None,
    "failure_code": "card_declined", "failure_message": "Your card was declined.",
    "outcome": {"network_status": "declined_by_network", "reason": "generic_decline",
                "risk_level": "normal", "seller_message": "The bank did not return any "
                "further details with this decline.", "type": "issuer_declined"},
    "paid": False, "payment_intent": "pi_3MmlLrLkdIwHu7ix0uke3Ezy", "refunded": False,
    "status": "failed"}
# Stripe: GET /v1/payouts/:id of a payout the bank returned
STRIPE_PAYOUT = {
    "id": "po_1OaFDbEcg9tTZuTgNYmX0PKB", "object": "payout", "amount": 1100,
    "arrival_date": 1680652800, "currency": "usd", "failure_balance_transaction":
    "txn_1OaFDcEcg9tTZuTgYMR25tSe", "failure_code": "account_closed",
    "failure_message": "The bank account has been closed", "method": "standard",
    "status": "failed", "type": "bank"}
# PayPal: GET /v1/payments/payment/:id (a small sale that failed)
PAYPAL_PAYMENT = {"id": "PAYID-MXQ4ZGA7Y1234567AB123456", "intent": "sale",
                  "state": "failed"}
# A payment-status endpoint of a payment service (Checkout.com-like, few keys)
PAYMENT_STATUS = {"payment_id": "pay_mbabizu24mvu3mela5njyhpit4", "status": "Declined",
                  "amount": 6540}
# A transaction lookup whose record carries its own error code
TRANSACTION = {"transaction_id": "txn_5501", "status": "FAILED",
               "error_code": "INSUFFICIENT_FUNDS"}
# GitHub: GET /repos/{owner}/{repo}/check-runs/{id} of a failed check
GITHUB_CHECK_RUN = {
    "id": 4, "head_sha": "ce587453ced02b1526dfb4cb910479d431683101", "node_id":
    "MDg6Q2hlY2tSdW40", "external_id": "", "url":
    "https://api.github.com/repos/github/hello-world/check-runs/4", "status": "completed",
    "conclusion": "failure", "started_at": "2018-05-04T01:14:52Z", "completed_at":
    "2018-05-04T01:14:52Z", "output": {"title": "Mighty Readme report", "summary":
                                       "There are 2 failures.", "annotations_count": 2},
    "name": "mighty_readme"}
# GitHub: GET /repos/{owner}/{repo}/actions/runs/{id}
GITHUB_WORKFLOW_RUN = {"id": 30433642, "name": "Build", "head_branch": "master",
                       "run_number": 562, "event": "push", "status": "completed",
                       "conclusion": "failure", "workflow_id": 159038}


@pytest.mark.parametrize(("tool", "body", "state"), [
    ("stripe_retrieve_charge", STRIPE_CHARGE, "failed"),
    ("get_payout", STRIPE_PAYOUT, "failed"),
    ("get_payment", PAYPAL_PAYMENT, "failed"),
    ("get_payment_status", PAYMENT_STATUS, "Declined"),
    ("get_transaction", TRANSACTION, "FAILED"),
    ("get_check_run", GITHUB_CHECK_RUN, "failure"),
    ("getWorkflowRun", GITHUB_WORKFLOW_RUN, "failure"),
])
def test_a_lookup_of_a_failed_record_is_a_success_with_its_state(
        tool: str, body: dict[str, Any], state: str) -> None:
    reading = read_result(orjson.dumps(body).decode(), tool=tool)
    assert (reading.condition, reading.fault, reading.world_state) == ("success", None, None)
    assert reading.record_state == state
    assert reading.has_id and not reading.failed


@pytest.mark.parametrize(("tool", "body", "condition"), [
    # the same small bodies from an action: the action failed
    ("create_payment", PAYMENT_STATUS, "error"),
    ("charge_card", TRANSACTION, "error"),
    ("execute_payment", PAYPAL_PAYMENT, "error"),
    # error envelopes that echo an id, or name the error in ``id``
    ("get_order_status", {"order_id": "o1", "error": "Order not found"}, "not_found"),
    ("get_order_status", {"order_id": "o1", "status": "not_found"}, "not_found"),
    ("get_payment", {"id": "p1", "status": "failed", "message": "Payment p1 not found"},
     "not_found"),
    ("get_droplet", {"id": "not_found", "message": "The resource you were accessing could "
                     "not be found.", "request_id": "bc3a6f6e"}, "not_found"),
    # no record named: an answer about the call
    ("get_order", {"status": "failed", "message": "Lookup failed"}, "error"),
    ("get_order", {"request_id": "r1", "status": "error", "message": "Internal error"},
     "error"),
])
def test_failures_of_the_call_stay_failures(tool: str, body: dict[str, Any],
                                            condition: str) -> None:
    reading = read_result(orjson.dumps(body).decode(), tool=tool)
    assert reading.condition == condition
    assert reading.record_state is None


@pytest.mark.parametrize(("tool", "body", "condition"), [
    # a tool wrapper's failed call that echoes the id it was asked for (review, session 7)
    ("get_order", {"order_id": "A123", "status": "error", "message": "Internal server error"},
     "error"),
    ("get_order", {"order_id": "A123", "status": "error",
                   "message": "Database connection timed out"}, "timeout"),
    ("get_user", {"user_id": "u1", "status": "failed",
                  "error": {"code": "RATE_LIMITED", "message": "Too many requests"}}, "error"),
    ("get_user", {"user_id": "u1", "status": "error", "error_code": 500,
                  "message": "upstream failure"}, "error"),
    ("fetch_document", {"document_id": "d9", "status": "error", "error": "permission denied"},
     "permission_denied"),
    ("get_weather", {"id": "req-7f3a", "status": "error", "message": "API key invalid"},
     "permission_denied"),
    ("get_order", {"id": 42, "status": "error", "error": "Service unavailable"}, "error"),
    ("get_order", {"order_id": "o1", "state": "failed", "detail": "Gateway Timeout"},
     "timeout"),
])
def test_a_wrapper_echoing_the_id_of_a_failed_call_still_failed(
        tool: str, body: dict[str, Any], condition: str) -> None:
    reading = read_result(orjson.dumps(body).decode(), tool=tool)
    assert reading.condition == condition, reading
    assert reading.record_state is None


def test_a_plain_record_has_no_record_state() -> None:
    reading = read_result(orjson.dumps({"id": 7, "status": "completed",
                                        "conclusion": "success"}).decode(),
                          tool="get_check_run")
    assert reading.plain and reading.record_state is None


def test_tau2_lookups_of_records_in_bad_states_are_successes() -> None:
    """Real tau2 answers: a cancelled flight's status, a suspended line, an overdue bill."""
    pytest.importorskip("tau2")
    from tests.support import tau2

    airline = tau2.environment("airline")
    flight, date = next((number, day) for number, flight in airline.tools.db.flights.items()
                        for day, status in flight.dates.items()
                        if status.status == "cancelled")
    reply = tau2.call(airline, "get_flight_status", {"flight_number": flight, "date": date})
    assert reply.content.strip('"') == "cancelled"
    assert read_result(reply.content, tool="get_flight_status").plain

    telecom = tau2.environment("telecom")
    line = next(line for line in telecom.tools.db.lines if line.status.value == "Suspended")
    bill = next(bill for bill in telecom.tools.db.bills if bill.status.value == "Overdue")
    for record in (line.line_id, bill.bill_id):
        reply = tau2.call(telecom, "get_details_by_id", {"id": record})
        reading = read_result(reply.content, tool="get_details_by_id")
        assert reading.condition == "success" and reading.has_id, reply.content[:120]
    # the same telecom line, its status made a failed one, as a status endpoint returns it
    body = {"line_id": line.line_id, "status": "failed", "phone_number": line.phone_number}
    reading = read_result(orjson.dumps(body).decode(), tool="get_line_status")
    assert reading.condition == "success" and reading.record_state == "failed"
