"""The ``negotiator`` command line. One small module per command; see ``negotiator --help``.

Exit codes: 0 success; 1 the run failed unexpectedly; 2 bad input (a flag, a spec, a
file); 3 a model could not be reached (connection refused, missing API key, every
negotiation ended in a provider error).
"""

from .app import app, main

__all__ = ["app", "main"]
