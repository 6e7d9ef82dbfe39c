"""The fake bank's state: ledger of debits and notifications, fault configuration and the
seeded random source that decides injected faults.

Everything is guarded by one lock, so concurrent requests for the same key behave like a
real idempotent API: exactly one 201, the others replays or conflicts. Random draws happen
under the same lock; with a fixed seed and sequential requests the fault pattern is
reproducible (with concurrent requests the order of draws follows arrival order).
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from tools.fake_bank.faults import CommitThenTimeout, Faults
from tools.fake_bank.messages import DebitRequest, NotificationRequest


@dataclass(frozen=True)
class Outcome:
    """What to answer. `withhold` set means: the debit is committed, but the response must
    be delayed or dropped (commit-then-timeout)."""

    status: int
    body: dict[str, Any]
    label: str
    withhold: CommitThenTimeout | None = None


@dataclass
class _Debit:
    request: DebitRequest
    debit_id: str
    created_at: int
    created_monotonic_ms: float = 0.0
    replays: int = 0
    # The W3C traceparent header of the request that created it (None when it had none), so a
    # test can follow a charge's trace from the producer to core banking.
    traceparent: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "chargeId": self.request.charge_id,
            "accountId": self.request.account_id,
            "amountMinor": self.request.amount_minor,
            "currency": self.request.currency,
            "chargeType": self.request.charge_type,
            "debitId": self.debit_id,
            "replays": self.replays,
            "createdAt": self.created_at,
            "traceparent": self.traceparent,
        }


@dataclass
class _Notification:
    request: NotificationRequest
    count: int = 1
    traceparent: str | None = None  # as on _Debit

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.request.key,
            "chargeId": self.request.charge_id,
            "debitId": self.request.debit_id,
            "count": self.count,
            "traceparent": self.traceparent,
        }


def _error(code: str, detail: str | None = None) -> dict[str, Any]:
    return {"code": code} if detail is None else {"code": code, "detail": detail}


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


def _monotonic_ms() -> float:
    return time.monotonic() * 1000


@dataclass
class Attempt:
    """One debit or notification request as it arrived (before any injected latency), and
    how it was answered (status None until answered, or when it hung without an answer)."""

    kind: str
    charge_id: str
    monotonic_ms: float
    epoch_ms: int
    status: int | None = None
    outcome: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "chargeId": self.charge_id,
            "monotonicMs": round(self.monotonic_ms, 3),
            "epochMs": self.epoch_ms,
            "status": self.status,
            "outcome": self.outcome,
        }


class Bank:
    def __init__(
        self,
        seed: int,
        clock_ms: Callable[[], int] = _wall_clock_ms,
        monotonic_ms: Callable[[], float] = _monotonic_ms,
    ) -> None:
        self.seed = seed
        self._clock_ms = clock_ms
        self._monotonic_ms = monotonic_ms
        self._lock = threading.Lock()
        # Never reset: a debitId stays unique for the life of the process, so a stale id
        # from before an /admin/reset can never match a new debit by accident.
        self._debit_ids = itertools.count(1)
        self._reset_locked(Faults())

    def _reset_locked(self, faults: Faults) -> None:
        self._faults = faults
        self._faults_set_at = self._monotonic_ms()
        self._attempts: list[Attempt] = []
        self._rng = random.Random(self.seed)
        # Every debit, in commit order (the ledger: a key debited again after the bank forgot it
        # has two rows), and the keys the bank still remembers.
        self._ledger: list[_Debit] = []
        self._debits: dict[str, _Debit] = {}
        self._notifications: dict[str, _Notification] = {}
        self._stats: Counter[str] = Counter()

    def reset(self) -> None:
        """Clear the ledger and the faults and re-seed the random source."""
        with self._lock:
            self._reset_locked(Faults())

    def _effective_locked(self) -> Faults:
        faults = self._faults
        if faults.expires_after_ms and self._monotonic_ms() - self._faults_set_at >= faults.expires_after_ms:
            return faults.expired()
        return faults

    @property
    def faults(self) -> Faults:
        """The faults in force now (an expired outage reads as none)."""
        with self._lock:
            return self._effective_locked()

    def set_faults(self, faults: Faults) -> None:
        with self._lock:
            self._faults = faults
            self._faults_set_at = self._monotonic_ms()

    def arrived(self, kind: str, charge_id: str) -> Attempt:
        """Records a request on arrival; the handler fills in its answer via answered()."""
        with self._lock:
            attempt = Attempt(kind, charge_id, self._monotonic_ms(), self._clock_ms())
            self._attempts.append(attempt)
            return attempt

    def answered(self, attempt: Attempt, status: int | None, outcome: str) -> None:
        with self._lock:
            attempt.status, attempt.outcome = status, outcome

    def attempts(self, kind: str | None = None, charge_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [
                a.to_json()
                for a in self._attempts
                if (kind is None or a.kind == kind) and (charge_id is None or a.charge_id == charge_id)
            ]

    def count(self, stat: str) -> None:
        with self._lock:
            self._stats[stat] += 1

    def _draw(self, rate: float) -> bool:
        # No draw at rate 0, so enabling one fault does not shift another's sequence.
        return rate > 0.0 and self._rng.random() < rate

    def hangs(self) -> int | None:
        """Draws the hang fault for one debit: the milliseconds to hold it, or None."""
        with self._lock:
            hang = self._effective_locked().hang
            if not self._draw(hang.rate):
                return None
            self._stats["hangs"] += 1
            return hang.delay_ms

    def _transient_locked(self, faults: Faults) -> Outcome | None:
        if not self._draw(faults.transient_error_rate):
            return None
        self._stats["transientErrors"] += 1
        status = faults.transient_error_status
        code = "RATE_LIMITED" if status == 429 else "TRANSIENT_FAILURE"
        return Outcome(status, _error(code), "throttled" if status == 429 else "transient")

    def _remembered_locked(self, key: str, faults: Faults) -> _Debit | None:
        """The debit of `key` while the bank remembers it; a forgotten key is dropped."""
        debit = self._debits.get(key)
        if debit is None or not faults.key_memory_ms:
            return debit
        if self._monotonic_ms() - debit.created_monotonic_ms < faults.key_memory_ms:
            return debit
        del self._debits[key]
        self._stats["forgottenKeys"] += 1
        return None

    def inquire(self, key: str) -> Outcome:
        """GET /v1/debits/{key}: the debit while its key is remembered, else 404."""
        with self._lock:
            faults = self._effective_locked()
            self._stats["inquiries"] += 1
            failed = self._transient_locked(faults)
            if failed is not None:
                return failed
            debit = self._remembered_locked(key, faults)
            if debit is None:
                return Outcome(404, _error("DEBIT_NOT_FOUND", "no debit with this idempotency key"), "not-found")
            return Outcome(200, {"debitId": debit.debit_id, "chargeId": debit.request.charge_id}, "found")

    def debit(self, request: DebitRequest, traceparent: str | None = None) -> Outcome:
        with self._lock:
            faults = self._effective_locked()
            failed = self._transient_locked(faults)
            if failed is not None:
                return failed
            existing = self._remembered_locked(request.charge_id, faults)
            if existing is not None:
                if existing.request != request:
                    self._stats["conflicts"] += 1
                    return Outcome(
                        409,
                        _error("IDEMPOTENCY_KEY_CONFLICT", "key was used with a different body"),
                        "conflict",
                    )
                existing.replays += 1
                self._stats["replays"] += 1
                return Outcome(200, {"debitId": existing.debit_id}, "replay")
            code = faults.permanent_failure_for(request.account_id)
            if code is not None:
                self._stats["rejected"] += 1
                return Outcome(422, _error(code), "rejected")
            debit = _Debit(
                request,
                f"DBT-{next(self._debit_ids):010d}",
                self._clock_ms(),
                self._monotonic_ms(),
                traceparent=traceparent,
            )
            self._debits[request.charge_id] = debit
            self._ledger.append(debit)
            self._stats["debits"] += 1
            withhold = None
            ctt = faults.commit_then_timeout
            if request.charge_id in ctt.charge_ids or self._draw(ctt.rate):
                withhold = ctt
                self._stats["commitThenTimeouts"] += 1
            return Outcome(201, {"debitId": debit.debit_id}, "created", withhold)

    def notify(self, request: NotificationRequest, traceparent: str | None = None) -> Outcome:
        with self._lock:
            if self._draw(self._effective_locked().notification_failure_rate):
                self._stats["notificationFailures"] += 1
                return Outcome(503, _error("NOTIFICATION_UNAVAILABLE"), "transient")
            existing = self._notifications.get(request.key)
            if existing is not None:
                existing.count += 1
                self._stats["notificationReplays"] += 1
                return Outcome(200, {"key": request.key}, "replay")
            self._notifications[request.key] = _Notification(request, traceparent=traceparent)
            self._stats["notifications"] += 1
            return Outcome(202, {"key": request.key}, "accepted")

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            stats = {
                name: self._stats[name]
                for name in (
                    "debits",
                    "replays",
                    "conflicts",
                    "rejected",
                    "malformed",
                    "transientErrors",
                    "commitThenTimeouts",
                    "hangs",
                    "notifications",
                    "notificationReplays",
                    "notificationFailures",
                    "unauthorized",
                    "inquiries",
                    "forgottenKeys",
                )
            }
            return {
                "debits": [d.to_json() for d in self._ledger],
                "notifications": [n.to_json() for n in self._notifications.values()],
                "stats": stats,
            }
