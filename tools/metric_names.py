"""Which metric names a PromQL expression reads, and which ones the C++ code exports.

Used by tests/deploy/test_observability.py (every name the dashboard and the alert rules read
must be exported) and tools/dashboard_snapshot.py (an empty panel says whether its metric is
not exported or simply saw no event).
"""

from __future__ import annotations

import re

from tools.local_stack.paths import REPO_ROOT

# Our histograms are the *_seconds metrics (ic_processing_seconds, ic_dependency_seconds).
_HISTOGRAM_SERIES = re.compile(r"(?<=_seconds)_(bucket|sum|count)$")


def metric_names(expr: str) -> set[str]:
    """Our, the process collector's and the CloudWatch exporter's metric names in `expr`
    (a histogram's _bucket/_sum/_count series as the histogram's name; recording rules such as
    ic:queue_messages:max are not metric names)."""
    names = set(re.findall(r"(?<![\w:])((?:ic|process|aws)_[a-z0-9_]+)\b", expr))
    return {_HISTOGRAM_SERIES.sub("", n) if n.startswith("ic_") else n for n in names}


def exported_names() -> set[str]:
    """Every "ic_…" and "process_…" string literal of src/ (sources and headers: a name may be
    a constant in a header), and every literal that starts with such a name and its labels (a
    sample line formatted by hand): the names the metrics registry, the process collector and
    the circuits' telemetry export."""
    names: set[str] = set()
    for pattern in ("*.cpp", "*.hpp"):
        for path in (REPO_ROOT / "src").rglob(pattern):
            # A name is a whole literal, or opens one that a sample line is formatted from
            # ("ic_circuit_open_seconds{{dependency=...}} {}": the circuits' per-spell gauges).
            names |= set(re.findall(r'"((?:ic|process)_[a-z0-9_]+)(?:"|\{\{|\{[a-z])', path.read_text()))
    return names


# The circuits' metrics (issue 22, docs/design.md): what alerts.yml and the ScaledObject read.
CIRCUIT_METRICS = frozenset({
    "ic_circuit_state",
    "ic_circuit_transitions_total",
    "ic_circuit_open_seconds",
    "ic_circuit_open_seconds_total",
    "ic_circuit_probes_total",
    "ic_intake_paused",
    "ic_bank_concurrency_limit",
    "ic_bank_in_flight",
    "ic_bank_retry_after_total",
})
