"""What the consumers' admin endpoints answer while a stall lasts: every 0.5 s, each running
consumer's /health/live and /health/ready become `health` events (status, or "no answer"
within 1 s); and, after the run, the dropped-line counter each consumer reports."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request

from tools.chaos.history import History
from tools.chaos.stack import ChaosStack, Slot

HEALTH_PATHS = ("/health/live", "/health/ready")
DROPPED_METRIC = "ic_log_lines_dropped_total"  # issue 34's name for lines the logger dropped


def get_status(url: str, timeout: float) -> int | str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, OSError):
        return "no answer"


class HealthPoller:
    """One polling thread per consumer slot (a stalled admin server must not delay the others)."""

    def __init__(self, stack: ChaosStack, history: History, interval: float = 0.5) -> None:
        self.stack, self.history, self.interval = stack, history, interval
        self.stop = threading.Event()
        self._threads = [threading.Thread(target=self._poll, args=(slot,), name=f"health-{slot.index}", daemon=True)
                         for slot in stack.slots]
        for thread in self._threads:
            thread.start()

    def _poll(self, slot: Slot) -> None:
        while not self.stop.wait(self.interval):
            consumer = slot.consumer
            if consumer is None or not consumer.process.alive():
                continue
            for path in HEALTH_PATHS:
                self.history.add("health", consumer=slot.name, path=path, status=get_status(consumer.admin_url + path, 1.0))

    def close(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join()


def dropped_lines(slot: Slot) -> float | None:
    """The consumer's ic_log_lines_dropped_total (summed over labels); None when it does not
    export the metric or does not answer."""
    if slot.consumer is None or not slot.consumer.process.alive():
        return None
    try:
        with urllib.request.urlopen(slot.consumer.admin_url + "/metrics", timeout=5) as response:
            text = response.read().decode()
    except (urllib.error.URLError, OSError):
        return None
    values = [float(m.group(1)) for m in re.finditer(rf"^{DROPPED_METRIC}(?:{{[^}}]*}})?\s+(\S+)$", text, re.M)]
    return sum(values) if values else None
