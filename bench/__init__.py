"""Runnable as modules from the repository root (`python -m bench.consumer_throughput`),
which makes the `tools` package importable; a regular package so no installed `bench`
shadows it."""
