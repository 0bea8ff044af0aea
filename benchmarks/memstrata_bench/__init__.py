"""Benchmarks: `memstrata-bench ...`. Results are JSON written under benchmarks/results/."""
