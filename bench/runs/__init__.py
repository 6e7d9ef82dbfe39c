"""One module per kind of run; each drives a bench/stack.py stack and returns what it measured
as JSON-ready data, which bench/run.py collects into build/bench/results.json and
bench/report/ renders. None of them imports another's caller: stack and measure below them,
the report beside them.

    ceiling     the backend ceiling (bench/backend_ceiling.cpp) and the bench bank's
    drains      consumer drains (fresh, duplicates, idle, SIGTERM), a stack's row, readiness
    production  production's work: duplicates mixed in, the Python fake bank, TLS everywhere,
                next to the best case; user and kernel CPU, system calls by call (strace)
    floor       the dependency floor (bench/dependency_floor.cpp)
    callgrind   instructions per charge
    scaling     over WORKERS, processes and charges (memory)
    latency     the latency-injected run (bench/net_proxy.cpp's delays), against the model
    peak        the month-end peak, 1,150 charges/s, plain and over TLS
    recheck     a copy's settling after a latency shift (the Python fake bank)
    loop_lag    the event loop's lag at 1,024 in flight (alone, not in make bench)
    profile     a perf profile of a drain (alone, needs perf)
"""
