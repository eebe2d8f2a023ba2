"""Reading tool results like a person: real answers of real APIs, failures and successes.

The bodies below are the shapes the APIs document (payments, commerce, ticketing, chat,
cloud, GitHub, GraphQL, JSON:API, MCP); tau2-bench's answers are produced live by its
airline and telecom environments (tests/support/tau2.py), exactly as an agent would see
them. Negatives are real successful bodies that mention errors, failures or "not found"
in their data and must still read as success.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from processor.results import CONDITIONS, FAULTS, ResultReading, read_result
from processor.tool_verbs import is_action, reads_a_record
from tests.support.tau2 import call, environment


def _j(value: object) -> str:
    return orjson.dumps(value).decode()


# (id, body, condition, world_state, fault)
FAILURES: list[tuple[str, str, str, str | None, str | None]] = [
    # ---- payments
    ("stripe-card-declined", _j({"error": {
        "charge": "ch_3MmlLrLkdIwHu7ix0snN0B15", "code": "card_declined",
        "decline_code": "insufficient_funds", "doc_url": "https://stripe.com/docs/error-codes/card-declined",
        "message": "Your card has insufficient funds.", "type": "card_error"}}),
     "error", None, "declined"),
    ("stripe-resource-missing", _j({"error": {
        "code": "resource_missing", "doc_url": "https://stripe.com/docs/error-codes/resource-missing",
        "message": "No such customer: 'cus_NffrFeUfNV2Hib'", "param": "id",
        "type": "invalid_request_error"}}), "not_found", "missing", "not_found"),
    ("stripe-already-refunded", _j({"error": {
        "code": "charge_already_refunded",
        "message": "Charge ch_1Nfb2v2eZvKYlo2C has already been refunded.",
        "type": "invalid_request_error"}}), "error", "already_acted_on", "conflict"),
    ("stripe-bad-api-key", _j({"error": {
        "message": "Invalid API Key provided: sk_test_********************1234",
        "type": "invalid_request_error"}}), "permission_denied", None, "permission_denied"),
    ("stripe-rate-limit", _j({"error": {
        "code": "rate_limit", "message": "Too many requests hit the API too quickly.",
        "type": "invalid_request_error"}}), "error", None, "rate_limited"),
    ("stripe-failed-charge-object", _j({
        "id": "ch_3MrVHOLkdIwHu7ix0d1Ydxqz", "object": "charge", "amount": 1099,
        "captured": False, "failure_code": "card_declined",
        "failure_message": "Your card was declined.", "paid": False, "status": "failed"}),
     "error", None, "declined"),
    ("paypal-resource-not-found", _j({
        "name": "RESOURCE_NOT_FOUND", "details": [{
            "issue": "INVALID_RESOURCE_ID",
            "description": "Specified resource ID does not exist. Please check the resource "
                           "ID and try again."}],
        "message": "The specified resource does not exist.", "debug_id": "90957fca61718",
        "links": [{"href": "https://developer.paypal.com/docs/api/orders/v2/#error-"
                           "INVALID_RESOURCE_ID", "rel": "information_link"}]}),
     "not_found", "missing", "not_found"),
    ("paypal-already-captured", _j({
        "name": "UNPROCESSABLE_ENTITY", "details": [{
            "issue": "ORDER_ALREADY_CAPTURED",
            "description": "Order already captured. If 'intent=CAPTURE' only one capture per "
                           "order is allowed."}],
        "message": "The requested action could not be performed, semantically incorrect, "
                   "or failed business validation.", "debug_id": "e0fd8e2bc9d0"}),
     "error", "already_acted_on", "conflict"),
    ("adyen-validation", _j({"status": 422, "errorCode": "167",
                             "message": "Original pspReference required for this operation",
                             "errorType": "validation", "pspReference": "881234567890123"}),
     "error", None, "invalid"),
    ("adyen-refused", _j({"pspReference": "8835511210681250", "resultCode": "Refused",
                          "refusalReason": "Not enough balance",
                          "refusalReasonCode": "51"}), "error", None, "declined"),
    ("square-not-found", _j({"errors": [{
        "category": "INVALID_REQUEST_ERROR", "code": "NOT_FOUND",
        "detail": "Could not find payment with id: 9XwZk3cKoAnGy2U6E1XuuMoJ8iZY"}]}),
     "not_found", "missing", "not_found"),
    ("square-card-declined", _j({"errors": [{
        "code": "GENERIC_DECLINE", "detail": "Authorization error: 'GENERIC_DECLINE'",
        "category": "PAYMENT_METHOD_ERROR"}]}), "error", None, "declined"),
    ("braintree-validation", _j({"errors": [{"message": "Amount is required.",
                                              "attribute": "amount", "code": "81502"}]}),
     "error", None, "invalid"),
    # ---- commerce
    ("shopify-rest-not-found", _j({"errors": "Not Found"}), "not_found", "missing", "not_found"),
    ("shopify-rest-validation", _j({"errors": {"title": ["can't be blank"]}}),
     "error", None, "invalid"),
    ("shopify-rest-bad-token", _j({
        "errors": "[API] Invalid API key or access token (unrecognized login or wrong "
                  "password)"}), "permission_denied", None, "permission_denied"),
    ("shopify-graphql-user-errors", _j({"data": {"orderCancel": {
        "job": None, "orderCancelUserErrors": [], "userErrors": [{
            "field": ["orderId"], "message": "Order has already been cancelled"}]}}}),
     "error", "already_acted_on", "conflict"),
    ("shopify-graphql-throttled", _j({"errors": [{
        "message": "Throttled", "extensions": {"code": "THROTTLED", "documentation":
                                               "https://shopify.dev/api/usage/rate-limits"}}]}),
     "error", None, "rate_limited"),
    ("woocommerce-invalid-id", _j({"code": "woocommerce_rest_shop_order_invalid_id",
                                   "message": "Invalid ID.", "data": {"status": 404}}),
     "not_found", "missing", "not_found"),
    ("bigcommerce-not-found", _j({
        "status": 404, "title": "The requested resource was not found.",
        "type": "https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes",
        "errors": {}}), "not_found", "missing", "not_found"),
    ("commercetools-not-found", _j({
        "statusCode": 404, "message": "The Resource with ID 'cd32d2bb' was not found.",
        "errors": [{"code": "ResourceNotFound",
                    "message": "The Resource with ID 'cd32d2bb' was not found."}]}),
     "not_found", "missing", "not_found"),
    ("commercetools-conflict", _j({
        "statusCode": 409, "message": "Object 1d2c has a different version than expected. "
                                      "Expected: 2 - Actual: 3.",
        "errors": [{"code": "ConcurrentModification", "currentVersion": 3}]}),
     "error", None, "conflict"),
    ("amazon-sp-api-invalid", _j({"errors": [{
        "code": "InvalidInput", "message": "Invalid Input", "details": ""}]}),
     "error", None, "invalid"),
    ("text-unknown-order-id", "Error: unknown order id", "not_found", "missing", "not_found"),
    ("json-unknown-product-number", _j({"error": "Unknown product number 8812"}),
     "not_found", "missing", "not_found"),
    ("text-unknown-id-format-is-not-missing", "Error: Unknown customer ID format: Q1",
     "error", None, "error"),
    ("salesforce-not-found-list", _j([{"message": "The requested resource does not exist",
                                       "errorCode": "NOT_FOUND"}]),
     "not_found", "missing", "not_found"),
    ("salesforce-session-expired", _j([{"message": "Session expired or invalid",
                                        "errorCode": "INVALID_SESSION_ID"}]),
     "permission_denied", None, "permission_denied"),
    ("hubspot-object-not-found", _j({
        "status": "error", "message": "Object not found.  objectId are usually numeric.",
        "correlationId": "c6d5a2f1-2d5c", "category": "OBJECT_NOT_FOUND"}),
     "not_found", "missing", "not_found"),
    # ---- ticketing and work tracking
    ("jira-issue-missing", _j({
        "errorMessages": ["Issue does not exist or you do not have permission to see it."],
        "errors": {}}), "not_found", "missing", "not_found"),
    ("jira-field-errors", _j({"errorMessages": [],
                              "errors": {"summary": "You must specify a summary of the issue."}}),
     "error", None, "invalid"),
    ("zendesk-record-not-found", _j({"error": "RecordNotFound", "description": "Not found"}),
     "not_found", "missing", "not_found"),
    ("zendesk-duplicate-value", _j({
        "error": "RecordInvalid", "description": "Record validation errors",
        "details": {"email": [{"description": "Email: ana@example.com is already being used "
                                              "by another user", "error": "DuplicateValue"}]}}),
     "error", None, "invalid"),
    ("zendesk-forbidden", _j({"error": "Forbidden",
                              "description": "You do not have access to this page. Please "
                                             "contact the account owner of this help desk "
                                             "for further help."}),
     "permission_denied", None, "permission_denied"),
    ("freshdesk-validation", _j({"description": "Validation failed", "errors": [{
        "field": "email", "message": "It should be a valid email address",
        "code": "invalid_value"}]}), "error", None, "invalid"),
    ("servicenow-no-record", _j({"error": {
        "message": "No Record found",
        "detail": "Record doesn't exist or ACL restricts the record retrieval"},
        "status": "failure"}), "not_found", "missing", "not_found"),
    ("linear-graphql-entity", _j({"errors": [{
        "message": "Entity not found", "path": ["issue"], "extensions": {
            "type": "invalid input", "code": "INPUT_ERROR",
            "userPresentableMessage": "Could not find referenced Issue."}}], "data": None}),
     "not_found", "missing", "not_found"),
    ("intercom-error-list", _j({"type": "error.list", "request_id": "000kp5lumdgo0fi3kt20",
                                "errors": [{"code": "not_found",
                                            "message": "Resource Not Found"}]}),
     "not_found", "missing", "not_found"),
    ("notion-object-not-found", _j({
        "object": "error", "status": 404, "code": "object_not_found",
        "message": "Could not find page with ID: 59833787-2cf9-4fdf-8782-e53db20768a5."}),
     "not_found", "missing", "not_found"),
    # ---- GitHub
    ("github-not-found", _j({"message": "Not Found", "documentation_url":
                             "https://docs.github.com/rest/issues/issues#get-an-issue",
                             "status": "404"}), "not_found", "missing", "not_found"),
    ("github-bad-credentials", _j({"message": "Bad credentials",
                                   "documentation_url": "https://docs.github.com/rest"}),
     "permission_denied", None, "permission_denied"),
    ("github-rate-limit", _j({"message": "API rate limit exceeded for 203.0.113.7. (But "
                                         "here's the good news: Authenticated requests get a "
                                         "higher rate limit.)",
                              "documentation_url": "https://docs.github.com/rest/overview/"
                                                   "resources-in-the-rest-api#rate-limiting"}),
     "error", None, "rate_limited"),
    ("github-validation-failed", _j({
        "message": "Validation Failed", "errors": [{"resource": "Issue", "code": "missing_field",
                                                    "field": "title"}],
        "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue"}),
     "error", None, "invalid"),
    ("github-ref-exists", _j({"message": "Reference already exists", "documentation_url":
                              "https://docs.github.com/rest/git/refs#create-a-reference"}),
     "error", "already_acted_on", "conflict"),
    ("github-not-mergeable", _j({"message": "Pull Request is not mergeable",
                                 "documentation_url": "https://docs.github.com/rest/pulls/"
                                                      "pulls#merge-a-pull-request"}),
     "error", None, "error"),
    # ---- chat, messaging, cloud, model APIs
    ("slack-channel-not-found", _j({"ok": False, "error": "channel_not_found"}),
     "not_found", "missing", "not_found"),
    ("slack-not-authed", _j({"ok": False, "error": "not_authed"}),
     "permission_denied", None, "permission_denied"),
    ("slack-ratelimited", _j({"ok": False, "error": "ratelimited"}),
     "error", None, "rate_limited"),
    ("slack-already-in-channel", _j({"ok": False, "error": "already_in_channel"}),
     "error", "already_acted_on", "conflict"),
    ("discord-unknown-channel", _j({"message": "Unknown Channel", "code": 10003}),
     "not_found", "missing", "not_found"),
    ("discord-rate-limited", _j({"message": "You are being rate limited.",
                                 "retry_after": 64.57, "global": False}),
     "error", None, "rate_limited"),
    ("twilio-not-found", _j({
        "code": 20404, "message": "The requested resource /2010-04-01/Accounts/AC123/Messages/"
                                  "SM123.json was not found",
        "more_info": "https://www.twilio.com/docs/errors/20404", "status": 404}),
     "not_found", "missing", "not_found"),
    ("twilio-undelivered", _j({
        "sid": "SM1f0e8ae6ade43cb3c0ce4525424e404f", "status": "undelivered",
        "error_code": 30003, "error_message": "Unreachable destination handset",
        "to": "+15558675310"}), "error", None, "error"),
    ("sendgrid-bad-grant", _j({"errors": [{
        "message": "The provided authorization grant is invalid, expired, or revoked",
        "field": None, "help": None}]}), "permission_denied", None, "permission_denied"),
    ("google-not-found", _j({"error": {"code": 404, "message": "Requested entity was not found.",
                                       "status": "NOT_FOUND"}}), "not_found", "missing",
     "not_found"),
    ("google-permission", _j({"error": {"code": 403,
                                        "message": "The caller does not have permission",
                                        "status": "PERMISSION_DENIED"}}),
     "permission_denied", None, "permission_denied"),
    ("google-deadline", _j({"error": {"code": 504, "message": "Deadline expired before "
                                                             "operation could complete.",
                                      "status": "DEADLINE_EXCEEDED"}}),
     "timeout", None, "timeout"),
    ("google-already-exists", _j({"error": {"code": 409, "message": "Requested entity already "
                                                                  "exists",
                                            "status": "ALREADY_EXISTS"}}),
     "error", "already_acted_on", "conflict"),
    ("google-quota", _j({"error": {"code": 429, "message": "Quota exceeded for quota metric "
                                                         "'Read requests'",
                                   "status": "RESOURCE_EXHAUSTED"}}),
     "error", None, "rate_limited"),
    ("aws-resource-not-found", _j({"__type": "com.amazonaws.dynamodb.v20120810#"
                                             "ResourceNotFoundException",
                                   "message": "Requested resource not found"}),
     "not_found", "missing", "not_found"),
    ("aws-throttling", _j({"__type": "ThrottlingException", "message": "Rate exceeded"}),
     "error", None, "rate_limited"),
    ("aws-access-denied", _j({"Error": {"Code": "AccessDenied", "Message": "Access Denied"}}),
     "permission_denied", None, "permission_denied"),
    ("openai-invalid-api-key", _j({"error": {
        "message": "Incorrect API key provided: sk-abc. You can find your API key at "
                   "https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}),
     "permission_denied", None, "permission_denied"),
    ("anthropic-not-found", _j({"type": "error", "error": {
        "type": "not_found_error", "message": "The requested resource could not be found."}}),
     "not_found", "missing", "not_found"),
    ("airtable-not-found", _j({"error": {"type": "NOT_FOUND",
                                         "message": "Could not find what you are looking for"}}),
     "not_found", "missing", "not_found"),
    ("drf-not-found", _j({"detail": "Not found."}), "not_found", "missing", "not_found"),
    ("drf-unauthenticated", _j({"detail": "Authentication credentials were not provided."}),
     "permission_denied", None, "permission_denied"),
    ("fastapi-422", _j({"detail": [{"loc": ["body", "order_id"], "msg": "field required",
                                    "type": "value_error.missing"}]}),
     "error", None, "invalid"),
    ("rfc7807-problem", _j({"type": "https://example.com/probs/out-of-credit",
                            "title": "You do not have enough credit.", "status": 403,
                            "detail": "Your current balance is 30, but that costs 50.",
                            "instance": "/account/12345/msgs/abc"}),
     "permission_denied", None, "permission_denied"),
    ("jsonapi-errors", _j({"errors": [{"status": "422", "source": {"pointer": "/data/attributes/"
                                                                            "firstName"},
                                       "title": "Invalid Attribute",
                                       "detail": "First name must contain at least two "
                                                 "characters."}]}),
     "error", None, "invalid"),
    ("graphql-forbidden", _j({"errors": [{"message": "Not authorized to access this order",
                                          "extensions": {"code": "FORBIDDEN"}}],
                              "data": {"order": None}}),
     "permission_denied", None, "permission_denied"),
    ("json-rpc-method-not-found", _j({"jsonrpc": "2.0", "error": {"code": -32601,
                                                                  "message": "Method not found"},
                                      "id": 1}), "error", None, "invalid"),
    ("mcp-is-error", _j({"content": [{"type": "text", "text": "Error: order 1234 not found"}],
                         "isError": True}), "not_found", "missing", "not_found"),
    ("mcp-error-hidden-in-text", _j({"content": [{"type": "text",
                                                  "text": '{"error": "timeout"}'}]}),
     "timeout", None, "timeout"),
    # ---- generic tool conventions
    ("http-code-in-json", _j({"code": 404}), "not_found", "missing", "not_found"),
    ("status-code-in-json", _j({"statusCode": 403}), "permission_denied", None,
     "permission_denied"),
    ("status-500-in-json", _j({"status": 500}), "error", None, "server_error"),
    ("status-not-found-envelope", _j({"status": "not_found", "message": "Order not found"}),
     "not_found", "missing", "not_found"),
    ("jsend-error", _j({"status": "error", "message": "Unable to communicate with database"}),
     "error", None, "error"),
    ("jsend-fail", _j({"status": "fail", "data": {"title": "A title is required"}}),
     "error", None, "error"),
    ("success-false", _j({"success": False, "message": "Could not cancel the order: it has "
                                                       "already shipped."}),
     "error", "already_acted_on", "conflict"),
    ("status-timeout", _j({"status": "timeout", "elapsed_ms": 30000}), "timeout", None,
     "timeout"),
    ("gateway-timeout-code", _j({"code": 504, "message": "Gateway Timeout"}), "timeout", None,
     "timeout"),
    ("stale-flag", _j({"order_id": "A-1", "status": "shipped", "stale": True,
                       "as_of": "2025-05-28T09:00:00Z"}), "stale_result", None, "stale"),
    ("stale-warning", _j({"order_id": "A-1", "status": "shipped",
                          "warning": "Served from cache; data may be out of date."}),
     "stale_result", None, "stale"),
    ("error-text", "Error: Order not found", "not_found", "missing", "not_found"),
    ("exception-text", "ValueError: amount must be positive", "error", None, "invalid"),
    ("traceback-text", "Traceback (most recent call last):\n  File \"tool.py\", line 3, in "
                       "run\nKeyError: 'order_id'", "error", None, "error"),
    ("http-status-line", "HTTP 503 Service Unavailable", "error", None, "server_error"),
    ("html-gateway-error", "<html><head><title>502 Bad Gateway</title></head><body><center>"
                           "<h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>"
                           "</html>", "error", None, "server_error"),
    ("plain-timeout", "Request timed out after 30 seconds", "timeout", None, "timeout"),
    ("plain-access-denied", "Access denied for user support-bot", "permission_denied", None,
     "permission_denied"),
    ("truncated-json", '{"order_id": "A-1", "status": "shipped", "eta": 2025-06-',
     "malformed_result", None, "malformed"),
    ("python-repr", "{'status': 'processing', 'warehouse': 'RNO-2'}", "malformed_result", None,
     "malformed"),
]


@pytest.mark.parametrize(("body", "condition", "world", "fault"),
                         [case[1:] for case in FAILURES], ids=[case[0] for case in FAILURES])
def test_failures_read_from_the_body(body: str, condition: str, world: str | None,
                                     fault: str | None) -> None:
    reading = read_result(body)
    assert (reading.condition, reading.world_state, reading.fault) == (condition, world, fault)
    assert reading.failed and not reading.plain and reading.evidence


# (id, body, world_state): real successful answers; they must read as success
SUCCESSES: list[tuple[str, str, str | None]] = [
    ("stripe-charge-succeeded", _j({
        "id": "ch_3MmlLrLkdIwHu7ix0snN0B15", "object": "charge", "amount": 1099,
        "captured": True, "failure_code": None, "failure_message": None,
        "outcome": {"network_status": "approved_by_network", "reason": None,
                    "risk_level": "normal", "seller_message": "Payment complete.",
                    "type": "authorized"},
        "paid": True, "refunded": False, "status": "succeeded"}), None),
    ("stripe-refund", _j({"id": "re_1Nispe2eZvKYlo2Cd31jOCgZ", "object": "refund",
                          "amount": 1000, "charge": "ch_1NirD82eZvKYlo2CIvbtLWuY",
                          "reason": None, "status": "succeeded"}), None),
    ("stripe-webhook-event-about-a-failure", _j({
        "id": "evt_1NG8Du2eZvKYlo2CUI79vXWy", "object": "event", "type": "charge.failed",
        "data": {"object": {"id": "ch_1", "status": "failed"}}}), None),
    ("paypal-capture-completed", _j({"id": "5O190127TN364715T", "status": "COMPLETED",
                                     "links": [{"href": "https://api.paypal.com/v2/checkout/"
                                                        "orders/5O190127TN364715T",
                                                "rel": "self", "method": "GET"}]}), None),
    ("adyen-authorised", _j({"pspReference": "993617895204576J", "resultCode": "Authorised",
                             "merchantReference": "order-123"}), None),
    ("square-payment", _j({"payment": {"id": "R2B3Z8WMVt3EAmzYWLZvz7Y69EbZY",
                                       "status": "COMPLETED", "amount_money": {
                                           "amount": 200, "currency": "USD"}}}), None),
    ("shopify-order-paid", _j({"order": {"id": 450789469, "financial_status": "paid",
                                         "fulfillment_status": None, "cancel_reason": None,
                                         "note": "Customer said the last one was not found "
                                                 "at the door"}}), None),
    ("shopify-graphql-no-user-errors", _j({"data": {"orderCancel": {
        "job": {"id": "gid://shopify/Job/1", "done": False}, "orderCancelUserErrors": [],
        "userErrors": []}}}), None),
    ("woocommerce-order-pending", _j({"id": 727, "status": "pending", "currency": "USD",
                                      "total": "29.35", "customer_note": "",
                                      "line_items": [{"id": 315, "name": "Woo Single #1"}]}),
     None),
    ("jira-issue-done", _j({"id": "10002", "key": "ED-1", "self": "https://x.atlassian.net/"
                                                                  "rest/api/3/issue/10002",
                            "fields": {"summary": "Error: checkout not found on mobile",
                                       "status": {"name": "Done"},
                                       "resolution": {"name": "Fixed"}}}), None),
    ("jira-search-with-empty-errors", _j({"errorMessages": [], "errors": {},
                                          "issues": [{"id": "10001", "key": "ED-2"}],
                                          "total": 1}), None),
    ("zendesk-ticket", _j({"ticket": {"id": 35436, "status": "open",
                                      "subject": "Permission denied when logging in",
                                      "description": "The customer gets 403 forbidden"}}),
     None),
    ("github-issue-titled-not-found", _j({
        "id": 1, "number": 1347, "state": "open", "title": "Order not found after refund",
        "body": "I'm having a problem: the API returns an error.",
        "labels": [{"name": "bug", "description": "Something isn't working"}],
        "user": {"login": "octocat", "id": 1}}), None),
    ("github-merged", _j({"sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "merged": True,
                          "message": "Pull Request successfully merged"}), None),
    ("github-create-commit", _j({
        "sha": "7638417db6d59f3c431d3e1f261cc637155684cd", "node_id": "C_kwDOAE3WVdoAKDc2Mzg",
        "url": "https://api.github.com/repos/octo/hello/git/commits/7638417",
        "author": {"date": "2014-11-07T22:01:45Z", "name": "Monalisa"},
        "message": "Fix: orders not found after timeout", "tree": {"sha": "827efc6d"},
        "parents": [{"sha": "7d1b31e7"}]}), None),
    ("slack-ok-with-warning", _j({"ok": True, "channel": "C123ABC456",
                                  "ts": "1503435956.000247", "warning": "missing_charset",
                                  "response_metadata": {"warnings": ["missing_charset"]}}),
     None),
    ("twilio-queued", _j({"sid": "SM1f0e8ae6ade43cb3c0ce4525424e404f", "status": "queued",
                          "error_code": None, "error_message": None, "to": "+15558675310"}),
     None),
    ("google-operation-done", _j({"name": "operations/123", "done": True,
                                  "response": {"@type": "type.googleapis.com/Instance"}}),
     None),
    ("status-ok-with-errors-field-name", _j({"status": "ok", "errors_cleared": 3,
                                             "message": "Cleared 3 errors from the log"}),
     None),
    ("record-with-error-description", _j({"id": "doc_12", "title": "Handling 404 errors",
                                          "description": "How to recover from not found "
                                                         "errors and timeouts",
                                          "category": "error_handling"}), None),
    ("record-own-status-failed", _j({"payment_id": "pay_9", "amount": 12.0, "currency": "EUR",
                                     "created": "2025-03-01", "status": "failed"}), None),
    ("record-status-denied", _j({"claim_id": "CL-77", "policy": "P-1", "amount": 900,
                                 "status": "denied"}), None),
    ("delivered-order", _j({"order_id": "A-1", "status": "delivered", "carrier": "UPS"}),
     None),
    ("mcp-success", _j({"content": [{"type": "text", "text": "Ticket 42 updated."}],
                        "isError": False}), None),
    ("json-rpc-result", _j({"jsonrpc": "2.0", "result": {"order_id": "A-1",
                                                         "status": "shipped"}, "id": 1}), None),
    ("long-document-mentioning-errors", "Troubleshooting guide. " + "If the page says "
     "'Error: not found', clear your cache and retry. " * 12, None),
    ("plain-number", "4.0", None),
    ("already-as-a-note", _j({"status": "success", "message": "Roaming was already enabled"}),
     "already_acted_on"),
    ("status-already-cancelled", _j({"status": "already_cancelled",
                                     "message": "Order #1001 was cancelled on 2025-06-03."}),
     "already_acted_on"),
    ("duplicate-flag", _j({"order_id": "A-1", "duplicate": True,
                           "matching_records": ["A-1", "A-7"]}), "duplicate"),
    ("partial-status", _j({"status": "partial", "completed_items": 2, "total_items": 3}),
     "partially_completed"),
]


@pytest.mark.parametrize(("body", "world"), [case[1:] for case in SUCCESSES],
                         ids=[case[0] for case in SUCCESSES])
def test_successes_stay_successes(body: str, world: str | None) -> None:
    reading = read_result(body)
    assert (reading.condition, reading.world_state, reading.fault) == ("success", world, None)
    assert not reading.failed
    assert reading.plain == (world is None)


# ---------------------------------------------------------------- tau2-bench, live answers

# (id, domain, calls before, the call, condition, world_state)
_Call = tuple[str, Mapping[str, Any]]
TAU2: list[tuple[str, str, tuple[_Call, ...], _Call, str, str | None]] = [
    ("airline-reservation-missing", "airline", (),
     ("get_reservation_details", {"reservation_id": "XXXX"}), "not_found", "missing"),
    ("airline-user-missing", "airline", (), ("get_user_details", {"user_id": "nobody_1"}),
     "not_found", "missing"),
    ("airline-flight-missing", "airline", (),
     ("get_flight_status", {"flight_number": "HAT999", "date": "2024-05-16"}),
     "not_found", "missing"),
    ("airline-passenger-count", "airline", (),
     ("update_reservation_passengers", {"reservation_id": "VAAOXJ", "passengers": []}),
     "error", None),
    ("airline-payment-method-missing", "airline", (),
     ("update_reservation_baggages", {"reservation_id": "VAAOXJ", "total_baggages": 1,
                                      "nonfree_baggages": 0, "payment_id": "nope"}),
     "not_found", "missing"),
    ("airline-calculate-error", "airline", (), ("calculate", {"expression": "1/0"}),
     "error", None),
    ("airline-reservation", "airline", (),
     ("get_reservation_details", {"reservation_id": "4WQ150"}), "success", None),
    ("airline-user", "airline", (), ("get_user_details", {"user_id": "mia_li_3668"}),
     "success", None),
    ("airline-cancel", "airline", (), ("cancel_reservation", {"reservation_id": "4WQ150"}),
     "success", None),
    ("airline-flight-status", "airline", (),
     ("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-16"}), "success", None),
    ("airline-search-no-flights", "airline", (),
     ("search_direct_flight", {"origin": "JFK", "destination": "XXX", "date": "2024-05-20"}),
     "success", None),
    ("airline-search-flights", "airline", (),
     ("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
     "success", None),
    ("airline-certificate", "airline", (),
     ("send_certificate", {"user_id": "mia_li_3668", "amount": 50}), "success", None),
    ("airline-transfer", "airline", (), ("transfer_to_human_agents", {"summary": "refund"}),
     "success", None),
    ("airline-calculate", "airline", (), ("calculate", {"expression": "2 + 2"}),
     "success", None),
    ("telecom-customer-missing", "telecom", (),
     ("get_customer_by_phone", {"phone_number": "555-000-0000"}), "not_found", "missing"),
    ("telecom-unknown-id-format", "telecom", (), ("get_details_by_id", {"id": "Q123"}),
     "error", None),
    ("telecom-resume-active-line", "telecom", (),  # "Line must be suspended to resume"
     ("resume_line", {"customer_id": "C1001", "line_id": "L1001"}), "error", "already_acted_on"),
    ("telecom-refuel-negative", "telecom", (),
     ("refuel_data", {"customer_id": "C1001", "line_id": "L1001", "gb_amount": -1}),
     "error", None),
    ("telecom-roaming-enabled", "telecom", (),
     ("enable_roaming", {"customer_id": "C1001", "line_id": "L1001"}), "success", None),
    ("telecom-roaming-already-enabled", "telecom",
     (("enable_roaming", {"customer_id": "C1001", "line_id": "L1001"}),),
     ("enable_roaming", {"customer_id": "C1001", "line_id": "L1001"}),
     "success", "already_acted_on"),
    ("telecom-suspend-line", "telecom", (),
     ("suspend_line", {"customer_id": "C1001", "line_id": "L1001", "reason": "travel"}),
     "success", None),
    ("telecom-line-details", "telecom", (), ("get_details_by_id", {"id": "L1001"}),
     "success", None),
    ("telecom-bills", "telecom", (), ("get_bills_for_customer", {"customer_id": "C1001"}),
     "success", None),
    ("telecom-payment-request", "telecom", (),
     ("send_payment_request", {"customer_id": "C1001", "bill_id": "B1001"}), "success", None),
    ("telecom-name-search-empty", "telecom", (),
     ("get_customer_by_name", {"full_name": "Nobody Here", "dob": "1990-01-01"}),
     "success", None),
]


@pytest.mark.parametrize(("domain", "before", "the_call", "condition", "world"),
                         [case[1:] for case in TAU2], ids=[case[0] for case in TAU2])
def test_tau2_answers_read_as_a_person_reads_them(domain: str, before: tuple[_Call, ...],
                                                  the_call: _Call, condition: str,
                                                  world: str | None) -> None:
    pytest.importorskip("tau2")  # the tau2 extra
    env = environment(domain)
    for tool, arguments in before:
        call(env, tool, arguments)
    reply = call(env, *the_call)
    assert reply.error == (condition not in ("success",)), reply.content
    # tau2 answers a raising tool with "Error: ..." on the tool message itself: read it on
    # an OK span (the body alone) and on an ERROR span (the span says so, the body says what)
    for status, error in (("ok", None), ("error", "ValueError") if reply.error else ("ok", None)):
        reading = read_result(reply.content, status=status, error=error, tool=reply.tool)
        assert (reading.condition, reading.world_state) == (condition, world), reply.content


# ---------------------------------------------------------------- span, emptiness, tools

@pytest.mark.parametrize(("error", "body", "condition"), [
    ("TimeoutError", None, "timeout"),
    ("httpx.ReadTimeout", None, "timeout"),
    ("asyncio.exceptions.CancelledError", None, "error"),
    ("PermissionDeniedError", None, "permission_denied"),
    ("botocore.exceptions.ClientError", '{"Error": {"Code": "AccessDenied"}}',
     "permission_denied"),
    ("OrderNotFoundError", None, "not_found"),
    ("ValueError", "Error: Reservation XXXX not found", "not_found"),
    ("ValueError", None, "error"),
    ("HTTPStatusError", '{"code": 404}', "not_found"),
    ("Client error '429 Too Many Requests' for url 'https://api.example.com/orders'", None,
     "error"),
    ("Read timed out. (read timeout=30)", None, "timeout"),
], ids=["timeout-error", "httpx-read-timeout", "cancelled", "permission-error",
        "boto-client-error", "not-found-error", "tau2-value-error", "value-error",
        "httpx-status-404-body", "httpx-429-message", "requests-read-timeout"])
def test_span_errors_take_the_most_specific_reading(error: str, body: str | None,
                                                    condition: str) -> None:
    reading = read_result(body, status="error", error=error)
    assert reading.condition == condition
    assert reading.evidence == "span status"


def test_a_failed_span_with_a_success_looking_body_is_still_a_failure() -> None:
    reading = read_result('{"order_id": "A-1", "status": "shipped"}', status="error",
                          error="InternalServerError")
    assert (reading.condition, reading.failed, reading.has_id) == ("error", True, False)


@pytest.mark.parametrize(("body", "tool", "condition", "world", "empty"), [
    ("[]", "search_orders", "success", None, True),
    ('{"results": [], "count": 0}', "search_orders", "success", None, True),
    ('{"data": []}', "list_tickets", "success", None, True),
    ("null", "get_order", "not_found", "missing", True),
    ("{}", "lookup_order", "not_found", "missing", True),
    ("", "get_customer_by_id", "not_found", "missing", True),
    ("None", "fetch_invoice", "not_found", "missing", True),
    ("", "cancel_order", "success", None, True),
    ("{}", "update_address", "success", None, True),
    ("null", None, "success", None, True),
    ("[]", "get_orders", "success", None, True),
], ids=["search-list", "search-envelope", "list-data", "get-null", "lookup-object",
        "get-empty-text", "fetch-python-none", "action-204", "action-empty-object",
        "unknown-tool-null", "get-plural-list"])
def test_empty_answers(body: str, tool: str | None, condition: str, world: str | None,
                       empty: bool) -> None:
    reading = read_result(body, tool=tool)
    assert (reading.condition, reading.world_state, reading.empty) == (condition, world, empty)


def test_no_result_and_uncaptured_results() -> None:
    assert read_result(None, status="missing").condition == "unknown"
    captured_off = read_result(None, status="ok", tool="get_order")
    assert (captured_off.condition, captured_off.empty) == ("success", False)


@pytest.mark.parametrize(("tool", "action"), [
    ("cancel_pending_order", True), ("book_reservation", True), ("issue_refund", True),
    ("update_reservation_flights", True), ("send_certificate", True),
    ("transfer_to_human_agents", True), ("enable_roaming", True), ("refuel_data", True),
    ("stripe_create_refund", True), ("cancelOrder", True), ("orders.cancel", True),
    ("get_refund_status", False), ("get_reservation_details", False),
    ("search_direct_flight", False), ("list_all_airports", False), ("calculate", False),
    ("check_inventory", False), ("lookup_order", False), ("order_status", False),
])
def test_tool_verbs(tool: str, action: bool) -> None:
    assert is_action(tool) is action


def test_which_tools_read_one_record() -> None:
    assert reads_a_record("get_order_details") and reads_a_record("lookupCustomer")
    assert not reads_a_record("search_orders") and not reads_a_record("list_tickets")
    assert not reads_a_record("cancel_order") and not reads_a_record(None)


def test_has_id() -> None:
    assert read_result('{"order_id": "A-1"}').has_id
    assert read_result('{"order": {"id": 450789469}}').has_id
    assert read_result('[{"ticket_id": "T-1"}]').has_id
    assert not read_result('{"message": "done"}').has_id
    assert not read_result('{"error": "not_found", "order_id": "A-1"}').has_id


def test_every_reading_uses_the_declared_values() -> None:
    bodies = [case[1] for case in FAILURES] + [case[1] for case in SUCCESSES]
    readings: list[ResultReading] = [read_result(body) for body in bodies]
    assert {reading.condition for reading in readings} <= set(CONDITIONS)
    assert {reading.fault for reading in readings} - {None} <= set(FAULTS)
    assert {reading.world_state for reading in readings} - {None} <= {
        "missing", "already_acted_on", "duplicate", "partially_completed"}


def test_reading_is_fast() -> None:
    """Every step of every conversation is read: a typical body must take microseconds."""
    bodies = [case[1] for case in FAILURES] + [case[1] for case in SUCCESSES]
    rounds = 20
    started = time.perf_counter()
    for _ in range(rounds):
        for body in bodies:
            read_result(body, tool="get_order")
    per_read = (time.perf_counter() - started) / (rounds * len(bodies))
    assert per_read < 200e-6, f"{per_read * 1e6:.1f} µs per result"


# ------------------------------------------------- refusals that name the record's state

# (id, body, condition, world_state, fault). An API that refuses an action because of
# where the record stands names the state (or says it is wrong) instead of "already":
# that is ``already_acted_on`` when the state is a completed one for the action. Beside
# each family, the hard negatives: a rule of time or eligibility (``declined``, no world
# state), money, permission, a missing record, a malformed value, a state that blocks
# without being completed (locked, expired, not yet approved), a record's own status.
STATE_REFUSALS: list[tuple[str, str, str, str | None, str | None]] = [
    # ---- Stripe (payment_intent_unexpected_state; docs.stripe.com error codes)
    ("stripe-intent-succeeded", _j({"error": {
        "code": "payment_intent_unexpected_state",
        "doc_url": "https://stripe.com/docs/error-codes/payment-intent-unexpected-state",
        "message": "You cannot cancel this PaymentIntent because it has a status of "
                   "succeeded. Only a PaymentIntent with one of the following statuses may "
                   "be canceled: requires_payment_method, requires_capture, "
                   "requires_confirmation, requires_action, processing.",
        "type": "invalid_request_error"}}), "error", "already_acted_on", "conflict"),
    ("stripe-intent-canceled", _j({"error": {
        "code": "payment_intent_unexpected_state",
        "message": "You cannot cancel this PaymentIntent because it has a status of "
                   "canceled. Only a PaymentIntent with one of the following statuses may "
                   "be canceled: requires_payment_method, requires_capture, "
                   "requires_confirmation, requires_action, processing.",
        "type": "invalid_request_error"}}), "error", "already_acted_on", "conflict"),
    ("stripe-code-alone", _j({"error": {"code": "payment_intent_unexpected_state",
                                        "type": "invalid_request_error"}}),
     "error", "already_acted_on", "conflict"),
    ("stripe-expired-for-capture-is-blocked", _j({"error": {
        "code": "charge_expired_for_capture",
        "message": "The charge has expired and cannot be captured.",
        "type": "invalid_request_error"}}), "error", None, "conflict"),
    ("stripe-refund-too-large-is-invalid", _j({"error": {
        "code": "charge_exceeds_source_limit",
        "message": "Refund amount ($20.00) is greater than unrefunded amount on charge "
                   "($10.00)", "type": "invalid_request_error"}}), "error", None, "invalid"),
    # ---- Shopify (REST errors shape; fulfilled orders cannot be cancelled since 2018)
    ("shopify-rest-fulfilled", _j({"errors": {"base": [
        "Cannot cancel an order that has been fulfilled"]}}),
     "error", "already_acted_on", "conflict"),
    ("shopify-rest-partially-fulfilled", _j({"errors": {"base": [
        "Cannot cancel a partially fulfilled order"]}}),
     "error", "partially_completed", "conflict"),
    ("shopify-graphql-fulfilled", _j({"data": {"orderCancel": {"job": None, "userErrors": [{
        "field": ["orderId"], "message": "Cannot cancel an order that has been fulfilled",
        "code": "INVALID"}]}}}), "error", "already_acted_on", "conflict"),
    ("shopify-graphql-no-refund-permission", _j({"data": {"orderCancel": {
        "job": None, "userErrors": [{
            "field": ["refund"], "code": "NO_REFUND_PERMISSION",
            "message": "An order refund was requested but the user does not have the "
                       "refund_orders permission."}]}}}),
     "permission_denied", None, "permission_denied"),
    # ---- PayPal (Orders v2 / Payments v2 UNPROCESSABLE_ENTITY issues)
    ("paypal-previously-voided", _j({
        "name": "UNPROCESSABLE_ENTITY", "details": [{
            "issue": "PREVIOUSLY_VOIDED",
            "description": "Authorization has been previously voided and hence cannot be "
                           "voided again."}],
        "message": "The requested action could not be performed, semantically incorrect, "
                   "or failed business validation.", "debug_id": "b2f6c9e41a3d7"}),
     "error", "already_acted_on", "conflict"),
    ("paypal-authorization-voided", _j({
        "name": "UNPROCESSABLE_ENTITY", "details": [{
            "issue": "AUTHORIZATION_VOIDED",
            "description": "A voided authorization cannot be captured or reauthorized."}],
        "message": "The requested action could not be performed, semantically incorrect, "
                   "or failed business validation.", "debug_id": "c41d7e2b9f6a0"}),
     "error", "already_acted_on", "conflict"),
    ("paypal-payment-state-invalid", _j({
        "name": "PAYMENT_STATE_INVALID",
        "message": "This request is invalid due to the current state of the payment.",
        "debug_id": "7a4b1c9d2e5f3"}), "error", "already_acted_on", "conflict"),
    ("paypal-invalid-resource-state", _j({
        "name": "UNPROCESSABLE_ENTITY", "details": [{"issue": "INVALID_RESOURCE_STATE"}],
        "message": "The requested action could not be performed, semantically incorrect, "
                   "or failed business validation.", "debug_id": "91ab77f3c0d2e"}),
     "error", "already_acted_on", "conflict"),
    ("paypal-not-approved-is-not-acted-on", _j({
        "name": "UNPROCESSABLE_ENTITY", "details": [{
            "issue": "ORDER_NOT_APPROVED",
            "description": "Payer has not yet approved the Order for payment."}],
        "message": "The requested action could not be performed, semantically incorrect, "
                   "or failed business validation.", "debug_id": "0d3e5a7b9c1f2"}),
     "error", None, "invalid"),
    # ---- GitHub REST
    ("github-locked-issue-is-blocked", _j({
        "message": "Unable to create comment because issue is locked.",
        "documentation_url": "https://help.github.com/articles/locking-conversations/"}),
     "error", None, "conflict"),
    # ---- Jira (workflow transition from the wrong status)
    ("jira-transition-current-state", _j({"errorMessages": [
        "It seems that you have tried to perform a workflow operation (inprogressToDone) "
        "that is not valid for the current state of this issue (RTCJIR-1602). The likely "
        "cause is that somebody has changed the issue recently, please look at the issue "
        "history for details."], "errors": {}}), "error", "already_acted_on", "conflict"),
    ("jira-unknown-transition-is-invalid", _j({"errorMessages": [
        "Transition id '31' is not valid for this issue."], "errors": {}}),
     "error", None, "error"),
    # ---- Zendesk (422 RecordInvalid on a closed ticket; per-field details)
    ("zendesk-closed-ticket", _j({
        "error": "RecordInvalid", "description": "Record validation errors",
        "details": {"status": [{"description": "Status: closed prevents ticket update"}]}}),
     "error", "already_acted_on", "conflict"),
    # ---- Square (v2 errors; ErrorCode enum)
    ("square-delayed-canceled", _j({"errors": [{
        "category": "INVALID_REQUEST_ERROR", "code": "DELAYED_TRANSACTION_CANCELED",
        "detail": "The application tried to cancel a delayed-capture payment that was "
                  "already cancelled."}]}), "error", "already_acted_on", "conflict"),
    ("square-delayed-captured-code-only", _j({"errors": [{
        "category": "INVALID_REQUEST_ERROR", "code": "DELAYED_TRANSACTION_CAPTURED"}]}),
     "error", "already_acted_on", "conflict"),
    ("square-delayed-expired-is-not-acted-on", _j({"errors": [{
        "category": "INVALID_REQUEST_ERROR", "code": "DELAYED_TRANSACTION_EXPIRED"}]}),
     "error", None, "invalid"),
    ("square-insufficient-funds", _j({"errors": [{
        "category": "PAYMENT_METHOD_ERROR", "code": "INSUFFICIENT_FUNDS",
        "detail": "Authorization error: 'INSUFFICIENT_FUNDS'"}]}), "error", None, "declined"),
    # ---- Twilio (21220: the call is no longer in progress; HTTP code inside the JSON)
    ("twilio-call-not-in-progress", _j({
        "code": 21220, "message": "Call is not in-progress. Cannot redirect.",
        "more_info": "https://www.twilio.com/docs/errors/21220", "status": 400}),
     "error", "already_acted_on", "conflict"),
    # ---- plain "Error: ..." texts (tau2-style tools, MCP text content)
    ("text-non-pending", "Error: non-pending order cannot be cancelled",
     "error", "already_acted_on", "conflict"),
    ("text-order-status-not-pending", "Error: order status is not pending",
     "error", "already_acted_on", "conflict"),
    ("text-status-is-and-cannot-be", "Error: This PaymentIntent's status is succeeded and "
                                     "cannot be canceled", "error", "already_acted_on",
     "conflict"),
    ("text-closed-ticket", "Error: ticket is closed and cannot be updated",
     "error", "already_acted_on", "conflict"),
    ("text-merged-pr", "Error: pull request #12 has been merged and cannot be closed",
     "error", "already_acted_on", "conflict"),
    ("text-suspend-suspended", "Error: Line must be active to suspend",
     "error", "already_acted_on", "conflict"),
    ("text-transfer-inactive-is-blocked", "Error: Account must be active to transfer funds",
     "error", None, "conflict"),
    ("text-invalid-state", "Error: invalid state for refund: order ORD-9 is cancelled",
     "error", "already_acted_on", "conflict"),
    ("mcp-refusal", _j({"content": [{"type": "text", "text": "Cannot refund order #1042: it "
                                                             "was refunded on 2025-05-02."}],
                        "isError": True}), "error", "already_acted_on", "conflict"),
    ("plain-text-refusal", "This order has been shipped and can no longer be cancelled.",
     "error", "already_acted_on", "conflict"),
    ("not-allowed-is-the-state", _j({"success": False, "message": "Cancellation is not "
                                     "allowed for orders that have been delivered."}),
     "error", "already_acted_on", "conflict"),
    ("http-code-in-json-with-state", _j({"code": 409, "message": "Order 7 is in shipped "
                                         "state and cannot be cancelled"}),
     "error", "already_acted_on", "conflict"),
    ("code-on-a-failed-envelope", _j({"success": False, "code": "ORDER_IS_CLOSED"}),
     "error", "already_acted_on", "conflict"),
    ("http-403-with-state", _j({"status": 403, "msg": "Cannot cancel an order that has "
                                "been shipped or partially shipped"}),
     "error", "already_acted_on", "conflict"),
    ("http-403-permission-stays", _j({"status": 403, "msg": "You do not have permission "
                                      "to cancel orders of this store"}),
     "permission_denied", None, "permission_denied"),
    # ---- hard negatives: refused, but not because the record was acted on
    ("policy-24-hours", "Error: Reservation cannot be cancelled within 24 hours of departure",
     "error", None, "declined"),
    ("policy-window", _j({"status": "error", "message": "Order cannot be returned: it is "
                                                        "outside the 30 day return window"}),
     "error", None, "declined"),
    ("policy-non-refundable", "Error: Basic economy fares are non-refundable and cannot be "
                              "cancelled", "error", None, "declined"),
    ("money-insufficient", "Error: Cannot refund a captured charge: insufficient balance",
     "error", None, "declined"),
    ("permission", "Error: You do not have permission to cancel this order",
     "permission_denied", None, "permission_denied"),
    ("missing", "Error: Cannot cancel order #W123: order not found",
     "not_found", "missing", "not_found"),
    ("format", "Error: Invalid order id format: cancel requires #W followed by 7 digits",
     "error", None, "invalid"),
    ("still-processing", _j({"status": "error", "message": "Order cannot be cancelled "
                                                           "because payment is still "
                                                           "processing"}),
     "error", None, "conflict"),
    ("not-yet-captured", "Error: The charge cannot be refunded because it has not been "
                         "captured", "error", None, "conflict"),
    ("only-paid-can-be-fulfilled", "Error: Only paid orders can be fulfilled.",
     "error", None, "conflict"),
    ("booking-on-a-cancelled-flight", _j({"error": "Cannot book: flight HAT001 is "
                                                   "cancelled"}), "error", None, "conflict"),
    ("address-state-code", _j({"error": "Invalid state code: XX",
                               "field": "billing_address.state"}), "error", None, "invalid"),
    ("can-only-cancel-pending", "Error: You can only cancel pending orders",
     "error", "already_acted_on", "conflict"),
    ("can-only-refund-once-delivered", "Error: Orders can only be refunded once they are "
                                       "delivered", "error", None, "conflict"),
    ("non-pending-refund-is-blocked", "Error: Non-pending order cannot be refunded",
     "error", None, "conflict"),
    ("non-pending-modify", "Error: non-pending order cannot be modified",
     "error", "already_acted_on", "conflict"),
    ("non-delivered-return-is-blocked", "Error: non-delivered order cannot be returned",
     "error", None, "conflict"),
]


@pytest.mark.parametrize(("body", "condition", "world", "fault"),
                         [case[1:] for case in STATE_REFUSALS],
                         ids=[case[0] for case in STATE_REFUSALS])
def test_refusals_that_name_the_record_state(body: str, condition: str, world: str | None,
                                             fault: str | None) -> None:
    reading = read_result(body)
    assert (reading.condition, reading.world_state, reading.fault) == (condition, world, fault)


@pytest.mark.parametrize("body", [
    _j({"order_id": "A-1", "status": "cancelled", "total": 20.0, "currency": "USD"}),
    _j({"id": "pi_3MtwBwLkdIwHu7ix28a3tqPa", "object": "payment_intent", "amount": 2000,
        "status": "canceled", "cancellation_reason": "requested_by_customer"}),
    _j({"ticket": {"id": 35436, "status": "closed", "subject": "Cannot cancel my order",
                   "description": "It says the order has shipped and cannot be cancelled"}}),
    _j({"status": "success", "message": "Check the current status of your order in the app."}),
    _j({"code": "ORDER_CANCELLED", "message": "Your order has been cancelled",
        "order_id": "A1"}),
    "Your messaging app cannot send MMS messages.",
    "Order #1001 was cancelled on 2025-06-03 and refunded to the original card.",
    "Returns policy. Items can be returned within 30 days of delivery. " * 8,
], ids=["record-cancelled", "stripe-canceled-intent", "zendesk-ticket-quoting-a-refusal",
        "success-mentions-current-status", "success-code-names-a-state",
        "tau2-telecom-device-answer", "plain-cancelled-note", "long-policy-document"])
def test_a_state_without_a_refusal_is_data(body: str) -> None:
    reading = read_result(body)
    assert (reading.condition, reading.world_state, reading.fault) == ("success", None, None)


# (id, domain, calls before, the call, world_state, fault): tau2's own refusals, live
TAU2_REFUSALS: list[tuple[str, str, tuple[_Call, ...], _Call, str | None, str]] = [
    ("telecom-suspend-suspended-line", "telecom",
     (("suspend_line", {"customer_id": "C1001", "line_id": "L1001", "reason": "travel"}),),
     ("suspend_line", {"customer_id": "C1001", "line_id": "L1001", "reason": "travel"}),
     "already_acted_on", "conflict"),
    ("telecom-resume-active-line", "telecom", (),
     ("resume_line", {"customer_id": "C1001", "line_id": "L1001"}),
     "already_acted_on", "conflict"),
    ("airline-certificate-for-update", "airline", (),
     ("update_reservation_baggages", {"reservation_id": "UUN48W", "total_baggages": 5,
                                      "nonfree_baggages": 3,
                                      "payment_id": "certificate_9380982"}), None, "error"),
    ("airline-gift-card-balance", "airline", (),
     ("update_reservation_baggages", {"reservation_id": "UUN48W", "total_baggages": 9,
                                      "nonfree_baggages": 9,
                                      "payment_id": "gift_card_5634230"}), None, "error"),
]


@pytest.mark.parametrize(("domain", "before", "the_call", "world", "fault"),
                         [case[1:] for case in TAU2_REFUSALS],
                         ids=[case[0] for case in TAU2_REFUSALS])
def test_tau2_refusals_by_state(domain: str, before: tuple[_Call, ...], the_call: _Call,
                                world: str | None, fault: str) -> None:
    pytest.importorskip("tau2")
    env = environment(domain)
    for tool, arguments in before:
        call(env, tool, arguments)
    reply = call(env, *the_call)
    assert reply.error, reply.content
    reading = read_result(reply.content, tool=reply.tool)
    assert (reading.condition, reading.world_state, reading.fault) == ("error", world, fault), \
        reply.content


def test_state_refusals_use_the_declared_values() -> None:
    readings = [read_result(case[1]) for case in STATE_REFUSALS]
    assert {reading.condition for reading in readings} <= set(CONDITIONS)
    assert {reading.fault for reading in readings} - {None} <= set(FAULTS)
    worlds = {reading.world_state for reading in readings}
    assert worlds == {None, "missing", "already_acted_on", "partially_completed"}


@pytest.mark.parametrize("text", [
    "Could not connect: the socket was closed",
    "Error: cannot write, the connection was closed",
    "Cannot read file: file is closed",
    "Error: stream closed, cannot send the request",
    "Unable to complete the call: the channel has been closed",
])
def test_closed_plumbing_is_not_a_record_already_acted_on(text: str) -> None:
    reading = read_result(text, tool="update_ticket")
    assert reading.world_state is None
    assert reading.condition != "success"
