"""`make bench` (bench/run.py; docs/performance.md has the map of this folder). Runnable as
modules from the repository root (`python -m bench.run`), which makes the `tools` package
importable; a regular package so no installed `bench` shadows it."""
