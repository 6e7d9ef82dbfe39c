"""Shared plumbing of the local-stack servers: JSON-line logs, account masking, the
"listening" announcement that test fixtures wait for, and SIGTERM/SIGINT handling.

Both servers bind port 0 and report the port the kernel chose, so a caller never has to
guess a free port (guessing races with every other process on the machine).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any, TextIO

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


def mask_account(account_id: str) -> str:
    """All but the last 4 characters replaced by '*'; ids of 4 characters or fewer fully masked."""
    if len(account_id) <= 4:
        return "*" * len(account_id)
    return "*" * (len(account_id) - 4) + account_id[-4:]


class JsonLogger:
    """One JSON object per line on a stream (stderr by default); safe to call from any thread."""

    def __init__(self, component: str, level: str = "info", stream: TextIO | None = None) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        self._component = component
        self._threshold = LEVELS[level]
        self._stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()

    def enabled(self, level: str) -> bool:
        return LEVELS[level] >= self._threshold

    def log(self, level: str, event: str, **fields: Any) -> None:
        if not self.enabled(level):
            return
        now = time.time()
        record = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z",
            "level": level,
            "component": self._component,
            "event": event,
            **fields,
        }
        line = json.dumps(record, separators=(",", ":"), default=str)
        with self._lock:
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                pass  # the reader went away; logging must never take the server down

    def debug(self, event: str, **fields: Any) -> None:
        self.log("debug", event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self.log("info", event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self.log("warning", event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self.log("error", event, **fields)


def announce_listening(port: int, port_file: str | None, **extra: Any) -> None:
    """Print {"event":"listening","port":N,...} on stdout and, if asked, write the port to a file.

    The file is written to a temporary name and renamed, so a reader polling for it never
    sees a partial number.
    """
    if port_file:
        tmp = f"{port_file}.tmp.{os.getpid()}"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"{port}\n")
        os.replace(tmp, port_file)
    print(json.dumps({"event": "listening", "port": port, **extra}), flush=True)


def log_server_error(log: JsonLogger, client_address: Any) -> None:
    """socketserver's handle_error, as a JSON line instead of a raw traceback on stderr.
    Call from inside the except block (it reads the exception being handled)."""
    error = sys.exc_info()[1]
    if isinstance(error, (ConnectionError, TimeoutError)):
        log.debug("connection_dropped", client=str(client_address), error=repr(error))
    else:
        log.error("handler_crashed", client=str(client_address), error=repr(error), exc=traceback.format_exc())


class StopSignal:
    """Turns SIGTERM/SIGINT into an event the main thread waits on.

    The server loop runs on another thread: calling shutdown() from a signal handler on the
    thread that runs serve_forever() would deadlock. Install before announcing readiness so
    a signal sent right after the "listening" line still shuts down cleanly.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signum: int | None = None
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, _frame: Any) -> None:
        self.signum = signum
        self._event.set()

    def wait(self, server_thread: threading.Thread) -> None:
        """Return on a stop signal, or when the server thread died on its own."""
        while not self._event.wait(0.5):
            if not server_thread.is_alive():
                return
