"""Local-stack helpers for the system tests: start processes and wait until they are ready,
stop every one of them (SIGTERM, then SIGKILL after a deadline), poll with a deadline, and
typed handles for moto server and fake-bank.

Free ports: servers bind port 0 and announce the port they got ({"event":"listening",
"port":N} on stdout); nothing here picks a port and hopes it is still free.

Processes are generic: `ProcessManager.start(name, argv, ready=...)` with `ready` one of
`json_event(...)`, `line_matching(...)`, `http_ok(...)`, so fixtures for the C++ binaries
can reuse it. Each process gets its own session (process group); stop() signals the group.
"""

from __future__ import annotations

import ctypes
import http.client
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
DEFAULT_REGION = "us-east-1"
DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}

T = TypeVar("T")


def build_dir() -> Path:
    """Where the C++ binaries are: $IC_BUILD_DIR (set by scripts/run-pytest.sh), else build/dev."""
    return Path(os.environ.get("IC_BUILD_DIR", REPO_ROOT / "build" / "dev"))


# --- polling ------------------------------------------------------------------------------


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.05,
    description: str | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Call `predicate` until it returns something truthy and return that; raise TimeoutError
    once `timeout` seconds have passed. Exceptions listed in `ignore` count as "not yet"
    (the last one is chained to the TimeoutError); others propagate at once."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except ignore as e:
            last_error = e
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            what = description or getattr(predicate, "__name__", "condition")
            raise TimeoutError(f"{what} not met within {timeout:.1f} s") from last_error
        time.sleep(min(interval, remaining))


# --- processes ----------------------------------------------------------------------------


class ProcessFailed(RuntimeError):
    """A managed process exited or never became ready; the message carries its log tail."""


def _kill_with_parent() -> None:
    # Runs in the child between fork and exec: if the test runner dies without running its
    # finalizers (SIGKILL, os._exit from a timeout), the kernel kills the child too.
    # PR_SET_PDEATHSIG fires when the *thread* that forked exits, so start processes from
    # the main thread (pytest fixtures do).
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class ManagedProcess:
    """A child process whose stdout and stderr go to files (never to a pipe nobody drains)."""

    def __init__(self, name: str, argv: list[str], log_prefix: Path, env: Mapping[str, str], cwd: Path) -> None:
        self.name = name
        self.argv = argv
        self.stdout_path = log_prefix.with_name(log_prefix.name + ".stdout.log")
        self.stderr_path = log_prefix.with_name(log_prefix.name + ".stderr.log")
        self.ready_info: Any = None
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self._popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_kill_with_parent if sys.platform.startswith("linux") else None,
            )
        self.pid = self._popen.pid

    def __repr__(self) -> str:
        return f"ManagedProcess({self.name!r}, pid={self.pid}, returncode={self.returncode})"

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    def alive(self) -> bool:
        return self._popen.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return (
            f"--- {self.name} stdout ({self.stdout_path}) ---\n{_tail(self.stdout_path, lines)}\n"
            f"--- {self.name} stderr ({self.stderr_path}) ---\n{_tail(self.stderr_path, lines)}"
        )

    def lines(self, stream: str = "stdout") -> list[str]:
        """Complete lines written so far (a line still being written is left out)."""
        path = self.stdout_path if stream == "stdout" else self.stderr_path
        text = path.read_text(errors="replace")
        return text.split("\n")[:-1]

    def json_lines(self, stream: str = "stdout") -> list[dict[str, Any]]:
        """Lines of the stream that are JSON objects (others, e.g. library chatter, skipped)."""
        out = []
        for line in self.lines(stream):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                out.append(value)
        return out

    def wait_for(self, predicate: Callable[[], T], timeout: float, description: str) -> T:
        """wait_until, but fail at once (with the log tail) if the process exits meanwhile."""

        def check() -> T:
            value = predicate()
            if not value and not self.alive():
                raise ProcessFailed(
                    f"{self.name} exited with {self.returncode} while waiting for {description}\n{self.log_tail()}"
                )
            return value

        try:
            return wait_until(check, timeout=timeout, description=f"{self.name}: {description}")
        except TimeoutError as e:
            raise ProcessFailed(f"{e}\n{self.log_tail()}") from None

    def stop(self, grace: float = 5.0) -> int:
        """SIGTERM the process group, SIGKILL it if still there after `grace` seconds; returns
        the exit status (negative: killed by that signal)."""
        if self.alive():
            self._signal_group(signal.SIGTERM)
            try:
                self._popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self._popen.wait(timeout=grace)
        return self._popen.returncode

    def _signal_group(self, signum: int) -> None:
        # Only called while the leader is unreaped, so the group id cannot have been reused.
        try:
            os.killpg(self.pid, signum)  # the child is its own session leader: pgid == pid
        except ProcessLookupError:
            pass


