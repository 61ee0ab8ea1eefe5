"""Held-out evaluation: suites, the concurrent runner, statistics and reports."""
