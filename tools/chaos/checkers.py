"""The checkers: pure functions from what a run produced (its history, the bank's ledger, the
table, what is left on both queues) to verdicts. They import nothing from the stack, so
tests/system/test_chaos_checkers.py plants a violation of each in a small synthetic run and
shows it is caught.

- C1 no charge debited twice: at most one committed debit per chargeId (ledger and the bank's
  request log); bank attempts per charge are reported.
- C2 nothing lost: every valid charge is DONE with its ledger entry, or FAILED and in the DLQ
  with a reason; every invalid body and every copy whose payload lost to another is in the DLQ
  with a reason; the source queue is empty.
- C3 money conserved: the ledger's total is the sum of the expected amounts of valid charges.
- C4 no stale completion accepted: per key and store epoch (a wipe, or an operator starting the
  charge afresh: reconcile --resolve-uncertain), every accepted final write is by one claim, the one with the highest fence, and it is the token in the table; fenced writes
  are counted. Holds for any clock skew (conditional writes). After a log stall (lines the
  consumers dropped are missing from the history) a write whose claim, or a final record whose
  write, left no line is counted as unlogged instead.
- C4L one live claim: no claim was acquired while another worker, alive, running and not finished, was
  still inside its own lease by its own clock. Needs skew + heartbeat lateness <= lease/2
  (docs/model-check.md), so it is asserted only when the run's skew is within that bound and
  reported otherwise.
- C5 drains within visibility + lease + backoff (+ bank timeout, + skew) after the last fault:
  from the moment the faults and the producer stop until the source queue is empty, progress
  (a charge settled: final write, DUPLICATE_DONE ack, local settlement or DLQ forward) never stalls longer than
  that bound, and the queue does empty. A backlog left by the faults drains at the stack's own
  speed, which on a shared machine says nothing about the protocol, so it is the longest stall
  that is bounded, not the whole drain; the drain time is reported.

Long outages (issue 22), asserted only on runs whose nemesis had one:

- C6 no DLQ entry caused by the outage: nothing in the DLQ without a failureReason (SQS's
  maxReceiveCount ran out) and no valid charge in the DLQ.
- C7 debit attempts while open <= probes + calls before it opened: while every consumer's
  debit circuit is open or half-open, the bank attempts (by arrival) are at most the
  half-open transitions (one probe each) plus those arriving within admitted_grace_s of the
  opening (admitted before it).
- C8 drained within recovery_bound_seconds() after the outage ended.
- C9 Retry-After honoured: a charge answered 429/503 with Retry-After N is not tried again
  before N seconds by the process that got the answer, nor through the message that got it
  (asserted on any run that saw such an answer; another process's copy is counted apart).
- CR reconcile agrees: `charge-recovery reconcile` of the bank's export against the table
  reports exactly the discrepancies the run legitimately leaves, and no other: a debit whose
  record the store lost in a wipe (DEBITED_NOT_RECORDED, the ledger speaks for it, as in C2)
  or whose record is FAILED with a reasoned DLQ entry (C2's accepted case). Every other kind
  is a violation after a drain: a crash-window claim that later completed is DONE with the
  bank's debitId (the bank replays it), so it matches; one that never completed is what C2
  reports as lost, and CR as DEBITED_NOT_RECORDED.
- C10 no notification lost: during a notification outage debits go on, and every debited
  charge is notified or recorded DEBITED_NOTIFICATION_FAILED (renotify's input).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tools.chaos.history import Event

INVALID_ID = re.compile(r"INV-[0-9A-Za-z-]+")
COMMITTING = ("created", "commit-then-timeout")  # bank outcomes that moved money


@dataclass
class CheckResult:
    name: str
    ok: bool
    detail: str
    asserted: bool = True  # False: reported only (a precondition of the property does not hold)
    counts: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.asserted and not self.ok

    def label(self) -> str:
        if not self.asserted:
            return f"{self.name} n/a ({'holds' if self.ok else 'violated'}, not asserted)"
        return f"{self.name} {'pass' if self.ok else 'FAIL'}"


@dataclass
class Run:
    """What a run produced. `plan` maps chargeId to {"kind": valid|refused|mismatch,
    "amount": int, "altAmount": int (mismatch only)}; `invalid` holds the ids embedded in the
    invalid bodies. `dlq` holds {"body", "reason"} per DLQ message (reason None when SQS
    dead-lettered it). `wipes` are the times the store lost its data (restart).
    `offsets_ms` maps consumer instance to its clock offset."""

    plan: dict[str, dict[str, Any]]
    invalid: set[str]
    events: list[Event]
    ledger: list[dict[str, Any]]
    records: dict[str, dict[str, Any]]
    dlq: list[dict[str, Any]]
    source_depth: int
    lease_ms: int
    wipes: list[float] = field(default_factory=list)
    offsets_ms: dict[str, int] = field(default_factory=dict)
    heartbeat_margin_ms: int = 0
    quiet_from: float | None = None  # last fault over and last message sent
    drained_at: float | None = None  # source queue empty (None: it never was)
    drain_bound_seconds: float | None = None
    # Long outages (issue 22): each {"dependency": debit|store|notify, "start", "end"} (epoch
    # seconds of the nemesis's fault window); C6-C9 are asserted only on runs that have one.
    outages: list[dict[str, Any]] = field(default_factory=list)
    recovery_bound_seconds: float | None = None
    # Attempts that reach the bank this soon after a circuit opened were admitted before it
    # did: the permit is taken before the claim, so a claim (a store round trip) lies between
    # admission and the call. 0.25 s was exceeded on a loaded CI machine (an attempt 0.273 s
    # after the last consumer opened, its claim decided at 0.267 s); a circuit that admits
    # anything while open shows over the whole open stretch, not its first second.
    admitted_grace_s: float = 1.0
    notified: set[str] | None = None  # chargeIds the bank holds a notification for (None: not read)
    # `reconcile --full` of the bank's export against the table after the drain: its lines,
    # the discrepancies then the summary (None: not run).
    reconciled: list[dict[str, Any]] | None = None

    def of_type(self, *types: str) -> list[Event]:
        return [e for e in self.events if e["type"] in types]

    def epoch(self, t: float) -> int:
        return sum(1 for w in self.wipes if w <= t)

    def max_skew_ms(self) -> int:
        offsets = list(self.offsets_ms.values()) + [0]
        return max(offsets) - min(offsets)


def _dlq_by_charge(run: Run) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str | None]]]:
    """DLQ messages by chargeId (parsed body: amount and reason), and reasons by invalid id."""
    by_charge: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_invalid: dict[str, list[str | None]] = defaultdict(list)
    for message in run.dlq:
        body = message["body"]
        found = INVALID_ID.search(body)
        if found and found.group(0) in run.invalid:
            by_invalid[found.group(0)].append(message.get("reason"))
            continue
        try:
            parsed = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict) and isinstance(parsed.get("chargeId"), str):
            by_charge[parsed["chargeId"]].append({"amount": parsed.get("amountMinor"), "reason": message.get("reason")})
    return by_charge, by_invalid


def c1_no_double_debit(run: Run) -> CheckResult:
    ledger_counts = Counter(d["chargeId"] for d in run.ledger)
    committed = Counter(e["chargeId"] for e in run.of_type("bank") if e.get("outcome") in COMMITTING)
    attempts = Counter(e["chargeId"] for e in run.of_type("bank"))
    doubles = sorted({c for c, n in ledger_counts.items() if n > 1} | {c for c, n in committed.items() if n > 1})
    replays = sum(int(d.get("replays", 0)) for d in run.ledger)
    counts = {
        "debits": len(run.ledger),
        "doubles": len(doubles),
        "attempts": sum(attempts.values()),
        "maxAttempts": max(attempts.values(), default=0),
        "replays": replays,
    }
    detail = f"{len(run.ledger)} debits, {counts['attempts']} bank attempts (max {counts['maxAttempts']} for one charge), {replays} replays"
    if doubles:
        return CheckResult("C1", False, f"debited twice: {doubles[:5]}; {detail}", counts=counts)
    return CheckResult("C1", True, detail, counts=counts)


def c2_nothing_lost(run: Run) -> CheckResult:
    by_charge, by_invalid = _dlq_by_charge(run)
    ledger = {d["chargeId"]: d for d in run.ledger}
    recorded_before_wipe = {
        e["chargeId"] for e in run.of_type("recorded") if run.wipes and run.epoch(e["t"]) < len(run.wipes)
    }
    problems: list[str] = []
    for charge_id, spec in sorted(run.plan.items()):
        record = run.records.get(charge_id)
        state = record.get("state") if record else None
        dlq = by_charge.get(charge_id, [])
        if record is None and charge_id in recorded_before_wipe:
            state = "WIPED"  # final before the store lost it; the ledger still speaks for it
        if spec["kind"] == "refused":
            if state not in ("FAILED", "WIPED") or charge_id in ledger or not any(m["reason"] for m in dlq):
                problems.append(f"{charge_id}: refused charge not FAILED+DLQ (state {state}, dlq {dlq})")
            continue
        if state == "FAILED" and any(m["reason"] for m in dlq):
            continue  # e.g. the bank answered 409: in the DLQ with a reason
        if state not in ("DONE", "WIPED") or charge_id not in ledger:
            problems.append(f"{charge_id}: state {state}, ledger {'yes' if charge_id in ledger else 'no'}, dlq {dlq}")
            continue
        if spec["kind"] == "mismatch":
            debited = ledger[charge_id]["amountMinor"]
            other = spec["altAmount"] if debited == spec["amount"] else spec["amount"]
            if not any(m["amount"] == other and m["reason"] == "PAYLOAD_MISMATCH" for m in dlq):
                problems.append(f"{charge_id}: the copy with amount {other} is not in the DLQ as PAYLOAD_MISMATCH")
    for invalid_id in sorted(run.invalid):
        if "INVALID_MESSAGE" not in by_invalid.get(invalid_id, []):
            problems.append(f"{invalid_id}: invalid body not in the DLQ as INVALID_MESSAGE")
    if run.source_depth != 0:
        problems.append(f"source queue still holds {run.source_depth} messages")
    reasonless = sum(1 for m in run.dlq if not m.get("reason"))
    counts = {"lost": len(problems), "dlq": len(run.dlq), "dlqWithoutReason": reasonless}
    detail = f"{len(run.plan)} charges, {len(run.invalid)} invalid bodies, {len(run.dlq)} in the DLQ ({reasonless} without reason)"
    if problems:
        return CheckResult("C2", False, f"{len(problems)} problems, e.g. {problems[:3]}; {detail}", counts=counts)
    return CheckResult("C2", True, detail, counts=counts)


def c3_money_conserved(run: Run) -> CheckResult:
    problems: list[str] = []
    expected = 0
    for charge_id, spec in run.plan.items():
        if spec["kind"] == "refused":
            continue
        allowed = {spec["amount"]} | ({spec["altAmount"]} if spec["kind"] == "mismatch" else set())
        debit = next((d for d in run.ledger if d["chargeId"] == charge_id), None)
        if debit is not None and debit["amountMinor"] not in allowed:
            problems.append(f"{charge_id}: debited {debit['amountMinor']}, expected one of {sorted(allowed)}")
        expected += debit["amountMinor"] if debit is not None and debit["amountMinor"] in allowed else spec["amount"]
    strangers = [d["chargeId"] for d in run.ledger if run.plan.get(d["chargeId"], {}).get("kind") in (None, "refused")]
    if strangers:
        problems.append(f"debits of charges that must not be debited: {strangers[:5]}")
    total = sum(int(d["amountMinor"]) for d in run.ledger)
    detail = f"ledger total {total}, expected {expected}"
    ok = not problems and total == expected
    return CheckResult("C3", ok, detail if ok else f"{detail}; {problems[:3]}", counts={"ledgerTotal": total, "expectedTotal": expected})


def _claims_by_key(run: Run) -> dict[str, list[Event]]:
    by_key: dict[str, list[Event]] = defaultdict(list)
    for e in run.of_type("claim"):
        if e.get("outcome") == "ACQUIRED":
            by_key[e["chargeId"]].append(e)
    return by_key


# Faults during which a consumer may drop log lines (the history then lacks their events).
LOSSY_LOG_FAULTS = ("log-stall",)


def log_gaps(run: Run) -> list[tuple[float, float]]:
    """The stretches (start, stop) during which every consumer's log could drop lines."""
    gaps: list[tuple[float, float]] = []
    started: float | None = None
    for e in sorted(run.of_type("fault"), key=lambda e: e["t"]):
        if e.get("fault") in LOSSY_LOG_FAULTS and e.get("action") == "start":
            started = e["t"]
        elif e.get("fault") in LOSSY_LOG_FAULTS and e.get("action") == "stop" and started is not None:
            gaps.append((started, e["t"]))
            started = None
    return gaps


