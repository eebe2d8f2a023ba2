"""A small staging system, as a team would point ``--world`` at: a dict-backed order service.

``answer`` follows the contract of :mod:`generator.worlds`: ``(tool, arguments, *,
rollout)`` in, a dict out; a missing record raises ``KeyError`` (answered to the agent as
``not_found``), a forbidden write returns ``{"error": ...}``. Like a real staging system
with fixtures, it seeds each rollout's own customer records from what the person knows
(``rollout.facts``) the first time that rollout calls, and keeps rollouts apart by their
id. Every answer carries ``"served_by": "staging"`` so tests can tell it from the
simulation's. :data:`CALLS` records every call it served (thread-safe), and
:func:`serve_http` serves the same service over HTTP for ``--world http://...``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from generator.worlds import RolloutContext

CALLS: list[tuple[str, str, dict[str, Any]]] = []
"""(rollout id, tool, arguments) of every call served, in order."""

_LOCK = threading.Lock()
_ORDERS: dict[str, dict[str, dict[str, Any]]] = {}
_STOCK = {"TRS-229": 4}


def reset() -> None:
    """Forget every rollout's records and calls (between tests)."""
    with _LOCK:
        CALLS.clear()
        _ORDERS.clear()


def _orders(rollout: RolloutContext) -> dict[str, dict[str, Any]]:
    orders = _ORDERS.get(rollout.rollout_id)
    if orders is None:
        orders = _ORDERS[rollout.rollout_id] = {}
        order_id = rollout.facts.get("order_id")
        if order_id:
            orders[order_id] = {"order_id": order_id, "status": "delivered",
                                "total": 59.0, "items": [{"sku": "JKT-1", "qty": 1}],
                                "refunded": False}
    return orders


def answer(tool: str, arguments: dict[str, Any], *, rollout: RolloutContext) -> dict[str, Any]:
    """Serve one tool call of one rollout."""
    with _LOCK:
        CALLS.append((rollout.rollout_id, tool, dict(arguments)))
        orders = _orders(rollout)
        if tool == "check_inventory":
            sku = str(arguments.get("sku", ""))
            if sku not in _STOCK:
                raise KeyError(f"product {sku!r} not found")
            return {"sku": sku, "in_stock": _STOCK[sku], "served_by": "staging"}
        order_id = str(arguments.get("order_id", ""))
        if order_id not in orders:
            raise KeyError(f"order {order_id!r} not found")
        order = orders[order_id]
        if tool == "lookup_order":
            return {**order, "served_by": "staging"}
        if tool == "issue_refund":
            if order["refunded"]:
                return {"error": "already_refunded", "order_id": order_id,
                        "served_by": "staging"}
            order["refunded"] = True
            return {"order_id": order_id, "refund_id": f"RF-{len(CALLS):05d}",
                    "status": "refunded", "served_by": "staging"}
        if tool == "cancel_order":
            if order["status"] == "delivered":
                return {"error": "Non-pending order cannot be cancelled",
                        "order_id": order_id, "served_by": "staging"}
            order["status"] = "cancelled"
            return {"order_id": order_id, "status": "cancelled", "served_by": "staging"}
        if tool == "update_address":
            order["address"] = arguments.get("address")
            return {"order_id": order_id, "status": "address_updated", "served_by": "staging"}
        raise ValueError(f"staging has no tool {tool!r}")


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        context = RolloutContext(**body["rollout"])
        try:
            status, payload = 200, answer(body["tool"], body["arguments"], rollout=context)
        except KeyError as exc:
            status, payload = 404, {"error": str(exc.args[0])}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@contextmanager
def serve_http() -> Iterator[str]:
    """Serve :func:`answer` over HTTP on a free port; yields the endpoint's URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/tools"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
