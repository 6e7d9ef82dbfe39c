"""An AWS-semantics HTTP proxy in front of an emulator: what ElasticMQ, dynalite and moto do not
do the way AWS does, applied on the wire.

    proxy = start_aws_proxy(manager, sqs.endpoint_url, service="sqs",
                            faults=Faults(error500=0.05, throttle=0.05, reset=0.03, stall=0.02, seed=7),
                            record=tmp_path / "requests.jsonl")
    env = {**proxy.env(), ...}      # proxy.url is the endpoint to give the consumer

- **SQS size accounting** (`SendMessage`, `SendMessageBatch`): a message's size is its body plus,
  for every message attribute, the bytes of its name, its DataType and its value (message
  *system* attributes do not count), held against the queue's `MaximumMessageSize`, read with
  GetQueueAttributes and cached per queue URL (dropped on SetQueueAttributes / DeleteQueue). An
  oversized SendMessage is refused whole; an oversized batch entry fails alone (the others are
  forwarded and the two answers merged), and a batch whose entries add up to more than
  `batch_limit` (1 MiB, AWS's limit since 2025) is refused whole with BatchRequestTooLong. The
  errors are AWS's JSON-protocol shape: `__type`, `message` and the `x-amzn-query-error` header.
- **Receipt handles as AWS treats them**: a delete (DeleteMessage, DeleteMessageBatch entry)
  with a handle the queue issued succeeds even when the message was deleted already or received
  again since; ElasticMQ refuses it ReceiptHandleIsInvalid, which on AWS only a handle SQS never
  issued gets.
- **AWS-fault mode** (seeded): a fraction of requests gets a 500 (InternalError / DynamoDB
  InternalServerError), throttling in the service's own words (SQS RequestThrottled or
  ThrottlingException; DynamoDB ProvisionedThroughputExceededException or ThrottlingException),
  *applied-then-reset* (forwarded, so it takes effect, then the connection is reset with no
  reply), or a stall of `stall_s` seconds before it is forwarded. Faults can be changed while
  running (`set_faults`), and `stats()` counts what was done.
- **Recording**: every request (method, path, headers, body; for the query protocol, i.e. STS,
  the reply's body too) appended to a JSONL file, for the
  wire conformance test (tests/system/test_wire_conformance.py); `recorded_requests` reads it back.

A child process (`python -m tools.local_stack.aws_proxy`), started like the emulators: it binds
port 0 and prints {"event":"listening","port":N}. Control endpoints live under /__proxy/.
"""

from __future__ import annotations

import argparse
import base64
import collections
import http.client
import json
import random
import socket
import sys
import threading
import time
import urllib.parse
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BATCH_LIMIT = 1_048_576  # SendMessageBatch's total payload (docs: "both 1 MiB" since 2025)
DEFAULT_MAX_MESSAGE_SIZE = 1_048_576  # AWS's default MaximumMessageSize for a new queue
HOP_BY_HOP = {"server", "date", "connection", "keep-alive", "transfer-encoding", "expect", "te", "upgrade", "proxy-connection", "content-length"}
CONTROL = "/__proxy/"
ISSUED_HANDLES = 200_000  # receipt handles remembered for the delete rule (oldest dropped)


@dataclass
class Faults:
    """Fractions of requests (each in [0, 1], summing to at most 1) and the stall range."""

    error500: float = 0.0
    throttle: float = 0.0
    reset: float = 0.0
    stall: float = 0.0
    stall_s: tuple[float, float] = (2.0, 5.0)
    seed: int = 0

    def draw(self, rng: random.Random) -> str | None:
        u = rng.random()
        for kind in ("error500", "throttle", "reset", "stall"):
            u -= getattr(self, kind)
            if u < 0:
                return kind
        return None


# --- SQS size accounting ---------------------------------------------------------------------


