"""Checkers of the stall scenarios (issue 34; the nemeses are tools/chaos/stalls.py), pure
functions of a checkers.Run like the others, tested in tests/system/test_chaos_checkers.py.

- CS debits go on during a stall: debits committed per second (the bank's log) during the
  stall are at least half of those before it. For a credentials stall "during" ends when the
  first consumer's credentials run out (its last prompt fetch before the stall, extended by
  any prompt fetch while they were still valid): a consumer may stop once it holds no valid
  credentials. A stall that reached no consumer (no request, no lookup during it) fails: it
  proved nothing.
- CL the log stall loses lines, never charges: debits go on while the consumers' stderr is not
  read (as CS), and no charge is lost (C2's count); the dropped lines the consumers count
  (ic_log_lines_dropped_total) are reported.
- CT SIGTERM during a stall ends the process within grace + 5 s, while the stall still lasts.

Before, during and after rates, what /health/live and /health/ready answered during the stall,
and the SIGTERM-to-exit time are the figures of the chaos report's stall table.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from tools.chaos.checkers import COMMITTING, CheckResult, Run, c2_nothing_lost
from tools.chaos.credentials_server import PROMPT_S
from tools.chaos.history import Event

SIGTERM_BOUND_EXTRA_S = 5.0  # the bound: exit within grace + 5 s
STALLS = ("credentials-stall", "log-stall", "resolver-stall")
MIN_RATIO = 0.5
MIN_WINDOW_S = 2.0  # a shorter stretch says nothing about a rate


def stall_window(run: Run) -> dict[str, Any] | None:
    """The run's stall: {"fault", "start", "end", "hits"} from its fault events (None: no stall)."""
    window: dict[str, Any] | None = None
    for e in sorted(run.of_type("fault"), key=lambda e: e["t"]):
        if e.get("fault") not in STALLS:
            continue
        if e.get("action") == "start":
            window = {"fault": e["fault"], "start": e["t"], "end": None, "hits": 0}
        elif e.get("action") == "stop" and window is not None:
            window.update(end=e["t"], hits=int(e.get("hits", 0)))
    return window if window is not None and window["end"] is not None else None


def debit_rate(run: Run, a: float, b: float) -> float | None:
    """Debits committed per second in [a, b); None for a stretch under MIN_WINDOW_S."""
    if b - a < MIN_WINDOW_S:
        return None
    n = sum(1 for e in run.of_type("bank") if e.get("outcome") in COMMITTING and a <= e["t"] < b)
    return round(n / (b - a), 2)


def credentials_valid_until(run: Run, start: float) -> float | None:
    """When the first consumer that held credentials at `start` had none valid any more; None
    when no credentials were served (not a credentials stall). Only prompt answers count: a
    late one may have come after the consumer gave up."""
    fetches: dict[str, list[Event]] = defaultdict(list)
    for e in run.of_type("credentials"):
        if e.get("answered") and e.get("after", 0) <= PROMPT_S and "expiration" in e:
            fetches[e["consumer"]].append(e)
    if not run.of_type("credentials"):
        return None
    ends = []
    for consumer_fetches in fetches.values():
        consumer_fetches.sort(key=lambda e: e["t"])
        held = [e for e in consumer_fetches if e["t"] <= start]
        if not held:
            continue
        until = held[-1]["expiration"]
        for e in consumer_fetches:
            if start < e["t"] < until:
                until = max(until, e["expiration"])
        ends.append(until)
    return min(ends, default=start)


