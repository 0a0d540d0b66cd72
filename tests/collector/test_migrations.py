"""Migrations: the single rendering runs in chDB, the cluster renderings parse, the runner is safe to rerun.

Cluster renderings cannot run here (no Keeper), so they are checked with ``SELECT formatQuery(...)``.
"""

from __future__ import annotations

import dataclasses
import re
import time
from types import SimpleNamespace
from typing import Any

import pytest

from inferwatch_collector.migrations import (
    MigrationError,
    MigrationFile,
    Target,
    meta_statements,
    migrate,
    migration_files,
    render,
    status,
    target_for,
)
from inferwatch_collector.rows import COLUMN_TYPES, LLM_CALL_COLUMNS, TABLE_COLUMNS, LlmCallRow
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

DB = "inferwatch"
CLUSTER = "iw_cluster"
ROLLUPS = ("llm_calls_1m", "llm_calls_1h", "usage_1h", "ab_rollup_1h", "cost_1d", "llm_calls_1d")
EXPECTED_ENGINES = {
    "llm_calls": "MergeTree", "spans": "MergeTree", "prompt_logs": "MergeTree", "alert_events": "MergeTree",
    "feedback": "ReplacingMergeTree", "ab_results": "ReplacingMergeTree", "cost_reports": "ReplacingMergeTree",
    "alert_state": "ReplacingMergeTree", "projects": "ReplacingMergeTree", "api_keys": "ReplacingMergeTree",
    "budgets": "ReplacingMergeTree", "schema_migrations": "ReplacingMergeTree", "job_runs": "ReplacingMergeTree",
    "notifications": "MergeTree", "alert_silences": "ReplacingMergeTree", "experiments": "ReplacingMergeTree",
    "ab_verdicts": "ReplacingMergeTree", "scheduler_lease": "ReplacingMergeTree", "llm_calls_held": "MergeTree",
    "deployment_secrets": "MergeTree",
    **{name: "AggregatingMergeTree" for name in ROLLUPS},
    **{f"{name}_mv": "MaterializedView" for name in ROLLUPS},
}
# Columns the database fills itself, after the rows.py insert columns.
EXTRA_COLUMNS = {
    "llm_calls": [("first_token_time", "ALIAS"), ("ingested_at", "DEFAULT")],
    "spans": [("ingested_at", "DEFAULT")],
    "prompt_logs": [],
    "llm_calls_held": [],
}


def all_statements(target: Target) -> list[str]:
    return meta_statements(target) + [s for f in migration_files() for s in render(f.text, target)]


# ------------------------------------------------------------------------------------------ single, in chDB


def test_single_rendering_creates_every_table(store: Store) -> None:
    rows = store.query("SELECT name, engine FROM system.tables WHERE database = {d:String}",
                       parameters={"d": DB}).result_rows
    assert {name: engine for name, engine in rows} == EXPECTED_ENGINES


@pytest.mark.parametrize("table", sorted(TABLE_COLUMNS))
def test_insert_tables_declare_rows_fields_in_order(store: Store, table: str) -> None:
    described = store.query(f"DESCRIBE TABLE {DB}.{table}").result_rows
    stored = [row[0] for row in described if row[2] == ""]
    extra = [(row[0], row[2]) for row in described if row[2] != ""]
    assert stored == list(TABLE_COLUMNS[table])
    assert extra == EXTRA_COLUMNS[table]
    types = {row[0]: row[1] for row in described if row[2] == ""}
    assert types == COLUMN_TYPES[table]  # the writer encodes Native blocks with these types


def test_llm_calls_column_types(store: Store) -> None:
    types = dict((r[0], r[1]) for r in store.query(f"DESCRIBE TABLE {DB}.llm_calls").result_rows)
    assert types["attributes"] == "Map(LowCardinality(String), String)"
    assert types["input_tokens"] == "UInt32" and types["tool_calls"] == "UInt16"
    assert types["decode_tps"] == "Float32" and types["cost_usd"] == "Float64" and types["truncated"] == "Bool"
    assert types["trace_id"] == "String" and types["price_version"] == "LowCardinality(String)"
    create = store.query(f"SHOW CREATE TABLE {DB}.llm_calls").result_rows[0][0]
    assert "TTL toDateTime(start_time) + toIntervalDay(90)" in create
    assert "ttl_only_drop_parts = 1" in create and "non_replicated_deduplication_window = 1000" in create


