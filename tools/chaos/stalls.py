"""Stall nemeses (issue 34): something outside the consumer stops answering while every consumer
depends on it, and SIGTERM arrives in the middle.

- `credentials-stall`: the credentials endpoint (tools/chaos/credentials_server.py; container
  credentials or STS for web identity) answers late, then not at all, then recovers, while the
  credentials the consumers hold stay valid;
- `log-stall`: the consumers' stderr is a pipe the harness stops reading, then drains
  (tools/local_stack/processes.py StderrPump);
- `resolver-stall`: the notification API's host name never resolves (tools/chaos/resolver_shim.py).

A Stall is what a scenario adds to the stack: each consumer's environment, its phases (the
nemesis switches them) and the evidence that the stall reached the consumers. The one nemesis
action, `stall`, runs the phases, sends SIGTERM to the first consumer once the stall has reached
it and holds the stall until that consumer exited or grace + 5 s (+ 1) passed, then ends it and
records when the consumer did exit. The checkers are in tools/chaos/stall_checkers.py.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.chaos.credentials_server import CredentialsServer
from tools.chaos.resolver_shim import SilentResolver
from tools.chaos.stall_checkers import SIGTERM_BOUND_EXTRA_S
from tools.local_stack.aws_endpoint import CREDENTIAL_VARIABLES
from tools.local_stack.processes import PIPE_BYTES

if TYPE_CHECKING:
    from tools.chaos.nemesis import Nemesis, Step
    from tools.chaos.stack import ChaosStack, Slot


class Stall:
    """No stall: the interface every kind fills in."""

    pump_stderr = False

    def env(self, slot: Slot, stack: ChaosStack) -> dict[str, str]:
        return {}

    def set_phase(self, phase: str, stack: ChaosStack) -> None:
        raise NotImplementedError

    def reached(self, slot: Slot, since: float) -> bool:
        """Whether the stall has reached this consumer since `since` (epoch seconds)."""
        raise NotImplementedError

    def hits(self, start: float, end: float) -> int:
        """How often the stall was met in [start, end]: requests, lookups, bytes left unread."""
        raise NotImplementedError

    def events(self, consumer_of_pid: dict[int, str]) -> list[dict[str, Any]]:
        return []

    def close(self) -> None:
        pass


class CredentialsStall(Stall):
    """`kind` container or web-identity; every other credential source emptied."""

    def __init__(self, kind: str, ttl_seconds: float, slow_seconds: float, work_dir: Path) -> None:
        self.home = work_dir / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.server = CredentialsServer(kind, ttl_seconds, slow_seconds, work_dir / "tokens")

    def env(self, slot: Slot, stack: ChaosStack) -> dict[str, str]:
        return {**{name: "" for name in CREDENTIAL_VARIABLES}, "HOME": str(self.home),
                "AWS_EC2_METADATA_DISABLED": "true", **self.server.env(slot.name)}

    def set_phase(self, phase: str, stack: ChaosStack) -> None:
        self.server.set_phase(phase)

    def reached(self, slot: Slot, since: float) -> bool:
        return any(r["consumer"] == slot.name and r["t"] >= since for r in self.server.requests())

    def hits(self, start: float, end: float) -> int:
        return sum(1 for r in self.server.requests() if start <= r["t"] <= end)

    def events(self, consumer_of_pid: dict[int, str]) -> list[dict[str, Any]]:
        return [{**r, "type": "credentials"} for r in self.server.requests()]

    def close(self) -> None:
        self.server.close()


class LogStall(Stall):
    """Every consumer's stderr pump paused (`stopped`) or reading (`ok`)."""

    pump_stderr = True

    def __init__(self) -> None:
        self.unread: list[tuple[float, int]] = []  # (when reading resumed, bytes then waiting)

    def set_phase(self, phase: str, stack: ChaosStack) -> None:
        pumps = [p for slot in stack.slots for _, proc, _ in slot.instances if (p := proc.stderr_pump) is not None]
        if phase == "stopped":
            for pump in pumps:
                pump.pause()
        elif phase == "ok":
            now = time.time()
            for pump in pumps:
                self.unread.append((now, pump.pending()))
                pump.resume()
        else:
            raise ValueError(f"log phase {phase!r} is not ok or stopped")

    def reached(self, slot: Slot, since: float) -> bool:
        pump = slot.consumer.process.stderr_pump if slot.consumer is not None else None
        return pump is not None and pump.pending() >= PIPE_BYTES // 2

    def hits(self, start: float, end: float) -> int:
        return sum(n for t, n in self.unread if start <= t <= end)


