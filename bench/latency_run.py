"""make bench's latency-injected run: the capacity model of docs/performance.md, measured.

The local backends answer in about a millisecond; AWS takes 5-20 ms and a core-banking debit
50-200 ms. Here every SQS, DynamoDB and bank request passes a bench/delay_proxy.cpp that adds
that latency (with a tail), and one consumer drains fresh charges at several in-flight limits
(WORKERS: charges in flight on the consumer's event loop). By Little's law a process completes at most
W / L charges a second, L being a charge's serial latency: claim and complete (two DynamoDB
calls) plus debit and notify (two bank calls); receive and delete overlap. The run reports
charges/s against that prediction, with CPU per charge and peak RSS at each limit.

bench/report.py runs it on the fast+fast stack (bench/fast_aws/ as SQS and DynamoDB): the
emulators cap the whole machine at about 600 charges/s, below what 256 and 1,024 in flight
predict, so on them the sweep measured the emulators.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tools.local_stack import json_event

if TYPE_CHECKING:
    from bench.report import Stack


@dataclass(frozen=True)
class Latency:
    """A delay with a tail: `tail_fraction` of requests take `tail_ms` instead of `ms`."""
    ms: float
    tail_ms: float
    tail_fraction: float

    @property
    def mean_ms(self) -> float:
        return (1 - self.tail_fraction) * self.ms + self.tail_fraction * self.tail_ms

    def args(self) -> list[str]:
        return ["--delay-ms", str(self.ms), "--tail-ms", str(self.tail_ms), "--tail-fraction", str(self.tail_fraction)]


AWS = Latency(10, 40, 0.02)
BANKS = {"50 ms": Latency(50, 150, 0.02), "200 ms": Latency(200, 600, 0.02)}
IN_FLIGHT = (32, 256, 1024)
SMOKE_IN_FLIGHT = (32,)
# Serial calls per charge on each dependency (claim + complete; debit + notify).
AWS_CALLS, BANK_CALLS = 2, 2


def predicted_per_second(in_flight: int, bank: Latency) -> float:
    return in_flight / ((AWS_CALLS * AWS.mean_ms + BANK_CALLS * bank.mean_ms) / 1000)


def delayed(st: "Stack", name: str, url: str, latency: Latency) -> str:
    """The URL of a delay proxy in front of `url` (a loopback http URL with a port)."""
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    proxy = st.manager.start(name, [str(st.build / "bench/ic_bench_delay_proxy"), "--upstream-port", port, *latency.args()],
                             ready=json_event("listening"))
    return f"http://127.0.0.1:{proxy.ready_info['port']}"


def run(st: "Stack", consumer_run: Any, smoke: bool) -> list[dict[str, Any]]:
    """One drain per (bank latency, in-flight limit); `consumer_run` is bench.report's."""
    env = {**st.env, "AWS_ENDPOINT_URL_SQS": delayed(st, "delay-sqs", st.env["AWS_ENDPOINT_URL_SQS"], AWS),
           "AWS_ENDPOINT_URL_DYNAMODB": delayed(st, "delay-dynamodb", st.env["AWS_ENDPOINT_URL_DYNAMODB"], AWS)}
    rows = []
    banks = dict(list(BANKS.items())[:1]) if smoke else BANKS
    for label, bank in banks.items():
        bank_url = delayed(st, f"delay-bank-{label.split()[0]}", st.bank_url, bank)
        for in_flight in SMOKE_IN_FLIGHT if smoke else IN_FLIGHT:
            predicted = predicted_per_second(in_flight, bank)
            # About 15 s of work at the predicted rate, within reason.
            n = 100 if smoke else max(500, min(8000, int(predicted * 15)))
            r = consumer_run(st, n, workers=in_flight, duplicates=False, env_overrides=env, bank_url=bank_url,
                             prefix=f"LAT-{uuid.uuid4().hex[:6]}")
            rows.append({"bank": label, "inFlight": in_flight, "charges": n, "predictedPerSecond": predicted,
                         "chargesPerSecond": r["chargesPerSecond"], "cpuMsPerCharge": r["cpuMsPerCharge"],
                         "peakRssMiB": r["peakRssMiB"], "threads": r["memory"]["threads"]})
            print(f"latency {label} bank, {in_flight} in flight: {r['chargesPerSecond']:.0f} charges/s "
                  f"(model {predicted:.0f}), {r['cpuMsPerCharge']:.3f} CPU ms/charge, {r['peakRssMiB']:.1f} MiB", flush=True)
    return rows


def lines(rows: list[dict[str, Any]], backend: str) -> list[str]:
    if not rows:
        return []
    out = ["", f"Latency-injected run (bench/latency_run.py, {backend}): AWS {AWS.ms:.0f} ms ({AWS.tail_fraction:.0%} at {AWS.tail_ms:.0f} ms), "
           "the bank as listed (2% at three times that); the model is in-flight ÷ "
           f"({AWS_CALLS} AWS + {BANK_CALLS} bank mean latencies):", "",
           "| bank | in flight | charges | model charges/s | measured charges/s | measured / model | CPU ms/charge | peak RSS MiB | threads |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out += [f"| {r['bank']} | {r['inFlight']} | {r['charges']} | {r['predictedPerSecond']:.0f} | {r['chargesPerSecond']:.0f} "
            f"| {r['chargesPerSecond'] / r['predictedPerSecond']:.2f} | {r['cpuMsPerCharge']:.3f} | {r['peakRssMiB']:.1f} | {r['threads']} |"
            for r in rows]
    return out