def _operator_resets(run: Run) -> dict[str, list[float]]:
    """Per charge, when an operator's write started it afresh: `reconcile --resolve-uncertain`
    (tools/chaos/horizon.py) reopens a DEBIT_UNCERTAIN charge the bank never debited, and the
    redriven copy's claim then writes its own final record."""
    resets: dict[str, list[float]] = defaultdict(list)
    for e in run.of_type("resolve"):
        for key in e.get("uncertain", []):
            resets[key].append(e["t"])
    return resets


def c4_no_stale_completion(run: Run) -> CheckResult:
    claims = _claims_by_key(run)
    resets = _operator_resets(run)

    def epoch_of(key: str, t: float) -> tuple[int, int]:
        """The store epoch (wipes) and how often an operator had started the charge afresh."""
        return run.epoch(t), sum(1 for r in resets.get(key, ()) if r <= t)

    fenced = run.of_type("fenced")
    gaps = log_gaps(run)
    unlogged = 0
    problems: list[str] = []
    writes: dict[tuple[str, tuple[int, int]], set[str]] = defaultdict(set)
    for e in run.of_type("recorded"):
        writes[(e["chargeId"], epoch_of(e["chargeId"], e["t"]))].add(e.get("claimToken") or "")
    for (key, epoch), tokens in sorted(writes.items()):
        if len(tokens) > 1:
            problems.append(f"{key}: final writes accepted from {len(tokens)} claims in store epoch {epoch[0]}")
            continue
        (token,) = tokens
        acquired = [c for c in claims.get(key, []) if epoch_of(key, c["t"]) == epoch]
        mine = [c for c in acquired if c.get("claimToken") == token]
        if not mine and gaps:
            unlogged += 1  # its claim's line dropped by the log stall
            continue
        if not mine:
            problems.append(f"{key}: final write by token {token[:8]} that never acquired a claim")
            continue
        newest = max(acquired, key=lambda c: c.get("fence") or 0)
        if newest.get("claimToken") != token:
            problems.append(f"{key}: final write by fence {mine[-1].get('fence')} after fence {newest.get('fence')} took the claim")
        if epoch == epoch_of(key, math.inf):
            record = run.records.get(key)
            if record is not None and record.get("claimToken") != token:
                problems.append(f"{key}: table token {str(record.get('claimToken'))[:8]} is not the writer's {token[:8]}")
    died = {e["consumer"]: e["t"] for e in run.of_type("fault") if e.get("action") == "kill" and "consumer" in e}
    # A final write whose answer was lost (the connection cut after the request went out: a
    # store outage) is logged as an ambiguous store failure, and may have landed.
    ambiguous_final = {(e["consumer"], e.get("chargeId")) for e in run.of_type("store_failed")
                       if e.get("ambiguous") and e.get("operation") in ("complete", "fail")}
    for key, record in run.records.items():
        last_epoch = epoch_of(key, math.inf)
        if record.get("state") not in ("DONE", "FAILED") or (key, last_epoch) in writes:
            continue
        # A writer SIGKILLed between its write and its log line, or whose write's answer was
        # lost, leaves no `recorded` event: the table's token must then be the newest claim's,
        # and that claim's process killed or its final write ambiguous.
        acquired = [c for c in claims.get(key, []) if epoch_of(key, c["t"]) == last_epoch]
        if not acquired and key in resets:
            continue  # reconcile settled it from the ledger: the final record is the operator's
        newest = max(acquired, key=lambda c: c.get("fence") or 0, default=None)
        explained = newest is not None and (newest["consumer"] in died or (newest["consumer"], key) in ambiguous_final)
        # After a log stall the writer's line (or its claim's) may be missing; a token that
        # the history shows superseded is still a stale completion.
        token_unseen = record.get("claimToken") not in {c.get("claimToken") for c in acquired}
        if gaps and not explained and (token_unseen or newest.get("claimToken") == record.get("claimToken")):
            unlogged += 1
            continue
        if newest is None or newest.get("claimToken") != record.get("claimToken") or not explained:
            problems.append(f"{key}: final in the table but no accepted final write in the history")
    counts = {"fenced": len(fenced), "finalWrites": sum(len(t) for t in writes.values()), "unlogged": unlogged}
    detail = f"{counts['finalWrites']} accepted final writes, {len(fenced)} fenced writes refused"
    if gaps:
        detail += f", {unlogged} final writes unlogged (log stall)"
    if problems:
        return CheckResult("C4", False, f"{len(problems)} problems, e.g. {problems[:3]}; {detail}", counts=counts)
    return CheckResult("C4", True, detail, counts=counts)


