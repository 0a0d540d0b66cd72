"""Golden vectors for the cost maths (issue 4, item 3). Every expected dollar figure is worked out by hand in the
comment above it and written as a literal: none is computed by the code under test.

The vectors use a small price table of their own (list prices as of the table's writing) so they do not move when
the bundled table is updated. Provider usage payloads are converted to the OTel convention by hand here, the way
:mod:`inferwatch_collector.normalize` does it: OpenAI's ``prompt_tokens`` already include ``cached_tokens`` and
its ``completion_tokens`` include ``reasoning_tokens``; Anthropic reports cache reads and writes *on top of*
``input_tokens``.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from pathlib import Path

import pytest

from inferwatch_collector.cost.call_cost import CostBreakdown, Usage, price_call, price_tokens
from inferwatch_collector.cost.price_table import PriceTable, load_table, parse_table, with_overrides

TABLE_DOC = {
    "price_version": "test-1",
    "models": {
        # OpenAI: cached input at 50% of the input rate
        "gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": "2.5e-06",
                   "output_cost_per_token": "1e-05", "cache_read_input_token_cost": "1.25e-06"},
        # o-series: reasoning billed at the output rate (no separate field)
        "o3": {"litellm_provider": "openai", "input_cost_per_token": "2e-06", "output_cost_per_token": "8e-06",
               "cache_read_input_token_cost": "5e-07"},
        # a model with its own reasoning rate (Gemini 2.5 Flash preview priced thinking apart)
        "thinker": {"input_cost_per_token": "1e-06", "output_cost_per_token": "2e-06",
                    "output_cost_per_reasoning_token": "4e-06"},
        # Anthropic: read 10% of input, 5-minute write 125%, 1-hour write 200%; a >200k-token tier
        "claude-sonnet-4-5": {
            "litellm_provider": "anthropic", "input_cost_per_token": "3e-06", "output_cost_per_token": "1.5e-05",
            "cache_read_input_token_cost": "3e-07", "cache_creation_input_token_cost": "3.75e-06",
            "cache_creation_input_token_cost_above_1hr": "6e-06",
            "input_cost_per_token_above_200k_tokens": "6e-06",
            "output_cost_per_token_above_200k_tokens": "2.25e-05",
            "cache_read_input_token_cost_above_200k_tokens": "6e-07",
            "cache_creation_input_token_cost_above_200k_tokens": "7.5e-06",
            "cache_creation_input_token_cost_above_1hr_above_200k_tokens": "1.2e-05",
        },
        # no cache rates at all: cached tokens must cost the input rate, never nothing
        "plain": {"input_cost_per_token": "1e-06", "output_cost_per_token": "2e-06"},
    },
    "aliases": {"claude-sonnet-4.5": "claude-sonnet-4-5", "sonnet": "claude-sonnet-4-5"},
}


@pytest.fixture
def table() -> PriceTable:
    return parse_table(TABLE_DOC, "fixture")


def openai_usage(usage: dict | None) -> Usage:
    """OpenAI ``usage`` → OTel convention: cached and reasoning tokens are already inside the totals."""
    if usage is None:
        return Usage(usage_missing=True)
    return Usage(
        input_tokens=usage["prompt_tokens"],
        output_tokens=usage["completion_tokens"],
        cache_read_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
        reasoning_tokens=(usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0),
    )


def anthropic_usage(usage: dict | None) -> Usage:
    """Anthropic ``usage`` → OTel convention: cache reads and writes are added to ``input_tokens``."""
    if usage is None:
        return Usage(usage_missing=True)
    read = usage.get("cache_read_input_tokens", 0)
    write = usage.get("cache_creation_input_tokens", 0)
    write_1h = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
    return Usage(input_tokens=usage["input_tokens"] + read + write, output_tokens=usage["output_tokens"],
                 cache_read_tokens=read, cache_write_tokens=write, cache_write_1h_tokens=write_1h)


# --- OpenAI cached prompt tokens ---------------------------------------------------------------------------------
OPENAI_CACHED = {"prompt_tokens": 10_000, "completion_tokens": 500,
                 "prompt_tokens_details": {"cached_tokens": 6_000}}


def test_openai_cached_prompt_tokens_are_a_subset_of_the_prompt_at_half_price(table):
    # uncached 10,000 - 6,000 = 4,000 x $2.50/M = $0.0100
    # cached   6,000 x $1.25/M (50% of $2.50)   = $0.0075
    # output     500 x $10/M                     = $0.0050
    # total                                      = $0.0225
    # savings  6,000 x ($2.50 - $1.25)/M         = $0.0075
    cost = price_call(table, "gpt-4o", openai_usage(OPENAI_CACHED))
    assert cost == CostBreakdown(input=0.01, cache_read=0.0075, cache_write=0.0, output=0.005, reasoning=0.0,
                                 total=0.0225, price_version="test-1", unpriced=False, usage_missing=False,
                                 cache_savings=0.0075)


# --- Anthropic cache read and cache creation ---------------------------------------------------------------------
def test_anthropic_cache_read_is_on_top_of_input_at_a_90_percent_discount(table):
    usage = anthropic_usage({"input_tokens": 2_000, "cache_read_input_tokens": 50_000,
                             "cache_creation_input_tokens": 0, "output_tokens": 1_000})
    assert usage.input_tokens == 52_000  # OTel: 2,000 uncached + 50,000 read
    # uncached  2,000 x $3/M                = $0.006
    # read     50,000 x $0.30/M (10% of $3) = $0.015  (uncached it would be $0.15)
    # output    1,000 x $15/M               = $0.015
    # total                                 = $0.036
    # savings  50,000 x ($3 - $0.30)/M      = $0.135
    cost = price_call(table, "claude-sonnet-4-5", usage)
    assert (cost.input, cost.cache_read, cost.cache_write, cost.output, cost.reasoning) == (
        0.006, 0.015, 0.0, 0.015, 0.0)
    assert cost.total == 0.036
    assert cost.cache_savings == 0.135


def test_anthropic_cache_creation_five_minute_and_one_hour(table):
    usage = anthropic_usage({
        "input_tokens": 1_000, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 20_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 12_000, "ephemeral_1h_input_tokens": 8_000},
        "output_tokens": 400,
    })
    # uncached  1,000 x $3/M                = $0.003
    # write 5m 12,000 x $3.75/M (125%)      = $0.045
    # write 1h  8,000 x $6/M    (200%)      = $0.048  -> cache_write $0.093
    # output      400 x $15/M               = $0.006
    # total                                 = $0.102
    cost = price_call(table, "claude-sonnet-4-5", usage)
    assert (cost.input, cost.cache_read, cost.cache_write, cost.output) == (0.003, 0.0, 0.093, 0.006)
    assert cost.total == 0.102
    assert cost.cache_savings == 0.0


def test_cache_tokens_without_cache_rates_cost_the_input_rate(table):
    # 10,000 input of which 4,000 read and 1,000 written, all at the input rate $1/M: $0.005 + $0.004 + $0.001
    # output 100 x $2/M = $0.0002; total $0.0102; nothing saved
    cost = price_tokens(table, "plain", 10_000, 100, cache_read_tokens=4_000, cache_write_tokens=1_000)
    assert (cost.input, cost.cache_read, cost.cache_write, cost.output) == (0.005, 0.004, 0.001, 0.0002)
    assert cost.total == 0.0102 and cost.cache_savings == 0.0


# --- reasoning ---------------------------------------------------------------------------------------------------
def test_o_series_reasoning_tokens_are_part_of_output_at_the_output_rate(table):
    usage = openai_usage({"prompt_tokens": 1_500, "completion_tokens": 3_000,
                          "completion_tokens_details": {"reasoning_tokens": 2_400}})
    # input      1,500 x $2/M           = $0.0030
    # visible    3,000 - 2,400 = 600 x $8/M = $0.0048
    # reasoning  2,400 x $8/M           = $0.0192
    # total                             = $0.0270  (= 1,500 x $2/M + 3,000 x $8/M: reasoning is not counted twice)
    cost = price_call(table, "o3", usage)
    assert (cost.input, cost.output, cost.reasoning, cost.total) == (0.003, 0.0048, 0.0192, 0.027)


def test_a_separate_reasoning_rate_applies_to_reasoning_tokens_only(table):
    # input 1,000 x $1/M = $0.001; visible 1,000 - 600 = 400 x $2/M = $0.0008; reasoning 600 x $4/M = $0.0024
    # total $0.0042
    cost = price_call(table, "thinker", Usage(input_tokens=1_000, output_tokens=1_000, reasoning_tokens=600))
    assert (cost.input, cost.output, cost.reasoning, cost.total) == (0.001, 0.0008, 0.0024, 0.0042)


# --- long-context tier -------------------------------------------------------------------------------------------
def test_prompt_above_200k_tokens_prices_the_whole_call_at_the_long_context_rates(table):
    usage = anthropic_usage({"input_tokens": 150_000, "cache_read_input_tokens": 60_000,
                             "cache_creation_input_tokens": 0, "output_tokens": 2_000})
    assert usage.input_tokens == 210_000  # > 200,000 counting the cache reads
    # uncached 150,000 x $6/M    = $0.900
    # read      60,000 x $0.60/M = $0.036
    # output     2,000 x $22.50/M = $0.045
    # total                      = $0.981
    # savings   60,000 x ($6 - $0.60)/M = $0.324
    cost = price_call(table, "claude-sonnet-4-5", usage)
    assert (cost.input, cost.cache_read, cost.output, cost.total) == (0.9, 0.036, 0.045, 0.981)
    assert cost.cache_savings == 0.324


def test_the_tier_starts_above_200k_not_at_it_and_covers_cache_writes(table):
    # exactly 200,000 uncached: base rate, 200,000 x $3/M = $0.60
    assert price_tokens(table, "claude-sonnet-4-5", 200_000, 0).total == 0.6
    # 200,001 uncached: tier rate, 200,001 x $6/M = $1.200006
    assert price_tokens(table, "claude-sonnet-4-5", 200_001, 0).total == 1.200006
    # 150,000 uncached + 60,000 written (40,000 5m + 20,000 1h):
    # $0.90 + 40,000 x $7.50/M ($0.30) + 20,000 x $12/M ($0.24) = $1.44
    cost = price_tokens(table, "claude-sonnet-4-5", 210_000, 0, cache_write_tokens=60_000,
                        cache_write_1h_tokens=20_000)
    assert (cost.input, cost.cache_write, cost.total) == (0.9, 0.54, 1.44)


# --- streaming ---------------------------------------------------------------------------------------------------
def test_streamed_call_with_usage_in_the_last_chunk_costs_what_the_unstreamed_call_costs(table):
    # OpenAI with stream_options.include_usage: usage arrives only on the final chunk (no choices)
    chunks = [{"choices": [{"delta": {"content": "Hel"}}], "usage": None},
              {"choices": [{"delta": {"content": "lo"}}], "usage": None},
              {"choices": [], "usage": OPENAI_CACHED}]
    streamed = price_call(table, "gpt-4o", openai_usage(chunks[-1]["usage"]))
    unstreamed = price_call(table, "gpt-4o", openai_usage(OPENAI_CACHED))
    assert streamed == unstreamed
    assert streamed.total == 0.0225  # the hand-computed OpenAI vector above

    # Anthropic: message_start carries input and cache counts, the last message_delta the final output count
    events = [{"type": "message_start", "message": {"usage": {"input_tokens": 2_000, "cache_read_input_tokens":
                                                              50_000, "output_tokens": 1}}},
              {"type": "content_block_delta"},
              {"type": "message_delta", "usage": {"output_tokens": 1_000}}]
    usage = dict(events[0]["message"]["usage"], output_tokens=events[-1]["usage"]["output_tokens"])
    assert price_call(table, "claude-sonnet-4-5", anthropic_usage(usage)).total == 0.036  # the vector above


def test_streamed_call_without_usage_is_flagged_not_silently_zero(table):
    chunks = [{"choices": [{"delta": {"content": "Hel"}}]}, {"choices": [{"delta": {"content": "lo"}}]}]
    final_usage = chunks[-1].get("usage")
    cost = price_call(table, "gpt-4o", openai_usage(final_usage))
    assert cost.usage_missing is True and cost.unpriced is False
    assert cost.total == 0.0 and cost.price_version == "test-1"
    # the flag wins over any counts a caller might still pass
    assert price_tokens(table, "gpt-4o", 10, 10, usage_missing=True).usage_missing


# --- model names -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt-4o-2024-08-06", "openai/gpt-4o", "azure/gpt-4o-2024-11-20", "GPT-4o"])
def test_dated_snapshot_and_provider_prefix_are_priced_as_the_model(table, name):
    assert price_call(table, name, openai_usage(OPENAI_CACHED)).total == 0.0225  # the OpenAI vector


@pytest.mark.parametrize("name", ["claude-sonnet-4.5", "sonnet", "claude-sonnet-4-5-20250929",
                                  "anthropic/claude-sonnet-4-5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                  "vertex_ai/claude-sonnet-4-5@20250929"])
def test_alias_and_provider_spellings_of_a_claude_model(table, name):
    usage = anthropic_usage({"input_tokens": 2_000, "cache_read_input_tokens": 50_000, "output_tokens": 1_000})
    assert price_call(table, name, usage).total == 0.036  # the Anthropic cache-read vector


def test_unknown_model_is_flagged_unpriced(table):
    cost = price_call(table, "my-fine-tune-7b", Usage(input_tokens=1_000, output_tokens=100))
    assert cost == CostBreakdown(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "test-1", True, False, 0.0)
    both = price_call(table, "my-fine-tune-7b", Usage(usage_missing=True))
    assert both.unpriced and both.usage_missing


# --- user price file ---------------------------------------------------------------------------------------------
def test_user_override_changes_the_price_and_the_price_version(table, tmp_path: Path):
    user = tmp_path / "prices.json"
    user.write_text(json.dumps({"gpt-4o": {"input_cost_per_token": "2e-06", "output_cost_per_token": "8e-06",
                                           "cache_read_input_token_cost": "5e-07"}}))
    raw = user.read_bytes()
    combined = with_overrides(table, json.loads(raw), raw, str(user))
    assert combined.version == "test-1+" + hashlib.sha256(raw).hexdigest()[:12]
    # uncached 4,000 x $2/M = $0.008; cached 6,000 x $0.50/M = $0.003; output 500 x $8/M = $0.004; total $0.015
    cost = price_call(combined, "gpt-4o-2024-08-06", openai_usage(OPENAI_CACHED))
    assert (cost.input, cost.cache_read, cost.output, cost.total) == (0.008, 0.003, 0.004, 0.015)
    assert cost.price_version == combined.version
    # the untouched models keep their prices and aliases
    assert price_call(combined, "sonnet", Usage(input_tokens=1_000)).total == 0.003

    user.write_text(json.dumps({"gpt-4o": {"input_cost_per_token": "2.1e-06", "output_cost_per_token": "8e-06"}}))
    raw2 = user.read_bytes()
    assert with_overrides(table, json.loads(raw2), raw2, str(user)).version != combined.version


def test_self_hosted_model_priced_per_gpu_hour(table, tmp_path: Path):
    user = tmp_path / "prices.yaml"
    user.write_text("my-llama:\n  gpu_hour_usd: 3.5\n  gpus: 4\n  output_tokens_per_s: 2500\n")
    combined = load_table(user)
    assert combined.version.startswith(load_table().version + "+")
    # $3.50/h x 4 GPUs = $14/h over 3,600 s x 2,500 tokens/s = 9,000,000 tokens/h -> $14/9,000,000 per token
    # 9,000 output tokens x 14/9,000,000 = $0.014 exactly; 1,000 input tokens: $0 (same GPU-hours)
    cost = price_tokens(combined, "my-llama", 1_000, 9_000)
    assert (cost.input, cost.output, cost.total) == (0.0, 0.014, 0.014)
    # one token: 14/9,000,000 = $0.0000015555...; rounded half-up to 1e-12 USD = $0.000001555556
    assert price_tokens(combined, "my-llama", 0, 1).total == 0.000001555556


# --- exactness ---------------------------------------------------------------------------------------------------
def test_sums_of_many_calls_are_exact_to_the_cent(table):
    # 20,000 calls of 1,237 cached-free prompt tokens and 311 output tokens on gpt-4o:
    # each 1,237 x $2.50/M + 311 x $10/M = $0.0030925 + $0.00311 = $0.0062025; x 20,000 = $124.05
    costs = [price_tokens(table, "gpt-4o", 1_237, 311).total for _ in range(20_000)]
    assert costs[0] == 0.0062025
    assert round(sum(costs), 2) == 124.05
    assert sum(Decimal(repr(c)) for c in costs) == Decimal("124.05")
