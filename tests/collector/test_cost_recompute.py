"""Re-pricing stored calls: the SQL formula equals the ingest (Python) pricer, the range is exact, rollups follow."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings as hyp_settings, strategies as st

from inferwatch_collector.cost.recompute import COST_ROLLUPS, RecomputeError, recompute_costs
from inferwatch_collector.migrations import Target, migrate, migration_files, render, target_for
from inferwatch_collector.cost.price_table import parse_table
from inferwatch_collector.cost.ingest_pricer import make_pricer
from inferwatch_collector.rows import LlmCallRow
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

from tests.helpers.cost_data import at, insert, priced
from tests.helpers.factories import llm_call

TODAY = date(2026, 11, 20)
DB = "inferwatch"

# A small table exercising every rate kind: cached reads, 5-minute and 1-hour writes, reasoning, a 200k tier
# and a GPU-hour (non-exact) rate.
TABLE_V1 = {
    "price_version": "t1",
    "models": {
        "gpt-4o": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05,
                   "cache_read_input_token_cost": 1.25e-06, "litellm_provider": "openai", "mode": "chat"},
        "o3": {"input_cost_per_token": 2e-06, "output_cost_per_token": 8e-06,
               "output_cost_per_reasoning_token": 9e-06, "cache_read_input_token_cost": 5e-07,
               "litellm_provider": "openai", "mode": "chat"},
        "claude-sonnet-4": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
                            "cache_read_input_token_cost": 3e-07, "cache_creation_input_token_cost": 3.75e-06,
                            "cache_creation_input_token_cost_above_1hr": 6e-06,
                            "input_cost_per_token_above_200k_tokens": 6e-06,
                            "output_cost_per_token_above_200k_tokens": 2.25e-05,
                            "cache_read_input_token_cost_above_200k_tokens": 6e-07,
                            "cache_creation_input_token_cost_above_200k_tokens": 7.5e-06,
                            "litellm_provider": "anthropic", "mode": "chat"},
        "my-llama": {"input_cost_per_token": 0, "output_cost_per_token": 0.0000015555555555555556,
                     "litellm_provider": "self-hosted", "mode": "chat"},
    },
}


def table(doc: dict) -> object:
    return parse_table(json.loads(json.dumps(doc)), "test table")


def v2_doc() -> dict:
    doc = json.loads(json.dumps(TABLE_V1))
    doc["price_version"] = "t2"
    doc["models"]["gpt-4o"]["input_cost_per_token"] = 5e-06
    doc["models"]["gpt-4o"]["cache_read_input_token_cost"] = 2.5e-06
    return doc


@pytest.fixture
def db(tmp_path: Path):
    settings = Settings(data_dir=tmp_path / "data", clickhouse_url="")
    store = Store.open(settings)
    migrate(store, target_for(settings, store))
    yield store
    store.close()


COST_COLUMNS = ("cost_usd", "cost_input_usd", "cost_cache_read_usd", "cost_cache_write_usd", "cost_output_usd",
                "cost_reasoning_usd", "cache_savings_usd", "unpriced", "cost_avoided_usd", "price_version")


def stored(store: Store) -> dict[str, tuple]:
    rows = store.query(f"SELECT span_id, {', '.join(COST_COLUMNS)} FROM {DB}.llm_calls").result_rows
    return {row[0]: tuple(row[1:]) for row in rows}


def expected(row: LlmCallRow) -> tuple:
    return tuple(getattr(row, name) for name in COST_COLUMNS)


usage = st.fixed_dictionaries({
    "model": st.sampled_from(["gpt-4o", "gpt-4o-2024-08-06", "o3", "claude-sonnet-4", "my-llama", "mystery"]),
    "input_tokens": st.integers(0, 400_000),
    "output_tokens": st.integers(0, 100_000),
    "cache_read": st.integers(0, 300_000),
    "cache_write": st.integers(0, 100_000),
    "write_1h": st.integers(0, 100_000),
    "reasoning": st.integers(0, 100_000),
    "usage_missing": st.booleans(),
    "cache_hit": st.booleans(),
})


@hyp_settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(usage, min_size=1, max_size=40))
def test_sql_repricing_equals_the_ingest_pricer(db: Store, calls: list[dict]) -> None:
    db.command(f"TRUNCATE TABLE {DB}.llm_calls")
    rows = []
    for i, call in enumerate(calls):
        inp = call["input_tokens"]
        read = min(call["cache_read"], inp)
        write = min(call["cache_write"], inp - read)
        out = call["output_tokens"]
        rows.append(llm_call(
            start_time=at(TODAY - timedelta(days=1)), span_id=f"{i:016x}", model=call["model"],
            input_tokens=inp, output_tokens=out, cache_read_tokens=read, cache_write_tokens=write,
            cache_write_1h_tokens=min(call["write_1h"], write), reasoning_tokens=min(call["reasoning"], out),
            usage_missing=call["usage_missing"], cache_hit=call["cache_hit"]))
    insert(db, rows)  # stored with zero costs: the job must fill every column
    prices = table(TABLE_V1)
    recompute_costs(db, prices, "p1", TODAY - timedelta(days=1), TODAY, today=TODAY)
    pricer = make_pricer(prices)
    got = stored(db)
    for row in rows:
        assert got[row.span_id] == expected(priced(row, pricer)), row


def test_golden_row_priced_the_same_by_sql(db: Store) -> None:
    """One hand-computed Anthropic call: 250,000-token prompt (tier), 100k read, 20k written (5k of it 1-hour)."""
    row = llm_call(start_time=at(TODAY - timedelta(days=1)), model="claude-sonnet-4", provider="anthropic",
                   input_tokens=250_000, cache_read_tokens=100_000, cache_write_tokens=20_000,
                   cache_write_1h_tokens=5_000, output_tokens=1_000, reasoning_tokens=0)
    insert(db, [row])
    recompute_costs(db, table(TABLE_V1), "p1", TODAY - timedelta(days=1), TODAY, today=TODAY)
    # above 200k: uncached 130,000 × $6/M = 0.78; reads 100,000 × $0.6/M = 0.06; 5-minute writes 15,000 ×
    # $7.5/M = 0.1125; 1-hour writes 5,000 × $6/M (no tiered 1-hour rate: base) = 0.03; output 1,000 × $22.5/M
    # = 0.0225. Total 1.005. Savings: 100,000 × ($6 − $0.6)/M = 0.54.
    (values,) = stored(db).values()
    assert values == (1.005, 0.78, 0.06, 0.1425, 0.0225, 0.0, 0.54, False, 0.0, "t1")


def test_repricing_changes_exactly_the_calls_in_range_and_rebuilds_rollups(db: Store) -> None:
    v1, v2 = make_pricer(table(TABLE_V1)), make_pricer(table(v2_doc()))
    days = [TODAY - timedelta(days=n) for n in (3, 2, 1)]
    rows = [priced(llm_call(start_time=at(day, hour), model=model, input_tokens=1_000 + hour,
                            cache_read_tokens=200, output_tokens=300, feature=feature), v1)
            for day in days for hour in (1, 13) for model in ("gpt-4o", "o3", "mystery")
            for feature in ("search", "chat")]
    insert(db, rows)
    before = stored(db)

    # re-price the middle day only, twice (idempotent)
    middle = days[1]
    for _ in range(2):
        result = recompute_costs(db, table(v2_doc()), "p1", middle, middle + timedelta(days=1), today=TODAY)
    assert result.calls == 12 and result.unpriced_models == ["mystery"]
    assert result.rollups == tuple(name for name, _ in COST_ROLLUPS)

    after = stored(db)
    for row in rows:
        in_range = at(middle, 0) <= row.start_time < at(middle + timedelta(days=1), 0)
        want = expected(priced(row, v2)) if in_range else before[row.span_id]
        assert after[row.span_id] == want
        if in_range and row.model == "gpt-4o":
            assert after[row.span_id] != before[row.span_id]  # the price change reached it

    # every cost rollup agrees with the raw calls again, per day
    raw = dict(db.query(f"SELECT toDate(start_time) d, sum(cost_usd) FROM {DB}.llm_calls GROUP BY d").result_rows)
    for rollup, bucket in COST_ROLLUPS:
        if rollup == "ab_rollup_1h":
            continue  # these calls carry no experiment
        sums = dict(db.query(f"SELECT toDate({bucket}) d, sum(cost_usd) FROM {DB}.{rollup} GROUP BY d")
                    .result_rows)
        assert sums.keys() == raw.keys(), rollup
        for day, cost in raw.items():
            assert sums[day] == pytest.approx(cost, abs=1e-9), (rollup, day)
    calls = dict(db.query(f"SELECT toDate(hour) d, sum(calls) FROM {DB}.llm_calls_1h GROUP BY d").result_rows)
    assert calls == {day: 12 for day in days}  # rebuilt, not doubled
    versions = dict(db.query(f"SELECT day, groupUniqArray(price_version) FROM {DB}.cost_1d GROUP BY day")
                    .result_rows)
    assert versions == {days[0]: ["t1"], days[1]: ["t2"], days[2]: ["t1"]}
    unpriced = db.query(f"SELECT sum(unpriced) FROM {DB}.llm_calls_1h").result_rows[0][0]
    assert unpriced == 12  # the 'mystery' calls, still counted


@pytest.mark.parametrize("start, end, message", [
    (TODAY - timedelta(days=1), TODAY - timedelta(days=1), "must be before end"),
    (TODAY - timedelta(days=1), TODAY + timedelta(days=1), "only days that are over"),
    (TODAY - timedelta(days=200), TODAY, "retention"),
])
def test_ranges_it_must_not_touch_are_refused(db: Store, start: date, end: date, message: str) -> None:
    with pytest.raises(RecomputeError, match=message):
        recompute_costs(db, table(TABLE_V1), "p1", start, end, today=TODAY)


def test_other_projects_are_untouched(db: Store) -> None:
    v1 = make_pricer(table(TABLE_V1))
    day = TODAY - timedelta(days=1)
    rows = [priced(llm_call(project, start_time=at(day), model="gpt-4o", span_id=f"{n:016x}"), v1)
            for n, project in enumerate(("p1", "p2"))]
    insert(db, rows)
    recompute_costs(db, table(v2_doc()), "p1", day, TODAY, today=TODAY)
    got = stored(db)
    assert got[rows[0].span_id][-1] == "t2" and got[rows[1].span_id][-1] == "t1"


class ShardedNode:
    """One node of a sharded cluster as :func:`recompute_costs` sees it: the views and columns the sharded
    rendering of the migrations creates, a few calls to re-price, and every statement recorded instead of run
    (a cluster cannot run here); ``real`` (chDB) checks that each statement parses."""

    database = DB

    def __init__(self, real: Store) -> None:
        self.real = real
        self.commands: list[tuple[str, dict | None]] = []
        self.views: dict[str, str] = {}
        target = Target(mode="sharded", cluster="iw")
        for statement in (s for f in migration_files() for s in render(f.text, target)):
            view = re.match(r"CREATE MATERIALIZED VIEW IF NOT EXISTS inferwatch\.(\w+) ON CLUSTER iw TO \S+ AS\s+"
                            r"(SELECT.*)", statement, re.S)
            if view:
                self.views[view.group(1)] = view.group(2)  # a later migration's version replaces an earlier one

    def query(self, sql: str, parameters: dict | None = None, settings: dict | None = None) -> SimpleNamespace:
        if "system.tables" in sql:
            name = (parameters or {})["name"]
            return SimpleNamespace(result_rows=[(self.views[name],)] if name in self.views else [])
        if "system.columns" in sql:  # a Distributed table has the columns of its _local table
            return self.real.query(sql, parameters)
        assert "_local" not in sql, sql  # reads go through the Distributed tables
        return SimpleNamespace(result_rows=[("gpt-4o", 3), ("mystery", 1)])

    def command(self, sql: str, parameters: dict | None = None, settings: dict | None = None) -> None:
        self.commands.append((sql, settings))


def test_sharded_cluster_mutates_local_tables_on_cluster_and_rebuilds_through_distributed(db: Store) -> None:
    node = ShardedNode(db)
    result = recompute_costs(node, table(v2_doc()), "p1", TODAY - timedelta(days=1),  # type: ignore[arg-type]
                             TODAY, today=TODAY, target=Target(mode="sharded", cluster="iw"))
    assert result.calls == 4 and result.rollups == tuple(name for name, _ in COST_ROLLUPS)
    statements = [sql for sql, _ in node.commands]
    assert statements[0].startswith("ALTER TABLE inferwatch.llm_calls_local ON CLUSTER iw UPDATE")
    for rollup, _ in COST_ROLLUPS:
        delete = next(s for s in statements if s.startswith(f"DELETE FROM inferwatch.{rollup}_local "))
        assert delete.startswith(f"DELETE FROM inferwatch.{rollup}_local ON CLUSTER iw WHERE project_id = ")
        insert_sql, settings = next((sql, st) for sql, st in node.commands
                                    if sql.startswith(f"INSERT INTO inferwatch.{rollup} ("))
        assert "_local" not in insert_sql and "FROM (SELECT * FROM inferwatch.llm_calls WHERE" in insert_sql
        assert settings == {"insert_distributed_sync": 1}
    assert len(statements) == 1 + 2 * len(COST_ROLLUPS)
    for sql in statements:
        formatted = db.query("SELECT formatQuery({q:String})", parameters={"q": sql}).result_rows[0][0]
        assert formatted.split()[0] in ("ALTER", "DELETE", "INSERT"), sql
