"""The latency-injected run: the capacity model of docs/performance.md, measured.

The local backends answer in about a millisecond; AWS takes 5-20 ms and a core-banking debit
50-200 ms. Here every SQS, DynamoDB and bank request passes a bench/net_proxy.cpp that adds
that latency (with a tail), and one consumer drains fresh charges at several in-flight limits
(WORKERS: charges in flight on the consumer's event loop). By Little's law a process completes
at most W / L charges a second, L being a charge's serial latency: claim and complete (two
DynamoDB calls) plus debit and notify (two bank calls); receive and delete overlap. The run
reports charges/s against that prediction, with CPU per charge and peak RSS at each limit.

It runs on the fast+fast stack (bench/fast_aws/ as SQS and DynamoDB): the emulators cap the
whole machine at about 600 charges/s, below what 256 and 1,024 in flight predict, so on them
the sweep measured the emulators.
"""

from __future__ import annotations

import uuid
from typing import Any

from bench.runs.drains import consumer_run
from bench.stack import Latency, Stack

AWS = Latency(10, 40, 0.02)
BANKS = {"50 ms": Latency(50, 150, 0.02), "200 ms": Latency(200, 600, 0.02)}
IN_FLIGHT = (32, 256, 1024)
SMOKE_IN_FLIGHT = (32,)
# Serial calls per charge on each dependency (claim + complete; debit + notify).
AWS_CALLS, BANK_CALLS = 2, 2


def model_latency_seconds(bank: Latency) -> float:
    """L of the capacity model: a charge's serial calls."""
    return (AWS_CALLS * AWS.mean_ms + BANK_CALLS * bank.mean_ms) / 1000


def predicted_per_second(in_flight: int, bank: Latency) -> float:
    return in_flight / model_latency_seconds(bank)


def run(st: Stack, smoke: bool) -> dict[str, Any]:
    """One drain per (bank latency, in-flight limit)."""
    env = {"AWS_ENDPOINT_URL_SQS": st.proxy("delay-sqs", st.env["AWS_ENDPOINT_URL_SQS"], AWS).url,
           "AWS_ENDPOINT_URL_DYNAMODB": st.proxy("delay-dynamodb", st.env["AWS_ENDPOINT_URL_DYNAMODB"], AWS).url}
    rows = []
    banks = dict(list(BANKS.items())[:1]) if smoke else BANKS
    for label, bank in banks.items():
        bank_url = st.proxy(f"delay-bank-{label.split()[0]}", st.bank_url, bank).url
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
    return {"aws": AWS.to_json(), "awsCalls": AWS_CALLS, "bankCalls": BANK_CALLS, "rows": rows}