def _paused(run: Run) -> dict[str, list[tuple[float, float]]]:
    """Per consumer, the spans (start, stop) it was SIGSTOPped by the nemesis."""
    spans: dict[str, list[tuple[float, float]]] = {}
    started: dict[str, float] = {}
    for e in sorted(run.of_type("fault"), key=lambda e: e["t"]):
        if e.get("fault") != "consumer-pause" or "consumer" not in e:
            continue
        if e.get("action") == "start":
            started[e["consumer"]] = e["t"]
        elif e.get("action") == "stop" and e["consumer"] in started:
            spans.setdefault(e["consumer"], []).append((started.pop(e["consumer"]), e["t"]))
    for consumer, t in started.items():  # never resumed in the history
        spans.setdefault(consumer, []).append((t, float("inf")))
    return spans


def _ends(run: Run) -> tuple[dict[str, float], dict[str, float]]:
    """When each claim (by token) stopped being worked on, and when each consumer died."""
    ended: dict[str, float] = {}
    token_of: dict[tuple[str, str], str] = {}
    for e in sorted(run.events, key=lambda e: e["t"]):
        if e["type"] == "claim" and e.get("outcome") == "ACQUIRED":
            token_of[(e["consumer"], e.get("messageId", ""))] = e.get("claimToken", "")
        elif e["type"] in ("recorded", "fenced") and e.get("claimToken"):
            ended.setdefault(e["claimToken"], e["t"])
        elif e["type"] in ("release", "store_failed"):
            token = token_of.get((e["consumer"], e.get("messageId", "")))
            if token:
                ended.setdefault(token, e["t"])
    died = {e["consumer"]: e["t"] for e in run.of_type("fault") if e.get("action") == "kill" and "consumer" in e}
    return ended, died


