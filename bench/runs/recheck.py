"""make bench's re-check run: how late a copy of a charge is settled when it arrives while its
original is still being processed, just after the bank became slower (docs/design.md §3,
"Claim outcomes and what happens to the message"; a measurement, never asserted in tests).

The bank is the Python fake bank (tools/fake_bank), because its latency changes while the
consumers run: `latencyMs` delays every /v1 request, so an effect (debit, then notification)
takes twice it. Two consumers, A and B (WORKERS=4 each), warm up at 300 ms per bank call until
each has recorded WARM_EFFECTS effects; then the latency goes to 1.5 s and charges follow one at
a time: each is sent, and once a consumer has claimed it (ACQUIRED), a copy with the same body.
A copy is either
  - re-checked: received by the other process, its claim is refused DUPLICATE_IN_PROGRESS and
    it goes back to SQS for `recheck_delay` (src/application/recheck_policy.cpp), again until
    a re-check's claim reads the final record (DUPLICATE_DONE, then ack), or until a re-check
    is received by the holder's process while it still holds (it waits there and is settled
    with the final write);
  - settled locally: received by the holder's process, it waits there for the final write
    ("copy settled by this process's holder").
The figure is the time from the original's final write ("recorded") to the copy's final answer.

Two parts, each with its own pair of consumers and warm-up:
  shared  A and B consume one queue (SHARED_ROUNDS charges). Each process keeps a long poll
          waiting while its effect runs (it has free slots; a process whose slots are all busy
          still polls for its prefetch buffer, docs/design.md §4 "Receiving", so WORKERS=1
          would not stop it), and ElasticMQ (1.7.1) answers the
          waiting poll that comes first in a hash map keyed by a sequence number each poll takes
          as it starts waiting. So the copy goes to either process, but its first re-check
          nearly always goes to the holder's process, which received first and so polled again
          first: the holder's local wait then settles it, and the re-check schedule is hardly
          seen.
  split   A and B consume one queue each, on the same table (SPLIT_ROUNDS charges): the original
          goes to the holder's queue, alternately A's and B's, the copy to the other's, so every
          copy is re-checked and every re-check comes back to the copy's process: the schedule
          of `recheck_delay` alone, as with many consumer processes on SQS, where a re-check
          rarely finds the holder's.
The p90 estimate needs 8 effects, and with only 8 (all fast) the first slow effect moves it to the
new latency; with WARM_EFFECTS = 32 a process keeps estimating the 300 ms effects until it has
had 4 slow ones, so the split part has copies re-checked on the old estimate (the shift) and on
the adapted one (the new steady state), and reports them apart. For every refused claim the
copy's process's p90 at that moment is rebuilt from its own logged effects (claim to final
write, the last 128), which gives the delay the policy aimed at; SQS then rounds it up to whole
seconds (the container's RetryLater). Timestamps are the consumers' debug log lines ("claim
decided", "recorded", "copy settled by this process's holder"; `ts` to the millisecond).

`make bench` (bench/run.py) runs it on ElasticMQ + dynalite in the full report (not --smoke): an SQS
emulator's visibility timeouts and long polls rather than the bench's own fast_aws, and quiet
enough (a re-check came 0.13-0.15 s after its delay in every run on the busy 2-core VM). Alone
(about 2.5 min; --slow-ms sets another latency after the warm-up):

    .venv/bin/python -m bench.runs.recheck [--shared-rounds 10] [--split-rounds 16] [--slow-ms 1500] [--build-dir build/release]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.report.recheck import lines, timeline_text
from bench.stack import FAST, OUT, Stack, stack
from tools.local_stack import wait_until
from tools.local_stack.charge_recovery import Consumer
from tools.local_stack.fake_bank import FakeBank, start_fake_bank
from tools.local_stack.paths import REPO_ROOT


WARM_MS, SLOW_MS = 300, 1500  # the bank's latencyMs before and after the shift
WORKERS = 4
WARM_EFFECTS = 32  # effects each process records before the shift (the estimate needs 8)
SHARED_ROUNDS, SPLIT_ROUNDS = 10, 16
GOAL_SECONDS = 2.0  # the issue's: a copy settled at most 2 s after its original's final write
# recheck_policy.hpp's constants and the consumers' default LEASE_SECONDS, to rebuild its delays.
WINDOW, MIN_SAMPLES, MIN_RECHECK, LEASE_SECONDS = 128, 8, 1.0, 60
EVENT = {"schemaVersion": 1, "accountId": "ACC-0012345678", "chargeType": "SMS_ALERT_FEE", "amountMinor": 2500,
         "currency": "INR", "dueDate": "2026-11-30"}
SETTLED = "copy settled by this process's holder"
LOGGED = ("claim decided", "recorded", SETTLED)
# How a copy ended. Re-checked: its first claim was in the other process; its final answer was a
# re-check's claim reading DONE ("rechecked"), or a re-check received by the holder's process
# while it held ("rechecked-held"). Otherwise it was first received by the holder's process:
# settled there ("local"), or (not expected) claimed only after the original had finished.
CROSS = ("rechecked", "rechecked-held")


def body(charge_id: str) -> str:
    return json.dumps({**EVENT, "chargeId": charge_id}, separators=(",", ":"))


def seconds(ts: str) -> float:
    """A log line's `ts` (RFC 3339, milliseconds, Z) as epoch seconds."""
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


