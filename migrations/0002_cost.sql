-- 0002_cost: what pricing at ingest needs (issue 4). Placeholders as in 0001_init.sql, plus
--   {{alter:name}}                 ALTER TABLE of the table, and on sharded targets of its Distributed table too
--
-- llm_calls gets the per-component costs, the provider prompt-caching savings, the unpriced flag, the 1-hour share
-- of cache writes, and application-side cache hits with the cost they avoided. New columns go after
-- `attributes`, in rows.py order (rows.py appends them in the same order).
-- The 1m/1h rollups count unpriced calls (the dashboard shows them beside usage_missing); cost_1d is the daily
-- cost rollup that reports, budgets and what-if repricing read.
-- The two rollup MVs are dropped and recreated with the new columns: on a running cluster, calls inserted
-- between the DROP and the CREATE are not rolled up, so run this migration before the collectors start (the
-- collector runs pending migrations at start-up; `inferwatch-server migrate` first on a cluster).

{{alter:llm_calls}}
    ADD COLUMN IF NOT EXISTS cache_write_1h_tokens UInt32 CODEC(T64, ZSTD(1)) AFTER attributes,
    ADD COLUMN IF NOT EXISTS cost_input_usd Float64 CODEC(ZSTD(1)) AFTER cache_write_1h_tokens,
    ADD COLUMN IF NOT EXISTS cost_cache_read_usd Float64 CODEC(ZSTD(1)) AFTER cost_input_usd,
    ADD COLUMN IF NOT EXISTS cost_cache_write_usd Float64 CODEC(ZSTD(1)) AFTER cost_cache_read_usd,
    ADD COLUMN IF NOT EXISTS cost_output_usd Float64 CODEC(ZSTD(1)) AFTER cost_cache_write_usd,
    ADD COLUMN IF NOT EXISTS cost_reasoning_usd Float64 CODEC(ZSTD(1)) AFTER cost_output_usd,
    ADD COLUMN IF NOT EXISTS cache_savings_usd Float64 CODEC(ZSTD(1)) AFTER cost_reasoning_usd,
    ADD COLUMN IF NOT EXISTS unpriced Bool AFTER cache_savings_usd,
    ADD COLUMN IF NOT EXISTS cache_hit Bool AFTER unpriced,
    ADD COLUMN IF NOT EXISTS cost_avoided_usd Float64 CODEC(ZSTD(1)) AFTER cache_hit
    {{ddl_settings}};

{{alter:llm_calls_1m}}
    ADD COLUMN IF NOT EXISTS unpriced SimpleAggregateFunction(sum, UInt64) AFTER usage_missing
    {{ddl_settings}};

{{alter:llm_calls_1h}}
    ADD COLUMN IF NOT EXISTS unpriced SimpleAggregateFunction(sum, UInt64) AFTER usage_missing
    {{ddl_settings}};

DROP VIEW IF EXISTS {{t:llm_calls_1m_mv}} {{on_cluster}} SYNC;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{t:llm_calls_1m_mv}} {{on_cluster}} TO {{t:llm_calls_1m}} AS
SELECT
    src.project_id                                         AS project_id,
    toStartOfMinute(src.start_time)                        AS minute,
    src.model                                              AS model,
    src.provider                                           AS provider,
    src.operation                                          AS operation,
    count()                                                AS calls,
    countIf(src.status = 'error')                          AS errors,
    sum(toUInt64(src.input_tokens))                        AS input_tokens,
    sum(toUInt64(src.output_tokens))                       AS output_tokens,
    sum(toUInt64(src.cache_read_tokens))                   AS cache_read_tokens,
    sum(toUInt64(src.cache_write_tokens))                  AS cache_write_tokens,
    sum(toUInt64(src.reasoning_tokens))                    AS reasoning_tokens,
    sum(src.cost_usd)                                      AS cost_usd,
    sum(toUInt64(src.tool_calls))                          AS tool_calls,
    sum(toUInt64(src.tool_call_failures))                  AS tool_call_failures,
    countIf(src.refusal)                                   AS refusals,
    countIf(src.empty_response)                            AS empty_responses,
    countIf(src.truncated)                                 AS truncated,
    countIf(src.usage_missing)                             AS usage_missing,
    countIf(src.unpriced)                                  AS unpriced,
    countIf(src.streamed)                                  AS streamed,
    quantileTDigestStateIf(src.ttft_ms, src.ttft_ms > 0)   AS ttft_ms,
    quantileTDigestState(src.latency_ms)                   AS latency_ms
FROM {{t:llm_calls}} AS src
GROUP BY project_id, minute, model, provider, operation;

