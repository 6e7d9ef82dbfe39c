"""The process and polling helpers the system fixtures are built on: readiness, failure
reports, SIGTERM-then-SIGKILL shutdown, deadlines."""

from __future__ import annotations

import itertools
import sys
import time

import pytest

from tools.local_stack.processes import (
    PIPE_BYTES,
    ProcessFailed,
    ProcessManager,
    http_ok,
    json_event,
    line_matching,
    wait_until,
)

pytestmark = pytest.mark.timeout(60)


def python(code: str) -> list[str]:
    return [sys.executable, "-u", "-c", code]


def test_wait_until_returns_the_first_truthy_value() -> None:
    counter = itertools.count()
    assert wait_until(lambda: next(counter) >= 3 and "done", timeout=5, interval=0.001) == "done"


def test_wait_until_raises_at_the_deadline_with_the_last_ignored_error() -> None:
    def flaky() -> bool:
        raise ConnectionRefusedError("not up")

    started = time.monotonic()
    with pytest.raises(TimeoutError, match="server up not met") as failure:
        wait_until(flaky, timeout=0.2, interval=0.01, description="server up", ignore=(ConnectionError,))
    assert time.monotonic() - started >= 0.2
    assert isinstance(failure.value.__cause__, ConnectionRefusedError)


def test_wait_until_propagates_unexpected_errors() -> None:
    with pytest.raises(ZeroDivisionError):
        wait_until(lambda: 1 / 0, timeout=5)


def test_ready_line_logs_and_clean_stop(processes: ProcessManager) -> None:
    proc = processes.start(
        "echo",
        python(
            "import json, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
            "print('noise'); print(json.dumps({'event': 'listening', 'port': 1234}))\n"
            "print('to stderr', file=sys.stderr, flush=True)\n"
            "time.sleep(60)\n"
        ),
        ready=json_event("listening"),
    )
    assert proc.ready_info == {"event": "listening", "port": 1234}
    wait_until(lambda: "to stderr" in proc.lines("stderr"), timeout=5)
    assert "noise" in proc.log_tail()
    assert processes.stop(proc) == 0
    assert processes.processes == []


def test_a_process_that_exits_before_ready_fails_fast_with_its_log(processes: ProcessManager) -> None:
    started = time.monotonic()
    with pytest.raises(ProcessFailed, match=r"exited with 3(.|\n)*boom"):
        processes.start(
            "dies",
            python("import sys; print('boom', file=sys.stderr); sys.exit(3)"),
            ready=http_ok("http://127.0.0.1:9/never"),
            timeout=20,
        )
    assert time.monotonic() - started < 10  # did not wait for the full timeout
    assert processes.processes == []


def test_readiness_timeout_stops_the_process(processes: ProcessManager) -> None:
    with pytest.raises(ProcessFailed, match="not met within"):
        processes.start("silent", python("import time; time.sleep(60)"), ready=line_matching("never"), timeout=0.5)
    assert processes.processes == []


def test_stop_escalates_to_sigkill_when_sigterm_is_ignored(processes: ProcessManager) -> None:
    proc = processes.start(
        "stubborn",
        python("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready'); time.sleep(60)"),
        ready=line_matching("^ready$"),
    )
    started = time.monotonic()
    assert processes.stop(proc, grace=0.5) == -9
    assert time.monotonic() - started < 5
    assert not proc.alive()


def test_stop_all_stops_every_process(processes: ProcessManager) -> None:
    procs = [
        processes.start(f"sleeper-{i}", python("print('ready'); import time; time.sleep(60)"), ready=line_matching("ready"))
        for i in range(3)
    ]
    processes.stop_all(grace=2)
    assert all(not p.alive() for p in procs)


def test_a_paused_stderr_pump_blocks_the_writer_and_resume_delivers_every_byte(processes: ProcessManager) -> None:
    # The chaos suite's log stall (tools/chaos/stalls.py): a reader that stops, then drains.
    code = "import sys\nfor i in range(2000):\n    sys.stderr.write(f'line {i:05d}\\n')\nprint('written', flush=True)"
    proc = processes.start("writer", python(code), pump_stderr=True)
    pump = proc.stderr_pump
    assert pump is not None
    pump.pause()
    # Full: fewer than one 11-byte line short of the pipe's size.
    wait_until(lambda: pump.pending() > PIPE_BYTES - 11, timeout=10, description="the pipe full")
    time.sleep(0.3)
    assert proc.alive() and "written" not in proc.stdout_path.read_text(), "the writer is blocked on the full pipe"
    pump.resume()
    wait_until(lambda: not proc.alive(), timeout=10, description="the writer finished")
    wait_until(lambda: len(proc.lines("stderr")) == 2000, timeout=10, description="every line in the log file")
    assert proc.lines("stderr")[-1] == "line 01999"