def c4l_one_live_claim(run: Run) -> CheckResult:
    ended, died = _ends(run)
    paused = _paused(run)
    gaps = log_gaps(run)
    overlaps: list[str] = []
    for key, acquired in _claims_by_key(run).items():
        acquired.sort(key=lambda c: (run.epoch(c["t"]), c.get("fence") or 0))
        for previous, taker in zip(acquired, acquired[1:]):
            if previous.get("claimToken") == taker.get("claimToken") or run.epoch(previous["t"]) != run.epoch(taker["t"]):
                continue
            t = taker["t"]
            if ended.get(previous.get("claimToken", ""), float("inf")) <= t or died.get(previous["consumer"], float("inf")) <= t:
                continue
            # A holder stopped between its claim and the takeover could not heartbeat: its
            # lateness D is the pause, not the margin the bound assumes (the model's D, not a
            # breach of S + D <= lease/2 by the code).
            if any(start < t and stop > previous["t"] for start, stop in paused.get(previous["consumer"], [])):
                continue
            # A holder whose log dropped lines between its claim and the takeover may have
            # finished (or released) it without a line saying so.
            if any(start < t and stop > previous["t"] for start, stop in gaps):
                continue
            # The previous holder's clock at that moment, against the lease it wrote.
            holder_now_ms = t * 1000 + previous.get("offsetMs", 0)
            if previous.get("leaseUntil") is not None and holder_now_ms < previous["leaseUntil"]:
                overlaps.append(f"{key}: {taker['consumer']} took fence {taker.get('fence')} "
                                f"{previous['leaseUntil'] - holder_now_ms:.0f} ms inside {previous['consumer']}'s lease")
    skew = run.max_skew_ms()
    within = skew + run.heartbeat_margin_ms <= run.lease_ms / 2
    detail = f"{len(overlaps)} overlapping claims; skew {skew} ms {'within' if within else 'beyond'} the bound (skew + {run.heartbeat_margin_ms} ms <= lease/2 = {run.lease_ms // 2} ms)"
    if overlaps:
        detail += f", e.g. {overlaps[:2]}"
    return CheckResult("C4L", not overlaps, detail, asserted=within, counts={"overlaps": len(overlaps), "skewMs": skew})


