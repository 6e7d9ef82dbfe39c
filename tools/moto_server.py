"""Launcher for moto server (SQS + DynamoDB emulator) that makes DynamoDB atomic.

    .venv/bin/python tools/moto_server.py [--port 0] [--port-file F] [--no-dynamodb-lock]
                                          [--enforce-iam-gaps]
                                          [--log-level debug|info|warning|error]
    (or: .venv/bin/python -m tools.moto_server ...)

Why not plain `moto_server`: moto serves each request on its own thread and its DynamoDB
backend takes no per-item lock, so two concurrent conditional writes on one key can both
pass their condition, a race real DynamoDB never has. A concurrency test of our claim
protocol is only evidence if the store is atomic, so this launcher wraps moto's WSGI app
(the same DomainDispatcherApplication that `moto_server` runs) with one lock taken by every
request whose X-Amz-Target starts with "DynamoDB_" (and by POST /moto-api/reset, so a reset
never interleaves with a write). SQS requests, including 20 s long polls, stay concurrent.
`--no-dynamodb-lock` removes the lock, for negative controls.

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
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the `tools` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.common import LEVELS, JsonLogger, StopSignal, announce_listening, log_server_error  # noqa: E402

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def needs_dynamodb_lock(environ: dict[str, Any]) -> bool:
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
        return True
    return environ.get("REQUEST_METHOD") == "POST" and environ.get("PATH_INFO") == "/moto-api/reset"


class DynamoDbSerializer:
    """WSGI middleware: runs DynamoDB requests one at a time, everything else untouched.

    The response body is drained while the lock is held: a WSGI app may do its work lazily
    while the server iterates the body, after __call__ has returned.
    """

    def __init__(self, app: WsgiApp, lock: threading.Lock | None) -> None:
        self._app = app
        self._lock = lock

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if self._lock is None or not needs_dynamodb_lock(environ):
            return self._app(environ, start_response)
        with self._lock:
            result = self._app(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return [body]


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
    parser = argparse.ArgumentParser(prog="tools/moto_server.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 (default) picks a free one")
    parser.add_argument("--port-file", help="also write the bound port to this file")
    parser.add_argument(
        "--no-dynamodb-lock",
        action="store_true",
        help="serve DynamoDB requests concurrently, as plain moto does (negative controls only)",
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
    app = DynamoDbSerializer(moto_app, lock)

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
        enforceIamGaps=args.enforce_iam_gaps,
        initialNoAuthActionCount=os.environ.get("INITIAL_NO_AUTH_ACTION_COUNT"),
    )
    announce_listening(
        port,
        args.port_file,
        url=f"http://{args.host}:{port}",
        dynamodbLock=lock is not None,
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