def message_size(body: str, attributes: dict[str, Any] | None) -> int:
    """SQS's count: body bytes + name, DataType and value bytes of every message attribute."""
    size = len(body.encode())
    for name, value in (attributes or {}).items():
        size += len(name.encode()) + len(str(value.get("DataType", "")).encode())
        if "StringValue" in value:
            size += len(str(value["StringValue"]).encode())
        if "BinaryValue" in value:
            size += len(base64.b64decode(value["BinaryValue"]))
    return size


def too_long_message(limit: int) -> str:
    return f"One or more parameters are invalid. Reason: Message must be shorter than {limit} bytes."


# --- errors as AWS's JSON protocol writes them ---------------------------------------------------


@dataclass
class AwsErrorReply:
    status: int
    type: str  # the full __type
    message: str
    query_error: str | None = None  # SQS: "Code;Sender|Receiver"

    def encode(self) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps({"__type": self.type, "message": self.message}).encode()
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": str(uuid.uuid4())}
        if self.query_error:
            headers["x-amzn-query-error"] = self.query_error
        if self.type.startswith("com.amazonaws.dynamodb") or self.type.endswith("DynamoDB"):
            headers["x-amz-crc32"] = str(zlib.crc32(body))
        return self.status, headers, body


def sqs_error(code: str, message: str, status: int = 400, fault: str = "Sender", shape: str | None = None) -> AwsErrorReply:
    return AwsErrorReply(status, shape or f"com.amazonaws.sqs#{code}", message, f"{code};{fault}")


def fault_error(service: str, kind: str, rng: random.Random) -> AwsErrorReply:
    coral = "com.amazon.coral.availability#ThrottlingException"
    if service == "sqs":
        if kind == "error500":
            return sqs_error("InternalError", "We encountered an internal error. Please try again.", 500, "Receiver",
                             "com.amazon.coral.service#InternalFailure")
        if rng.random() < 0.5:
            return sqs_error("RequestThrottled", "Request is throttled.")
        return sqs_error("ThrottlingException", "Rate exceeded", shape=coral)
    if service == "dynamodb":
        ddb = "com.amazonaws.dynamodb.v20120810#"
        if kind == "error500":
            return AwsErrorReply(500, ddb + "InternalServerError", "Internal server error")
        if rng.random() < 0.5:
            return AwsErrorReply(400, ddb + "ProvisionedThroughputExceededException",
                                 "The level of configured provisioned throughput for the table was exceeded.")
        return AwsErrorReply(400, ddb + "ThrottlingException", "Rate of requests exceeds the allowed throughput.")
    if kind == "error500":
        return AwsErrorReply(500, "InternalFailure", "Internal failure")
    return AwsErrorReply(400, "Throttling", "Rate exceeded")


def queue_key(queue_url: str) -> str:
    """A queue by name: its URL's host is the emulator's or the proxy's, depending on who asked."""
    return urllib.parse.urlsplit(queue_url).path.rstrip("/").rpartition("/")[2]


def service_of(target: str | None, default: str) -> str:
    if target:
        if target.startswith("AmazonSQS."):
            return "sqs"
        if target.startswith("DynamoDB_"):
            return "dynamodb"
    return default


# --- the server ------------------------------------------------------------------------------