SETTLING = ("recorded", "dlq", "settled_locally")


def c5_drain_bound(run: Run) -> CheckResult:
    if run.drained_at is None or run.quiet_from is None or run.drain_bound_seconds is None:
        return CheckResult("C5", False, "the source queue did not drain", counts={"drainSeconds": None, "maxStall": None})
    settled = sorted(
        e["t"] for e in run.events
        if (e["type"] in SETTLING or (e["type"] == "claim" and e.get("outcome") == "DUPLICATE_DONE"))
        and run.quiet_from <= e["t"] <= run.drained_at
    )
    points = [run.quiet_from, *settled, run.drained_at]
    stall = max(b - a for a, b in zip(points, points[1:]))
    drain = run.drained_at - run.quiet_from
    ok = stall <= run.drain_bound_seconds
    detail = (f"drained {drain:.1f} s after the last fault or send; longest stall {stall:.1f} s "
              f"(bound {run.drain_bound_seconds:.1f} s)")
    return CheckResult("C5", ok, detail, counts={"drainSeconds": round(drain, 1), "maxStall": round(stall, 1),
                                                 "bound": round(run.drain_bound_seconds, 1)})


def _na(name: str, why: str) -> CheckResult:
    return CheckResult(name, True, why, asserted=False)


def c6_no_outage_dead_letters(run: Run) -> CheckResult:
    """No DLQ entry caused by an outage: nothing dead-lettered by SQS (no failureReason: the
    receive count ran out) and no valid charge in the DLQ at all."""
    if not run.outages:
        return _na("C6", "no long outage in this run")
    by_charge, _ = _dlq_by_charge(run)
    reasonless = [m for m in run.dlq if not m.get("reason")]
    valid_in_dlq = sorted(c for c in by_charge if run.plan.get(c, {}).get("kind") == "valid")
    counts = {"dlq": len(run.dlq), "withoutReason": len(reasonless), "validCharges": len(valid_in_dlq)}
    detail = f"{len(run.dlq)} in the DLQ, {len(reasonless)} without reason, {len(valid_in_dlq)} valid charges"
    ok = not reasonless and not valid_in_dlq
    return CheckResult("C6", ok, detail if ok else f"{detail}, e.g. {valid_in_dlq[:3]}", counts=counts)


