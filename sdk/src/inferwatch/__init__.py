"""inferwatch SDK: drop-in instrumentation for LLM calls.

Two lines in an app::

    import inferwatch
    inferwatch.init(api_key="iwk_...")          # or INFERWATCH_API_KEY; endpoint: INFERWATCH_ENDPOINT

then ``@inferwatch.observe`` on any function, ``with inferwatch.llm_call(...)`` around any client,
``inferwatch.wrap_openai(client)`` / ``inferwatch.instrument_openai()`` (and the Anthropic twins), and
``with inferwatch.tags(feature=..., user_id=...)`` / ``inferwatch.experiment(...)`` for attribution,
``call.cache_hit("exact"|"semantic")`` for answers served from the app's own cache, and
``inferwatch.budget_guard(...)`` (or ``init(budget_guard=...)``) to stop or downgrade calls once a hard budget is
spent (:class:`BudgetExceeded`). Nothing is
patched at import and nothing runs before ``init()``; no prompt text leaves the process unless ``capture`` says so.
Importing ``inferwatch`` never imports ``openai`` or ``anthropic``: the provider functions below load their
integration module when first called.
"""

from __future__ import annotations

from typing import Any

from .budget import Budget, BudgetExceeded, BudgetGuard, budget_guard
from .client import get_options
from .context import assign, experiment, hash_user_id, tags
from .feedback import feedback, feedback_stats
from .lifecycle import flush, init, shutdown, stats
from .llm_call import LlmCall, llm_call
from .metrics import InferenceMetrics
from .observe import observe

__version__ = "0.1.0"


# --- provider integrations (imported on first use; see inferwatch.integrations.openai / .anthropic) ----------
def wrap_openai(client: Any) -> Any:
    """Record this OpenAI client's calls (sync or async); returns the same client, instrumented in place."""
    from .integrations.openai import wrap_openai as wrap

    return wrap(client)


def instrument_openai() -> bool:
    """Record every OpenAI client's calls; idempotent, undone by ``uninstrument_openai()`` / ``shutdown()``."""
    from .integrations.openai import instrument_openai as instrument

    return instrument()


def uninstrument_openai() -> bool:
    """Undo ``instrument_openai()`` and every ``wrap_openai()``; True when something was installed."""
    from .integrations.openai import uninstrument_openai as uninstrument

    return uninstrument()


def wrap_anthropic(client: Any) -> Any:
    """Record this Anthropic client's calls (sync or async); returns the same client, instrumented in place."""
    from .integrations.anthropic import wrap_anthropic as wrap

    return wrap(client)


def instrument_anthropic() -> bool:
    """Record every Anthropic client's calls; idempotent; undone by ``uninstrument_anthropic()``/``shutdown()``."""
    from .integrations.anthropic import instrument_anthropic as instrument

    return instrument()


def uninstrument_anthropic() -> bool:
    """Undo ``instrument_anthropic()`` and every ``wrap_anthropic()``; True when something was installed."""
    from .integrations.anthropic import uninstrument_anthropic as uninstrument

    return uninstrument()


__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetGuard",
    "InferenceMetrics",
    "LlmCall",
    "__version__",
    "assign",
    "budget_guard",
    "experiment",
    "feedback",
    "feedback_stats",
    "flush",
    "get_options",
    "hash_user_id",
    "init",
    "instrument_anthropic",
    "instrument_openai",
    "llm_call",
    "observe",
    "shutdown",
    "stats",
    "tags",
    "uninstrument_anthropic",
    "uninstrument_openai",
    "wrap_anthropic",
    "wrap_openai",
]