def test_second_run_applies_nothing(store: Store) -> None:
    assert migrate(store, target_for(store.settings, store)) == []
    states = status(store)
    expected = [(f.name, "applied", "single") for f in migration_files()]
    assert [(s.name, s.status, s.mode) for s in states] == expected
    assert states[0].checksum == migration_files()[0].checksum and states[0].applied_at is not None


def test_fresh_database_status_is_pending(settings: Settings) -> None:
    fresh = Store.open(settings)
    try:
        assert {s.status for s in status(fresh)} == {"pending"}
        messages: list[str] = []
        shipped = [f.name for f in migration_files()]
        assert shipped[:2] == ["0001_init.sql", "0002_cost.sql"]
        assert migrate(fresh, target_for(settings, fresh), progress=messages.append) == shipped
        assert messages[0].startswith("0001_init.sql: applying") and "applied" in messages[-1]
    finally:
        fresh.close()


def test_edited_applied_file_is_refused(store: Store) -> None:
    edited = [dataclasses.replace(f, text=f.text + "\n-- sneaky edit\n") for f in migration_files()]
    with pytest.raises(MigrationError, match=r"0001_init\.sql: applied migration was edited"):
        migrate(store, target_for(store.settings, store), files=edited)
    assert status(store, edited)[0].status == "changed"


def test_failed_migration_is_recorded_then_dirty(store: Store) -> None:
    target = target_for(store.settings, store)
    create = ("CREATE TABLE IF NOT EXISTS {{t:scratch}} {{on_cluster}} (x UInt8) ENGINE = {{engine:MergeTree}} "
              "ORDER BY x;\n")
    bad = MigrationFile.from_text("0090_scratch.sql", create + "ALTER TABLE {{t:scratch}} {{on_cluster}} "
                                  "ADD COLUMN IF NOT EXISTS y NoSuchType {{ddl_settings}};\n")
    files = [*migration_files(), bad]

    with pytest.raises(MigrationError, match=r"0090_scratch\.sql: statement 2 of 2 .*NoSuchType") as failure:
        migrate(store, target, files=files)
    recorded = status(store, files)[-1]
    assert (recorded.name, recorded.status) == ("0090_scratch.sql", "failed")
    assert "statement 2 of 2" in recorded.error and "NoSuchType" in recorded.error
    assert "NoSuchType" in str(failure.value)

    with pytest.raises(MigrationError, match=r"0090_scratch\.sql: dirty \(left failed"):
        migrate(store, target, files=files)

    fixed = MigrationFile.from_text("0090_scratch.sql", create + "ALTER TABLE {{t:scratch}} {{on_cluster}} "
                                    "ADD COLUMN IF NOT EXISTS y UInt16 {{ddl_settings}};\n")
    assert migrate(store, target, files=[*migration_files(), fixed], force=True) == ["0090_scratch.sql"]
    assert status(store, [*migration_files(), fixed])[-1].status == "applied"

    # The database now holds a migration the shipped package lacks: an older inferwatch must not touch it.
    with pytest.raises(MigrationError, match=r"0090_scratch\.sql: recorded .* not shipped"):
        migrate(store, target)
    assert status(store)[-1].status == "unknown"


def test_new_migration_below_applied_version_is_refused(store: Store) -> None:
    target = target_for(store.settings, store)
    later = MigrationFile.from_text("0095_later.sql", "SELECT 1;\n")
    assert migrate(store, target, files=[*migration_files(), later]) == ["0095_later.sql"]
    between = MigrationFile.from_text("0093_between.sql", "SELECT 1;\n")
    with pytest.raises(MigrationError, match=r"0093_between\.sql: added below already-applied version 0095"):
        migrate(store, target, files=[*migration_files(), between, later])


# ------------------------------------------------------------------------------------------ cluster renderings