def open_intervals(run: Run, dependency: str) -> list[tuple[float, float]]:
    """When every consumer's `dependency` circuit was not closed (open or half-open): the
    stretches during which any bank attempt must be a probe (or admitted before the open)."""
    consumers = {e["consumer"] for e in run.of_type("consumer") if e.get("what") == "consumer started"}
    state = {c: "closed" for c in consumers}
    intervals: list[tuple[float, float]] = []
    since: float | None = None
    for e in sorted((e for e in run.of_type("circuit") if e.get("dependency") == dependency), key=lambda e: e["t"]):
        state[e["consumer"]] = e["to"]
        all_open = bool(state) and all(v != "closed" for v in state.values())
        if all_open and since is None:
            since = e["t"]
        elif not all_open and since is not None:
            intervals.append((since, e["t"]))
            since = None
    if since is not None:
        intervals.append((since, max((e["t"] for e in run.events), default=since)))
    return intervals


def c7_attempts_while_open(run: Run) -> CheckResult:
    """Debit attempts while every debit circuit is open <= probes (half-open transitions) +
    the calls admitted before it opened."""
    if not any(o["dependency"] == "debit" for o in run.outages):
        return _na("C7", "no debit outage in this run")
    intervals = open_intervals(run, "debit")
    if not intervals:
        return CheckResult("C7", False, "the debit circuit never opened on every consumer", counts={"intervals": 0})
    starts = [e.get("start", e["t"]) for e in run.of_type("bank")]
    half_open = [e["t"] for e in run.of_type("circuit") if e.get("dependency") == "debit" and e.get("to") == "half_open"]
    attempts = probes = before = 0
    worst: list[str] = []
    for a, b in intervals:
        inside = sum(1 for t in starts if a < t <= b)
        admitted = sum(1 for t in starts if a < t <= a + run.admitted_grace_s)
        probed = sum(1 for t in half_open if a - run.admitted_grace_s < t <= b)
        attempts, probes, before = attempts + inside, probes + probed, before + admitted
        if inside > probed + admitted:
            worst.append(f"{inside} attempts in {b - a:.1f} s open, {probed} probes + {admitted} admitted before")
    open_s = sum(b - a for a, b in intervals)
    counts = {"attemptsWhileOpen": attempts, "probes": probes, "admittedBefore": before, "openSeconds": round(open_s, 1),
              "attemptsBeforeOpen": sum(1 for t in starts if t <= intervals[0][0])}
    detail = (f"{attempts} debit attempts in {open_s:.1f} s with every circuit open, bound {probes} probes + "
              f"{before} admitted before it opened; {counts['attemptsBeforeOpen']} attempts before")
    return CheckResult("C7", not worst, detail if not worst else f"{detail}; {worst[:2]}", counts=counts)


