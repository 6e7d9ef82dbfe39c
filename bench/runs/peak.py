"""The peak run: the month-end peak, measured. 1,150 charges/s offered to one process with a
200 ms bank, over TLS as production runs it (and plain, as before), on at most 0.6 of a core,
with RSS at 1,024 in flight at most 64 MiB (issue 36's targets).

On the fast+fast stack (bench/fast_aws/ as SQS and DynamoDB: the emulators cap the whole
machine at about 600 charges/s), with SQS, DynamoDB and the bank behind bench/net_proxy.cpp as
in the latency-injected run (AWS 10 ms, the bank 200 ms, 2% of each at three or four times
that); over TLS the same proxies terminate it (the bank's with client certificates, as its
mutual TLS), so each hop is one C++ process. One consumer at WORKERS=1024 is offered 1,150
charges/s for --peak-seconds: a producer publishes the charges due each tenth of a second with
`charge-recovery send` (the consumer's own generator, so the bodies are the bench's usual
ones; in half-second chunks of 575 every chunk's claims came at once, and the bursts alone
opened twice the DynamoDB connections a steady rate needs), and the run ends once the bank has them all and the queue is empty. A pre-filled
backlog would measure the consumer's maximum instead (the latency run's 1,024-in-flight row
does that); the target is a rate, so the CPU it costs is measured at that rate.

Reported: the offered rate; in the steady stretch (from a few seconds in until the producer
stops, so ramp-up and the tail do not dilute it) the rate of debits and the rate of acks
(messages gone from the queue: a charge is done once its message is deleted, and a consumer
whose deletes fall behind will see its messages come back when their visibility ends), and the
consumer's cores there (CPU seconds / wall seconds), and the lowest and last value of its adaptive
bank concurrency limit (BankPacer's AIMD: slow or failed debits cut it, and it grows back by one
per `limit` successes); overall, charges over the time from the
first send until the queue is empty, the largest backlog seen (visible + in flight), how long
the debits and the queue took to finish after the last send, CPU ms per charge (user and
kernel), peak RSS and threads, the TLS handshakes of each proxy; and the cores every other
process of the stack spent, which share the same two cores.

Alone (fast+fast, both the plain and the TLS run, or one):

    .venv/bin/python -m bench.runs.peak [--seconds 30] [--only tls|plain] [--build-dir build/release]
"""

from __future__ import annotations

import argparse
import json
import resource
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from bench.measure import counters, cpu_seconds, cpu_split, depth, group_cpu_seconds, status_kb
from bench.report.peak import lines
from bench.runs.latency import AWS, BANKS, model_latency_seconds
from bench.stack import FAST_AWS, OUT, STACKS, Stack, stack
from tools.local_stack.paths import REPO_ROOT

TARGET_PER_SECOND = 1150
BANK = "200 ms"
WORKERS = 1024
CHUNK_SECONDS = 0.1
RAMP_SECONDS = 5.0  # the steady stretch starts here: the first deliveries, connection set-up
TARGET_CORES, TARGET_RSS_MIB = 0.6, 64.0


def workers_needed(per_second: float = TARGET_PER_SECOND) -> int:
    """Little's law: charges in flight at `per_second` with the model's latency."""
    return int(per_second * model_latency_seconds(BANKS[BANK]) + 0.999)


