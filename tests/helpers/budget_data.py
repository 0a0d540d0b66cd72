"""Budget test data: a late hour two days ago, spend rows at a time, and a budget created well before it."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from inferwatch_collector.cost import budgets as b
from inferwatch_collector.rows import LLM_CALL_COLUMNS
from inferwatch_collector.store import Store

from tests.helpers.factories import llm_call

# Two days ago (inside every retention), late in the day: a daily budget then has one hour left, so its
# forecast stays under the limit unless the test wants it over.
DAY = datetime.now(UTC).date() - timedelta(days=2)
LATE = datetime.combine(DAY, time(23), UTC)


def spend(store: Store, when: datetime, cost: float, project: str = "p1", **fields) -> None:
    row = llm_call(project, start_time=int(when.timestamp() * 1_000_000), cost_usd=cost, **fields)
    store.insert_columns("llm_calls", [list(c) for c in zip(row)], LLM_CALL_COLUMNS)


def make(store: Store, project: str = "p1", *, now: datetime = LATE, **fields) -> b.Budget:
    args = dict(budget_id="b1", scope_type="project", period="day", kind="hard", limit_usd=100)
    spec = b.validate_budget(**(args | fields))
    return b.create_budget(store, project, spec, now=now - timedelta(days=40))