@pytest.mark.parametrize("mode", ["replicated", "sharded"])
def test_cluster_renderings_parse(store: Store, mode: str) -> None:
    target = Target(mode=mode, cluster=CLUSTER)  # type: ignore[arg-type]
    statements = all_statements(target)
    for statement in statements:
        formatted = store.query("SELECT formatQuery({q:String})", parameters={"q": statement}).result_rows[0][0]
        assert formatted.startswith(("CREATE", "ALTER", "DROP", "INSERT")), statement


def test_single_rendering_has_no_cluster_ddl() -> None:
    statements = all_statements(Target())
    assert statements
    for statement in statements:
        assert not re.search(r"ON CLUSTER|Replicated|Distributed|_local\b", statement), statement
    assert all("non_replicated_deduplication_window = 1000" in s
               for s in statements if "ENGINE = MergeTree" in s or "ENGINE = AggregatingMergeTree" in s)


@pytest.mark.parametrize("mode", ["replicated", "sharded"])
def test_cluster_renderings_are_clustered(mode: str) -> None:
    statements = all_statements(Target(mode=mode, cluster=CLUSTER))  # type: ignore[arg-type]
    for statement in statements:
        if statement.startswith("INSERT"):
            # A backfill runs once, from one node, through the whole tables (Distributed when sharded).
            assert "_local" not in statement and "ON CLUSTER" not in statement, statement
            continue
        assert re.match(r"(CREATE|ALTER|DROP)\b", statement)
        assert f"ON CLUSTER {CLUSTER}" in statement, statement
        assert "non_replicated_deduplication_window" not in statement
        engine = re.search(r"ENGINE = (\w+)", statement)
        if engine and engine.group(1) != "Distributed":
            assert engine.group(1).startswith("Replicated"), statement
    created = [m.group(1) for s in statements for m in [re.match(r"CREATE (?:TABLE|MATERIALIZED VIEW) "
                                                                  r"IF NOT EXISTS inferwatch\.(\w+)", s)] if m]
    distributed = {re.search(r"inferwatch\.(\w+) ON CLUSTER", s).group(1)  # type: ignore[union-attr]
                   for s in statements if "ENGINE = Distributed" in s}
    if mode == "replicated":
        assert not distributed and not any(name.endswith("_local") for name in created)
    else:
        local_tables = {name.removesuffix("_local") for name in created
                        if name.endswith("_local") and not name.endswith("_mv_local")}
        # Every per-shard table is reachable through a Distributed table of the plain name.
        assert distributed == local_tables
        assert {"llm_calls", "spans", "prompt_logs", "feedback", "projects", "api_keys", "budgets",
                "alert_state", "ab_results", "cost_reports", *ROLLUPS} <= distributed
        distributed_calls = "Distributed(iw_cluster, inferwatch, llm_calls_local, cityHash64(trace_id))"
        assert distributed_calls in "\n".join(statements)
        mv = next(s for s in statements if "llm_calls_1h_mv_local" in s)
        assert "TO inferwatch.llm_calls_1h_local" in mv and "FROM inferwatch.llm_calls_local AS src" in mv


def test_render_placeholders() -> None:
    explicit = Target(mode="replicated", cluster=CLUSTER,
                      replica_path="/clickhouse/tables/{shard}/{database}/{table}")
    source = ("ALTER TABLE {{t:x}} {{on_cluster}} MODIFY TTL d + INTERVAL {{retention_days}} DAY "
              "{{ddl_settings}};\n"
              "-- a comment; with a semicolon;\n"
              "CREATE TABLE IF NOT EXISTS {{t:y}} {{on_cluster}} (v UInt8, k UInt8) "
              "ENGINE = {{engine:ReplacingMergeTree(v)}} ORDER BY k {{settings: index_granularity = 1024}};\n")
    assert render(source, explicit) == [
        "ALTER TABLE inferwatch.x ON CLUSTER iw_cluster MODIFY TTL d + INTERVAL 90 DAY SETTINGS alter_sync = 2",
        "CREATE TABLE IF NOT EXISTS inferwatch.y ON CLUSTER iw_cluster (v UInt8, k UInt8) ENGINE = "
        "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', v) "
        "ORDER BY k SETTINGS index_granularity = 1024",
    ]
    assert render(source, Target(database="obs", params={"retention_days": 7}))[1].endswith(
        "ENGINE = ReplacingMergeTree(v) ORDER BY k "
        "SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 1000")
    backfill = "INSERT INTO {{all:y}} SELECT * FROM {{all:x}};\n"
    assert render(backfill, Target(mode="sharded", cluster=CLUSTER)) == [
        "INSERT INTO inferwatch.y SELECT * FROM inferwatch.x"]
    assert render(backfill, Target(database="obs")) == ["INSERT INTO obs.y SELECT * FROM obs.x"]


