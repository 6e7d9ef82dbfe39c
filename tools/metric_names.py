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
    """Every "ic_…" and "process_…" string literal of src/: the names the metrics registry and
    the process collector are given."""
    names: set[str] = set()
    for path in (REPO_ROOT / "src").rglob("*.cpp"):
        names |= set(re.findall(r'"((?:ic|process)_[a-z0-9_]+)"', path.read_text()))
    return names