@dataclass
class Log:
    """A consumer's stderr, read incrementally: its LOGGED lines, each with `t` (epoch s)."""
    name: str
    consumer: Consumer
    seen: list[dict[str, Any]] = field(default_factory=list)
    offset: int = 0

    def read(self) -> list[dict[str, Any]]:
        with open(self.consumer.process.stderr_path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        for raw in complete.splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(line, dict) and line.get("msg") in LOGGED:
                self.seen.append({**line, "t": seconds(line["ts"]), "process": self.name})
        return self.seen

    def find(self, msg: str, **fields: Any) -> list[dict[str, Any]]:
        return [line for line in self.read() if line["msg"] == msg and all(line.get(k) == v for k, v in fields.items())]


def find(logs: list[Log], msg: str, **fields: Any) -> list[dict[str, Any]]:
    return sorted((line for log in logs for line in log.find(msg, **fields)), key=lambda line: line["t"])


def settled(logs: list[Log], message_id: str) -> bool:
    """The copy got its final answer: a claim that read DONE, or its holder's settlement."""
    return bool(find(logs, "claim decided", messageId=message_id, outcome="DUPLICATE_DONE") or find(logs, SETTLED, messageId=message_id))


def p90_estimate(durations: list[float]) -> float | None:
    """EffectDurations::p90 of the last WINDOW durations (None below MIN_SAMPLES)."""
    window = durations[-WINDOW:]
    return sorted(window)[len(window) * 9 // 10] if len(window) >= MIN_SAMPLES else None


def policy_delay(p90: float | None, elapsed: float) -> float:
    """recheck_delay (its cap, the holder's remaining lease, does not bind here). Rebuilt from
    log lines, the estimate is a few ms short of the service's own (its effects are timed from
    before the claim request), so the whole-second rounding is left to the measured gap."""
    if p90 is None:
        return float(LEASE_SECONDS) - elapsed
    return max(MIN_RECHECK, p90 - elapsed, elapsed / 2)


def effects_of(log: Log) -> list[tuple[float, float]]:
    """(time of the final write, claim-to-final-write seconds) of each effect of one process."""
    acquired = {line["messageId"]: line["t"] for line in log.find("claim decided", outcome="ACQUIRED")}
    return sorted((line["t"], line["t"] - acquired[line["messageId"]]) for line in log.find("recorded") if line["messageId"] in acquired)


def copy_row(logs: list[Log], charge_id: str, original: str, copy: str, slow_ms: int) -> dict[str, Any]:
    """Where the copy went, when it was settled after its original's final write, and how."""
    acquired = find(logs, "claim decided", messageId=original, outcome="ACQUIRED")[0]
    holder = acquired["process"]
    recorded = find(logs, "recorded", messageId=original)[-1]
    claims = find(logs, "claim decided", messageId=copy)
    settlement = find(logs, SETTLED, messageId=copy)
    final = min([c for c in claims if c["outcome"] == "DUPLICATE_DONE"] + settlement, key=lambda line: line["t"])
    if any(c["process"] != holder for c in claims):
        kind = "rechecked-held" if settlement else "rechecked"
    else:
        kind = "local" if settlement else "other"
    effects = {log.name: effects_of(log) for log in logs}
    timeline = []
    for c in claims:
        entry = {"at": c["t"] - acquired["t"], "process": c["process"], "outcome": c["outcome"]}
        if c["outcome"] == "DUPLICATE_IN_PROGRESS":
            p90 = p90_estimate([d for t, d in effects[c["process"]] if t < c["t"]])
            elapsed = c["t"] - (c["leaseUntil"] / 1000 - LEASE_SECONDS)
            entry.update(p90=p90, holderElapsed=elapsed, policy=policy_delay(p90, elapsed))
        timeline.append(entry)
    for s in settlement:  # the delivery the holder's process kept: when it came, when it was settled
        timeline.append({"at": s["t"] - s["waitedMs"] / 1000 - acquired["t"], "process": s["process"], "outcome": "WAITED_FOR_HOLDER"})
    timeline.sort(key=lambda e: e["at"])
    for entry, after in zip(timeline, timeline[1:]):
        entry["nextAfter"] = after["at"] - entry["at"]
    estimate = timeline[0].get("p90") if kind in CROSS else None
    old_below = (WARM_MS + slow_ms) / 1000  # between the two effects (two bank calls each)
    return {"chargeId": charge_id, "kind": kind, "rechecked": kind in CROSS, "holder": holder, "effectSeconds": recorded["t"] - acquired["t"],
            "settledAfterSeconds": final["t"] - recorded["t"], "settledAt": final["t"] - acquired["t"], "claims": len(claims),
            "recheckClaims": len(claims) - 1 if kind in CROSS else 0, "timeline": timeline,
            "estimate": None if kind not in CROSS else "old" if estimate is None or estimate < old_below else "adapted"}


def sender(sqs: Any, url: str) -> Any:
    def send(bodies: list[str]) -> list[str]:
        """SendMessageBatch (at most 10 bodies); the MessageIds in order."""
        reply = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies)])
        if reply.get("Failed"):
            raise RuntimeError(f"SendMessageBatch refused entries: {reply['Failed']}")
        return [entry["MessageId"] for entry in sorted(reply["Successful"], key=lambda entry: int(entry["Id"]))]

    return send