@pytest.mark.parametrize("source, message", [
    ("CREATE TABLE {{t:bad-name}} (x UInt8);\n", "table name"),
    ("INSERT INTO {{all:x;y}} SELECT 1;\n", "table name"),
    ("SELECT {{nope}};\n", "unknown placeholder"),
    ("CREATE TABLE x ENGINE = {{engine:Log}};\n", "MergeTree"),
    ("{{distributed:x}};\n", "sharding key"),
])
def test_render_rejects_bad_sources(source: str, message: str) -> None:
    with pytest.raises(MigrationError, match=message):
        render(source, Target(mode="sharded", cluster=CLUSTER))


@pytest.mark.parametrize("kwargs", [
    {"database": "x; DROP TABLE y"},
    {"mode": "replicated"},
    {"mode": "sharded", "cluster": "a b"},
    {"mode": "bogus"},
    {"replica_path": "/x', 'y"},
    {"params": {"retention_days": "90"}},
])
def test_target_validates_identifiers(kwargs: dict[str, Any]) -> None:
    with pytest.raises(MigrationError):
        Target(**kwargs)


def test_migration_file_names_are_checked() -> None:
    assert migration_files()[0].name == "0001_init.sql"
    with pytest.raises(MigrationError, match="NNNN"):
        MigrationFile.from_text("1_init.sql", "")


class FakeClusters:
    def __init__(self, shards: int) -> None:
        self.shards = shards
        self.seen: list[dict[str, Any] | None] = []

    def query(self, sql: str, /, parameters: dict[str, Any] | None = None) -> Any:
        self.seen.append(parameters)
        return SimpleNamespace(result_rows=[(self.shards,)])


def test_target_for() -> None:
    embedded = Settings(data_dir="/nonexistent", clickhouse_url="", cluster="c1", retention_days=30,
                        prompt_retention_days=7)
    target = target_for(embedded, FakeClusters(3))
    assert (target.mode, target.cluster) == ("single", "")
    assert target.params["retention_days"] == 30 and target.params["prompt_retention_days"] == 7

    server = dict(clickhouse_url="http://ch:8123", data_dir="/nonexistent")
    assert target_for(Settings(**server, cluster=""), FakeClusters(3)).mode == "single"
    fake = FakeClusters(1)
    assert target_for(Settings(**server, cluster="c1"), fake).mode == "replicated"
    assert fake.seen == [{"c": "c1"}]
    assert target_for(Settings(**server, cluster="c1"), FakeClusters(4)) == Target(
        mode="sharded", cluster="c1", params={**target.params, "retention_days": 90, "prompt_retention_days": 14})
    with pytest.raises(MigrationError, match=r"not in system\.clusters"):
        target_for(Settings(**server, cluster="c1"), FakeClusters(0))
    with pytest.raises(MigrationError, match="needs INFERWATCH_CLUSTER"):
        target_for(Settings(**server, migration_mode="sharded"), FakeClusters(2))
    with pytest.raises(MigrationError, match="embedded chDB"):
        target_for(Settings(data_dir="/nonexistent", migration_mode="replicated", cluster="c1"), FakeClusters(1))


# ------------------------------------------------------------------------------------------ rollups