def c8_drain_after_recovery(run: Run) -> CheckResult:
    """The backlog is drained within a bound after the (last) outage ended."""
    if not run.outages:
        return _na("C8", "no long outage in this run")
    recovered = max(o["end"] for o in run.outages)
    bound = run.recovery_bound_seconds
    if run.drained_at is None or bound is None:
        return CheckResult("C8", False, "the source queue did not drain after the outage", counts={"drainSeconds": None})
    drain = max(0.0, run.drained_at - recovered)
    detail = f"drained {drain:.1f} s after the outage ended (bound {bound:.1f} s)"
    return CheckResult("C8", drain <= bound, detail, counts={"drainSeconds": round(drain, 1), "bound": round(bound, 1)})


def _claimant(claims: list[Event], at: float) -> tuple[str, str] | None:
    """(consumer, messageId) of the last ACQUIRED claim of a charge at or just before a bank
    attempt at `at` (the claim precedes its debit by milliseconds), or None."""
    before = [c for c in claims if c["t"] <= at + 0.05]
    return (before[-1]["consumer"], before[-1]["messageId"]) if before else None


def c9_retry_after_honoured(run: Run) -> CheckResult:
    """After a 429/503 carrying `Retry-After: N` (delta-seconds), the charge's next attempt by
    the process that got the answer, or through the message that got it, arrives no sooner than
    N seconds later. The not-before is the process's (docs/design.md, "Retry-After"): another
    process's copy of the same charge is not bound by it, and is counted apart."""
    answered = [e for e in run.of_type("bank") if str(e.get("retryAfter", "")).isdigit()]
    if not answered:
        return _na("C9", "no Retry-After answered in this run")
    by_charge: dict[str, list[Event]] = defaultdict(list)
    for e in run.of_type("bank"):
        by_charge[e["chargeId"]].append(e)
    claims: dict[str, list[Event]] = defaultdict(list)
    for c in sorted(run.of_type("claim"), key=lambda c: c["t"]):
        if c.get("outcome") == "ACQUIRED":
            claims[c["chargeId"]].append(c)
    early: list[str] = []
    gaps: list[float] = []
    elsewhere = 0
    for e in answered:
        answered_by = _claimant(claims[e["chargeId"]], e.get("start", e["t"]))
        later = sorted((x for x in by_charge[e["chargeId"]] if x.get("start", x["t"]) > e.get("start", e["t"])),
                       key=lambda x: x.get("start", x["t"]))
        for x in later:
            gap = x.get("start", x["t"]) - e["t"]  # from the answer to the next arrival
            by = _claimant(claims[e["chargeId"]], x.get("start", x["t"]))
            if answered_by and by and by[0] != answered_by[0] and by[1] != answered_by[1]:
                elsewhere += gap < int(e["retryAfter"])
                continue  # another process's copy: not bound by this process's not-before
            gaps.append(gap)
            if gap < int(e["retryAfter"]):
                early.append(f"{e['chargeId']}: retried {gap:.2f} s after Retry-After: {e['retryAfter']}")
            break
    counts = {"answered": len(answered), "retried": len(gaps), "minGap": round(min(gaps), 2) if gaps else None,
              "otherProcessEarly": elsewhere}
    detail = (f"{len(answered)} answers with Retry-After, {len(gaps)} retried by the same process or message, "
              f"shortest gap {counts['minGap']} s; {elsewhere} earlier by another process's copy")
    return CheckResult("C9", not early, detail if not early else f"{detail}; {early[:3]}", counts=counts)


def c10_no_notification_lost(run: Run) -> CheckResult:
    """A notification outage never stops debits and never loses a notification: debits were
    committed while it lasted, and every debited charge is notified or recorded
    DEBITED_NOTIFICATION_FAILED (which `renotify --all-failed-notifications` recovers)."""
    windows = [o for o in run.outages if o["dependency"] == "notify"]
    if not windows or run.notified is None:
        return _na("C10", "no notification outage in this run")
    during = sum(1 for e in run.of_type("bank") if e.get("outcome") in COMMITTING
                 and any(w["start"] <= e["t"] <= w["end"] for w in windows))
    lost = sorted(d["chargeId"] for d in run.ledger if d["chargeId"] not in run.notified
                  and run.records.get(d["chargeId"], {}).get("status") != "DEBITED_NOTIFICATION_FAILED")
    failed = sum(1 for r in run.records.values() if r.get("status") == "DEBITED_NOTIFICATION_FAILED")
    counts = {"debitsDuringOutage": during, "notified": len(run.notified), "notificationFailed": failed, "lost": len(lost)}
    detail = (f"{during} debits during the outage; {len(run.notified)} notified, {failed} DEBITED_NOTIFICATION_FAILED "
              f"(renotify recovers them), {len(lost)} neither")
    ok = during > 0 and not lost
    return CheckResult("C10", ok, detail if ok else f"{detail}, e.g. {lost[:3]}", counts=counts)


