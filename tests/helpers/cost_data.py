"""Cost test data: a small price table with tiers and cache rates, priced random calls, and their insert."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime

from inferwatch_collector.cost.ingest_pricer import make_pricer
from inferwatch_collector.cost.price_table import parse_table
from inferwatch_collector.rows import LLM_CALL_COLUMNS, LlmCallRow
from inferwatch_collector.store import Store

from tests.helpers.factories import llm_call

TABLE = parse_table({
    "price_version": "r1",
    "models": {
        "gpt-4o": {"input_cost_per_token": "2.5e-06", "output_cost_per_token": "1e-05",
                   "cache_read_input_token_cost": "1.25e-06", "litellm_provider": "openai"},
        "gpt-4o-mini": {"input_cost_per_token": "1.5e-07", "output_cost_per_token": "6e-07",
                        "cache_read_input_token_cost": "7.5e-08", "litellm_provider": "openai"},
        "claude-sonnet-4": {"input_cost_per_token": "3e-06", "output_cost_per_token": "1.5e-05",
                            "cache_read_input_token_cost": "3e-07", "cache_creation_input_token_cost": "3.75e-06",
                            "input_cost_per_token_above_200k_tokens": "6e-06",
                            "output_cost_per_token_above_200k_tokens": "2.25e-05",
                            "litellm_provider": "anthropic"},
    },
}, "test table")
PRICER = make_pricer(TABLE)
MICROS_PER_S = 1_000_000


def at(day: date, hour: int = 12, minute: int = 0) -> int:
    return int(datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC).timestamp() * MICROS_PER_S)


def priced(row: LlmCallRow, pricer=PRICER) -> LlmCallRow:
    """``row`` with the cost columns ``pricer`` gives it (the ingest pricer of :data:`TABLE` by default)."""
    cost, version, parts, avoided = pricer(row.model, row.provider, row.input_tokens, row.output_tokens,
                                           row.cache_read_tokens, row.cache_write_tokens,
                                           row.cache_write_1h_tokens, row.reasoning_tokens, row.usage_missing,
                                           row.cache_hit)
    names = ("cost_input_usd", "cost_cache_read_usd", "cost_cache_write_usd", "cost_output_usd",
             "cost_reasoning_usd", "cache_savings_usd", "unpriced")
    return row._replace(cost_usd=cost, price_version=version, cost_avoided_usd=avoided, **dict(zip(names, parts)))


def insert(store: Store, rows: list[LlmCallRow]) -> None:
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)


def random_calls(rng: random.Random, days: list[date], n: int, project: str = "p1") -> list[LlmCallRow]:
    rows = []
    for _ in range(n):
        model, provider = rng.choice([("gpt-4o", "openai"), ("gpt-4o-mini", "openai"),
                                      ("claude-sonnet-4", "anthropic"), ("mystery-7b", "self")])
        inp = rng.choice([rng.randint(1, 5_000), rng.randint(1, 5_000), rng.randint(190_000, 260_000)])
        read = rng.randint(0, inp // 2)
        write = rng.randint(0, (inp - read) // 4) if provider == "anthropic" else 0
        out = rng.randint(0, 2_000)
        rows.append(priced(llm_call(
            project, start_time=at(rng.choice(days), rng.randint(0, 23), rng.randint(0, 59)), model=model,
            provider=provider, input_tokens=inp, output_tokens=out, cache_read_tokens=read,
            cache_write_tokens=write, status="error" if rng.random() < 0.05 else "ok",
            usage_missing=rng.random() < 0.03, cache_hit=rng.random() < 0.05,
            feature=rng.choice(["search", "chat", "summarise"]), prompt_template=rng.choice(["a", "b"]),
            user_hash=rng.choice(["u1", "u2", "u3", "u4"]) * 16)))
    return rows
