"""Launcher for moto server (SQS + DynamoDB emulator) that makes DynamoDB atomic.

    .venv/bin/python -m tools.moto_server [--port 0] [--port-file F] [--no-dynamodb-lock]
                                          [--no-sqs-lock] [--enforce-iam-gaps]
                                          [--log-level debug|info|warning|error]

A module of the `tools` package, run from the repository root (or with it on PYTHONPATH).

Why not plain `moto_server`: moto serves each request on its own thread and its DynamoDB
backend takes no per-item lock, so two concurrent conditional writes on one key can both
pass their condition, a race real DynamoDB never has. A concurrency test of our claim
protocol is only evidence if the store is atomic, so this launcher wraps moto's WSGI app
(the same DomainDispatcherApplication that `moto_server` runs) with one lock taken by every
request whose X-Amz-Target starts with "DynamoDB_" (and by POST /moto-api/reset, so a reset
never interleaves with a write). `--no-dynamodb-lock` removes the lock, for negative controls.

moto's SQS backend is not thread-safe either: DeleteMessage rebuilds the queue's message list
from a snapshot, so a send or another delete racing it is undone (a message sent is lost, or
one deleted comes back; measured: 70 messages left on a queue after 2,600 successful deletes).
So every other request (SQS) takes a second lock, and the reset takes both. A long poll must
not hold it while it waits, or one idle receiver would stall every producer: moto's receive
loop waits for messages in Queue.wait_for_messages, which this launcher patches to release the
SQS lock for the wait and take it back before looking again, so long polls wait concurrently
and only their scans of the queue are serialised. `--no-sqs-lock` removes this lock.

moto also builds every queue attribute, counting the whole queue, for each message it hands
out (the retention check) and for each message sent, so a deep queue is quadratic to fill and
to drain: a pre-filled 2,600-message queue drained at 7 messages/s. The launcher patches both
spots to read the one attribute they need (see avoid_queue_rescans).

`--enforce-iam-gaps` makes moto's IAM check what AWS checks, for least-privilege tests of a
real policy (tests/system/test_least_privilege.py). It only matters once authentication is
on (INITIAL_NO_AUTH_ACTION_COUNT). moto 5.2.1 authorises every DynamoDB request against "*",
so a statement scoped to a table ARN never matches; an SQS request naming its queue by
QueueName against "*" too; and SQS batch operations under their own names
(sqs:SendMessageBatch), where AWS checks the single-message action (sqs:SendMessage). The
flag patches moto in this process (see enforce_iam_gaps) so a policy is tested verbatim, with
table scoping enforced like queue scoping, instead of a policy bent to fit the emulator.

Like `moto_server` it uses werkzeug's threaded server, sets MOTO_PORT (to the bound port)
unless already set, and reads moto's settings (e.g. INITIAL_NO_AUTH_ACTION_COUNT) from the
environment it inherits. Prints {"event":"listening","port":N,...} on stdout when ready,
logs JSON lines on stderr, exits 0 on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from tools.common import LEVELS, JsonLogger, StopSignal, announce_listening, log_server_error

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def needs_dynamodb_lock(environ: dict[str, Any]) -> bool:
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
        return True
    return is_reset(environ)


def is_reset(environ: dict[str, Any]) -> bool:
    return environ.get("REQUEST_METHOD") == "POST" and environ.get("PATH_INFO") == "/moto-api/reset"


def needs_sqs_lock(environ: dict[str, Any]) -> bool:
    """Every request that is not DynamoDB's: the launcher serves only SQS besides DynamoDB,
    and SQS requests come in either protocol (JSON with X-Amz-Target "AmazonSQS.*", or the
    query protocol, which has no target header). moto's own /moto-api pages other than the
    reset read no queue state worth serialising, but taking the lock for them is harmless."""
    return is_reset(environ) or not environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_")


class ServiceLocks:
    """The launcher's two locks: one for DynamoDB, one for SQS (None when turned off)."""

    def __init__(self, dynamodb: threading.Lock | None, sqs: threading.Lock | None) -> None:
        self.dynamodb = dynamodb
        self.sqs = sqs

    def for_request(self, environ: dict[str, Any]) -> list[threading.Lock]:
        """The locks a request takes, always in the order DynamoDB then SQS (no deadlock)."""
        locks = []
        if self.dynamodb is not None and needs_dynamodb_lock(environ):
            locks.append(self.dynamodb)
        if self.sqs is not None and needs_sqs_lock(environ):
            locks.append(self.sqs)
        return locks


