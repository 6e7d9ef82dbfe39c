"""Issue 34: a log reader that stops reading. stderr is a pipe this test reads until the consumer
has started and then never again (a wedged log collector): the pipe fills within a few hundred
lines, yet every charge is debited and recorded, and SIGTERM ends the process within its grace
and a few seconds. Before the asynchronous logger the first full write blocked the event loop
(82 debits, then nothing) and the stop waited for the pipe."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time

import pytest

from charges import charge, charge_body
from tools.local_stack.charge_recovery import ChargeStack, Consumers, binary
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(120)

CHARGES = 400  # one `charge handled` line of ~500 bytes each: three times a 64 KiB pipe
GRACE_SECONDS = 5


def read_until_started(stderr: int, timeout: float = 20.0) -> None:
    """Reads the consumer's stderr until its `consumer started` line, then stops for good."""
    deadline = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stderr], [], [], 0.2)
        if ready:
            chunk = os.read(stderr, 65536)
            assert chunk, f"stderr closed before start-up finished: {seen[-2000:]!r}"
            seen += chunk
            if b'"msg":"consumer started"' in seen:
                return
    raise AssertionError(f"no `consumer started` line within {timeout} s: {seen[-2000:]!r}")


def test_a_stderr_nobody_reads_blocks_neither_the_charges_nor_the_stop(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    env = {**os.environ, **consumers.env(WORKERS="8", SHUTDOWN_GRACE_SECONDS=str(GRACE_SECONDS))}
    proc = subprocess.Popen([str(binary()), "run"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stderr is not None
        read_until_started(proc.stderr.fileno())
        charge_stack.send_bodies(charge_body(charge(f"CHG-LOGSTALL-{i:04d}")) for i in range(CHARGES))
        wait_until(lambda: len(fake_bank.ledger()["debits"]) == CHARGES, timeout=60, interval=0.5,
                   description=f"{CHARGES} debits with stderr unread")
        charge_stack.wait_drained(timeout=60)
        records = charge_stack.records()
        assert len(records) == CHARGES and {r["state"] for r in records.values()} == {"DONE"}

        started = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        code = proc.wait(timeout=GRACE_SECONDS + 5)
        assert code == 0, f"exit {code} after {time.monotonic() - started:.1f} s"
        # What the pipe holds is whole JSON lines, the last maybe cut by the full pipe.
        held = proc.stderr.read().decode().splitlines()
        assert len(held) > 10
        for line in held[:-1]:
            json.loads(line)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
