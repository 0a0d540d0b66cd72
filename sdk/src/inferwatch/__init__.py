"""inferwatch SDK: drop-in instrumentation for LLM calls.

The instrumentation itself arrives with the SDK issue; for now the package carries the attribute names
(:mod:`inferwatch.semconv`) that the collector shares with it.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
