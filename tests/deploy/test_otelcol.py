"""deploy/otelcol-fanin.yaml: a configuration otelcol-contrib can load (no Collector binary
here, so its structure is checked against the contrib exporter's config fields) that routes
by gen_ai.conversation.id to several tracemill collectors."""

from __future__ import annotations

import re

from tests.deploy._files import DEPLOY, yaml_documents
from tracemill.config import split_address

FANIN = DEPLOY / "otelcol-fanin.yaml"
#: The load_balancing exporter's configuration fields (contrib exporter/loadbalancingexporter
#: config.go: TimeoutConfig squashed, retry_on_failure, sending_queue, protocol, resolver,
#: routing_key, routing_attributes).
LOAD_BALANCING_FIELDS = {"timeout", "retry_on_failure", "sending_queue", "protocol",
                         "resolver", "routing_key", "routing_attributes"}


def _config() -> dict[str, object]:
    documents = yaml_documents(FANIN)
    assert len(documents) == 1
    return documents[0]


def _kind(component_id: str) -> str:
    return component_id.split("/", 1)[0]


def test_routes_by_conversation_to_several_tracemill_collectors() -> None:
    exporters = _config()["exporters"]
    assert isinstance(exporters, dict)
    balancers = [v for k, v in exporters.items() if _kind(k) == "load_balancing"]
    assert len(balancers) == 1, "expected one load_balancing exporter"
    balancer = balancers[0]
    assert set(balancer) <= LOAD_BALANCING_FIELDS, set(balancer) - LOAD_BALANCING_FIELDS
    assert balancer["routing_key"] == "attributes"
    assert balancer["routing_attributes"] == ["gen_ai.conversation.id"]
    hostnames = balancer["resolver"]["static"]["hostnames"]
    assert len(hostnames) >= 2 and len(set(hostnames)) == len(hostnames), hostnames
    for hostname in hostnames:
        split_address(hostname)  # host:port
    otlp = balancer["protocol"]["otlp"]
    assert "endpoint" not in otlp, "the resolver supplies each backend's endpoint"
    assert otlp["headers"]["authorization"] == "Bearer ${env:TRACEMILL_AUTH_TOKEN}"
    # failures reach the persistent queue in front of the router instead of being queued
    # in memory per backend
    assert otlp["sending_queue"] == {"enabled": False}
    assert balancer["sending_queue"]["enabled"] is True


def test_every_component_is_declared_and_used() -> None:
    config = _config()
    service = config["service"]
    assert isinstance(service, dict)
    declared = {section: set(config.get(section) or {})  # type: ignore[call-overload]
                for section in ("receivers", "processors", "exporters", "extensions")}
    for name, pipeline in service["pipelines"].items():
        assert _kind(name) in ("traces", "logs"), name
        for section in ("receivers", "processors", "exporters"):
            missing = set(pipeline.get(section, [])) - declared[section]
            assert not missing, f"pipeline {name} uses undeclared {section} {missing}"
    assert set(service["extensions"]) == declared["extensions"]
    storages = re.findall(r"storage:\s*([\w/]+)", FANIN.read_text())
    assert storages and set(storages) <= declared["extensions"], storages
    assert {"traces", "logs"} <= {_kind(name) for name in service["pipelines"]}


def test_header_names_the_distribution_and_what_happens_without_the_attribute() -> None:
    header = "\n".join(line for line in FANIN.read_text().splitlines()
                       if line.startswith("#"))
    assert "otelcol-contrib" in header
    assert "file_storage" in header and "load_balancing" in header
    assert "gen_ai.conversation.id=|" in header  # the exporter's key for a missing value
    assert "one and the same backend" in header
    assert "first span" in header.lower()
