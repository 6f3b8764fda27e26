"""Benchmark suites of ``nexus bench``: ratios taken within one run, never timed assertions."""