DROP VIEW IF EXISTS {{t:llm_calls_1h_mv}} {{on_cluster}} SYNC;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{t:llm_calls_1h_mv}} {{on_cluster}} TO {{t:llm_calls_1h}} AS
SELECT
    src.project_id                                         AS project_id,
    toStartOfHour(src.start_time)                          AS hour,
    src.model                                              AS model,
    src.provider                                           AS provider,
    src.operation                                          AS operation,
    count()                                                AS calls,
    countIf(src.status = 'error')                          AS errors,
    sum(toUInt64(src.input_tokens))                        AS input_tokens,
    sum(toUInt64(src.output_tokens))                       AS output_tokens,
    sum(toUInt64(src.cache_read_tokens))                   AS cache_read_tokens,
    sum(toUInt64(src.cache_write_tokens))                  AS cache_write_tokens,
    sum(toUInt64(src.reasoning_tokens))                    AS reasoning_tokens,
    sum(src.cost_usd)                                      AS cost_usd,
    sum(toUInt64(src.tool_calls))                          AS tool_calls,
    sum(toUInt64(src.tool_call_failures))                  AS tool_call_failures,
    countIf(src.refusal)                                   AS refusals,
    countIf(src.empty_response)                            AS empty_responses,
    countIf(src.truncated)                                 AS truncated,
    countIf(src.usage_missing)                             AS usage_missing,
    countIf(src.unpriced)                                  AS unpriced,
    countIf(src.streamed)                                  AS streamed,
    quantileTDigestStateIf(src.ttft_ms, src.ttft_ms > 0)   AS ttft_ms,
    quantileTDigestState(src.latency_ms)                   AS latency_ms
FROM {{t:llm_calls}} AS src
GROUP BY project_id, hour, model, provider, operation;

-- Daily cost by every report dimension (sums only). Reports, budgets and what-if repricing read this table;
-- price_version is part of the key so a report can say which price tables its figures come from.
CREATE TABLE IF NOT EXISTS {{t:cost_1d}} {{on_cluster}}
(
    project_id            LowCardinality(String),
    day                   Date,
    provider              LowCardinality(String),
    model                 LowCardinality(String),
    feature               LowCardinality(String),
    prompt_template       LowCardinality(String),
    user_hash             String,
    price_version         LowCardinality(String),
    calls                 SimpleAggregateFunction(sum, UInt64),
    errors                SimpleAggregateFunction(sum, UInt64),
    input_tokens          SimpleAggregateFunction(sum, UInt64),
    output_tokens         SimpleAggregateFunction(sum, UInt64),
    cache_read_tokens     SimpleAggregateFunction(sum, UInt64),
    cache_write_tokens    SimpleAggregateFunction(sum, UInt64),
    cache_write_1h_tokens SimpleAggregateFunction(sum, UInt64),
    reasoning_tokens      SimpleAggregateFunction(sum, UInt64),
    cost_usd              SimpleAggregateFunction(sum, Float64),
    cost_input_usd        SimpleAggregateFunction(sum, Float64),
    cost_cache_read_usd   SimpleAggregateFunction(sum, Float64),
    cost_cache_write_usd  SimpleAggregateFunction(sum, Float64),
    cost_output_usd       SimpleAggregateFunction(sum, Float64),
    cost_reasoning_usd    SimpleAggregateFunction(sum, Float64),
    cache_savings_usd     SimpleAggregateFunction(sum, Float64),
    unpriced              SimpleAggregateFunction(sum, UInt64),
    usage_missing         SimpleAggregateFunction(sum, UInt64),
    cache_hits            SimpleAggregateFunction(sum, UInt64),
    cost_avoided_usd      SimpleAggregateFunction(sum, Float64)
)
ENGINE = {{engine:AggregatingMergeTree}}
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, provider, model, feature, prompt_template, user_hash, price_version)
TTL day + INTERVAL {{rollup_1h_retention_days}} DAY
{{settings}};

{{distributed:cost_1d,rand()}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{t:cost_1d_mv}} {{on_cluster}} TO {{t:cost_1d}} AS
SELECT
    src.project_id                           AS project_id,
    toDate(src.start_time)                   AS day,
    src.provider                             AS provider,
    src.model                                AS model,
    src.feature                              AS feature,
    src.prompt_template                      AS prompt_template,
    src.user_hash                            AS user_hash,
    src.price_version                        AS price_version,
    count()                                  AS calls,
    countIf(src.status = 'error')            AS errors,
    sum(toUInt64(src.input_tokens))          AS input_tokens,
    sum(toUInt64(src.output_tokens))         AS output_tokens,
    sum(toUInt64(src.cache_read_tokens))     AS cache_read_tokens,
    sum(toUInt64(src.cache_write_tokens))    AS cache_write_tokens,
    sum(toUInt64(src.cache_write_1h_tokens)) AS cache_write_1h_tokens,
    sum(toUInt64(src.reasoning_tokens))      AS reasoning_tokens,
    sum(src.cost_usd)                        AS cost_usd,
    sum(src.cost_input_usd)                  AS cost_input_usd,
    sum(src.cost_cache_read_usd)             AS cost_cache_read_usd,
    sum(src.cost_cache_write_usd)            AS cost_cache_write_usd,
    sum(src.cost_output_usd)                 AS cost_output_usd,
    sum(src.cost_reasoning_usd)              AS cost_reasoning_usd,
    sum(src.cache_savings_usd)               AS cache_savings_usd,
    countIf(src.unpriced)                    AS unpriced,
    countIf(src.usage_missing)               AS usage_missing,
    countIf(src.cache_hit)                   AS cache_hits,
    sum(src.cost_avoided_usd)                AS cost_avoided_usd
FROM {{t:llm_calls}} AS src
GROUP BY project_id, day, provider, model, feature, prompt_template, user_hash, price_version;