def make_calls(base_us: int) -> list[LlmCallRow]:
    rows = []
    for i in range(120):
        start = base_us + (i % 3) * 3_600_000_000 + i * 7_000_000  # three hours, several minutes
        latency = 200 + 37 * i
        ttft = 0 if i % 5 == 0 else 50 + 3 * i
        rows.append(LlmCallRow(
            project_id="p1" if i % 4 else "p2", start_time=start, end_time=start + latency * 1000,
            trace_id=f"{i:032x}", span_id=f"{i:016x}", parent_span_id="", response_id=f"resp-{i}",
            service_name="api", span_name="chat gpt", model=("gpt-4o", "claude-x")[i % 2],
            request_model="gpt-4o", response_model="gpt-4o-2024", provider=("openai", "anthropic")[i % 2],
            operation="chat", input_tokens=100 + i, output_tokens=20 + i, cache_read_tokens=i % 7,
            cache_write_tokens=i % 3, reasoning_tokens=i % 11, ttft_ms=ttft, latency_ms=latency,
            decode_tps=12.5, finish_reason="stop", status="error" if i % 9 == 0 else "ok",
            error_type="timeout" if i % 9 == 0 else "", streamed=ttft > 0, usage_missing=i % 13 == 0,
            refusal=i % 17 == 0, empty_response=i % 19 == 0, truncated=i % 6 == 0, tool_calls=i % 4,
            tool_call_failures=i % 8 == 0, response_chars=10 * i, feature=("search", "chat")[i % 3 == 0],
            prompt_template=f"tpl{i % 3}", prompt_version="v1", experiment="exp1" if i % 2 else "",
            variant=("a", "b")[i % 4 == 1], user_hash=f"u{i % 10}", cost_usd=0.001 * (i + 1),
            price_version="2026-12", attributes={"route": f"/r{i % 3}"},
        ))
    return rows


SUMS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
        "tool_calls", "tool_call_failures")
FLAGS = {"refusals": "refusal", "empty_responses": "empty_response", "truncated": "truncated",
         "usage_missing": "usage_missing", "streamed": "streamed"}