def run(st: Stack, seconds: float, tls: bool) -> dict[str, Any]:
    """One paced run, plain or over TLS."""
    kind = "tls" if tls else "plain"
    env = st.provision()
    proxies = {"SQS": st.proxy(f"peak-{kind}-sqs", st.env["AWS_ENDPOINT_URL_SQS"], AWS, tls=tls),
               "DynamoDB": st.proxy(f"peak-{kind}-dynamodb", st.env["AWS_ENDPOINT_URL_DYNAMODB"], AWS, tls=tls),
               "bank": st.proxy(f"peak-{kind}-bank", st.bank_url, BANKS[BANK], tls=tls, client_certificates=tls)}
    consumer_env = {**env, "AWS_ENDPOINT_URL_SQS": proxies["SQS"].url, "AWS_ENDPOINT_URL_DYNAMODB": proxies["DynamoDB"].url,
                    **(st.aws_tls_env() | st.bank_tls_env() if tls else {})}
    consumer = st.start_consumer(consumer_env, f"consumer-peak-{kind}", bank_url=proxies["bank"].url, WORKERS=str(WORKERS))
    try:
        total = int(TARGET_PER_SECOND * seconds)
        prefix = f"PEAK-{uuid.uuid4().hex[:6]}"
        bank0 = st.bank_stats()
        debits0 = bank0["debits"]

        def others_cpu() -> dict[str, float]:
            cpu = {role: group_cpu_seconds(pgid) for role, pgid in st.servers.items()}
            cpu["proxies"] = sum(group_cpu_seconds(p.process.pid) for p in proxies.values())
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
        (user0, kernel0), others0 = cpu_split(consumer.pid), others_cpu()
        cpu0 = user0 + kernel0
        t0 = time.monotonic()
        producer = threading.Thread(target=produce, args=(t0,), name="peak-producer")
        producer.start()
        sqs = st.sqs()
        samples: list[tuple[float, int, int, int, float]] = []  # (seconds since t0, debits, acked, backlog, consumer CPU s)
        limits: list[float] = []  # the consumer's adaptive bank concurrency limit (BankPacer's AIMD), each sample
        producer_end = None
        deadline = t0 + seconds + 300
        while True:
            published = sent  # read before the depth: a batch sent in between is not counted acked
            debits = st.bank_stats()["debits"] - debits0
            backlog = depth(sqs, env["CHARGE_QUEUE_URL"])
            now = time.monotonic()
            samples.append((now - t0, debits, max(0, published - backlog), backlog, cpu_seconds(consumer.pid) - cpu0))
            limits += [value for _, value in counters(consumer, "ic_bank_concurrency_limit")]
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
        user, kernel = cpu_split(consumer.pid)
        cpu = user + kernel - cpu0
        others = {role: v - others0[role] for role, v in others_cpu().items()}
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        others["producer (send)"] = (children.ru_utime + children.ru_stime) - (children0.ru_utime + children0.ru_stime)
        peak_rss = status_kb(consumer.pid, "VmHWM") / 1024
        threads = status_kb(consumer.pid, "Threads")
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
        return {"tls": tls, "targetPerSecond": TARGET_PER_SECOND, "targetCores": TARGET_CORES, "targetRssMiB": TARGET_RSS_MIB,
                "bank": BANK, "awsMs": AWS.ms, "chunkSeconds": CHUNK_SECONDS, "workers": WORKERS, "workersNeeded": workers_needed(),
                "modelLatencyMs": 1000 * model_latency_seconds(BANKS[BANK]), "charges": total, "seconds": seconds,
                "offeredPerSecond": total / producer_end,
                "steadyDebitsPerSecond": (last[1] - first[1]) / span, "steadyAcksPerSecond": (last[2] - first[2]) / span,
                "steadyCores": (last[4] - first[4]) / span, "overallPerSecond": total / wall,
                "maxBacklog": max(s[3] for s in samples), "debitLagSeconds": last_debit - producer_end,
                "queueLagSeconds": wall - producer_end, "cpuMsPerCharge": 1000 * cpu / total,
                "userMsPerCharge": 1000 * (user - user0) / total, "kernelMsPerCharge": 1000 * (kernel - kernel0) / total,
                "peakRssMiB": peak_rss, "threads": threads, "bankLimitMin": min(limits), "bankLimitEnd": limits[-1], "bankDebits": bank["debits"] - debits0,
                "bankReplays": bank["replays"] - bank0["replays"], "handshakes": {role: p.handshakes() for role, p in proxies.items()},
                "otherCores": {role: v / wall for role, v in others.items()}, "consumerCores": cpu / wall, "wallSeconds": wall}
    finally:  # also when the run fails: the next run starts on a quiet stack
        if consumer.process.alive():
            st.stop(consumer)
        for proxy in proxies.values():
            st.manager.stop(proxy.process)


def run_both(st: Stack, seconds: float) -> list[dict[str, Any]]:
    """The plain run, then the TLS one; a run that fails is reported as such, beside the other."""
    results = []
    for tls in (False, True):
        try:
            results.append(run(st, seconds, tls))
        except Exception as e:  # the other run's figures stay
            results.append({"tls": tls, "error": f"{type(e).__name__}: {str(e)[:300]}"})
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="how long 1,150 charges/s are offered")
    parser.add_argument("--only", choices=["plain", "tls"], help="one run instead of both")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    args = parser.parse_args()
    label, sqs_kind, dynamodb_kind = next(s for s in STACKS if s[0] == FAST_AWS)
    with stack(label, sqs_kind, dynamodb_kind, args.build_dir.resolve()) as st:
        results = run_both(st, args.seconds) if args.only is None else [run(st, args.seconds, args.only == "tls")]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "peak.json").write_text(json.dumps(results, indent=2))
    print("\n".join(lines(results, label)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
