"""Fault configuration of the fake bank (POST /admin/faults) and its strict parser.

A POST replaces the whole configuration; omitted fields take their defaults (no fault).
`expiresAfterMs` ends the configured outage (all but permanentFailures and keyMemoryMs) on the
bank's monotonic clock; `keyMemoryMs` makes the bank forget a debit's key that long after it; `retryAfter` adds a Retry-After header to every injected 429/503.
Unknown fields are rejected so a typo in a test fails loudly instead of injecting nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PERMANENT_CODES = frozenset({"INSUFFICIENT_FUNDS", "ACCOUNT_CLOSED", "ACCOUNT_NOT_FOUND"})
COMMIT_THEN_TIMEOUT_MODES = frozenset({"delay", "close"})
RETRY_AFTER_FORMATS = frozenset({"delta-seconds", "http-date"})


class FaultConfigError(ValueError):
    """The fault configuration is invalid; answered with 400."""


def _take(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = set(obj) - allowed
    if unknown:
        raise FaultConfigError(f"unknown field(s) in {where}: {', '.join(sorted(unknown))}")


def _rate(obj: dict[str, Any], name: str) -> float:
    value = obj.get(name, 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise FaultConfigError(f"{name} must be a number in [0, 1]")
    return float(value)


def _millis(obj: dict[str, Any], name: str, default: int, limit: int = 600_000) -> int:
    value = obj.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise FaultConfigError(f"{name} must be an integer in [0, {limit}]")
    return value


@dataclass(frozen=True)
class CommitThenTimeout:
    """Commit the debit, then withhold the answer: the caller sees a timeout (mode "delay":
    the response is sent after delay_ms) or a dropped connection (mode "close"). Applies only
    when a debit is first committed; the caller's retry is answered as a normal replay."""

    rate: float = 0.0
    charge_ids: frozenset[str] = frozenset()
    delay_ms: int = 5000
    mode: str = "delay"

    @staticmethod
    def parse(obj: Any) -> CommitThenTimeout:
        if not isinstance(obj, dict):
            raise FaultConfigError("commitThenTimeout must be an object")
        _take(obj, {"rate", "chargeIds", "delayMs", "mode"}, "commitThenTimeout")
        charge_ids = obj.get("chargeIds", [])
        if not isinstance(charge_ids, list) or not all(isinstance(c, str) and c for c in charge_ids):
            raise FaultConfigError("commitThenTimeout.chargeIds must be a list of non-empty strings")
        mode = obj.get("mode", "delay")
        if mode not in COMMIT_THEN_TIMEOUT_MODES:
            raise FaultConfigError("commitThenTimeout.mode must be 'delay' or 'close'")
        return CommitThenTimeout(
            rate=_rate(obj, "rate"),
            charge_ids=frozenset(charge_ids),
            delay_ms=_millis(obj, "delayMs", 5000),
            mode=mode,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rate": self.rate,
            "chargeIds": sorted(self.charge_ids),
            "delayMs": self.delay_ms,
            "mode": self.mode,
        }


@dataclass(frozen=True)
class Hang:
    """Hold a debit without processing it (nothing is committed) for delay_ms, then drop the
    connection without an answer: a bank that hangs beyond the caller's timeout (10 s for our
    adapter). Drawn with `rate` per debit request, replays included."""

    rate: float = 0.0
    delay_ms: int = 15000

    @staticmethod
    def parse(obj: Any) -> Hang:
        if not isinstance(obj, dict):
            raise FaultConfigError("hang must be an object")
        _take(obj, {"rate", "delayMs"}, "hang")
        return Hang(rate=_rate(obj, "rate"), delay_ms=_millis(obj, "delayMs", 15000))

    def to_json(self) -> dict[str, Any]:
        return {"rate": self.rate, "delayMs": self.delay_ms}


@dataclass(frozen=True)
class RetryAfter:
    """A Retry-After header on every injected 429/503 (debits and notifications): `seconds`
    from the answer, written as delta-seconds ("6") or as an HTTP-date (RFC 9110 IMF-fixdate,
    rounded up to the next whole second so the date is never earlier than `seconds`)."""

    seconds: int
    format: str = "delta-seconds"

    @staticmethod
    def parse(obj: Any) -> RetryAfter | None:
        if obj is None:
            return None
        if not isinstance(obj, dict):
            raise FaultConfigError("retryAfter must be an object {seconds, format}")
        _take(obj, {"seconds", "format"}, "retryAfter")
        seconds = obj.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int) or not 0 <= seconds <= 86_400:
            raise FaultConfigError("retryAfter.seconds must be an integer in [0, 86400]")
        form = obj.get("format", "delta-seconds")
        if form not in RETRY_AFTER_FORMATS:
            raise FaultConfigError("retryAfter.format must be 'delta-seconds' or 'http-date'")
        return RetryAfter(seconds, form)

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "format": self.format}


