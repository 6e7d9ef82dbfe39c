"""bench/net_proxy.cpp, the bench's network stand-in: TLS termination with the test CA
(tools/fake_bank/pki.py), client certificates when asked for, AWS-shaped traffic from boto3
through it, and the latency it adds."""

from __future__ import annotations

import http.client
import json
import ssl
import time

import boto3
import pytest
from botocore.config import Config

from bench.stack import Latency, Stack
from tools.local_stack import wait_until

pytestmark = pytest.mark.timeout(60)


def ledger(url: str, context: ssl.SSLContext | None = None) -> dict:
    host, port = url.split("://", 1)[1].rsplit(":", 1)
    conn = (http.client.HTTPSConnection(host, int(port), context=context, timeout=10) if context
            else http.client.HTTPConnection(host, int(port), timeout=10))
    try:
        conn.request("GET", "/v1/ledger")
        response = conn.getresponse()
        assert response.status == 200, response.status
        return json.load(response)
    finally:
        conn.close()


def test_boto3_over_https_through_the_proxy(fast_stack: Stack) -> None:
    """SQS requests of several sizes, on kept-alive connections, over TLS verified against the
    test CA: what the consumer's AWS traffic is in the production runs. The large message (200 KB)
    crosses the proxy in many TLS records both ways."""
    proxy = fast_stack.proxy("tls-sqs", fast_stack.env["AWS_ENDPOINT_URL_SQS"], tls=True)
    assert proxy.url.startswith("https://")
    sqs = boto3.client("sqs", endpoint_url=proxy.url, region_name="us-east-1", aws_access_key_id="testing",
                       aws_secret_access_key="testing", verify=str(fast_stack.pki().ca), config=Config(retries={"max_attempts": 1}))
    url = sqs.create_queue(QueueName="proxied")["QueueUrl"]
    bodies = ["small", "x" * 200_000]
    for body in bodies:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    got = []
    while len(got) < len(bodies):
        got += [m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])]
    assert sorted(got) == sorted(bodies)
    assert proxy.refused() == []
    assert 1 <= proxy.handshakes() <= 3, "boto3 keeps its connection alive: a handshake per connection, not per request"


def test_client_certificates_are_required_and_verified(fast_stack: Stack) -> None:
    """In front of the bank: a client certificate of the test CA passes, none or one of another
    CA is refused in the handshake, and the proxy says why."""
    pki = fast_stack.pki()
    proxy = fast_stack.proxy("tls-bank", fast_stack.bank_url, tls=True, client_certificates=True)
    ours = ssl.create_default_context(cafile=str(pki.ca))
    ours.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    assert "debits" in ledger(proxy.url, ours)["stats"]
    anonymous = ssl.create_default_context(cafile=str(pki.ca))
    rogue = ssl.create_default_context(cafile=str(pki.ca))
    rogue.load_cert_chain(str(pki.rogue_cert), str(pki.rogue_key))
    for context in (anonymous, rogue):
        with pytest.raises((ssl.SSLError, ConnectionError)):
            ledger(proxy.url, context)

    def handshakes() -> list[dict]:
        return [line for line in proxy.process.json_lines() if line.get("event") == "handshake"]

    # The proxy's log is the record of each handshake (under TLS 1.3 a client learns of the
    # refusal only on its first read).
    wait_until(lambda: len(handshakes()) >= 3, timeout=5, description="three handshakes logged")
    logged = handshakes()
    assert [(h["ok"], h.get("clientCertificate")) for h in logged] == [(True, True), (False, None), (False, None)]
    assert "peer did not return a certificate" in logged[1]["error"]
    assert "certificate verify failed" in logged[2]["error"]
    assert proxy.handshakes() == 1


def test_the_proxy_adds_its_latency_plain_and_over_tls(fast_stack: Stack) -> None:
    """Each request waits --delay-ms before it goes upstream (a lower bound: the machine adds its own)."""
    delay = Latency(150)
    plain = fast_stack.proxy("delay-plain", fast_stack.bank_url, delay)
    tls = fast_stack.proxy("delay-tls", fast_stack.bank_url, delay, tls=True)
    context = ssl.create_default_context(cafile=str(fast_stack.pki().ca))
    for url, ctx in ((plain.url, None), (tls.url, context)):
        t0 = time.monotonic()
        ledger(url, ctx)
        assert time.monotonic() - t0 >= delay.ms / 1000, url
    assert plain.handshakes() == 1, "a plain proxy counts the connections it accepted"
