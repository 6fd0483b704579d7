"""Benchmarks behind ``arena bench ...`` (each prints its figures) and the protocol
fuzzer. Not imported by the runtime."""
