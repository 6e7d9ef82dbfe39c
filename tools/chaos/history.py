"""The history of a run: one JSON object per line, each with `t` (epoch seconds, the harness's
clock, which no nemesis skews) and `type`.

The harness writes `send`, `fault` and `sample` events as they happen. Consumer events
(`claim`, `debit`, `release`, `recorded`, `fenced`, `store_failed`, `dlq`, `circuit`) are derived
afterwards from each consumer's JSON log; a consumer whose clock was skewed by `offset_ms`
has its timestamps moved back to true time. Bank attempts (`bank`) come from the fake bank's
request log (`start`: when the attempt arrived, `retryAfter`: the header it was answered
with). A delivery is visible as its `claim` (valid bodies) or `dlq` (invalid ones);
an ack is what follows `recorded`, a DUPLICATE_DONE claim, a `settled_locally` (a copy settled
by its own process's holder) or a `dlq`.
"""

from __future__ import annotations

import json
import threading
import time
from calendar import timegm
from collections.abc import Iterable
from pathlib import Path
from typing import Any

Event = dict[str, Any]


class History:
    """Appends events to a JSON-lines file and keeps them in memory; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self.events: list[Event] = []

    def add(self, type_: str, t: float | None = None, **fields: Any) -> Event:
        event = {"t": round(time.time() if t is None else t, 3), "type": type_, **fields}
        with self._lock:
            self.events.append(event)
            self._file.write(json.dumps(event, separators=(",", ":")) + "\n")
            self._file.flush()
        return event

    def extend(self, events: Iterable[Event]) -> None:
        with self._lock:
            for event in events:
                self.events.append(event)
                self._file.write(json.dumps(event, separators=(",", ":")) + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def parse_ts(ts: str) -> float:
    """`2026-12-01T03:19:35.648Z` (our logs' format) as epoch seconds."""
    base, _, rest = ts.rstrip("Z").partition(".")
    seconds = timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S"))
    return seconds + (int(rest[:3].ljust(3, "0")) / 1000 if rest else 0.0)


# One log line per circuit transition (docs/design.md, issue 22).
CIRCUIT_TRANSITIONS = {"circuit opened": "open", "circuit half-open": "half_open", "circuit closed": "closed"}


def consumer_events(lines: Iterable[Event], consumer: str, offset_ms: int = 0) -> list[Event]:
    """History events from one consumer's JSON log lines. `offset_ms` is how far its clock was
    set ahead of true time (libfaketime), so `t` is true time and `leaseUntil` stays as written
    (in the writer's clock, which is what the lease arithmetic compares)."""
    out: list[Event] = []
    for line in lines:
        msg = line.get("msg")
        if "ts" not in line or not isinstance(msg, str):
            continue
        t = parse_ts(line["ts"]) - offset_ms / 1000
        base = {"t": round(t, 3), "consumer": consumer, "offsetMs": offset_ms}
        ids = {k: line[k] for k in ("chargeId", "messageId") if k in line}
        if msg == "claim decided":
            out.append({**base, "type": "claim", **ids, "outcome": line.get("outcome"),
                        "claimToken": line.get("claimToken"), "fence": line.get("fence"),
                        "leaseUntil": line.get("leaseUntil"), "state": line.get("state")})
        elif msg == "copy settled by this process's holder":
            out.append({**base, "type": "settled_locally", **ids, "waitedMs": line.get("waitedMs")})
        elif msg == "debited":
            out.append({**base, "type": "debit", **ids, "result": "replayed" if line.get("replayed") else "debited"})
        elif msg == "debit rejected":
            out.append({**base, "type": "debit", **ids, "result": "rejected", "code": line.get("code")})
        elif msg == "debit unavailable" or msg.startswith("debit misconfigured"):
            # The claim is released right after this line (ChargeRecoveryService::give_back).
            out.append({**base, "type": "release", **ids})
        elif msg == "recorded":
            out.append({**base, "type": "recorded", **ids, "operation": line.get("operation"),
                        "claimToken": line.get("claimToken")})
        elif msg.startswith("claim lost to another worker"):
            out.append({**base, "type": "fenced", **ids, "operation": line.get("operation"),
                        "claimToken": line.get("claimToken")})
        elif msg == "idempotency store failed":
            out.append({**base, "type": "store_failed", **ids, "operation": line.get("operation"),
                        "ambiguous": bool(line.get("ambiguous"))})
        elif msg == "dead-lettering":
            out.append({**base, "type": "dlq", **ids, "reason": line.get("failureReason")})
        elif msg == "DLQ forward failed; message kept for retry":
            out.append({**base, "type": "dlq_failed", **ids, "code": line.get("code")})
        elif msg in CIRCUIT_TRANSITIONS and isinstance(line.get("dependency"), str):
            out.append({**base, "type": "circuit", "dependency": line["dependency"], "to": CIRCUIT_TRANSITIONS[msg]})
        elif msg in ("consumer started", "stopping", "consumer stopped"):
            out.append({**base, "type": "consumer", "what": msg})
    return out


def bank_events(lines: Iterable[Event]) -> list[Event]:
    """One `bank` event per debit request the fake bank logged (every attempt, whatever the
    answer: created, replay, transient, commit-then-timeout, hang, ...)."""
    out: list[Event] = []
    for line in lines:
        if line.get("event") != "request" or line.get("path") != "/v1/debits" or "ts" not in line:
            continue
        event = {"t": round(parse_ts(line["ts"]), 3), "type": "bank", "chargeId": line.get("chargeId"),
                 "status": line.get("status"), "outcome": line.get("outcome")}
        if isinstance(line.get("ms"), (int, float)):
            # The line is written when the answer went out: the attempt arrived `ms` earlier.
            event["start"] = round(event["t"] - line["ms"] / 1000, 3)
        if "retryAfter" in line:
            event["retryAfter"] = line["retryAfter"]
        out.append(event)
    return out
