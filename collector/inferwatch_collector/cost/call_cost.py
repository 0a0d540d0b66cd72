"""Cost of one LLM call from its normalised usage and a :class:`~.price_table.PriceTable`. Pure functions.

Usage is in the OTel convention the ``llm_calls`` columns use: ``input_tokens`` *includes* cache reads and cache
writes, ``output_tokens`` *includes* reasoning tokens (:mod:`.normalize` converts every provider's accounting to
it).
``cache_write_1h_tokens`` is the part of the cache writes made at the 1-hour rate. The formula::

    (input − cache_read − cache_write) × input rate
    + cache_read × cache-read rate
    + (cache_write − cache_write_1h) × cache-write rate + cache_write_1h × 1-hour cache-write rate
    + (output − reasoning) × output rate + reasoning × reasoning rate

When the prompt (``input_tokens``, cache included) exceeds a long-context threshold the table prices (200k for
Claude Sonnet 4 and Gemini 2.5 Pro), that tier's rates apply to the whole call. Discounts (Anthropic's cached reads
90% off, OpenAI's 50%) come from the table, never from code.

Never a silent zero: an unknown model costs 0 with ``unpriced=True``; a call whose usage never arrived (a stream
cut short, a client that dropped it) costs 0 with ``usage_missing=True``; both are counted and shown.

Exactness: rates are exact integers (:class:`~.price_table.Rates`): of 1e-12 USD per token for every list price, so
a component is an exact integer product; of 1e-18 USD otherwise (a GPU-hour price), and then each component is
rounded half-up to 1e-12 USD. ``total`` is the sum of the components as integers, divided once, so a call's total
equals the sum of its parts and a sum over millions of calls is exact to the cent. ``cache_savings`` is what the
cached reads would have cost at the uncached input rate minus what they cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from .price_table import PriceTable

_PICO = 1_000_000_000_000  # 1e-12 USD units per USD
_ROUND = 1_000_000  # 1e-18 USD (rates not exact in 1e-12 USD) -> 1e-12 USD
_HALF = _ROUND // 2


@dataclass(frozen=True, slots=True)
class Usage:
    """A call's token counts in the OTel convention (see the module docstring)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0
    usage_missing: bool = False


@dataclass(frozen=True)
class CostBreakdown:
    """A call's cost in USD by component; ``total`` is their sum. Flags say why a cost is 0.

    :func:`price_tokens` builds it by setting ``__dict__`` in one step: the generated frozen ``__init__`` sets ten
    attributes through ``object.__setattr__`` and alone would cost more than the whole pricing.
    """

    input: float
    cache_read: float
    cache_write: float
    output: float
    reasoning: float
    total: float
    price_version: str
    unpriced: bool
    usage_missing: bool
    cache_savings: float


_new = object.__new__
_set = object.__setattr__
_ZEROS: dict[tuple[str, bool, bool], CostBreakdown] = {}


def _zero(version: str, unpriced: bool, usage_missing: bool) -> CostBreakdown:
    key = (version, unpriced, usage_missing)
    found = _ZEROS.get(key)
    if found is None:
        if len(_ZEROS) > 1024:
            _ZEROS.clear()
        found = _ZEROS[key] = CostBreakdown(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, version, unpriced, usage_missing, 0.0)
    return found


def price_tokens(table: PriceTable, model: str, input_tokens: int, output_tokens: int,
                 cache_read_tokens: int = 0, cache_write_tokens: int = 0, reasoning_tokens: int = 0,
                 cache_write_1h_tokens: int = 0, usage_missing: bool = False) -> CostBreakdown:
    """:func:`price_call` from plain counts, for callers that hold a row rather than a :class:`Usage`.

    Counts that break the convention (cache tokens above the input, reasoning above the output, 1-hour writes
    above all writes) are clamped so no component goes negative; :mod:`.normalize` never produces them.
    """
    price = table.lookup(model)
    if price is None or usage_missing:
        return _zero(table.version, price is None, usage_missing)
    rates = price.base
    for threshold, tier in price.tiers:
        if input_tokens > threshold:
            rates = tier
            break
    uncached = input_tokens - cache_read_tokens - cache_write_tokens
    if uncached < 0:
        uncached = 0
    if cache_write_1h_tokens > cache_write_tokens:
        cache_write_1h_tokens = cache_write_tokens
    visible = output_tokens - reasoning_tokens
    if visible < 0:
        visible = 0
    if rates.unit == 1:  # rates in 1e-18 USD: round each component half-up to 1e-12 USD
        cost_in = (uncached * rates.input + _HALF) // _ROUND
        cost_read = (cache_read_tokens * rates.cache_read + _HALF) // _ROUND
        cost_write = ((cache_write_tokens - cache_write_1h_tokens) * rates.cache_write
                      + cache_write_1h_tokens * rates.cache_write_1h + _HALF) // _ROUND
        cost_out = (visible * rates.output + _HALF) // _ROUND
        cost_reasoning = (reasoning_tokens * rates.reasoning + _HALF) // _ROUND
        savings = (cache_read_tokens * rates.saving + _HALF) // _ROUND
    else:  # rates in 1e-12 USD: every product is exact, nothing to round
        cost_in = uncached * rates.input
        cost_read = cache_read_tokens * rates.cache_read
        cost_write = ((cache_write_tokens - cache_write_1h_tokens) * rates.cache_write
                      + cache_write_1h_tokens * rates.cache_write_1h)
        cost_out = visible * rates.output
        cost_reasoning = reasoning_tokens * rates.reasoning
        savings = cache_read_tokens * rates.saving
    result = _new(CostBreakdown)
    _set(result, "__dict__", {
        "input": cost_in / _PICO, "cache_read": cost_read / _PICO, "cache_write": cost_write / _PICO,
        "output": cost_out / _PICO, "reasoning": cost_reasoning / _PICO,
        "total": (cost_in + cost_read + cost_write + cost_out + cost_reasoning) / _PICO,
        "price_version": table.version, "unpriced": False, "usage_missing": False,
        "cache_savings": savings / _PICO,
    })
    return result


def price_call(table: PriceTable, model: str, usage: Usage) -> CostBreakdown:
    """The cost of one call of ``model`` with ``usage`` under ``table`` (see the module docstring)."""
    return price_tokens(table, model, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                        usage.cache_write_tokens, usage.reasoning_tokens, usage.cache_write_1h_tokens,
                        usage.usage_missing)
