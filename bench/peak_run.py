"""make bench's peak run: the issue's target, measured. "1,150 charges/s in one process with a
200 ms bank (emulated), using at most one core of its own."

On the fast+fast stack (bench/fast_aws/ as SQS and DynamoDB: the emulators cap the whole
machine at about 600 charges/s), with SQS, DynamoDB and the bank behind bench/delay_proxy.cpp
as in bench/latency_run.py (AWS 10 ms, the bank 200 ms, 2% of each at three or four times
that), one consumer at WORKERS=1024 is offered 1,150 charges/s for --peak-seconds: a producer
publishes the charges due each half second with `charge-recovery send` (the consumer's own
generator, so the bodies are the bench's usual ones), and the run ends once the bank has them
all and the queue is empty. A pre-filled backlog would measure the consumer's maximum instead
(latency_run's 1,024-in-flight row does that); the target is a rate, so the CPU it costs is
measured at that rate.

Reported: the offered rate; in the steady stretch (from a few seconds in until the producer
stops, so ramp-up and the tail do not dilute it) the rate of debits and the rate of acks
(messages gone from the queue: a charge is done once its message is deleted, and a consumer
whose deletes fall behind will see its messages come back when their visibility ends), and the
consumer's cores there (CPU seconds / wall seconds); overall, charges over the time from the
first send until the queue is empty, the largest backlog seen (visible + in flight), how long
the debits and the queue took to finish after the last send, CPU ms per charge, peak RSS and
threads; and the cores every other process of the stack spent, which share the same two cores.
"""

from __future__ import annotations

import resource
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from bench.consumer_throughput import cpu_seconds, depth
from bench.latency_run import AWS, AWS_CALLS, BANK_CALLS, BANKS, delayed

if TYPE_CHECKING:
    from bench.report import Stack

TARGET_PER_SECOND = 1150
BANK = "200 ms"
WORKERS = 1024
CHUNK_SECONDS = 0.5
RAMP_SECONDS = 5.0  # the steady stretch starts here: the first deliveries, connection set-up


def model_latency_seconds() -> float:
    """L of the capacity model (docs/performance.md): a charge's serial calls."""
    return (AWS_CALLS * AWS.mean_ms + BANK_CALLS * BANKS[BANK].mean_ms) / 1000


def workers_needed(per_second: float = TARGET_PER_SECOND) -> int:
    """Little's law: charges in flight at `per_second` with the model's latency."""
    return int(per_second * model_latency_seconds() + 0.999)


def run(st: "Stack", seconds: float, group_cpu_seconds: Any, status_kb: Any) -> dict[str, Any]:
    """One paced run; `group_cpu_seconds` and `status_kb` are bench.report's (it imports us)."""
    env = st.provision()
    proxied = {**env, "AWS_ENDPOINT_URL_SQS": delayed(st, "peak-delay-sqs", st.env["AWS_ENDPOINT_URL_SQS"], AWS),
               "AWS_ENDPOINT_URL_DYNAMODB": delayed(st, "peak-delay-dynamodb", st.env["AWS_ENDPOINT_URL_DYNAMODB"], AWS)}
    bank_url = delayed(st, "peak-delay-bank", st.bank_url, BANKS[BANK])
    proxies = [p.pid for p in st.manager.processes if p.name.startswith("peak-delay-")]
    consumer = st.start_consumer(proxied, "consumer-peak", bank_url=bank_url, WORKERS=str(WORKERS))
    total = int(TARGET_PER_SECOND * seconds)
    prefix = f"PEAK-{uuid.uuid4().hex[:6]}"
    bank0 = st.bank_stats()
    debits0 = bank0["debits"]

    def others_cpu() -> dict[str, float]:
        cpu = {role: group_cpu_seconds(pgid) for role, pgid in st.servers.items()}
        cpu["delay proxies"] = sum(group_cpu_seconds(pid) for pid in proxies)
        return cpu

    sent = 0
    producer_error: list[BaseException] = []
    producer_done = threading.Event()

    def produce(t0: float) -> None:
        nonlocal sent
        try:
            chunk = 0
            while sent < total:
                due = t0 + chunk * CHUNK_SECONDS
                time.sleep(max(0.0, due - time.monotonic()))  # pacing: the schedule, not a condition
                count = min(total, int(TARGET_PER_SECOND * (chunk + 1) * CHUNK_SECONDS)) - sent
                st.send(env, count, 0.0, f"{prefix}-{chunk:04d}")
                sent += count
                chunk += 1
        except BaseException as e:  # reported by the main thread
            producer_error.append(e)
        finally:
            producer_done.set()

    children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0, others0 = cpu_seconds(consumer.pid), others_cpu()
    t0 = time.monotonic()
    producer = threading.Thread(target=produce, args=(t0,), name="peak-producer")
    producer.start()
    sqs = st.sqs()
    samples: list[tuple[float, int, int, int, float]] = []  # (seconds since t0, debits, acked, backlog, consumer CPU s)
    producer_end = None
    deadline = t0 + seconds + 600
    while True:
        published = sent  # read before the depth: a batch sent in between is not counted acked
        debits = st.bank_stats()["debits"] - debits0
        backlog = depth(sqs, env["CHARGE_QUEUE_URL"])
        now = time.monotonic()
        samples.append((now - t0, debits, max(0, published - backlog), backlog, cpu_seconds(consumer.pid) - cpu0))
        if producer_done.is_set() and producer_end is None:
            producer_end = now - t0
        if producer_done.is_set() and (producer_error or (debits >= total and backlog == 0)):
            break
        if now > deadline:
            raise TimeoutError(f"peak run: {debits} of {total} debited {now - t0:.0f} s in")
        time.sleep(0.25)  # a sampling interval, not a wait for a condition
    producer.join()
    if producer_error:
        raise RuntimeError(f"peak run producer failed: {producer_error[0]}") from producer_error[0]
    wall = time.monotonic() - t0
    cpu = cpu_seconds(consumer.pid) - cpu0
    others = {role: v - others0[role] for role, v in others_cpu().items()}
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    others["producer (send)"] = (children.ru_utime + children.ru_stime) - (children0.ru_utime + children0.ru_stime)
    peak_rss = status_kb(consumer.pid, "VmHWM") / 1024
    threads = status_kb(consumer.pid, "Threads")
    st.stop(consumer)
    bank = st.bank_stats()
    if bank["debits"] - debits0 != total:
        raise RuntimeError(f"peak run: bank has {bank['debits'] - debits0} debits for {total} charges")
    last_debit = next(s[0] for s in samples if s[1] >= total)
    producer_end = producer_end or wall
    steady = [s for s in samples if RAMP_SECONDS <= s[0] <= producer_end]
    if len(steady) < 2:
        raise RuntimeError(f"peak run: no steady stretch between {RAMP_SECONDS} s and {producer_end:.1f} s (--peak-seconds too short)")
    first, last = steady[0], steady[-1]
    span = last[0] - first[0]
    return {"targetPerSecond": TARGET_PER_SECOND, "bank": BANK, "workers": WORKERS, "workersNeeded": workers_needed(),
            "modelLatencyMs": 1000 * model_latency_seconds(), "charges": total, "seconds": seconds,
            "offeredPerSecond": total / producer_end,
            "steadyDebitsPerSecond": (last[1] - first[1]) / span, "steadyAcksPerSecond": (last[2] - first[2]) / span,
            "steadyCores": (last[4] - first[4]) / span, "overallPerSecond": total / wall,
            "maxBacklog": max(s[3] for s in samples), "debitLagSeconds": last_debit - producer_end,
            "queueLagSeconds": wall - producer_end, "cpuMsPerCharge": 1000 * cpu / total, "peakRssMiB": peak_rss,
            "threads": threads, "bankDebits": bank["debits"] - debits0, "bankReplays": bank["replays"] - bank0["replays"],
            "otherCores": {role: v / wall for role, v in others.items()}, "consumerCores": cpu / wall,
            "wallSeconds": wall}


