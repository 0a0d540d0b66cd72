"""``inferwatch-server prices import|show|list``: the price table calls are charged with.

``import`` converts LiteLLM's ``model_prices_and_context_window.json`` into a user price file; ``show`` prints how
a model name resolves and its rates; ``list`` prints every priced model. Rates are USD per 1M tokens.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .common import settings_from

if TYPE_CHECKING:
    from inferwatch_collector.cost.price_table import ModelPrice, PriceTable, Rates


def register(sub: Any) -> None:
    """Add ``prices`` to the ``inferwatch-server`` parser."""
    prices = sub.add_parser("prices", help="the price table: import LiteLLM prices, show or list prices")
    prices.add_argument("--prices-file", help="user price file laid over the bundled table (JSON or YAML)")
    prices_sub = prices.add_subparsers(dest="prices_command", required=True)
    imp = prices_sub.add_parser("import", help="convert LiteLLM's model_prices_and_context_window.json")
    imp.add_argument("file", help="a LiteLLM price file (JSON)")
    imp.add_argument("--out", default="inferwatch-prices.json", help="user price file to write")
    show = prices_sub.add_parser("show", help="how a model name resolves and what it is charged")
    show.add_argument("model")
    plist = prices_sub.add_parser("list", help="every priced model")
    plist.add_argument("--provider", help="only this provider (LiteLLM's name: openai, anthropic, gemini, ...)")
    prices.set_defaults(func=cmd_prices)


def _price_table(args: argparse.Namespace) -> PriceTable:
    """The table calls are priced with: bundled, plus ``--prices-file`` or the configured user price file."""
    from inferwatch_collector.cost.price_table import load_table

    user_file = args.prices_file or getattr(settings_from(args), "prices_file", None)
    return load_table(user_file or None)


def _per_million(value: int, unit: int) -> str:
    """USD per 1M tokens of a compiled rate (``value × unit`` is 1e-18 USD per token), at least two decimals."""
    from decimal import Decimal

    text = f"{Decimal(value * unit).scaleb(-12):.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}"


def _show_rates(price: ModelPrice, rates: Rates, tag: str | None) -> None:
    from inferwatch_collector.cost.price_table import (
        CACHE_READ,
        CACHE_WRITE,
        CACHE_WRITE_1H,
        OUTPUT,
        REASONING,
        tier_field,
    )

    def given(field: str) -> bool:
        return field in price.fields or (tag is not None and tier_field(field, tag) in price.fields)

    rows = [
        ("input", rates.input, None),
        ("cache read", rates.cache_read, None if given(CACHE_READ) else "input rate"),
        ("cache write (5 min)", rates.cache_write, None if given(CACHE_WRITE) else "input rate"),
        ("cache write (1 hour)", rates.cache_write_1h, None if given(CACHE_WRITE_1H) else "5-minute write rate"),
        ("output", rates.output, None if given(OUTPUT) else "0 for an embedding model"),
        ("reasoning", rates.reasoning, None if given(REASONING) else "output rate"),
    ]
    for label, value, default in rows:
        note = f"  (= {default}: not in the table)" if default else ""
        print(f"  {label:22} {_per_million(value, rates.unit):>12}{note}")


def cmd_prices(args: argparse.Namespace) -> int:
    from inferwatch_collector.cost.price_table import TIER_THRESHOLDS, import_litellm, load_table

    if args.prices_command == "import":
        result = import_litellm(args.file, args.out)
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(result.skipped.items()))
        print(f"imported {result.imported} models, skipped {result.skipped_total}"
              + (f" ({reasons})" if reasons else ""))
        table = load_table(result.out)
        print(f"wrote {result.out} (price_version with it: {table.version})")
        print(f"use it with INFERWATCH_PRICES_FILE={result.out}")
        return 0
    table = _price_table(args)
    if args.prices_command == "show":
        price = table.lookup(args.model)
        if price is None:
            print(f"no price for {args.model!r} in price_version {table.version}: its calls are stored unpriced",
                  file=sys.stderr)
            return 1
        print(f"model          {args.model}")
        provider = price.provider or "unknown provider"
        print(f"resolved to    {price.name} ({provider}, {price.mode}, {price.source})")
        print(f"price_version  {table.version}")
        print("USD per 1M tokens:")
        _show_rates(price, price.base, None)
        tags = {threshold: tag for tag, threshold in TIER_THRESHOLDS.items()}
        for threshold, rates in price.tiers:
            print(f"prompts above {threshold:,} tokens (input incl. cache), the whole call:")
            _show_rates(price, rates, tags[threshold])
        return 0
    provider = (args.provider or "").lower()
    prices = [p for _, p in sorted(table.models.items()) if not provider or p.provider.lower() == provider]
    print(f"price_version {table.version}: {len(prices)} of {len(table.models)} models, "
          f"{len(table.aliases)} aliases; USD per 1M tokens")
    print(f"{'model':58} {'provider':12} {'mode':10} {'input':>10} {'output':>10} {'cache read':>10}")
    for price in prices:
        rates = price.base
        tiers = "  (+ long-context tier)" if price.tiers else ""
        columns = (_per_million(rate, rates.unit) for rate in (rates.input, rates.output, rates.cache_read))
        print(f"{price.name:58} {price.provider:12} {price.mode:10} "
              + " ".join(f"{column:>10}" for column in columns) + tiers)
    return 0