Readiness = Callable[[ManagedProcess, float], Any]


def json_event(event: str = "listening", stream: str = "stdout") -> Readiness:
    """Ready when the process prints a JSON line with that "event"; yields that object."""

    def ready(proc: ManagedProcess, timeout: float) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            return next((o for o in proc.json_lines(stream) if o.get("event") == event), None)

        return proc.wait_for(found, timeout, f'{stream} line {{"event":"{event}"}}')

    return ready


def line_matching(pattern: str, stream: str = "stdout") -> Readiness:
    """Ready when a line matches the regex; yields the re.Match."""
    regex = re.compile(pattern)

    def ready(proc: ManagedProcess, timeout: float) -> re.Match[str]:
        def found() -> re.Match[str] | None:
            return next((m for line in proc.lines(stream) if (m := regex.search(line))), None)

        return proc.wait_for(found, timeout, f"{stream} line matching {pattern!r}")

    return ready


def http_ok(url: str) -> Readiness:
    """Ready when GET url answers 2xx; yields the status."""

    def ready(proc: ManagedProcess, timeout: float) -> int:
        def ok() -> int | None:
            try:
                with urllib.request.urlopen(url, timeout=1.0) as response:
                    return response.status if 200 <= response.status < 300 else None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                return None

        return proc.wait_for(ok, timeout, f"GET {url} -> 2xx")

    return ready


_live_managers: set[ProcessManager] = set()
_live_lock = threading.Lock()


def live_processes() -> list[ManagedProcess]:
    """Every process started and not yet stopped (for failure reports)."""
    with _live_lock:
        return [p for m in _live_managers for p in m.processes]


class ProcessManager:
    """Starts processes with logs under `log_dir` and stops all of them in stop_all()."""

    _sequence = itertools.count(1)

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.processes: list[ManagedProcess] = []
        with _live_lock:
            _live_managers.add(self)

    def start(
        self,
        name: str,
        argv: Iterable[str],
        *,
        env: Mapping[str, str | None] | None = None,
        cwd: Path = REPO_ROOT,
        ready: Readiness | None = None,
        timeout: float = 20.0,
    ) -> ManagedProcess:
        """Start argv with the current environment plus `env` (a None value removes a
        variable); wait for `ready` (if given) and store its result in `ready_info`."""
        child_env = dict(os.environ)
        for key, value in (env or {}).items():
            if value is None:
                child_env.pop(key, None)
            else:
                child_env[key] = value
        safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        prefix = self.log_dir / f"{next(self._sequence):03d}-{safe_name}"
        proc = ManagedProcess(name, list(argv), prefix, child_env, cwd)
        self.processes.append(proc)
        if ready is not None:
            try:
                proc.ready_info = ready(proc, timeout)
            except BaseException:
                self.stop(proc)
                raise
        return proc

    def stop(self, proc: ManagedProcess, grace: float = 5.0) -> int:
        try:
            return proc.stop(grace)
        finally:
            if proc in self.processes:
                self.processes.remove(proc)

    def stop_all(self, grace: float = 5.0) -> None:
        """Stop every process, newest first (clients before the servers they use); the
        first failure to stop is raised after all have been tried."""
        errors: list[BaseException] = []
        for proc in reversed(list(self.processes)):
            try:
                self.stop(proc, grace)
            except BaseException as e:  # keep going: a leaked process is worse
                errors.append(e)
        with _live_lock:
            _live_managers.discard(self)
        if errors:
            raise errors[0]


# --- HTTP helper --------------------------------------------------------------------------


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
) -> HttpResponse:
    """One JSON request. `body` may be bytes (sent as is) or a JSON value. Pass
    `connection` to reuse a keep-alive connection; otherwise a fresh one is used and closed.
    Raises the socket's TimeoutError / ConnectionError as they come."""
    url = urlsplit(base_url)
    conn = connection or http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    try:
        conn.request(method, path, body=payload, headers=all_headers)
        response = conn.getresponse()
        raw = response.read()
        parsed = json.loads(raw) if raw else None
        return HttpResponse(response.status, parsed, {k.lower(): v for k, v in response.getheaders()})
    finally:
        if connection is None:
            conn.close()


# --- moto ---------------------------------------------------------------------------------


