"""HTTP front of the fake bank: routes, body framing, fault timing, logs and the CLI.

    python -m tools.fake_bank [--port 0] [--port-file F] [--seed N] [--faults JSON]
                              [--log-level debug|info|warning|error] [--token-file F]
                              [--tls-cert F --tls-key F [--tls-client-ca F]]

--token-file: debits and notifications must carry `Authorization: Bearer <the file's content,
stripped>`, else 401 {code: UNAUTHORIZED}; the file is read on every request, so a test
rotates the token by rewriting it. --tls-cert/--tls-key serve HTTPS; --tls-client-ca also
requires every client to present a certificate that CA signed (mutual TLS), for every route.

Prints {"event":"listening","port":N,...} on stdout once it accepts connections; logs one
JSON object per line on stderr (account numbers masked); exits 0 on SIGTERM/SIGINT.
HTTP/1.1 with keep-alive: every response carries Content-Length and every request body is
read in full, so a client can reuse its connection after any answer (including errors).
"""

from __future__ import annotations

import argparse
import email.utils
import json
import math
import os
import secrets
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from tools.common import LEVELS, JsonLogger, StopSignal, announce_listening, log_server_error, mask_account
from tools.fake_bank.bank import Attempt, Bank, Outcome
from tools.fake_bank.faults import FaultConfigError, Faults
from tools.fake_bank.ledger_export import ledger_csv
from tools.fake_bank.messages import DebitRequest, MalformedRequest, NotificationRequest, parse_json_object

MAX_BODY_BYTES = 1 << 20


class _Reject(Exception):
    """Answer with an error status; `close` drops the connection when the request framing
    is broken (we cannot tell where the next request starts)."""

    def __init__(self, status: int, code: str, detail: str, close: bool = False) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.close = status, code, detail, close


class FakeBankServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of worker connections must not overflow the backlog

    def __init__(
        self, address: tuple[str, int], bank: Bank, log: JsonLogger, token_file: str | None = None
    ) -> None:
        super().__init__(address, _Handler)
        self.bank = bank
        self.log = log
        self.token_file = token_file
        # Wakes handlers sleeping on injected latency or a withheld response at shutdown.
        self.stopping = threading.Event()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ssl.SSLError):
            self.log.info("tls_refused", client=str(client_address), error=repr(sys.exc_info()[1]))
            _drain_before_close(request)
            return
        log_server_error(self.log, client_address)