@dataclass
class ProxyState:
    upstream: tuple[str, int]
    service: str
    faults: Faults
    batch_limit: int = BATCH_LIMIT
    record: Path | None = None
    rng: random.Random = field(default_factory=random.Random)
    lock: threading.Lock = field(default_factory=threading.Lock)
    sizes: dict[str, int] = field(default_factory=dict)
    issued: collections.OrderedDict[str, None] = field(default_factory=collections.OrderedDict)
    stats: dict[str, int] = field(default_factory=dict)

    def count(self, key: str) -> None:
        with self.lock:
            self.stats[key] = self.stats.get(key, 0) + 1

    def draw(self) -> tuple[str | None, random.Random]:
        with self.lock:
            kind = self.faults.draw(self.rng)
            # A per-request generator from the seeded one, so the details of each fault are
            # fixed by the draw order alone (threads interleave the draws, not the details).
            return kind, random.Random(self.rng.getrandbits(64))

    def upstream_call(self, target: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The proxy's own SQS call, signed: moto routes an unsigned request by path alone, to S3."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        from tools.local_stack.aws_endpoint import DEFAULT_REGION, DUMMY_CREDENTIALS

        host, port = self.upstream
        request = AWSRequest("POST", f"http://{host}:{port}/", data=json.dumps(payload),
                             headers={"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.0"})
        credentials = Credentials(DUMMY_CREDENTIALS["aws_access_key_id"], DUMMY_CREDENTIALS["aws_secret_access_key"])
        SigV4Auth(credentials, "sqs", DEFAULT_REGION).add_auth(request)
        conn = http.client.HTTPConnection(host, port, timeout=10)
        try:
            conn.request("POST", "/", request.body, dict(request.headers.items()))
            response = conn.getresponse()
            data = response.read()
            return json.loads(data) if response.status == 200 else None
        except (OSError, ValueError):
            return None
        finally:
            conn.close()

    def max_message_size(self, queue_url: str) -> int:
        key = queue_key(queue_url)
        with self.lock:
            cached = self.sizes.get(key)
        if cached is not None:
            return cached
        reply = self.upstream_call("AmazonSQS.GetQueueAttributes",
                                   {"QueueUrl": queue_url, "AttributeNames": ["MaximumMessageSize"]})
        if reply is None:
            return DEFAULT_MAX_MESSAGE_SIZE  # not cached: the queue may not exist yet
        self.set_max_message_size(key, reply.get("Attributes", {}).get("MaximumMessageSize", DEFAULT_MAX_MESSAGE_SIZE))
        return self.max_message_size(queue_url)

    def set_max_message_size(self, key: str, value: Any) -> None:
        with self.lock:
            self.sizes[key] = int(value)

    def forget_queue(self, queue_url: str) -> None:
        with self.lock:
            self.sizes.pop(queue_key(queue_url), None)

    def remember_handles(self, handles: list[str]) -> None:
        with self.lock:
            for handle in handles:
                self.issued[handle] = None
            while len(self.issued) > ISSUED_HANDLES:
                self.issued.popitem(last=False)

    def was_issued(self, handle: str) -> bool:
        with self.lock:
            return handle in self.issued

    def write_record(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes,
                     response: bytes | None = None) -> None:
        if self.record is None:
            return
        try:
            text: dict[str, str] = {"body": body.decode()}
        except UnicodeDecodeError:
            text = {"body_b64": base64.b64encode(body).decode()}
        if response is not None:
            text["response"] = response.decode(errors="replace")
        line = json.dumps({"time": time.time(), "method": method, "path": path, "headers": headers, **text})
        with self.lock, open(self.record, "a") as f:
            f.write(line + "\n")


def recorded_requests(record: Path, target: str) -> list[dict[str, Any]]:
    """The JSON bodies of the recorded requests with that X-Amz-Target (e.g.
    "AmazonSQS.ReceiveMessage"), oldest first; none while nothing was recorded."""
    if not record.exists():
        return []
    out = []
    for line in record.read_text().splitlines():
        request = json.loads(line)
        headers = {name.lower(): value for name, value in request["headers"]}
        if headers.get("x-amz-target") == target:
            out.append(json.loads(request["body"]))
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and "Expect: 100-continue" is answered
    server: "ProxyServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def setup(self) -> None:
        super().setup()
        self._upstream: http.client.HTTPConnection | None = None

    def finish(self) -> None:
        if self._upstream is not None:
            self._upstream.close()
        super().finish()

    # --- request entry points ---

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith(CONTROL):
            self._control(body)
            return
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP]
        target = self.headers.get("X-Amz-Target")
        if target:
            state.write_record(self.command, self.path, headers, body)
        service = service_of(target, state.service)
        operation = (target or "").rpartition(".")[2] or _query_action(body)
        kind, rng = state.draw()
        if kind is not None:
            state.count(f"fault.{kind}")
        if kind in ("error500", "throttle"):
            self._reply(*fault_error(service, kind, rng).encode())
            return
        if kind == "stall":
            time.sleep(rng.uniform(*state.faults.stall_s))
        reply = self._sqs_rules(operation, body, headers) if service == "sqs" else None
        if reply is None:
            reply = self._forward(headers, body)
        if not target:  # query protocol (STS): the reply is kept too, for the credentials it issued
            state.write_record(self.command, self.path, headers, body, reply[2] if reply else b"")
        if reply is None or kind == "reset":
            self._reset()  # applied upstream (if it got there), then the answer never arrives
            return
        self._reply(*reply)

    # --- SQS rules ---

    def _sqs_rules(self, operation: str, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes] | None:
        state = self.server.state
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return None
        if not isinstance(request, dict):
            return None
        url = str(request.get("QueueUrl", ""))
        if operation in ("CreateQueue", "SetQueueAttributes", "GetQueueAttributes"):
            return self._queue_attributes(operation, request, headers, body)
        if operation == "DeleteQueue":
            state.forget_queue(url)
            return None
        if operation == "SendMessage":
            size = message_size(str(request.get("MessageBody", "")), request.get("MessageAttributes"))
            limit = state.max_message_size(url)
            if size > limit:
                state.count("size.send_refused")
                return sqs_error("InvalidParameterValue", too_long_message(limit),
                                 shape="com.amazon.coral.service#InvalidParameterValueException").encode()
            return None
        if operation == "SendMessageBatch":
            return self._send_batch(request, url, headers)
        if operation in ("ReceiveMessage", "DeleteMessage", "DeleteMessageBatch"):
            return self._receipt_handles(operation, request, headers, body)
        return None

    def _queue_attributes(self, operation: str, request: dict[str, Any], headers: list[tuple[str, str]],
                          body: bytes) -> tuple[int, dict[str, str], bytes] | None:
        """ElasticMQ neither keeps nor reports MaximumMessageSize: the proxy remembers what
        CreateQueue / SetQueueAttributes set and answers it in GetQueueAttributes, as AWS does."""
        state = self.server.state
        size = (request.get("Attributes") or {}).get("MaximumMessageSize")
        reply = self._forward(headers, body)
        if reply is None or reply[0] != 200:
            return reply
        answer = json.loads(reply[2] or b"{}")
        if operation == "CreateQueue":
            key = queue_key(str(answer.get("QueueUrl", "")))
            if size is not None:
                state.set_max_message_size(key, size)
            else:
                state.forget_queue(str(answer.get("QueueUrl", "")))
            return reply
        if operation == "SetQueueAttributes":
            if size is not None:
                state.set_max_message_size(queue_key(str(request.get("QueueUrl", ""))), size)
            return reply
        names = request.get("AttributeNames") or []
        attributes = answer.setdefault("Attributes", {})
        if ("All" in names or "MaximumMessageSize" in names) and "MaximumMessageSize" not in attributes:
            attributes["MaximumMessageSize"] = str(state.max_message_size(str(request.get("QueueUrl", ""))))
            return 200, reply[1], json.dumps(answer).encode()
        return reply

    def _receipt_handles(self, operation: str, request: dict[str, Any], headers: list[tuple[str, str]],
                         body: bytes) -> tuple[int, dict[str, str], bytes] | None:
        """AWS: a delete with a receipt handle SQS issued succeeds even when the message is gone
        or was received again since ("the request succeeds, but the message will not be
        deleted"); ElasticMQ answers ReceiptHandleIsInvalid. So a retried delete whose first
        try was applied (a reset) is refused there and not on AWS: the proxy answers as AWS."""
        state = self.server.state
        reply = self._forward(headers, body)
        if reply is None:
            return None
        status, out_headers, data = reply
        if operation == "ReceiveMessage":
            if status == 200:
                messages = json.loads(data or b"{}").get("Messages") or []
                state.remember_handles([str(m.get("ReceiptHandle")) for m in messages])
            return reply
        invalid = "ReceiptHandleIsInvalid" in (out_headers.get("x-amzn-query-error", "") + data.decode(errors="replace"))
        if operation == "DeleteMessage":
            if status == 400 and invalid and state.was_issued(str(request.get("ReceiptHandle"))):
                state.count("handles.stale_delete_accepted")
                return 200, {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": str(uuid.uuid4())}, b"{}"
            return reply
        if status != 200 or not invalid:
            return reply
        answer = json.loads(data or b"{}")
        handles = {str(e.get("Id")): str(e.get("ReceiptHandle")) for e in request.get("Entries") or []}
        accepted = [f for f in answer.get("Failed") or [] if "ReceiptHandleIsInvalid" in str(f.get("Code"))
                    and state.was_issued(handles.get(str(f.get("Id")), ""))]
        if not accepted:
            return reply
        for _ in accepted:
            state.count("handles.stale_delete_accepted")
        answer["Failed"] = [f for f in answer["Failed"] if f not in accepted]
        answer["Successful"] = list(answer.get("Successful") or []) + [{"Id": f["Id"]} for f in accepted]
        return 200, out_headers, json.dumps(answer).encode()

    def _send_batch(self, request: dict[str, Any], url: str, headers: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes] | None:
        state = self.server.state
        entries = request.get("Entries") or []
        if not isinstance(entries, list) or len(entries) > 10:
            return None  # the emulator's own checks answer malformed batches
        sizes = [message_size(str(e.get("MessageBody", "")), e.get("MessageAttributes")) for e in entries]
        total = sum(sizes)
        if total > state.batch_limit:
            state.count("size.batch_refused")
            return sqs_error("AWS.SimpleQueueService.BatchRequestTooLong",
                             f"Batch requests cannot be longer than {state.batch_limit} bytes. You have sent {total} bytes.",
                             shape="com.amazonaws.sqs#BatchRequestTooLong").encode()
        limit = state.max_message_size(url)
        failed = [{"Id": e.get("Id"), "SenderFault": True, "Code": "InvalidParameterValue",
                   "Message": too_long_message(limit)} for e, s in zip(entries, sizes) if s > limit]
        if not failed:
            return None
        state.count("size.entry_refused")
        kept = [e for e, s in zip(entries, sizes) if s <= limit]
        if not kept:
            return 200, {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": str(uuid.uuid4())}, \
                json.dumps({"Successful": [], "Failed": failed}).encode()
        reply = self._forward(headers, json.dumps({**request, "Entries": kept}).encode())
        if reply is None or reply[0] != 200:
            return reply
        merged = json.loads(reply[2] or b"{}")
        merged["Failed"] = list(merged.get("Failed") or []) + failed
        return 200, reply[1], json.dumps(merged).encode()

    # --- plumbing ---

    def _forward(self, headers: list[tuple[str, str]], body: bytes) -> tuple[int, dict[str, str], bytes] | None:
        for attempt in (1, 2):  # a kept-alive upstream connection may have been closed meanwhile
            if self._upstream is None:
                self._upstream = http.client.HTTPConnection(*self.server.state.upstream, timeout=60)
            try:
                self._upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in headers:
                    self._upstream.putheader(k, v)
                self._upstream.putheader("Content-Length", str(len(body)))
                self._upstream.endheaders(body)
                response = self._upstream.getresponse()
                data = response.read()
                out = {k: v for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP}
                if response.will_close:
                    self._upstream.close()
                    self._upstream = None
                return response.status, out, data
            except (OSError, http.client.HTTPException):
                self._upstream.close()
                self._upstream = None
                if attempt == 2:
                    return None
        return None

    def _reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _reset(self) -> None:
        # SO_LINGER 0: a reset, not an orderly close the client might read as an empty answer.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _control(self, body: bytes) -> None:
        state = self.server.state
        if self.path == CONTROL + "faults" and self.command == "POST":
            spec = json.loads(body or b"{}")
            with state.lock:
                state.faults = Faults(**{**asdict(state.faults), **spec})
        with state.lock:
            payload = {"stats": dict(state.stats), "faults": asdict(state.faults)}
        self._reply(200, {"Content-Type": "application/json"}, json.dumps(payload).encode())


def _query_action(body: bytes) -> str:
    """The Action of a query-protocol request (STS), or ""."""
    try:
        return urllib.parse.parse_qs(body.decode()).get("Action", [""])[0]
    except UnicodeDecodeError:
        return ""


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, state: ProxyState) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.state = state


# --- the handle ------------------------------------------------------------------------------


def _handle_class() -> type:
    from tools.local_stack.aws_endpoint import DEFAULT_REGION, AwsEndpoint
    from tools.local_stack.http_json import http_request

    @dataclass
    class AwsProxy(AwsEndpoint):
        """A running proxy: `url` (== endpoint_url) fronts `upstream`."""

        process: Any
        endpoint_url: str
        upstream: str
        service: str
        region: str = DEFAULT_REGION

        @property
        def url(self) -> str:
            return self.endpoint_url

        def set_faults(self, faults: Faults | None = None, **fields: Any) -> None:
            spec = {**(asdict(faults) if faults else {}), **fields}
            http_request(self.endpoint_url, "POST", CONTROL + "faults", spec)

        def stats(self) -> dict[str, int]:
            return http_request(self.endpoint_url, "GET", CONTROL + "stats").body["stats"]

    return AwsProxy


def start_aws_proxy(manager: Any, upstream: str, *, service: str, faults: Faults | None = None,
                    record: Path | None = None, batch_limit: int = BATCH_LIMIT, name: str | None = None) -> Any:
    """Start a proxy in front of `upstream` (an emulator's http URL) for `service` ("sqs",
    "dynamodb" or "sts": the error shapes of requests with no X-Amz-Target); `faults` off by
    default, `record` a JSONL file to append every request to. Returns an AwsProxy handle
    (`.url`, `.env()`, `.sqs()`, `.set_faults(...)`, `.stats()`)."""
    from tools.local_stack.paths import PYTHON
    from tools.local_stack.processes import json_event

    argv = [PYTHON, "-m", "tools.local_stack.aws_proxy", "--upstream", upstream, "--service", service,
            "--faults", json.dumps(asdict(faults or Faults())), "--batch-limit", str(batch_limit)]
    if record is not None:
        argv += ["--record", str(record)]
    proc = manager.start(name or f"aws-proxy-{service}", argv, ready=json_event("listening"), timeout=15)
    return _handle_class()(proc, f"http://127.0.0.1:{proc.ready_info['port']}", upstream, service)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--service", default="sqs")
    parser.add_argument("--faults", default="{}")
    parser.add_argument("--batch-limit", type=int, default=BATCH_LIMIT)
    parser.add_argument("--record", type=Path)
    args = parser.parse_args(argv)
    parsed = urllib.parse.urlsplit(args.upstream)
    faults = Faults(**json.loads(args.faults))
    faults.stall_s = tuple(faults.stall_s)  # type: ignore[assignment]
    state = ProxyState((parsed.hostname or "127.0.0.1", parsed.port or 80), args.service, faults,
                       args.batch_limit, args.record, random.Random(faults.seed))
    server = ProxyServer(state)
    print(json.dumps({"event": "listening", "port": server.server_address[1]}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
