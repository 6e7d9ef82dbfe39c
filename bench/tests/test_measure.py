"""bench/measure.py's readers of strace's summary and of the consumer's counters."""

from __future__ import annotations

from bench.measure import bank_requests, requests_by_operation, strace_calls

# `strace -c -f -o FILE` as strace 6.1 writes it: the errors column is empty for most rows.
SUMMARY = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 54.22    1.599001        1094      1461       592 futex
  2.58    0.076030          12      6290           epoll_wait
  1.32    0.039018           1     26595           poll
  0.05    0.001360          18        72        72 connect
  0.00    0.000000           0         1           execve
------ ----------- ----------- --------- --------- ----------------
100.00    2.949094          35     34419       664 total
"""


def test_strace_calls_by_name_without_the_total() -> None:
    assert strace_calls(SUMMARY) == {"futex": 1461, "epoll_wait": 6290, "poll": 26595, "connect": 72, "execve": 1}


class FakeConsumer:
    def __init__(self, text: str) -> None:
        self.text = text

    def get(self, path: str) -> tuple[int, str]:
        assert path == "/metrics"
        return 200, self.text


METRICS = """\
# TYPE ic_aws_requests_total counter
ic_aws_requests_total{service="dynamodb",operation="UpdateItem",result="ok"} 4000
ic_aws_requests_total{service="dynamodb",operation="UpdateItem",result="conditional_failed"} 600
ic_aws_requests_total{service="sqs",operation="ReceiveMessage",result="ok"} 210
ic_debits_total{result="debited"} 2000
ic_debits_total{result="replayed"} 3
ic_debit_inquiries_total{result="found"} 1
ic_notifications_total{result="sent"} 2000
ic_notifications_total_other 7
"""


def test_requests_from_the_consumers_counters() -> None:
    consumers = [FakeConsumer(METRICS), FakeConsumer(METRICS)]
    assert requests_by_operation(consumers) == {"UpdateItem": 9200, "ReceiveMessage": 420}
    assert bank_requests(consumers) == 2 * 4004