def warm_up(logs: list[Log], sends: list[Any], tag: str) -> dict[str, int]:
    """Charges at the warm latency until each process has recorded WARM_EFFECTS effects: exactly
    that many to each queue when each consumer has its own, else batches of 10 to the shared
    queue until the process that got fewer has them."""
    n = per_queue = 0
    effects: dict[str, int] = {}
    while per_queue < 4 * WARM_EFFECTS:
        batch = 10 if len(sends) == 1 else max(1, min(10, WARM_EFFECTS - per_queue))
        ids: list[str] = []
        for send in sends:
            mine = [f"RCK-{tag}-W{n + i:03d}" for i in range(batch)]
            send([body(charge_id) for charge_id in mine])
            ids += mine
            n += batch
        per_queue += batch
        wait_until(lambda: all(find(logs, "recorded", chargeId=c) for c in ids), timeout=60, interval=0.05,
                   description="warm-up charges recorded")
        effects = {log.name: len(log.find("recorded")) for log in logs}
        if min(effects.values()) >= WARM_EFFECTS:
            return effects
    raise RuntimeError(f"warm-up: after {n} charges a process has fewer than {WARM_EFFECTS} effects: {effects}")


def part(st: Stack, bank: FakeBank, split: bool, rounds: int, slow_ms: int) -> dict[str, Any]:
    """Two consumers on one queue (split: one queue each, one table), warm-up, the shift, then
    `rounds` charges with a copy each."""
    env = st.provision()
    envs = [env, env]
    if split:  # a second queue (and DLQ) beside the first, on the same table
        tag = uuid.uuid4().hex[:8]
        out = st.cli("provision", "--table", env["IDEMPOTENCY_TABLE"], "--queue-name", f"bench-{tag}", "--dlq-name", f"bench-dlq-{tag}")
        envs[1] = {**env, **dict(line.split("=", 1) for line in out.split())}
    bank.set_faults(latencyMs=WARM_MS)
    label = "split" if split else "shared"
    # At debug: the timings come from the per-step lines (claim decided, recorded), not the one
    # info line per charge.
    consumers = [st.start_consumer(e, f"recheck-{label}-{name}", bank_url=bank.url, WORKERS=str(WORKERS), LOG_LEVEL="debug")
                 for name, e in zip("AB", envs)]
    logs = [Log(name, c) for name, c in zip("AB", consumers)]
    try:
        sqs = st.sqs()
        sends = [sender(sqs, e["CHARGE_QUEUE_URL"]) for e in (envs if split else envs[:1])]
        tag = uuid.uuid4().hex[:6]
        t0 = time.monotonic()
        warm = warm_up(logs, sends, tag)
        bank.set_faults(latencyMs=slow_ms)
        rows: list[dict[str, Any]] = []
        for i in range(rounds):
            charge_id = f"RCK-{tag}-{i:03d}"
            # Split: the original to A's queue and the copy to B's, then the other way round.
            send_original, send_copy = (sends[i % 2], sends[1 - i % 2]) if split else (sends[0], sends[0])
            [original] = send_original([body(charge_id)])
            wait_until(lambda: find(logs, "claim decided", messageId=original, outcome="ACQUIRED"), timeout=30, interval=0.005,
                       description=f"{charge_id} claimed")
            [copy] = send_copy([body(charge_id)])
            wait_until(lambda: settled(logs, copy) and find(logs, "recorded", messageId=original), timeout=2 * LEASE_SECONDS,
                       interval=0.02, description=f"the copy of {charge_id} settled")
            rows.append(copy_row(logs, charge_id, original, copy, slow_ms))
            print(f"recheck {label} {charge_id}: {rows[-1]['kind']}, settled {rows[-1]['settledAfterSeconds']:.2f} s after the "
                  f"final write: {timeline_text(rows[-1])}", flush=True)
        seconds_run = time.monotonic() - t0
    finally:
        for consumer in consumers:
            st.stop(consumer)
    return {"warmEffects": warm, "rounds": rounds, "copies": rows, "seconds": seconds_run, "charges": sum(warm.values()) + rounds}


