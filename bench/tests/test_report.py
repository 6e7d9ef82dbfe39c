"""The report from a results.json alone (bench/report/): every section the fixture has data for,
the plots, and `python -m bench.report --from` running nothing. The fixture is a real
results.json of `bench.run` at small counts (every run; see fixtures/README.md)."""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

from bench.report import markdown, render
from tools.local_stack.paths import PYTHON, REPO_ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "results.json"


def results() -> dict:
    return json.loads(FIXTURE.read_text())


def section(text: str, start: str, end: str) -> str:
    """The report's text from the line starting with `start` to the next starting with `end`."""
    body = text[text.index(start):]
    return body[: body.index(end, len(start))]


def table_rows(text: str) -> list[list[str]]:
    """The cells of a markdown table's body rows (after the separator), up to the first blank line."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows and not line.strip():
            break
    return rows[1:]


def test_the_headline_is_production_next_to_the_best_case() -> None:
    r = results()
    text = markdown(r, [])
    assert text.index("## Production's work") < text.index("## Every stack")
    table = table_rows(section(text, "| variant |", "Issue 36"))
    assert [row[0] for row in table] == [v["label"] for v in r["production"]["variants"]]
    best, *_, tls_bench_bank = table
    assert best[2] == "1.00", "the best case is the ratio's base"
    cpu = [d["cpuMsPerCharge"] for d in r["production"]["variants"][0]["drains"]]
    assert len(cpu) == 2 and best[1] == f"{min(cpu):.3f} / {statistics.median(cpu):.3f}", "min / median of the drains"
    assert best[9] == "—" and "bank" in tls_bench_bank[9], "handshakes only where a TLS proxy counts them"
    assert "Issue 36's targets" in text and "over TLS, ≤ 0.45 ms per charge" in text


def test_system_calls_by_call_per_variant() -> None:
    r = results()
    text = markdown(r, [])
    rows = {row[0]: row[1:] for row in table_rows(section(text, "| system call |", "Requests per charge"))}
    n = r["production"]["charges"]
    for i, variant in enumerate(r["production"]["variants"]):
        calls = variant["strace"]["calls"]
        assert rows["**all**"][i] == f"**{sum(calls.values()) / n:.1f}**"
        assert rows["epoll_ctl"][i] == f"{calls['epoll_ctl'] / n:.2f}"
    parts = sum(float(row[0]) for name, row in rows.items() if name != "**all**")
    assert abs(parts - float(rows["**all**"][0].strip("*"))) <= 0.05 + 0.005 * len(rows), "the rows add up to the total"


def test_every_section_of_a_full_run() -> None:
    text = markdown(results(), ["production.png"])
    for heading in ("| stack | ceiling msg/s |", "Backend ceiling runs", "CPU per message of every process", "The floor under",
                    "Latency-injected run", "Peak run", "Resident memory of the consumer", "ready after start",
                    "instructions per charge", "peak RSS after", "Scaling over workers", "Scaling over processes",
                    "Re-check after a latency shift", "![production.png](production.png)", "Wall time of this run"):
        assert heading in text, heading
    peak = table_rows(section(text, "| network |", "- plain"))
    assert [row[0] for row in peak] == ["plain", "TLS"]
    assert "SQS" in peak[1][13] and peak[0][13] == "—", "handshakes over TLS only"
    assert peak[1][12] == f"{results()['peak'][1]['bankLimitMin']:.0f}, {results()['peak'][1]['bankLimitEnd']:.0f}"


def test_render_writes_the_report_and_plots(tmp_path: Path) -> None:
    render(results(), tmp_path)
    assert (tmp_path / "report.md").read_text().startswith("# Consumer benchmark")
    for plot in ("production.png", "throughput.png", "cpu.png", "scaling-workers.png", "scaling-processes.png"):
        assert (tmp_path / plot).stat().st_size > 0, plot


def test_bench_report_from_a_results_file(tmp_path: Path) -> None:
    out = subprocess.run([PYTHON, "-m", "bench.report", "--from", str(FIXTURE), "--out", str(tmp_path)], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (tmp_path / "report.md").read_text() + "\n"


def test_a_failed_run_is_reported_beside_the_others() -> None:
    r = results()
    r["peak"][1] = {"tls": True, "error": "TimeoutError: peak run: 9 of 34500 debited 330 s in"}
    r["errors"] = {"fast+fast recheck": "failed: RuntimeError: the bank has 3 debits for 4 charges"}
    text = markdown(r, [])
    assert [row[0] for row in table_rows(section(text, "| network |", "- plain"))] == ["plain"]
    assert "- TLS: failed: TimeoutError: peak run: 9 of 34500 debited 330 s in" in text
    assert "**fast+fast recheck failed**: failed: RuntimeError" in text