def _drain_before_close(request: socket.socket) -> None:
    """After a refused TLS 1.3 handshake the client has already sent its request: closing with
    those bytes unread would make the kernel send a reset, which can overtake our TLS alert, so
    the client would see a dropped connection instead of the refusal. Read until it hangs up."""
    try:
        raw = socket.socket(fileno=os.dup(request.fileno()))
    except OSError:
        return
    with raw:
        try:
            raw.shutdown(socket.SHUT_WR)
            raw.settimeout(2.0)
            while raw.recv(65536):
                pass
        except OSError:
            pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-bank/1"
    server: FakeBankServer
    # A response leaves in one write (headers and body buffered, sent at flush) on a socket
    # without Nagle, as a production HTTP server sends it. The stdlib's defaults (unbuffered,
    # Nagle on) send the body as a second small segment that the kernel holds until the
    # client's delayed ACK, 40 ms later: every client that waits for the whole response
    # (libcurl, urllib3, Apache HttpClient) would see 40 ms per call that no real bank adds.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def handle_expect_100(self) -> bool:
        # The interim answer must leave before the body is read: the writes are buffered.
        super().handle_expect_100()
        self.wfile.flush()
        return True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        # Requests get one structured line in _dispatch; this only sees protocol errors
        # (bad request line, oversized headers) that the stdlib answers on its own.
        self.server.log.debug("http", client=self.client_address[0], msg=format % args)

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass  # _dispatch logs every request with its outcome

    # --- plumbing -------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        started = time.monotonic()
        self._status = 0
        self._fields: dict[str, Any] = {}
        self._attempt: Attempt | None = None
        self._extra_headers: dict[str, str] = {}
        split = urlsplit(self.path)
        path = split.path
        self._query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        level = "debug" if method == "GET" else "info"  # ledger/health polling is noise
        try:
            body = self._read_body()
            route = _ROUTES.get((method, path))
            if route is None and method == "GET" and path.startswith(_INQUIRY_PREFIX):
                route = _Handler._inquire
            if route is None:
                allowed = sorted(m for (m, p) in _ROUTES if p == path)
                if allowed:
                    raise _Reject(405, "METHOD_NOT_ALLOWED", f"use {', '.join(allowed)}")
                raise _Reject(404, "NOT_FOUND", f"no route for {path}")
            route(self, body)
        except _Reject as e:
            if e.close:
                self.close_connection = True
            if e.status == 400:
                self.server.bank.count("malformed")
            self._respond(e.status, {"code": e.code, "detail": e.detail}, "rejected-request")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self._fields["outcome"] = "client-gone"
        except Exception as e:  # a bug in the fake must be visible, not a hung client
            level = "error"
            self._fields["error"] = repr(e)
            self.close_connection = True
            if not self._status:
                try:
                    self._respond(500, {"code": "INTERNAL", "detail": "fake-bank bug, see its log"}, "bug")
                except OSError:
                    pass  # the client is gone; the error line below still records the bug
        finally:
            if self._attempt is not None:
                self.server.bank.answered(self._attempt, self._status or None, str(self._fields.get("outcome")))
            self.server.log.log(
                level,
                "request",
                method=method,
                path=path,
                status=self._status or None,
                ms=round((time.monotonic() - started) * 1000, 1),
                **self._fields,
            )

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            size = int(length)
        except ValueError:
            raise _Reject(400, "MALFORMED_REQUEST", "bad Content-Length", close=True) from None
        if size < 0 or size > MAX_BODY_BYTES:
            raise _Reject(413, "BODY_TOO_LARGE", f"body limit is {MAX_BODY_BYTES} bytes", close=True)
        return self.rfile.read(size)

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _Reject(400, "MALFORMED_REQUEST", "bad chunk header", close=True) from None
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers, up to the empty line
                    pass
                return b"".join(chunks)
            total += size
            if total > MAX_BODY_BYTES:
                raise _Reject(413, "BODY_TOO_LARGE", f"body limit is {MAX_BODY_BYTES} bytes", close=True)
            chunks.append(self.rfile.read(size))
            self.rfile.readline(8)  # CRLF after each chunk

    def _respond(self, status: int, body: dict[str, Any], outcome: str) -> None:
        payload = json.dumps(body, separators=(",", ":")).encode()
        self._status = status
        self._fields.setdefault("outcome", outcome)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in self._extra_headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _answer(self, outcome: Outcome) -> None:
        retry_after = self.server.bank.faults.retry_after
        if retry_after is not None and outcome.status in (429, 503):
            if retry_after.format == "http-date":
                # Rounded up: the date must not name a moment earlier than `seconds` from now.
                when = math.ceil(time.time()) + retry_after.seconds
                self._extra_headers["Retry-After"] = email.utils.formatdate(when, usegmt=True)
            else:
                self._extra_headers["Retry-After"] = str(retry_after.seconds)
            self._fields["retryAfter"] = self._extra_headers["Retry-After"]
        self._respond(outcome.status, outcome.body, outcome.label)

    def _pause(self, millis: int) -> None:
        if millis > 0:
            self.server.stopping.wait(millis / 1000)

    def _json_body(self, body: bytes) -> dict[str, Any]:
        try:
            return parse_json_object(body)
        except MalformedRequest as e:
            raise _Reject(400, "MALFORMED_REQUEST", str(e)) from None

    # --- routes ---------------------------------------------------------------------------

    def _health(self, _body: bytes) -> None:
        self._respond(200, {"status": "ok"}, "ok")

    def _authorize(self) -> None:
        if self.server.token_file is None:
            return
        with open(self.server.token_file, encoding="utf-8") as f:
            expected = f.read().strip()
        if self.headers.get("Authorization", "") != f"Bearer {expected}":
            self.server.bank.count("unauthorized")
            raise _Reject(401, "UNAUTHORIZED", "missing or wrong bearer token")

    def _debit(self, body: bytes) -> None:
        self._authorize()
        try:
            request = DebitRequest.parse(self.headers.get("Idempotency-Key"), body)
        except MalformedRequest as e:
            raise _Reject(400, "MALFORMED_REQUEST", str(e)) from None
        self._fields.update(chargeId=request.charge_id, account=mask_account(request.account_id))
        self._attempt = self.server.bank.arrived("debit", request.charge_id)
        self._pause(self.server.bank.faults.latency_ms)
        hang_ms = self.server.bank.hangs()
        if hang_ms is not None:
            # Beyond the caller's timeout, nothing committed, no answer at all.
            self._fields["outcome"] = "hang"
            self._pause(hang_ms)
            self.close_connection = True
            return
        outcome = self.server.bank.debit(request, self.headers.get("traceparent"))
        if outcome.withhold is None:
            self._answer(outcome)
            return
        # Committed, but the caller must not learn it in time: the hardest case for it.
        self._fields.update(debitId=outcome.body["debitId"], outcome="commit-then-timeout")
        if outcome.withhold.mode == "close":
            self.close_connection = True
            return
        self._pause(outcome.withhold.delay_ms)
        self._answer(outcome)

    def _inquire(self, _body: bytes) -> None:
        """GET /v1/debits/{idempotencyKey}: 200 {debitId, chargeId} while the key is remembered,
        404 {code: DEBIT_NOT_FOUND} otherwise; transient faults apply as to debits."""
        self._authorize()
        key = urlsplit(self.path).path[len(_INQUIRY_PREFIX) :]
        if not DebitRequest.valid_key(key):
            raise _Reject(400, "MALFORMED_REQUEST", "bad idempotency key")
        self._fields.update(chargeId=key)
        self._attempt = self.server.bank.arrived("inquiry", key)
        self._pause(self.server.bank.faults.latency_ms)
        self._answer(self.server.bank.inquire(key))

    def _notify(self, body: bytes) -> None:
        self._authorize()
        try:
            request = NotificationRequest.parse(self.headers.get("Idempotency-Key"), body)
        except MalformedRequest as e:
            raise _Reject(400, "MALFORMED_REQUEST", str(e)) from None
        self._fields.update(chargeId=request.charge_id, account=mask_account(request.account_id))
        self._attempt = self.server.bank.arrived("notification", request.charge_id)
        self._pause(self.server.bank.faults.latency_ms)
        self._answer(self.server.bank.notify(request, self.headers.get("traceparent")))

    def _ledger(self, _body: bytes) -> None:
        self._respond(200, self.server.bank.snapshot(), "ok")

    def _ledger_csv(self, _body: bytes) -> None:
        payload = ledger_csv(self.server.bank.snapshot()["debits"]).encode()
        self._status = 200
        self._fields.setdefault("outcome", "ok")
        self.send_response(200)
        self.send_header("Content-Type", "text/csv; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _attempts(self, _body: bytes) -> None:
        kind = self._query.get("kind", "debit")
        if kind not in ("debit", "notification", "inquiry", "all"):
            raise _Reject(400, "MALFORMED_REQUEST", "kind must be debit, notification, inquiry or all")
        attempts = self.server.bank.attempts(None if kind == "all" else kind, self._query.get("chargeId"))
        self._respond(200, {"attempts": attempts, "nowMonotonicMs": round(time.monotonic() * 1000, 3)}, "ok")

    def _reset(self, _body: bytes) -> None:
        self.server.bank.reset()
        self._respond(200, {"status": "reset"}, "reset")

    def _get_faults(self, _body: bytes) -> None:
        self._respond(200, self.server.bank.faults.to_json(), "ok")

    def _set_faults(self, body: bytes) -> None:
        try:
            faults = Faults.parse(self._json_body(body))
        except FaultConfigError as e:
            raise _Reject(400, "INVALID_FAULTS", str(e)) from None
        self.server.bank.set_faults(faults)
        self._fields["faults"] = faults.to_json()
        self._respond(200, faults.to_json(), "faults-set")


_INQUIRY_PREFIX = "/v1/debits/"
_ROUTES: dict[tuple[str, str], Callable[[_Handler, bytes], None]] = {
    ("GET", "/health"): _Handler._health,
    ("POST", "/v1/debits"): _Handler._debit,
    ("POST", "/v1/notifications"): _Handler._notify,
    ("GET", "/v1/ledger"): _Handler._ledger,
    ("GET", "/v1/ledger.csv"): _Handler._ledger_csv,
    ("GET", "/admin/attempts"): _Handler._attempts,
    ("POST", "/admin/reset"): _Handler._reset,
    ("GET", "/admin/faults"): _Handler._get_faults,
    ("POST", "/admin/faults"): _Handler._set_faults,
}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.fake_bank", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 (default) picks a free one")
    parser.add_argument("--port-file", help="also write the bound port to this file")
    parser.add_argument("--seed", type=int, help="seed of the fault random source (default: random, logged)")
    parser.add_argument("--faults", help="initial fault configuration, JSON as for POST /admin/faults")
    parser.add_argument("--log-level", default="info", choices=sorted(LEVELS, key=LEVELS.__getitem__))
    parser.add_argument("--token-file", help="require this bearer token (file re-read per request)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (needs --tls-key)")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument("--tls-client-ca", help="require client certificates signed by this PEM CA")
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca is not None and args.tls_cert is None:
        parser.error("--tls-client-ca needs --tls-cert")
    if args.faults is not None:
        try:
            args.faults = Faults.parse(json.loads(args.faults))
        except (json.JSONDecodeError, FaultConfigError) as e:
            parser.error(f"--faults: {e}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    log = JsonLogger("fake-bank", args.log_level)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    bank = Bank(seed)
    if args.faults is not None:
        bank.set_faults(args.faults)
    stop = StopSignal()
    try:
        server = FakeBankServer((args.host, args.port), bank, log, args.token_file)
    except OSError as e:
        log.error("bind_failed", host=args.host, port=args.port, error=str(e))
        return 2
    scheme = "http"
    if args.tls_cert is not None:
        scheme = "https"
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_client_ca is not None:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.tls_client_ca)
        # The handshake runs in the handler thread, on first read: a client that fails it
        # (the point of the mutual-TLS tests) must not stall the accept loop.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    port = server.server_address[1]
    serving = threading.Thread(target=server.serve_forever, args=(0.1,), name="fake-bank-accept", daemon=True)
    serving.start()
    log.info(
        "started",
        host=args.host,
        port=port,
        seed=seed,
        faults=bank.faults.to_json(),
        tls=scheme == "https",
        clientCertificates=args.tls_client_ca is not None,
        bearerToken=args.token_file is not None,
    )
    announce_listening(port, args.port_file, url=f"{scheme}://{args.host}:{port}")
    stop.wait(serving)
    log.info("stopping", signal=stop.signum)
    server.shutdown()
    server.stopping.set()
    server.server_close()
    log.info("stopped")
    return 0