def run(st: Stack, shared_rounds: int = SHARED_ROUNDS, split_rounds: int = SPLIT_ROUNDS, slow_ms: int = SLOW_MS) -> dict[str, Any]:
    """Both parts (a part of 0 rounds is skipped), with one fake bank."""
    bank = start_fake_bank(st.manager, name="fake-bank-recheck")
    try:
        result = {name: part(st, bank, name == "split", rounds, slow_ms)
                  for name, rounds in (("shared", shared_rounds), ("split", split_rounds)) if rounds > 0}
        debits = bank.ledger()["stats"]["debits"]
    finally:
        st.manager.stop(bank.process)
    charges = sum(r["charges"] for r in result.values())
    if debits != charges:
        raise RuntimeError(f"the bank has {debits} debits for {charges} charges")
    return {**result, "slowMs": slow_ms, "warmMs": WARM_MS, "workers": WORKERS, "goalSeconds": GOAL_SECONDS,
            "loadAverage": os.getloadavg()[0]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared-rounds", type=int, default=SHARED_ROUNDS, help="charges with a copy, both consumers on one queue")
    parser.add_argument("--split-rounds", type=int, default=SPLIT_ROUNDS, help="charges with a copy, a queue per consumer")
    parser.add_argument("--slow-ms", type=int, default=SLOW_MS, help="the bank's latency per call after the warm-up")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with stack(FAST, "elasticmq", "dynalite", args.build_dir.resolve()) as st:
        result = run(st, args.shared_rounds, args.split_rounds, args.slow_ms)
    (OUT / "recheck.json").write_text(json.dumps(result, indent=2))
    print("\n".join(lines(result, FAST)))
    print(f"\n{time.monotonic() - t0:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