class Serializer:
    """WSGI middleware: runs DynamoDB requests one at a time and SQS requests one at a time
    (each service has its own lock, so a DynamoDB write never waits for an SQS scan).

    The response body is drained while the lock is held: a WSGI app may do its work lazily
    while the server iterates the body, after __call__ has returned.
    """

    def __init__(self, app: WsgiApp, locks: ServiceLocks) -> None:
        self._app = app
        self._locks = locks

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        locks = self._locks.for_request(environ)
        if not locks:
            return self._app(environ, start_response)
        with contextlib.ExitStack() as held:
            for lock in locks:
                held.enter_context(lock)
            result = self._app(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return [body]


def release_sqs_lock_while_waiting(sqs_lock: threading.Lock) -> None:
    """Patch moto's long-poll wait (Queue.wait_for_messages, called only from the receive loop
    of a request that holds `sqs_lock`) to release the lock while it waits. A send notifies the
    queue's condition, so a waiting poll wakes as it would without the lock; it then takes the
    lock again before it looks at the queue."""
    from moto.sqs.models import Queue

    original = Queue.wait_for_messages

    def wait_for_messages(self: Any, timeout: int) -> None:
        sqs_lock.release()
        try:
            original(self, timeout)
        finally:
            sqs_lock.acquire()

    Queue.wait_for_messages = wait_for_messages  # type: ignore[method-assign]


def avoid_queue_rescans() -> None:
    """Patch the two spots where moto builds every queue attribute, which counts the whole queue
    three times (visible, in flight, delayed), only to read one constant attribute:

    - the retention check of each message a receive hands out reads MessageRetentionPeriod;
    - each SendMessage (and each entry of a batch) reads ContentBasedDeduplication.

    With them a receive or a send costs O(queue depth) per message, so a deep queue slows to a
    crawl (a pre-filled 2,600-message queue drained at 7 messages/s, and filled at about as
    many). The patched versions read the attribute itself; results are unchanged.
    GetQueueAttributes still counts, as it must."""
    from moto.core.utils import unix_time
    from moto.sqs.models import Queue, SQSBackend

    def is_message_valid_based_on_retention_period(self: Any, queue_name: str, message: Any) -> bool:
        retention_period = int(self.get_queue(queue_name).message_retention_period)
        return retention_period + message.sent_timestamp / 1000 > unix_time()

    SQSBackend.is_message_valid_based_on_retention_period = is_message_valid_based_on_retention_period  # type: ignore[method-assign]

    sending = threading.local()
    all_attributes = Queue.attributes.fget  # type: ignore[attr-defined]

    def attributes(self: Any) -> dict[str, Any]:
        if getattr(sending, "active", False):
            # send_message and _validate_message read only this one (as "true"/"false").
            return {"ContentBasedDeduplication": str(bool(self.content_based_deduplication)).lower()}
        return all_attributes(self)

    original_send = SQSBackend.send_message

    def send_message(self: Any, *args: Any, **kwargs: Any) -> Any:
        sending.active = True
        try:
            return original_send(self, *args, **kwargs)
        finally:
            sending.active = False

    Queue.attributes = property(attributes)  # type: ignore[assignment,method-assign]
    SQSBackend.send_message = send_message  # type: ignore[method-assign]


class _JsonLogHandler(logging.Handler):
    """Routes moto's, flask's and werkzeug's stdlib logging into our JSON lines."""

    def __init__(self, log: JsonLogger) -> None:
        super().__init__()
        self._log = log

    def emit(self, record: logging.LogRecord) -> None:
        level = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning"}.get(
            record.levelno, "error"
        )
        fields: dict[str, Any] = {"logger": record.name, "msg": record.getMessage()}
        if record.exc_info:
            fields["exc"] = self.formatException(record.exc_info)
        self._log.log(level, "log", **fields)


