"""What the bench reads off a running process, from /proc, the consumer's /metrics and strace:
CPU (user and kernel), memory, requests by operation, system calls by call, queue depth.
Functions of a pid or a reply, with no process of their own; bench/stack.py starts the processes."""

from __future__ import annotations

import os
import re
import resource
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, kernel) CPU seconds of a live process so far: utime and stime of /proc/<pid>/stat,
    its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def cpu_seconds(pid: int) -> float:
    return sum(cpu_split(pid))


def group_cpu_seconds(pgid: int) -> float:
    """utime+stime of every live process in process group `pgid`: a server together with the
    runtime its launcher started (ElasticMQ's Python launcher and its JVM)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone since the listing
            continue
        if int(fields[2]) == pgid:  # field 5 of stat, pgrp
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def children_cpu_seconds() -> float:
    """CPU of this process's reaped children (the CLI runs, the ceiling's generator)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def memory_breakdown(pid: int, top: int = 8) -> dict[str, Any]:
    """Resident memory now, from /proc/<pid>/smaps: anonymous (heap, arenas, thread stacks)
    against file-backed (the binary and its shared libraries), PSS, and the largest mappings
    by name (anonymous ones as "[anon]", stacks and arenas being nameless)."""
    by_name: Counter[str] = Counter()
    kb: Counter[str] = Counter()
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            name = fields[5] if len(fields) > 5 else "[anon]"
        elif fields[0] in ("Rss:", "Pss:", "Anonymous:"):
            kb[fields[0]] += int(fields[1])
            if fields[0] == "Rss:":
                by_name[name.rsplit("/", 1)[-1]] += int(fields[1])
    return {"rssMiB": kb["Rss:"] / 1024, "pssMiB": kb["Pss:"] / 1024, "anonymousMiB": kb["Anonymous:"] / 1024,
            "fileMiB": (kb["Rss:"] - kb["Anonymous:"]) / 1024, "threads": status_kb(pid, "Threads"),
            "topMiB": {n: v / 1024 for n, v in by_name.most_common(top)}}


def depth(sqs: Any, url: str) -> int:
    """Messages on the queue, visible or in flight (a boto3 SQS client)."""
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(a["ApproximateNumberOfMessages"]) + int(a["ApproximateNumberOfMessagesNotVisible"])


class HasMetrics(Protocol):
    def get(self, path: str) -> tuple[int, str]: ...


def counters(consumer: HasMetrics, name: str) -> list[tuple[dict[str, str], float]]:
    """The samples of one counter in a consumer's /metrics, each with its labels."""
    status, text = consumer.get("/metrics")
    if status != 200:
        raise RuntimeError(f"/metrics answered {status}")
    samples = []
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, value = line[len(name) + 1 :].rsplit("} ", 1)
            samples.append((dict((k, v.strip('"')) for k, v in (part.split("=", 1) for part in labels.split(","))), float(value)))
        elif line.startswith(name + " "):
            samples.append(({}, float(line.split()[1])))
    return samples


def requests_by_operation(consumers: list[Any]) -> Counter[str]:
    """ic_aws_requests_total summed over consumers and results, keyed by operation."""
    totals: Counter[str] = Counter()
    for consumer in consumers:
        for labels, value in counters(consumer, "ic_aws_requests_total"):
            totals[labels["operation"]] += value
    return totals


def bank_requests(consumers: list[Any]) -> float:
    """The consumers' requests to the bank: debits, status inquiries and notifications, whatever
    their result (from their counters, so any bank, plain or behind TLS, counts alike)."""
    return sum(value for consumer in consumers
               for name in ("ic_debits_total", "ic_debit_inquiries_total", "ic_notifications_total")
               for _, value in counters(consumer, name))


STRACE_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def strace_calls(summary: str) -> Counter[str]:
    """System calls by name from `strace -c` output (its "calls" column; the total row left out)."""
    calls: Counter[str] = Counter()
    for line in summary.splitlines():
        m = STRACE_ROW.match(line)
        if m and m.group(2) != "total":
            calls[m.group(2)] += int(m.group(1))
    return calls
