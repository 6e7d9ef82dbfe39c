"""One JSON-over-HTTP request with the stdlib (http.client), for the fake bank's API and
moto's /moto-api endpoints: no third-party client, so the helpers work wherever the servers do.
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class HttpResponse:
    status: int
    body: Any
    headers: dict[str, str]


def http_request(
    base_url: str,
    method: str,
    path: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    connection: http.client.HTTPConnection | None = None,
    tls: ssl.SSLContext | None = None,
) -> HttpResponse:
    """One JSON request (a text/* reply, e.g. the ledger's CSV, is returned as str). `body` may be bytes (sent as is) or a JSON value. Pass
    `connection` to reuse a keep-alive connection; otherwise a fresh one is used and closed
    (HTTPS with the `tls` context when the URL is https). Raises the socket's TimeoutError /
    ConnectionError as they come."""
    url = urlsplit(base_url)
    if connection is not None:
        conn = connection
    elif url.scheme == "https":
        conn = http.client.HTTPSConnection(url.hostname, url.port, timeout=timeout, context=tls)
    else:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    try:
        conn.request(method, path, body=payload, headers=all_headers)
        response = conn.getresponse()
        raw = response.read()
        is_json = not response.getheader("Content-Type", "").startswith("text/")
        parsed = (json.loads(raw) if is_json else raw.decode()) if raw else None
        return HttpResponse(response.status, parsed, {k.lower(): v for k, v in response.getheaders()})
    finally:
        if connection is None:
            conn.close()