def _make_request_handler(log: JsonLogger) -> type:
    from werkzeug.serving import WSGIRequestHandler

    class RequestHandler(WSGIRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            log.info(
                "request",
                method=getattr(self, "command", None),
                path=getattr(self, "path", None),
                target=self.headers.get("X-Amz-Target") if hasattr(self, "headers") else None,
                status=int(code) if str(code).isdigit() else str(code),
            )

    return RequestHandler


# AWS authorises the batch operations as their single-message actions.
AUTHORISED_AS = {
    "sqs:DeleteMessageBatch": "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
    "sqs:SendMessageBatch": "sqs:SendMessage",
}
IAM_GAPS_VERIFIED_WITH = "5.2.1"


class IamGapsUnsupported(RuntimeError):
    """moto's internals are not the ones enforce_iam_gaps() patches."""


def enforce_iam_gaps() -> None:
    """Patch moto in this process: DynamoDB requests are authorised against the table's ARN,
    SQS requests that name a queue by QueueName against that queue's ARN, SQS batch
    operations as the actions AWS checks for them.

    These are moto internals (verified with moto IAM_GAPS_VERIFIED_WITH, the pinned version).
    If the hooks are gone, raise rather than serve a moto that silently checks less than the
    caller asked for."""
    from moto.dynamodb.responses import DynamoHandler
    from moto.iam import access_control
    from moto.sqs.responses import SQSResponse
    from moto.utilities.utils import get_partition

    if not hasattr(SQSResponse, "_determine_resource") or not hasattr(access_control, "IAMRequestBase"):
        raise IamGapsUnsupported("moto has no SQSResponse._determine_resource / IAMRequestBase to patch")
    if "_determine_resource" in vars(DynamoHandler):
        raise IamGapsUnsupported("moto's DynamoHandler now determines its own resource; re-check the gap")

    def table_arn(self: Any) -> str:
        # call_action has parsed the request into self.body before it asks for the resource.
        name = self.body.get("TableName") if isinstance(self.body, dict) else None
        if not isinstance(name, str):
            return "*"  # ListTables and the like are authorised on "*" by AWS too
        if name.startswith("arn:"):
            return name
        table = f"arn:{get_partition(self.region)}:dynamodb:{self.region}:{self.current_account}:table/{name}"
        index = self.body.get("IndexName")
        # A Query or Scan of an index is authorised against the index's ARN, as AWS does.
        return f"{table}/index/{index}" if isinstance(index, str) and index else table

    DynamoHandler._determine_resource = table_arn  # type: ignore[attr-defined]

    queue_url_arn = SQSResponse._determine_resource

    def queue_arn(self: Any) -> str:
        name = self._get_param("QueueName")
        if not isinstance(name, str) or not name:
            return queue_url_arn(self)
        return f"arn:{get_partition(self.region)}:sqs:{self.region}:{self.current_account}:{name}"

    SQSResponse._determine_resource = queue_arn  # type: ignore[method-assign]

    original_init = access_control.IAMRequestBase.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self._action = AUTHORISED_AS.get(self._action, self._action)

    access_control.IAMRequestBase.__init__ = init  # type: ignore[method-assign]


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.moto_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 (default) picks a free one")
    parser.add_argument("--port-file", help="also write the bound port to this file")
    parser.add_argument(
        "--no-dynamodb-lock",
        action="store_true",
        help="serve DynamoDB requests concurrently, as plain moto does (negative controls only)",
    )
    parser.add_argument(
        "--no-sqs-lock",
        action="store_true",
        help="serve SQS requests concurrently, as plain moto does (negative controls only)",
    )
    parser.add_argument(
        "--enforce-iam-gaps",
        action="store_true",
        help="authorise DynamoDB on table ARNs, SQS QueueName requests on queue ARNs and SQS batch "
        "calls as their single-message actions, as AWS does (needs INITIAL_NO_AUTH_ACTION_COUNT)",
    )
    parser.add_argument("--log-level", default="info", choices=sorted(LEVELS, key=LEVELS.__getitem__))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    log = JsonLogger("moto-server", args.log_level)
    handler = _JsonLogHandler(log)
    for name in ("", "werkzeug"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(LEVELS[args.log_level])
        logger.propagate = name == ""

    # Imported late: importing moto takes about a second, and its logging must go through
    # the handler installed above.
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    if args.enforce_iam_gaps:
        from importlib.metadata import version

        try:
            enforce_iam_gaps()
        except IamGapsUnsupported as e:
            log.error("enforce_iam_gaps_failed", error=str(e), moto=version("moto"))
            return 2
        if version("moto") != IAM_GAPS_VERIFIED_WITH:
            log.warning("enforce_iam_gaps_unverified", moto=version("moto"), verified=IAM_GAPS_VERIFIED_WITH)

    moto_app = DomainDispatcherApplication(create_backend_app)
    moto_app.debug = True  # type: ignore[attr-defined]  # as moto.server.main does
    lock = None if args.no_dynamodb_lock else threading.Lock()
    sqs_lock = None if args.no_sqs_lock else threading.Lock()
    if sqs_lock is not None:
        release_sqs_lock_while_waiting(sqs_lock)
    avoid_queue_rescans()
    app = Serializer(moto_app, ServiceLocks(lock, sqs_lock))

    stop = StopSignal()
    try:
        server = make_server(args.host, args.port, app, threaded=True, request_handler=_make_request_handler(log))
    except OSError as e:
        log.error("bind_failed", host=args.host, port=args.port, error=str(e))
        return 2
    server.handle_error = lambda _request, client_address: log_server_error(log, client_address)  # type: ignore[method-assign]
    port = server.server_port
    # moto builds some self-referencing URLs from MOTO_PORT; moto_server sets it the same way.
    os.environ.setdefault("MOTO_PORT", str(port))
    serving = threading.Thread(target=server.serve_forever, args=(0.1,), name="moto-accept", daemon=True)
    serving.start()
    log.info(
        "started",
        host=args.host,
        port=port,
        dynamodbLock=lock is not None,
        sqsLock=sqs_lock is not None,
        enforceIamGaps=args.enforce_iam_gaps,
        initialNoAuthActionCount=os.environ.get("INITIAL_NO_AUTH_ACTION_COUNT"),
    )
    announce_listening(
        port,
        args.port_file,
        url=f"http://{args.host}:{port}",
        dynamodbLock=lock is not None,
        sqsLock=sqs_lock is not None,
        enforceIamGaps=args.enforce_iam_gaps,
    )
    stop.wait(serving)
    log.info("stopping", signal=stop.signum)
    server.shutdown()
    server.server_close()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
