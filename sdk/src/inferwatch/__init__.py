"""inferwatch SDK: drop-in instrumentation for LLM calls.

Two lines in an app::

    import inferwatch
    inferwatch.init(api_key="iwk_...")          # or INFERWATCH_API_KEY; endpoint: INFERWATCH_ENDPOINT

then ``@inferwatch.observe`` on any function, ``with inferwatch.llm_call(...)`` around any client, and
``with inferwatch.tags(feature=..., user_id=...)`` / ``inferwatch.experiment(...)`` for attribution. Nothing is
patched at import and nothing runs before ``init()``; no prompt text leaves the process unless ``capture`` says so.
"""

from __future__ import annotations

from .client import flush, get_options, init, shutdown, stats
from .context import assign, experiment, hash_user_id, tags
from .llm_call import LlmCall, llm_call
from .metrics import InferenceMetrics
from .observe import observe

__version__ = "0.1.0"

__all__ = [
    "InferenceMetrics",
    "LlmCall",
    "__version__",
    "assign",
    "experiment",
    "flush",
    "get_options",
    "hash_user_id",
    "init",
    "llm_call",
    "observe",
    "shutdown",
    "stats",
    "tags",
]