def test_rollups_land_once_and_match_raw_rows(store: Store) -> None:
    # From an hour before today's midnight (UTC): the batch spans two day partitions, so the token must
    # deduplicate a multi-part insert too.
    base = (int(time.time()) // 86400 * 86400 - 3600) * 1_000_000
    rows = make_calls(base)
    columns = list(zip(*rows, strict=True))
    for _ in range(3):  # a retried flush carries the same token and must land once, rollups included
        store.insert_columns("llm_calls", columns, LLM_CALL_COLUMNS, settings={"insert_deduplication_token": "b1"})

    def one(sql: str) -> Any:
        return store.query(sql).result_rows[0][0]

    n, n_exp = len(rows), sum(1 for r in rows if r.experiment)
    assert one(f"SELECT count() FROM {DB}.llm_calls") == n
    assert one(f"SELECT uniqExact(_partition_id) FROM {DB}.llm_calls") == 2
    for rollup in ("llm_calls_1m", "llm_calls_1h", "usage_1h", "llm_calls_1d"):
        assert one(f"SELECT sum(calls) FROM {DB}.{rollup}") == n, rollup
    assert one(f"SELECT sum(calls) FROM {DB}.ab_rollup_1h") == n_exp
    assert one(f"SELECT uniqCombinedMerge(12)(users) FROM {DB}.ab_rollup_1h") == 5

    # Microsecond ticks round-trip, and the alias adds ttft.
    first = rows[1]
    start, first_token = store.query(f"SELECT toUnixTimestamp64Micro(start_time), "
                                     f"toUnixTimestamp64Micro(first_token_time) FROM {DB}.llm_calls "
                                     f"WHERE span_id = '{first.span_id}'").result_rows[0]
    assert (start, first_token) == (first.start_time, first.start_time + first.ttft_ms * 1000)

    raw_sums = ", ".join([f"sum({c})" for c in SUMS] + [f"countIf({c})" for c in FLAGS.values()])
    roll_sums = ", ".join([f"sum({c})" for c in SUMS] + [f"sum({c})" for c in FLAGS])
    for rollup, bucket in (("llm_calls_1m", "toStartOfMinute"), ("llm_calls_1h", "toStartOfHour")):
        time_col = "minute" if rollup.endswith("1m") else "hour"
        raw = store.query(f"SELECT project_id, {bucket}(start_time) AS b, model, count(), "
                          f"countIf(status = 'error'), round(sum(cost_usd), 9), {raw_sums} FROM {DB}.llm_calls "
                          f"GROUP BY project_id, b, model ORDER BY project_id, b, model").result_rows
        rolled = store.query(f"SELECT project_id, {time_col} AS b, model, sum(calls), sum(errors), "
                             f"round(sum(cost_usd), 9), {roll_sums} FROM {DB}.{rollup} "
                             f"GROUP BY project_id, b, model ORDER BY project_id, b, model").result_rows
        assert rolled == raw, rollup
    daily_raw = store.query(f"SELECT project_id, toDate(start_time) AS d, model, feature, prompt_template, count(), "
                            f"countIf(status = 'error'), round(sum(cost_usd), 9), {raw_sums} FROM {DB}.llm_calls "
                            f"GROUP BY ALL ORDER BY ALL").result_rows
    daily = store.query(f"SELECT project_id, day AS d, model, feature, prompt_template, sum(calls), sum(errors), "
                        f"round(sum(cost_usd), 9), {roll_sums} FROM {DB}.llm_calls_1d GROUP BY ALL ORDER BY ALL"
                        ).result_rows
    assert daily == daily_raw and len({row[1] for row in daily}) == 2  # the batch spans two days

    usage_raw = store.query(f"SELECT feature, prompt_template, count(), sum(latency_ms), sum(cache_write_tokens) "
                            f"FROM {DB}.llm_calls GROUP BY ALL ORDER BY ALL").result_rows
    usage = store.query(f"SELECT feature, prompt_template, sum(calls), sum(latency_sum_ms), "
                        f"sum(cache_write_tokens) FROM {DB}.usage_1h GROUP BY ALL ORDER BY ALL").result_rows
    assert usage == usage_raw

    ab_raw = store.query(f"SELECT variant, count(), sum(latency_ms), sum(toFloat64(latency_ms) * latency_ms) "
                         f"FROM {DB}.llm_calls WHERE experiment = 'exp1' GROUP BY variant ORDER BY variant"
                         ).result_rows
    ab = store.query(f"SELECT variant, sum(calls), sum(latency_sum_ms), sum(latency_sq_sum) "
                     f"FROM {DB}.ab_rollup_1h WHERE experiment = 'exp1' GROUP BY variant ORDER BY variant"
                     ).result_rows
    assert ab == ab_raw

    # Percentiles from merged t-digest states match the raw rows (t-digest is approximate: within 5%);
    # ttft ignores the 0 = "not streamed" rows.
    exact = store.query(f"SELECT quantilesExact(0.5, 0.95)(latency_ms), quantilesExactIf(0, 0.5, 0.95)(ttft_ms, "
                        f"ttft_ms > 0) FROM {DB}.llm_calls").result_rows[0]
    for rollup in ("llm_calls_1m", "llm_calls_1h", "llm_calls_1d"):
        merged = store.query(f"SELECT quantilesTDigestMerge(0.5, 0.95)(latency_ms), "
                             f"quantilesTDigestMerge(0, 0.5, 0.95)(ttft_ms) FROM {DB}.{rollup}").result_rows[0]
        for got, want in zip([*merged[0], *merged[1]], [*exact[0], *exact[1]], strict=True):
            assert abs(got - want) <= 0.05 * want, (rollup, merged, exact)
    ab_exact = store.query(f"SELECT quantileExact(0.95)(latency_ms) FROM {DB}.llm_calls "
                           f"WHERE experiment != ''").result_rows[0][0]
    ab_p95 = one(f"SELECT quantileTDigestMerge(0.95)(latency_ms) FROM {DB}.ab_rollup_1h")
    assert abs(ab_p95 - ab_exact) <= 0.05 * ab_exact


def test_alter_placeholder_alters_the_distributed_table_too() -> None:
    source = "{{alter:x}} ADD COLUMN IF NOT EXISTS y UInt8 {{ddl_settings}};\n"
    assert render(source, Target()) == ["ALTER TABLE inferwatch.x  ADD COLUMN IF NOT EXISTS y UInt8"]
    assert render(source, Target(mode="sharded", cluster=CLUSTER)) == [
        "ALTER TABLE inferwatch.x_local ON CLUSTER iw_cluster ADD COLUMN IF NOT EXISTS y UInt8 "
        "SETTINGS alter_sync = 2",
        "ALTER TABLE inferwatch.x ON CLUSTER iw_cluster ADD COLUMN IF NOT EXISTS y UInt8 SETTINGS alter_sync = 2",
    ]
    with pytest.raises(MigrationError, match="at the start of its statement"):
        render("SELECT 1 {{alter:x}};\n", Target())


def test_cost_migration_upgrades_a_0001_database_with_rows(settings: Settings) -> None:
    """A database created by 0001 with calls in it gains the cost columns (zero for old rows) and cost_1d."""
    fresh = Store.open(settings)
    try:
        target = target_for(settings, fresh)
        first, second = migration_files()[:2]
        assert migrate(fresh, target, files=[first]) == ["0001_init.sql"]
        fresh.command(f"INSERT INTO {DB}.llm_calls (project_id, start_time, model, cost_usd) "
                      "VALUES ('p1', now64(6), 'gpt-4o', 1.25)")
        assert migrate(fresh, target, files=[first, second]) == ["0002_cost.sql"]
        old = fresh.query(f"SELECT cost_usd, cost_input_usd, unpriced, cache_hit FROM {DB}.llm_calls").result_rows
        assert old == [(1.25, 0.0, False, False)]
        fresh.command(f"INSERT INTO {DB}.llm_calls (project_id, start_time, model, cost_usd, cost_output_usd, "
                      "unpriced) VALUES ('p1', now64(6), 'mystery', 0, 0, true)")
        rolled = fresh.query(f"SELECT sum(calls), sum(unpriced), sum(cost_output_usd) FROM {DB}.cost_1d").result_rows
        assert rolled == [(1, 1, 0.0)]  # the MV sees rows inserted after it was created
        hourly = fresh.query(f"SELECT sum(calls), sum(unpriced) FROM {DB}.llm_calls_1h").result_rows
        assert hourly == [(2, 1)]
    finally:
        fresh.close()


def test_daily_rollup_migration_backfills_existing_calls_once(settings: Settings) -> None:
    """0009 adds llm_calls_1d to a database that already holds calls: the backfill rolls them up, the view takes
    the new ones, and re-running the backfill statement (a retried migration) adds nothing."""
    fresh = Store.open(settings)
    try:
        target = target_for(settings, fresh)
        files = migration_files()
        daily = next(f for f in files if f.name == "0009_daily_rollup.sql")
        before = [f for f in files if f.version < daily.version]
        migrate(fresh, target, files=before)
        rows = make_calls((int(time.time()) // 86400 * 86400 - 3600) * 1_000_000)
        fresh.insert_columns("llm_calls", list(zip(*rows, strict=True)), LLM_CALL_COLUMNS)
        assert migrate(fresh, target, files=[*before, daily]) == ["0009_daily_rollup.sql"]
        totals = f"SELECT sum(calls), sum(refusals), round(sum(cost_usd), 9) FROM {DB}.llm_calls_1d"
        want = (len(rows), sum(r.refusal for r in rows), round(sum(r.cost_usd for r in rows), 9))
        assert fresh.query(totals).result_rows == [want]
        backfill = next(s for s in render(daily.text, target) if s.startswith("INSERT"))
        fresh.command(backfill)
        assert fresh.query(totals).result_rows == [want]
        fresh.insert_columns("llm_calls", list(zip(*rows[:10], strict=True)), LLM_CALL_COLUMNS)
        assert fresh.query(f"SELECT sum(calls) FROM {DB}.llm_calls_1d").result_rows == [(len(rows) + 10,)]
    finally:
        fresh.close()