@dataclass
class MotoServer:
    """A running tools/moto_server.py; boto3 clients use dummy credentials."""

    process: ManagedProcess
    endpoint_url: str
    dynamodb_lock: bool
    region: str = DEFAULT_REGION

    def client(self, service: str, **config: Any) -> Any:
        """boto3 client for this server. `config` overrides botocore Config fields."""
        import boto3
        from botocore.config import Config

        settings: dict[str, Any] = {
            "retries": {"max_attempts": 3, "mode": "standard"},
            "connect_timeout": 2,
            "read_timeout": 30,  # above SQS's 20 s long poll
            "max_pool_connections": 64,
        }
        settings.update(config)
        return boto3.session.Session().client(
            service,
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            config=Config(**settings),
            **DUMMY_CREDENTIALS,
        )

    def sqs(self, **config: Any) -> Any:
        return self.client("sqs", **config)

    def dynamodb(self, **config: Any) -> Any:
        return self.client("dynamodb", **config)

    def reset(self) -> None:
        response = http_request(self.endpoint_url, "POST", "/moto-api/reset")
        if response.status != 200:
            raise RuntimeError(f"moto reset answered {response.status}: {response.body}")

    def env(self) -> dict[str, str]:
        """Environment for a child process (e.g. the consumer) to use this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ACCESS_KEY_ID": DUMMY_CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": DUMMY_CREDENTIALS["aws_secret_access_key"],
            "AWS_EC2_METADATA_DISABLED": "true",
        }


def start_moto(
    manager: ProcessManager,
    *,
    dynamodb_lock: bool = True,
    env: Mapping[str, str | None] | None = None,
    name: str = "moto",
) -> MotoServer:
    argv = [PYTHON, str(REPO_ROOT / "tools" / "moto_server.py"), "--port", "0"]
    if not dynamodb_lock:
        argv.append("--no-dynamodb-lock")
    proc = manager.start(name, argv, env=env, ready=json_event("listening"), timeout=30.0)
    return MotoServer(proc, f"http://127.0.0.1:{proc.ready_info['port']}", dynamodb_lock)


# --- fake bank ----------------------------------------------------------------------------


@dataclass
class FakeBank:
    """A running `python -m tools.fake_bank`, with typed helpers for its API."""

    process: ManagedProcess
    url: str
    seed: int
    default_timeout: float = field(default=5.0)

    def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> HttpResponse:
        kwargs.setdefault("timeout", self.default_timeout)
        return http_request(self.url, method, path, body, **kwargs)

    def debit(self, body: dict[str, Any], key: str | None = None, **kwargs: Any) -> HttpResponse:
        """POST /v1/debits with Idempotency-Key = `key` or the body's chargeId."""
        headers = {"Idempotency-Key": key if key is not None else str(body["chargeId"])}
        return self.request("POST", "/v1/debits", body, headers=headers, **kwargs)

    def notify(self, body: dict[str, Any], key: str | None = None, **kwargs: Any) -> HttpResponse:
        """POST /v1/notifications with Idempotency-Key = `key` or '<chargeId>:notify'."""
        headers = {"Idempotency-Key": key if key is not None else f"{body['chargeId']}:notify"}
        return self.request("POST", "/v1/notifications", body, headers=headers, **kwargs)

    def _ok(self, method: str, path: str, body: Any = None) -> Any:
        response = self.request(method, path, body)
        if response.status != 200:
            raise RuntimeError(f"fake-bank {method} {path} answered {response.status}: {response.body}")
        return response.body

    def ledger(self) -> dict[str, Any]:
        return self._ok("GET", "/v1/ledger")

    def faults(self) -> dict[str, Any]:
        return self._ok("GET", "/admin/faults")

    def set_faults(self, faults: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """Replace the whole fault configuration (JSON field names, e.g. transientErrorRate)."""
        return self._ok("POST", "/admin/faults", {**(faults or {}), **fields})

    def reset(self) -> None:
        self._ok("POST", "/admin/reset")

    def env(self) -> dict[str, str]:
        """Environment for the consumer: both APIs are served by this one process."""
        return {"CORE_BANKING_URL": self.url, "NOTIFICATION_URL": self.url}


def start_fake_bank(
    manager: ProcessManager,
    *,
    seed: int = 1234,
    extra_args: Iterable[str] = (),
    name: str = "fake-bank",
) -> FakeBank:
    argv = [PYTHON, "-m", "tools.fake_bank", "--port", "0", "--seed", str(seed), *extra_args]
    proc = manager.start(name, argv, ready=json_event("listening"), timeout=20.0)
    return FakeBank(proc, f"http://127.0.0.1:{proc.ready_info['port']}", seed)
