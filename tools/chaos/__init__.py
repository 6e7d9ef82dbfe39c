"""The chaos suite (`make chaos`, `python -m tools.chaos`): a workload of charges over the real
local stack while a nemesis injects faults, a history of what happened, and checkers over it.

Modules: workload (the charges and their expected outcome), history (the JSON-lines history
and the events derived from the consumers' and the bank's logs), checkers (C1-C5, pure
functions, unit-tested in tests/system/test_chaos_checkers.py), stack (moto for SQS, a second
moto for DynamoDB, the fake bank, consumer processes with pause/kill/skew), nemesis (the
faults and their schedule), report (summary table and timeline plot), runner (scenarios).
Stalls (issue 34): stalls (what each stall adds to the stack, and its nemesis action),
credentials_server (container credentials and STS that answer late or not at all),
resolver_shim with stall_resolver.c (a host name whose lookups never answer), health (the
admin endpoints polled during a stall) and stall_checkers (CS, CL, CT and the stall figures).
See docs/chaos.md.
"""
