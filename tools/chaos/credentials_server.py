"""A local credentials endpoint for the credentials stalls: container credentials
(`AWS_CONTAINER_CREDENTIALS_FULL_URI`, as EKS Pod Identity and ECS serve them, plain http on
127.0.0.1, which the SDK rules allow) and STS `AssumeRoleWithWebIdentity` (web identity, IRSA,
through `AWS_ENDPOINT_URL_STS`). Every answer carries fresh dummy keys (the emulators accept
any) expiring `ttl_seconds` after that fetch.

Phases, switched by the nemesis: `ok` answers at once, `slow` after `slow_seconds`, `down`
accepts the request and never answers (the connection is closed without a reply once the phase
ends), the client's own timeout decides. Each consumer gets its own URL path (container) or
token (web identity), so every request in the log names the consumer that made it. Runs on
threads of the calling process.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

ROLE_ARN = "arn:aws:iam::123456789012:role/charge-recovery"
PHASES = ("ok", "slow", "down")
PROMPT_S = 0.5  # an answer later than this may have come after the client gave up


def iso8601(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def container_document(now: float, ttl_seconds: float, client: str) -> str:
    return ('{"AccessKeyId":"ASIACHAOS%s","SecretAccessKey":"chaos-secret","Token":"chaos-token",'
            '"Expiration":"%s"}' % (client.replace(".", "").upper()[:8], iso8601(now + ttl_seconds)))


def sts_document(now: float, ttl_seconds: float) -> str:
    return ("<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
            "<AccessKeyId>ASIACHAOSSTS</AccessKeyId><SecretAccessKey>chaos-secret</SecretAccessKey>"
            f"<SessionToken>chaos-token</SessionToken><Expiration>{iso8601(now + ttl_seconds)}</Expiration>"
            "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>")


class CredentialsServer:
    """`kind` is "container" or "web-identity"; `log` holds one dict per request:
    {"t" (arrival), "consumer", "phase", "answered" (bool), "after" (s), "expiration"}."""

    def __init__(self, kind: str, ttl_seconds: float, slow_seconds: float, token_dir: Path) -> None:
        if kind not in ("container", "web-identity"):
            raise ValueError(f"unknown credentials kind {kind!r}")
        self.kind, self.ttl_seconds, self.slow_seconds, self.token_dir = kind, ttl_seconds, slow_seconds, token_dir
        self.phase = "ok"
        self.log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # the request log above is the record
                pass

            def do_GET(self) -> None:
                server._serve(self, self.path.rsplit("/", 1)[-1])

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0)).decode()
                token = parse_qs(body).get("WebIdentityToken", ["?"])[0]
                server._serve(self, token.removeprefix("chaos-"))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="credentials-server", daemon=True)
        self._thread.start()

    def set_phase(self, phase: str) -> None:
        if phase not in PHASES:
            raise ValueError(f"credentials phase {phase!r} is not one of {PHASES}")
        self.phase = phase

    def _serve(self, handler: BaseHTTPRequestHandler, consumer: str) -> None:
        arrived = time.time()
        phase = self.phase
        entry: dict[str, Any] = {"t": round(arrived, 3), "consumer": consumer, "phase": phase, "answered": False}
        with self._lock:
            self.log.append(entry)
        if phase == "down":
            while self.phase == "down":
                time.sleep(0.1)
            handler.close_connection = True
            entry["after"] = round(time.time() - arrived, 3)
            return
        if phase == "slow":
            time.sleep(self.slow_seconds)
        now = time.time()
        body = (container_document(now, self.ttl_seconds, consumer) if self.kind == "container"
                else sts_document(now, self.ttl_seconds)).encode()
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json" if self.kind == "container" else "text/xml")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
            entry.update(answered=True, expiration=round(now + self.ttl_seconds, 3))
        except OSError:
            handler.close_connection = True  # the client gave up first
        entry["after"] = round(now - arrived, 3)

    def env(self, consumer: str) -> dict[str, str]:
        """The consumer's credential settings (every other source emptied by the caller)."""
        if self.kind == "container":
            return {"AWS_CONTAINER_CREDENTIALS_FULL_URI": f"http://127.0.0.1:{self.port}/creds/{consumer}"}
        token = self.token_dir / f"{consumer}.token"
        token.parent.mkdir(parents=True, exist_ok=True)
        token.write_text(f"chaos-{consumer}\n")
        return {"AWS_WEB_IDENTITY_TOKEN_FILE": str(token), "AWS_ROLE_ARN": ROLE_ARN,
                "AWS_ROLE_SESSION_NAME": consumer.replace(".", "-") + "-chaos",
                "AWS_ENDPOINT_URL_STS": f"http://127.0.0.1:{self.port}"}

    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(e) for e in self.log]

    def close(self) -> None:
        self.phase = "ok"  # releases handlers held by `down`
        self._httpd.shutdown()
        self._httpd.server_close()
