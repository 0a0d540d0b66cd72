"""Cost: what an LLM call costs and what a project spends.

- ``price_table``: the bundled, pinned price table, user overrides, model-name resolution.
- ``call_cost``: the cost of one call from its normalised usage (pure functions).
- ``ingest_pricer``: the price table an ingest process holds, and the pricer ``normalize`` calls.
- ``recompute``: re-price stored calls after a price change and rebuild the cost rollups.
- ``reports``: daily and month-to-date cost reports by model, provider, feature, template or user.
- ``whatif``: a period's traffic priced under another model mix or a cascade.
- ``budgets``: budget definitions, burn and forecast, and the status the API and the SDK's guard read.
"""
