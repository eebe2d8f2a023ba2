"""Short informational results are answers, not failures; real failures stay failures.

A lookup of a policy page, a fare rule, a product, a ticket or a charge may say
"cannot", "not allowed", "declined", "failed" or "error" about the world, not about the
call: "Refunds are accepted within 30 days.", "Late cancellations are not allowed.",
``"status": "cancelled"`` in an order looked up, a retrieved charge whose
``failure_code`` is ``card_declined``. Each case is a real-looking answer of a named tool
(commerce, airline, ticketing, GitHub, payments, tau2-bench shapes); the failures beside
them are what the same APIs answer when the call did go wrong, phrased as close to the
successes as they come ("Cannot cancel reservation within 24 hours of departure",
"Refund declined: outside the 30 day return window").
"""

from __future__ import annotations

import orjson
import pytest

from processor._result_words import rule_statement
from processor.results import read_result


def _j(value: object) -> str:
    return orjson.dumps(value).decode()


# (id, tool, body)
SUCCESSES: list[tuple[str, str, str]] = [
    # ---- commerce
    ("refund-window", "get_return_policy", "Refunds are accepted within 30 days."),
    ("return-within", "get_return_policy",
     "Items must be returned within 30 days of delivery in their original packaging."),
    ("final-sale-label", "get_product_policy", "Returns: not accepted for final-sale items"),
    ("product-description", "get_product_details", _j({
        "product_id": "8310926033", "name": "Linen shirt", "price": 39.0,
        "description": "Returns: not accepted for final-sale items. Cannot be exchanged.",
        "available": True})),
    ("order-cancelled-data", "get_order_details", _j({
        "order_id": "#W2378156", "user_id": "yusuf_rossi_9620", "status": "cancelled",
        "items": [{"name": "Headphones", "item_id": "4202497723", "price": 342.81}],
        "payment_history": [{"transaction_type": "payment", "amount": 342.81,
                             "payment_method_id": "credit_card_9513926"},
                            {"transaction_type": "refund", "amount": 342.81,
                             "payment_method_id": "credit_card_9513926"}],
        "cancel_reason": "no longer needed"})),
    ("order-delivered-data", "get_order_details", _j({
        "order_id": "#W4817420", "status": "delivered", "fulfillments": [
            {"tracking_id": ["683806392237"], "item_ids": ["6777246137"]}]})),
    ("orders-list", "list_orders", _j([{"order_id": "#W1", "status": "cancelled"},
                                       {"order_id": "#W2", "status": "failed"}])),
    ("only-pending", "get_cancellation_policy", "Orders can only be cancelled while pending."),
    ("cancelled-cannot-modify", "get_policy", "Cancelled orders cannot be modified or "
                                              "refunded."),
    ("ships-next-day", "get_shipping_info", "Orders placed after 2pm ship the next business "
                                            "day."),
    ("lookup-reports-state", "check_order_status",
     "Your order has shipped and can no longer be cancelled online; contact support."),
    ("failed-deliveries", "get_delivery_policy",
     "Failed deliveries are retried the next business day."),
    # ---- airline
    ("free-cancellation", "get_fare_rules", "Cancellation is free up to 24h before "
                                            "departure."),
    ("basic-economy", "get_fare_rules", "Basic economy: changes not permitted. Refunds not "
                                        "possible."),
    ("no-refund-24h", "get_fare_rules", "Tickets cannot be refunded within 24 hours of "
                                        "departure."),
    ("bag-weight", "get_baggage_policy", "Bags over 23kg are rejected at check-in."),
    ("non-refundable", "get_fare_rules", "Non-refundable fares are not eligible for refunds."),
    ("flight-cancelled", "get_flight_status", "cancelled"),
    ("tau2-reservation", "get_reservation_details", _j({
        "reservation_id": "4WQ150", "user_id": "chen_jackson_3290", "origin": "DFW",
        "destination": "LAX", "flight_type": "round_trip", "cabin": "business",
        "flights": [{"flight_number": "HAT170", "date": "2024-05-22", "price": 883}],
        "payment_history": [{"payment_id": "gift_card_3576581", "amount": 4986}],
        "created_at": "2024-05-02T05:03:00", "total_baggages": 5, "nonfree_baggages": 0,
        "insurance": "no", "status": "cancelled"})),
    ("late-cancellations", "get_ticket_policy", "Late cancellations are not allowed."),
    # ---- ticketing
    ("zendesk-closed-ticket", "get_ticket", _j({"ticket": {
        "id": 35436, "status": "closed", "subject": "Refund not processed",
        "description": "The refund failed twice and I was told access is denied.",
        "priority": "high", "requester_id": 20978392}})),
    ("closed-tickets-rule", "search_help_center",
     "Closed tickets cannot be reopened. Create a follow-up ticket instead."),
    ("jira-issue-done", "get_issue", _j({"id": "10002", "key": "ED-1", "fields": {
        "summary": "Error: timeout when exporting", "status": {"name": "Done"},
        "resolution": {"name": "Won't Do"}}})),
    # ---- GitHub
    ("github-issue-locked", "get_issue", _j({
        "number": 1347, "title": "Error: permission denied when pushing", "state": "closed",
        "locked": True, "active_lock_reason": "resolved", "comments": 12})),
    ("github-pr-merged", "get_pull_request", _j({
        "number": 7, "state": "closed", "merged": True, "mergeable": None,
        "title": "Fix timeout handling", "head": {"ref": "fix-timeouts"}})),
    ("github-checks-clean", "list_check_runs", _j({"total_count": 1, "check_runs": [
        {"id": 4, "name": "lint", "status": "completed", "conclusion": "success",
         "output": {"title": "No errors found", "summary": "0 errors, 0 warnings"}}]})),
    ("force-push-rule", "get_branch_protection",
     "Force pushes are not allowed on protected branches."),
    ("no-errors", "run_checks", "No errors found"),
    ("error-rate-zero", "get_metrics", "error_rate: 0"),
    ("error-codes-doc", "search_docs", "Error codes: each one links to its page of causes."),
    # ---- payments
    ("stripe-pi-canceled", "retrieve_payment_intent", _j({
        "id": "pi_3MtwBwLkdIwHu7ix28a3tqPa", "object": "payment_intent", "amount": 2000,
        "status": "canceled", "cancellation_reason": "requested_by_customer",
        "last_payment_error": None})),
    ("stripe-failed-charge-looked-up", "retrieve_charge", _j({
        "id": "ch_3MrVHOLkdIwHu7ix0d1Ydxqz", "object": "charge", "amount": 1099,
        "captured": False, "failure_code": "card_declined",
        "failure_message": "Your card was declined.", "paid": False, "status": "failed"})),
    ("refund-requests-rule", "get_refund_policy", "Refund requests are declined after 30 "
                                                  "days."),
    ("policy-envelope", "get_policy", _j({"status": "ok", "message":
                                          "Chargebacks are not allowed on gift cards."})),
    # ---- tau2 answers
    ("tau2-roaming", "enable_roaming", "Roaming enabled successfully"),
    ("tau2-transfer", "transfer_to_human_agents", "Transfer successful"),
]

