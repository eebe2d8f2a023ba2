"""TLS on both receivers, with a throwaway CA, and the real exporters as clients."""

from __future__ import annotations

import ssl
from pathlib import Path

import grpc
import httpx
import pytest
import trustme
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import StartCollector
from tests.support.otlp import genai_span, trace_request


def test_tls_on_grpc_and_http(start_collector: StartCollector, tmp_path: Path) -> None:
    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1", "localhost")
    cert, key, ca = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    certificate.cert_chain_pems[0].write_to_path(str(cert))
    for blob in certificate.cert_chain_pems[1:]:
        blob.write_to_path(str(cert), append=True)
    certificate.private_key_pem.write_to_path(str(key))
    authority.cert_pem.write_to_path(str(ca))
    server = start_collector(tls_cert=cert, tls_key=key, auth_token="t0k")

    credentials = grpc.ssl_channel_credentials(root_certificates=ca.read_bytes())
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=server.grpc_endpoint, credentials=credentials,
        headers={"authorization": "Bearer t0k"})))
    with provider.get_tracer("t").start_as_current_span("over tls"):
        pass
    provider.shutdown()

    body = trace_request([genai_span("https")]).SerializeToString()
    headers = {"content-type": "application/x-protobuf", "authorization": "Bearer t0k"}
    assert server.http_endpoint.startswith("https://")
    response = httpx.post(f"{server.http_endpoint}/v1/traces", content=body, headers=headers,
                          verify=ssl.create_default_context(cafile=str(ca)))
    assert response.status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{server.http_endpoint}/v1/traces", content=body, headers=headers)
    assert server.query("SELECT name FROM spans ORDER BY name") == [("https",), ("over tls",)]