@dataclass(frozen=True)
class Faults:
    latency_ms: int = 0
    transient_error_rate: float = 0.0
    transient_error_status: int = 503
    # (prefix, code), longest prefix first so the most specific rule wins.
    permanent_failures: tuple[tuple[str, str], ...] = ()
    notification_failure_rate: float = 0.0
    commit_then_timeout: CommitThenTimeout = field(default_factory=CommitThenTimeout)
    hang: Hang = field(default_factory=Hang)
    retry_after: RetryAfter | None = None
    # The faults above (all but permanentFailures, which describe accounts, not an outage)
    # end this many ms after the configuration was set: an outage "for a period" that ends
    # on the bank's own clock, not when a test gets round to clearing it. 0 = never.
    expires_after_ms: int = 0
    # How long the bank remembers a debit's idempotency key, from the debit's commit (0: for
    # ever). Past it a replay is a new debit and an inquiry answers 404, as a real bank's
    # bounded idempotency window does. A property of the bank, not an outage: it outlives
    # expiresAfterMs, like permanentFailures.
    key_memory_ms: int = 0

    @staticmethod
    def parse(obj: Any) -> Faults:
        if not isinstance(obj, dict):
            raise FaultConfigError("fault configuration must be a JSON object")
        _take(
            obj,
            {
                "latencyMs",
                "transientErrorRate",
                "transientErrorStatus",
                "permanentFailures",
                "notificationFailureRate",
                "commitThenTimeout",
                "hang",
                "retryAfter",
                "expiresAfterMs",
                "keyMemoryMs",
            },
            "faults",
        )
        status = obj.get("transientErrorStatus", 503)
        if isinstance(status, bool) or not isinstance(status, int) or not (500 <= status <= 599 or status == 429):
            raise FaultConfigError("transientErrorStatus must be 429 or an integer in [500, 599]")
        failures = obj.get("permanentFailures", {})
        if not isinstance(failures, dict):
            raise FaultConfigError("permanentFailures must be an object {accountPrefix: code}")
        for prefix, code in failures.items():
            if not prefix:
                raise FaultConfigError("permanentFailures prefixes must be non-empty")
            if code not in PERMANENT_CODES:
                raise FaultConfigError(
                    f"permanentFailures[{prefix!r}] must be one of {', '.join(sorted(PERMANENT_CODES))}"
                )
        return Faults(
            latency_ms=_millis(obj, "latencyMs", 0),
            transient_error_rate=_rate(obj, "transientErrorRate"),
            transient_error_status=status,
            permanent_failures=tuple(sorted(failures.items(), key=lambda kv: (-len(kv[0]), kv[0]))),
            notification_failure_rate=_rate(obj, "notificationFailureRate"),
            commit_then_timeout=CommitThenTimeout.parse(obj.get("commitThenTimeout", {})),
            hang=Hang.parse(obj.get("hang", {})),
            retry_after=RetryAfter.parse(obj.get("retryAfter")),
            expires_after_ms=_millis(obj, "expiresAfterMs", 0, 86_400_000),
            key_memory_ms=_millis(obj, "keyMemoryMs", 0, 86_400_000),
        )

    def expired(self) -> Faults:
        """What is left once expiresAfterMs has passed: the permanent failures and the key memory."""
        return Faults(permanent_failures=self.permanent_failures, key_memory_ms=self.key_memory_ms)

    def permanent_failure_for(self, account_id: str) -> str | None:
        for prefix, code in self.permanent_failures:
            if account_id.startswith(prefix):
                return code
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "latencyMs": self.latency_ms,
            "transientErrorRate": self.transient_error_rate,
            "transientErrorStatus": self.transient_error_status,
            "permanentFailures": dict(self.permanent_failures),
            "notificationFailureRate": self.notification_failure_rate,
            "commitThenTimeout": self.commit_then_timeout.to_json(),
            "hang": self.hang.to_json(),
            "retryAfter": None if self.retry_after is None else self.retry_after.to_json(),
            "expiresAfterMs": self.expires_after_ms,
            "keyMemoryMs": self.key_memory_ms,
        }