# (id, tool, body, condition, fault)
FAILURES: list[tuple[str, str, str, str, str]] = [
    # ---- commerce
    ("tau2-non-pending", "cancel_pending_order", "Error: non-pending order cannot be "
                                                 "cancelled", "error", "conflict"),
    ("shipped-refusal", "cancel_order", "This order has shipped and can no longer be "
                                        "cancelled", "error", "conflict"),
    ("order-not-found", "get_order_details", "Error: order not found", "not_found",
     "not_found"),
    ("refund-declined", "issue_refund", "Refund declined: outside the 30 day return window",
     "error", "declined"),
    ("simulated-world-not-allowed", "cancel_pending_order", _j({
        "error": "not_allowed", "status": "delivered", "message": "The order #W2938475 is "
        "delivered, not pending: it cannot be cancelled."}), "error", "conflict"),
    ("shopify-fulfilled", "cancel_order", _j({"errors": "Cannot cancel an order that has "
                                                        "been fulfilled"}),
     "error", "conflict"),
    ("woo-404", "get_order", _j({"code": "woocommerce_rest_shop_order_invalid_id",
                                 "message": "Invalid ID.", "data": {"status": 404}}),
     "not_found", "not_found"),
    ("payment-failed-text", "pay_order", "Payment failed.", "error", "error"),
    ("cart-empty-error", "checkout", _j({"success": False, "message":
                                         "Orders cannot be placed with an empty cart."}),
     "error", "error"),
    # ---- airline
    ("cancel-within-24h", "cancel_reservation",
     "Cannot cancel reservation within 24 hours of departure", "error", "declined"),
    ("reservation-missing", "get_reservation_details", "Error: Reservation ZZZ999 not found",
     "not_found", "not_found"),
    ("gift-card-balance", "update_reservation_flights", "Error: Gift card balance is not "
                                                        "enough", "error", "error"),
    ("not-allowed-change", "update_reservation_flights",
     "Error: Basic economy flights cannot be modified", "error", "error"),
    ("no-seats", "book_reservation", "Error: Not enough seats on flight HAT170",
     "error", "declined"),
    # ---- ticketing
    ("zendesk-closed", "update_ticket", _j({
        "error": "RecordInvalid", "description": "Record validation errors", "details": {
            "status": [{"description": "Status: closed prevents ticket update"}]}}),
     "error", "conflict"),
    ("ticket-locked", "add_comment", "You cannot comment on this ticket: it is locked.",
     "error", "conflict"),
    ("jira-transition", "transition_issue", _j({
        "errorMessages": ["Transition id '21' is not valid for the current state of this "
                          "issue."], "errors": {}}), "error", "conflict"),
    ("not-authorized", "get_ticket", _j({"error": "Forbidden", "description":
                                         "You do not have access to this ticket"}),
     "permission_denied", "permission_denied"),
    # ---- GitHub
    ("github-bad-credentials", "get_issue", _j({
        "message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}),
     "permission_denied", "permission_denied"),
    ("github-not-found", "get_repo", _j({
        "message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
     "not_found", "not_found"),
    ("github-not-mergeable", "merge_pull_request", _j({
        "message": "Pull Request is not mergeable",
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}),
     "error", "error"),
    ("github-validation", "create_issue", _j({
        "message": "Validation Failed", "errors": [{"resource": "Issue", "field": "title",
                                                    "code": "missing_field"}],
        "documentation_url": "https://docs.github.com/rest"}), "error", "invalid"),
    ("github-rate-limit", "list_issues", _j({
        "message": "API rate limit exceeded for 203.0.113.7.",
        "documentation_url": "https://docs.github.com/rest/rate-limit"}),
     "error", "rate_limited"),
    # ---- payments
    ("stripe-declined-charge", "create_charge", _j({
        "id": "ch_3MrVHOLkdIwHu7ix0d1Ydxqz", "object": "charge", "amount": 1099,
        "captured": False, "failure_code": "card_declined",
        "failure_message": "Your card was declined.", "paid": False, "status": "failed"}),
     "error", "declined"),
    ("stripe-unexpected-state", "cancel_payment_intent", _j({"error": {
        "code": "payment_intent_unexpected_state", "type": "invalid_request_error",
        "message": "You cannot cancel this PaymentIntent because it has a status of "
                   "succeeded."}}), "error", "conflict"),
    ("stripe-missing", "retrieve_customer", _j({"error": {
        "code": "resource_missing", "type": "invalid_request_error",
        "message": "No such customer: 'cus_NffrFeUfNV2Hib'"}}), "not_found", "not_found"),
    ("paypal-voided", "void_authorization", _j({
        "name": "UNPROCESSABLE_ENTITY", "message": "The requested action could not be "
        "performed, semantically incorrect, or failed business validation.",
        "details": [{"issue": "PREVIOUSLY_VOIDED", "description": "Authorization has been "
                     "previously voided and hence cannot be voided again."}]}),
     "error", "conflict"),
    ("refund-too-late", "create_refund", "Refunds are not allowed after 30 days for this "
                                         "order.", "error", "declined"),
    # ---- plain texts and credentials
    ("auth-not-provided", "get_policy", _j({"detail": "Authentication credentials were not "
                                                      "provided."}),
     "permission_denied", "permission_denied"),
    ("access-denied", "get_invoice", "Access denied", "permission_denied",
     "permission_denied"),
    ("rate-limit-text", "search_flights", "Too many requests, slow down.", "error",
     "rate_limited"),
    ("timeout-text", "get_reservation_details", "Request timed out after 30s", "timeout",
     "timeout"),
    ("tau2-customer-missing", "get_customer_by_id", "Error: Customer with ID C9002 not found",
     "not_found", "not_found"),
    ("tau2-line-active", "suspend_line", "Error: Line must be active to suspend", "error",
     "conflict"),
]


def test_the_tables_are_broad() -> None:
    assert len(SUCCESSES) >= 30 and len(FAILURES) >= 30


@pytest.mark.parametrize(("tool", "body"), [case[1:] for case in SUCCESSES],
                         ids=[case[0] for case in SUCCESSES])
def test_informational_answers_are_successes(tool: str, body: str) -> None:
    reading = read_result(body, tool=tool)
    assert (reading.condition, reading.fault, reading.world_state) == ("success", None, None), \
        reading
    assert reading.plain


@pytest.mark.parametrize(("tool", "body", "condition", "fault"),
                         [case[1:] for case in FAILURES], ids=[case[0] for case in FAILURES])
def test_real_failures_stay_failures(tool: str, body: str, condition: str, fault: str) -> None:
    reading = read_result(body, tool=tool)
    assert (reading.condition, reading.fault) == (condition, fault), reading
    assert reading.failed and reading.evidence


@pytest.mark.parametrize(("text", "rule"), [
    ("Refunds are accepted within 30 days.", True),
    ("Late cancellations are not allowed.", True),
    ("Basic economy: changes not permitted.", True),
    ("Cancellation is free up to 24h before departure.", True),
    ("Bags over 23kg are rejected at check-in.", True),
    ("Refunds are not allowed for order #W2378156.", False),  # one record
    ("This order cannot be cancelled.", False),
    ("You cannot cancel within 24 hours of departure.", False),  # the caller
    ("Cannot cancel reservation within 24 hours of departure", False),
    ("Authentication credentials were not provided.", False),  # what happened, not a rule
    ("Refund declined: outside the 30 day return window", False),  # a verdict's label
    ("Error: refunds are accepted within 30 days", False),
])
def test_what_reads_as_a_rule(text: str, rule: bool) -> None:
    assert rule_statement(text) is rule


@pytest.mark.parametrize("case", [case for case in SUCCESSES if not case[2].startswith(
    ("{", "["))], ids=lambda case: case[0])
def test_a_rule_read_without_a_tool_name_is_not_taken_for_data(
        case: tuple[str, str, str]) -> None:
    """Without the tool's name nothing says it only reads: a text that states a rule may
    be the refusal of an action, so it reads as its words say (the span's tool decides
    whenever there is one), and the same text from a named lookup is a success."""
    assert read_result(case[2], tool=case[1]).condition == "success"


@pytest.mark.parametrize(("tool", "text"), [
    (None, "Bookings cannot be changed within 24 hours of departure."),
    (None, "Late cancellations are not allowed."),
    ("checkout", "Your order has shipped and can no longer be cancelled."),
    ("ship_order", "Order #W123 has already been shipped and cannot be modified."),
    ("hold_seat", "Bookings cannot be changed within 24 hours of departure."),
    ("file_claim", "Trades are not permitted outside market hours."),
])
def test_a_tool_not_named_as_a_reader_is_refused_by_a_rule(tool: str | None,
                                                           text: str) -> None:
    """Only a name that says the tool reads (get, search, list, ...) makes a rule data: a
    verb the catalogue does not know may be an action, and no name says nothing."""
    assert read_result(text, tool=tool).condition != "success"


def test_an_action_stating_a_rule_is_refused_by_it() -> None:
    """The rule reading is for tools that do not act: an action answering with the rule
    that stops it was refused by that rule."""
    for tool, failed in (("get_ticket_policy", False), ("cancel_booking", True)):
        reading = read_result("Late cancellations are not allowed.", tool=tool)
        assert reading.failed is failed, (tool, reading)


@pytest.mark.parametrize("text", ["No payments failed.", "None failed.",
                                  "Nothing was declined.", "Zero transactions declined.",
                                  "No items rejected."])
def test_a_count_of_no_failures_is_a_success(text: str) -> None:
    assert read_result(text, tool="process_refund").condition == "success"
    assert read_result(text).condition == "success"