class ResolverStall(Stall):
    """The notification host's lookups `silent` or answered (`ok`)."""

    def __init__(self, work_dir: Path) -> None:
        self.resolver = SilentResolver(work_dir)

    def env(self, slot: Slot, stack: ChaosStack) -> dict[str, str]:
        return self.resolver.env(int(stack.bank.url.rsplit(":", 1)[1].split("/")[0]))

    def set_phase(self, phase: str, stack: ChaosStack) -> None:
        self.resolver.set_phase(phase)

    def reached(self, slot: Slot, since: float) -> bool:
        pid = slot.consumer.pid if slot.consumer is not None else -1
        return any(x["pid"] == pid and x["t"] >= since and x["answer"] == "silent" for x in self.resolver.lookups())

    def hits(self, start: float, end: float) -> int:
        return sum(1 for x in self.resolver.lookups() if start <= x["t"] <= end and x["answer"] == "silent")

    def events(self, consumer_of_pid: dict[int, str]) -> list[dict[str, Any]]:
        return [{"t": x["t"], "type": "lookup", "consumer": consumer_of_pid.get(x["pid"], str(x["pid"])),
                 "answer": x["answer"]} for x in self.resolver.lookups()]

    def close(self) -> None:
        self.resolver.close()


def make_stall(spec: dict[str, Any], work_dir: Path) -> Stall | None:
    """The scenario's stall ("stall": container, web-identity, log or resolver), if any."""
    kind = spec.get("stall")
    if kind is None:
        return None
    if kind in ("container", "web-identity"):
        return CredentialsStall(kind, float(spec["credentialsTtl"]), float(spec.get("slowSeconds", 4.0)), work_dir)
    if kind == "log":
        return LogStall()
    if kind == "resolver":
        return ResolverStall(work_dir)
    raise ValueError(f"unknown stall {kind!r}")


def _sigterm_when_reached(n: Nemesis, step: Step, stall: Stall, start: float, result: dict[str, Any]) -> None:
    """SIGTERM the first consumer 1 s after the stall reached it (at the latest `sigtermBy` s
    into the stall); wait for its exit until grace + 5 s + 1 s have passed."""
    try:
        _sigterm(n, step, stall, start, result)
    except BaseException as e:  # reported by the runner like any nemesis failure
        n.errors.append(e)


def _sigterm(n: Nemesis, step: Step, stall: Stall, start: float, result: dict[str, Any]) -> None:
    slot = n.stack.slots[0]
    by = time.monotonic() + float(step.params.get("sigtermBy", 5.0))
    while time.monotonic() < by and not stall.reached(slot, start):
        time.sleep(0.05)
    result["reached"] = stall.reached(slot, start)
    time.sleep(1.0)
    if slot.consumer is None or not slot.consumer.process.alive():
        raise RuntimeError(f"{slot.name} is not running: nothing to SIGTERM")
    proc = slot.consumer.process
    grace = float(step.params["grace"])
    sent = time.time()
    n.stack.signal(slot, signal.SIGTERM)
    result.update(consumer=slot.name, sent=sent, proc=proc, grace=grace)
    n.mark(step.fault, "sigterm", consumer=slot.name)
    result["exited"] = _exit_time(proc, grace + SIGTERM_BOUND_EXTRA_S + 1.0)


def _exit_time(proc: Any, timeout: float) -> float | None:
    """When the process was first seen gone (polled every 50 ms), None if it outlived `timeout`."""
    deadline = time.monotonic() + timeout
    while proc.alive():
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
    return time.time()


def stall(n: Nemesis, step: Step) -> None:
    stall_kit = n.stack.stall
    if stall_kit is None:
        raise RuntimeError("this stack has no stall (the scenario's spec sets \"stall\")")
    start = time.time()
    n.mark(step.fault, "start", phases=step.params["phases"])
    result: dict[str, Any] = {}
    sigterm = threading.Thread(target=_sigterm_when_reached, args=(n, step, stall_kit, start, result), daemon=True)
    sigterm.start()
    try:
        for phase, seconds in step.params["phases"]:
            stall_kit.set_phase(phase, n.stack)
            n.mark(step.fault, "phase", phase=phase)
            time.sleep(seconds)
        sigterm.join()  # the stall lasts until the SIGTERM is judged
    finally:
        stall_kit.set_phase("ok", n.stack)
        end = time.time()
        n.mark(step.fault, "stop", hits=stall_kit.hits(start, end))
    proc = result.get("proc")
    if proc is None:
        return
    exited = result.get("exited") or _exit_time(proc, 60.0)
    n.history.add("sigterm", t=result["sent"], consumer=result["consumer"], graceSeconds=result["grace"],
                  reached=result["reached"], stallEnd=round(end, 3), exitCode=proc.returncode,
                  exitSeconds=None if exited is None else round(exited - result["sent"], 3))
