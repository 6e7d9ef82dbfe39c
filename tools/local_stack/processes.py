"""Child processes of the local stack: start one, wait until it is ready, stop every one of
them (SIGTERM to its process group, SIGKILL after a deadline), and poll with a deadline.

Free ports: servers bind port 0 and announce the port they got ({"event":"listening",
"port":N} on stdout); nothing here picks a port and hopes it is still free (guessing races
with every other process on the machine).

Processes are generic: `ProcessManager.start(name, argv, ready=...)` with `ready` one of
`json_event(...)`, `line_matching(...)`, `http_ok(...)`, so the moto and fake-bank handles,
the charge-recovery consumers, the demo and the benchmark all start processes the same way.
Each process gets its own session (process group), so stop() also reaches anything it
spawned. stdout and stderr go to files under the manager's log directory, never to a pipe
nobody drains; ProcessFailed and the pytest plugin's failure report carry their tails. The one
exception is deliberate: `pump_stderr=True` makes stderr a small pipe that a harness thread
copies to the same file and can stop reading (StderrPump.pause), a wedged log collector for the
chaos suite's log stall (docs/chaos.md).
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import termios
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from tools.local_stack.paths import REPO_ROOT

T = TypeVar("T")


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


PIPE_BYTES = 4096  # the smallest pipe Linux allows: a stopped reader blocks the writer within a second


class StderrPump(threading.Thread):
    """Copies a child's stderr pipe to its log file until EOF; pause() stops reading (the
    child's writes block once the pipe is full), resume() drains it again."""

    def __init__(self, pipe: Any, path: Path) -> None:
        super().__init__(name=f"stderr-pump-{path.name}", daemon=True)
        self._pipe = pipe
        self._path = path
        self._reading = threading.Event()
        self._reading.set()
        try:
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass  # the default 64 KiB only takes longer to fill
        self.start()

    def pause(self) -> None:
        self._reading.clear()

    def resume(self) -> None:
        self._reading.set()

    def pending(self) -> int:
        """Bytes written and not yet read (PIPE_BYTES: the writer is blocked or dropping)."""
        buf = array.array("i", [0])
        try:
            fcntl.ioctl(self._pipe.fileno(), termios.FIONREAD, buf)
        except OSError:
            return 0
        return buf[0]

    def run(self) -> None:
        with open(self._path, "ab") as out:
            while True:
                self._reading.wait()
                chunk = os.read(self._pipe.fileno(), 65536)
                if not chunk:
                    return
                out.write(chunk)
                out.flush()


class ManagedProcess:
    """A child process whose stdout and stderr go to files (never to a pipe nobody drains, but
    see StderrPump)."""

    def __init__(self, name: str, argv: list[str], log_prefix: Path, env: Mapping[str, str], cwd: Path,
                 pump_stderr: bool = False) -> None:
        self.name = name
        self.argv = argv
        self.stdout_path = log_prefix.with_name(log_prefix.name + ".stdout.log")
        self.stderr_path = log_prefix.with_name(log_prefix.name + ".stderr.log")
        self.ready_info: Any = None
        self.stderr_pump: StderrPump | None = None
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self._popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.PIPE if pump_stderr else err,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_kill_with_parent if sys.platform.startswith("linux") else None,
            )
        self.pid = self._popen.pid
        if pump_stderr:
            self.stderr_pump = StderrPump(self._popen.stderr, self.stderr_path)

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
        pump_stderr: bool = False,
    ) -> ManagedProcess:
        """Start argv with the current environment plus `env` (a None value removes a
        variable); wait for `ready` (if given) and store its result in `ready_info`.

        `cwd` defaults to the repository root, where `python -m tools.<server>` resolves."""
        child_env = dict(os.environ)
        for key, value in (env or {}).items():
            if value is None:
                child_env.pop(key, None)
            else:
                child_env[key] = value
        safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        prefix = self.log_dir / f"{next(self._sequence):03d}-{safe_name}"
        proc = ManagedProcess(name, list(argv), prefix, child_env, cwd, pump_stderr)
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