def lines(peak: dict[str, Any] | None, backend: str) -> list[str]:
    if not peak:
        return []
    misses = [what for what, ok in (("debits", peak["steadyDebitsPerSecond"] >= 0.98 * peak["targetPerSecond"]),
                                    ("acks", peak["steadyAcksPerSecond"] >= 0.98 * peak["targetPerSecond"]),
                                    ("cores", peak["steadyCores"] <= 1.0)) if not ok]
    verdict = "met" if not misses else "not met: " + ", ".join(misses)
    others = ", ".join(f"{role} {cores:.2f}" for role, cores in peak["otherCores"].items())
    busy = peak["consumerCores"] + sum(peak["otherCores"].values())
    return ["", f"Peak run (bench/peak_run.py, {backend}): {peak['targetPerSecond']:,} charges/s offered for {peak['seconds']:.0f} s "
            f"({peak['charges']:,} charges, `charge-recovery send` every {CHUNK_SECONDS} s) to one consumer at "
            f"WORKERS={peak['workers']:,}; SQS and DynamoDB {AWS.ms:.0f} ms, the bank {peak['bank']} (2% of each at three or four "
            f"times that) through delay proxies; the model (L = {peak['modelLatencyMs']:.0f} ms) needs "
            f"{peak['workersNeeded']} in flight:", "",
            "| offered charges/s | steady: debits/s | steady: acks/s | steady: consumer cores | overall charges/s | max backlog "
            "| debits done, s after the last send | queue empty, s after | CPU ms/charge | peak RSS MiB | threads "
            "| issue's target (steady debits and acks ≥ 98 % of 1,150/s, ≤ 1 core) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
            f"| {peak['offeredPerSecond']:,.0f} | {peak['steadyDebitsPerSecond']:,.0f} | {peak['steadyAcksPerSecond']:,.0f} "
            f"| {peak['steadyCores']:.2f} | {peak['overallPerSecond']:,.0f} | {peak['maxBacklog']:,} | {peak['debitLagSeconds']:.1f} "
            f"| {peak['queueLagSeconds']:.1f} | {peak['cpuMsPerCharge']:.3f} | {peak['peakRssMiB']:.1f} | {peak['threads']} | {verdict} |", "",
            f"The bank has {peak['bankDebits']:,} debits for {peak['charges']:,} charges ({peak['bankReplays']} replays). "
            f"Cores over the whole run (first send to an empty queue, {peak['wallSeconds']:.0f} s): the consumer "
            f"{peak['consumerCores']:.2f}, and on the same two cores {others} ({busy:.2f} busy in all)."]