def cr_reconcile_agrees(run: Run) -> CheckResult:
    if run.reconciled is None:
        return _na("CR", "reconcile not run")
    *lines, summary = run.reconciled
    by_charge, _ = _dlq_by_charge(run)
    recorded_before_wipe = {
        e["chargeId"] for e in run.of_type("recorded") if run.wipes and run.epoch(e["t"]) < len(run.wipes)
    }
    expected: set[tuple[str, str]] = set()
    for debit in run.ledger:
        charge_id = debit["chargeId"]
        record = run.records.get(charge_id)
        wiped = record is None and charge_id in recorded_before_wipe
        failed_in_dlq = record is not None and record.get("state") == "FAILED" and any(
            m["reason"] for m in by_charge.get(charge_id, []))
        if wiped or failed_in_dlq:
            expected.add(("DEBITED_NOT_RECORDED", charge_id))
    reported = {(line["kind"], line["chargeId"]) for line in lines}
    unexplained, missing = sorted(reported - expected), sorted(expected - reported)
    counts = {"reported": len(reported), "expected": len(expected), "ledgerRows": summary.get("ledgerRows")}
    detail = f"{summary.get('ledgerRows')} ledger rows, {summary.get('matched')} matched, {len(reported)} discrepancies"
    problems = [f"unexplained {unexplained[:3]}"] if unexplained else []
    problems += [f"not reported {missing[:3]}"] if missing else []
    if summary.get("ledgerRows") != len(run.ledger):
        problems.append(f"read {summary.get('ledgerRows')} rows of {len(run.ledger)}")
    if problems:
        return CheckResult("CR", False, f"{'; '.join(problems)}; {detail}", counts=counts)
    return CheckResult("CR", True, detail, counts=counts)


CHECKERS = (c1_no_double_debit, c2_nothing_lost, c3_money_conserved, c4_no_stale_completion, c4l_one_live_claim, c5_drain_bound,
            c6_no_outage_dead_letters, c7_attempts_while_open, c8_drain_after_recovery, c9_retry_after_honoured,
            c10_no_notification_lost, cr_reconcile_agrees)


def recovery_bound_seconds(lease_s: float, probe_max_s: float, ramp_s: float, charges: int) -> float:
    """What C8 allows from the dependency's return to an empty queue: the next probe (at most
    the probe cap, + 10% jitter), the ramp, the visibility of messages handed back on the
    probe schedule (probe cap again) and of one lease, the longest retry backoff a receive
    count of 4 reaches (16 s), and the backlog's own work at a modest 20 charges/s."""
    return 2 * probe_max_s * 1.1 + ramp_s + lease_s + 16.0 + charges / 20.0


def check_all(run: Run) -> list[CheckResult]:
    return [checker(run) for checker in CHECKERS]


# How long a message whose DLQ forward failed stays hidden (ListenerConfig::dlq_failure_retry).
DLQ_FAILURE_RETRY_S = 30.0


def drain_bound_seconds(lease_s: float, max_receive_count: int, skew_ms: int, bank_timeout_s: float = 10.0,
                        dlq_forward_failed: bool = False) -> float:
    """What C5 allows after the last fault: a message hidden by its visibility (one lease), a
    claim whose holder died (one lease), the longest retry delay it got — the backoff its
    receive count reached (2 s x 2^(n-1), capped at 300 s), or 30 s after a failed DLQ forward
    (a dead-lettering during a credentials or SQS outage) — a bank call in flight (its timeout),
    the skew (a skewed holder's lease looks that much longer), and 10 s of polling and batching
    slack."""
    backoff = min(300.0, 2.0 * 2 ** max(0, max_receive_count - 1))
    if dlq_forward_failed:
        backoff = max(backoff, DLQ_FAILURE_RETRY_S)
    return 2 * lease_s + backoff + bank_timeout_s + abs(skew_ms) / 1000 + 10.0


def iter_failures(results: Iterable[CheckResult]) -> list[CheckResult]:
    return [r for r in results if r.failed]