def health_answers(run: Run, start: float, end: float) -> dict[str, str]:
    """Per path, e.g. {"/health/live": "200x30", "/health/ready": "200x28, 503x2"}."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for e in run.of_type("health"):
        if start <= e["t"] <= end:
            counts[e["path"]][str(e["status"])] += 1
    return {path: ", ".join(f"{status}x{n}" for status, n in sorted(c.items())) for path, c in counts.items()}


def stall_figures(run: Run) -> dict[str, Any] | None:
    """Everything the stall table shows, None for a run without a stall."""
    window = stall_window(run)
    if window is None:
        return None
    start, end = window["start"], window["end"]
    sends = [e["t"] for e in run.of_type("send")]
    before_from = min(sends) + 1.0 if sends else start - 5.0
    valid_until = credentials_valid_until(run, start)
    during_end = min(end, valid_until) if valid_until is not None else end
    settled_end = run.drained_at or max((e["t"] for e in run.of_type("bank")), default=end)
    sigterm = next(iter(run.of_type("sigterm")), None)
    dropped = [e["value"] for e in run.of_type("log_dropped") if e.get("value") is not None]
    return {
        **window,
        "before": debit_rate(run, before_from, start),
        "during": debit_rate(run, start, during_end),
        "after": debit_rate(run, end, max(settled_end, end + MIN_WINDOW_S)),  # the catch-up
        "duringSeconds": round(during_end - start, 1),
        "validUntil": valid_until,
        "health": health_answers(run, start, end),
        "sigterm": sigterm,
        "droppedLines": sum(dropped) if dropped else None,
    }


def _rate_verdict(name: str, f: dict[str, Any], what: str) -> CheckResult:
    counts = {k: f[k] for k in ("before", "during", "after", "duringSeconds", "hits")}
    detail = (f"{f['fault']}: {f['before']} debits/s before, {f['during']} during ({f['duringSeconds']} s), "
              f"{f['after']} after; {f['hits']} {what} during it")
    if f["hits"] == 0:
        return CheckResult(name, False, f"the stall never reached the consumers; {detail}", counts=counts)
    if f["during"] is None or not f["before"]:
        return CheckResult(name, True, f"no rate to compare; {detail}", asserted=False, counts=counts)
    ok = f["during"] >= MIN_RATIO * f["before"]
    return CheckResult(name, ok, detail if ok else f"under {MIN_RATIO:.0%} of before; {detail}", counts=counts)


def cs_debits_continue(run: Run) -> CheckResult:
    f = stall_figures(run)
    if f is None or f["fault"] == "log-stall":
        return CheckResult("CS", True, "no credentials or resolver stall in this run", asserted=False)
    what = "credential requests" if f["fault"] == "credentials-stall" else "silent lookups"
    return _rate_verdict("CS", f, what)


def cl_lines_not_charges(run: Run) -> CheckResult:
    f = stall_figures(run)
    if f is None or f["fault"] != "log-stall":
        return CheckResult("CL", True, "no log stall in this run", asserted=False)
    rate = _rate_verdict("CL", f, "bytes left unread")
    lost = c2_nothing_lost(run).counts["lost"]
    dropped = "not counted (no ic_log_lines_dropped_total)" if f["droppedLines"] is None else f"{f['droppedLines']:.0f}"
    detail = f"{rate.detail}; lines dropped: {dropped}; charges lost: {lost}"
    counts = {**rate.counts, "lost": lost, "droppedLines": f["droppedLines"]}
    return CheckResult("CL", rate.ok and lost == 0, detail, asserted=rate.asserted or lost > 0, counts=counts)


def ct_sigterm_exit(run: Run) -> CheckResult:
    f = stall_figures(run)
    if f is None:
        return CheckResult("CT", True, "no stall in this run", asserted=False)
    sigterm = f["sigterm"]
    if sigterm is None:
        return CheckResult("CT", False, "no SIGTERM was sent during the stall")
    bound = sigterm["graceSeconds"] + SIGTERM_BOUND_EXTRA_S
    exit_s = sigterm.get("exitSeconds")
    ended_s = round(sigterm["stallEnd"] - sigterm["t"], 1)
    counts = {"exitSeconds": exit_s, "bound": bound, "stallEndedSeconds": ended_s}
    if exit_s is None:
        return CheckResult("CT", False, f"{sigterm['consumer']} still running 60 s after the stall ended "
                                        f"({ended_s} s after SIGTERM; bound {bound:.0f} s)", counts=counts)
    detail = (f"{sigterm['consumer']} exited {exit_s:.1f} s after SIGTERM (exit {sigterm.get('exitCode')}, bound "
              f"{bound:.0f} s); the stall ended {ended_s} s after it"
              + ("" if sigterm.get("reached") else "; SIGTERM went out before the stall reached that consumer"))
    return CheckResult("CT", exit_s <= bound, detail, counts=counts)


STALL_CHECKERS = (cs_debits_continue, cl_lines_not_charges, ct_sigterm_exit)


def check_all(run: Run) -> list[CheckResult]:
    return [checker(run) for checker in STALL_CHECKERS]
