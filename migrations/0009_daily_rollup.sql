-- 0009_daily_rollup: a daily rollup with every dashboard measure by model, feature and prompt template (issue 7).
-- Placeholders as in 0001_init.sql, plus
--   {{all:name}}                   the whole table on every target (on sharded targets its Distributed table)
--
-- Why: over 30 days the hourly rollup holds ~14k rows per project, and merging that many t-digests for each
-- chart took 1.5-2 s at 10M calls; usage_1h has the feature and template but neither flags nor digests, so a
-- feature-filtered latency or quality view read the raw calls. One row per (day, model, provider, operation,
-- feature, template) with the sums, the flags and both digests answers those views in tens of milliseconds.
-- The dashboard's totals read whole days from here and the edges of the range from the finer rollups
-- (inferwatch_collector.routes.dashboard), so they stay exact.
-- The backfill runs once, while the table is still empty, so that a day already on disk is not missing from the
-- daily view; run this migration before the collectors start (as 0002 says), or calls inserted between the
-- CREATE and the backfill are counted twice.

CREATE TABLE IF NOT EXISTS {{t:llm_calls_1d}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    day                Date,
    model              LowCardinality(String),
    provider           LowCardinality(String),
    operation          LowCardinality(String),
    feature            LowCardinality(String),
    prompt_template    LowCardinality(String),
    calls              SimpleAggregateFunction(sum, UInt64),
    errors             SimpleAggregateFunction(sum, UInt64),
    input_tokens       SimpleAggregateFunction(sum, UInt64),
    output_tokens      SimpleAggregateFunction(sum, UInt64),
    cache_read_tokens  SimpleAggregateFunction(sum, UInt64),
    cache_write_tokens SimpleAggregateFunction(sum, UInt64),
    reasoning_tokens   SimpleAggregateFunction(sum, UInt64),
    cost_usd           SimpleAggregateFunction(sum, Float64),
    cache_savings_usd  SimpleAggregateFunction(sum, Float64),
    cache_hits         SimpleAggregateFunction(sum, UInt64),
    cost_avoided_usd   SimpleAggregateFunction(sum, Float64),
    tool_calls         SimpleAggregateFunction(sum, UInt64),
    tool_call_failures SimpleAggregateFunction(sum, UInt64),
    refusals           SimpleAggregateFunction(sum, UInt64),
    empty_responses    SimpleAggregateFunction(sum, UInt64),
    truncated          SimpleAggregateFunction(sum, UInt64),
    usage_missing      SimpleAggregateFunction(sum, UInt64),
    unpriced           SimpleAggregateFunction(sum, UInt64),
    streamed           SimpleAggregateFunction(sum, UInt64),
    ttft_ms            AggregateFunction(quantileTDigest, UInt32),
    latency_ms         AggregateFunction(quantileTDigest, UInt32)
)
ENGINE = {{engine:AggregatingMergeTree}}
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, model, provider, operation, feature, prompt_template)
TTL day + INTERVAL {{rollup_1h_retention_days}} DAY
{{settings}};

{{distributed:llm_calls_1d,rand()}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{t:llm_calls_1d_mv}} {{on_cluster}} TO {{t:llm_calls_1d}} AS
SELECT
    src.project_id                                         AS project_id,
    toDate(src.start_time)                                 AS day,
    src.model                                              AS model,
    src.provider                                           AS provider,
    src.operation                                          AS operation,
    src.feature                                            AS feature,
    src.prompt_template                                    AS prompt_template,
    count()                                                AS calls,
    countIf(src.status = 'error')                          AS errors,
    sum(toUInt64(src.input_tokens))                        AS input_tokens,
    sum(toUInt64(src.output_tokens))                       AS output_tokens,
    sum(toUInt64(src.cache_read_tokens))                   AS cache_read_tokens,
    sum(toUInt64(src.cache_write_tokens))                  AS cache_write_tokens,
    sum(toUInt64(src.reasoning_tokens))                    AS reasoning_tokens,
    sum(src.cost_usd)                                      AS cost_usd,
    sum(src.cache_savings_usd)                             AS cache_savings_usd,
    countIf(src.cache_hit)                                 AS cache_hits,
    sum(src.cost_avoided_usd)                              AS cost_avoided_usd,
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
GROUP BY project_id, day, model, provider, operation, feature, prompt_template;

INSERT INTO {{all:llm_calls_1d}}
SELECT
    src.project_id                                         AS project_id,
    toDate(src.start_time)                                 AS day,
    src.model                                              AS model,
    src.provider                                           AS provider,
    src.operation                                          AS operation,
    src.feature                                            AS feature,
    src.prompt_template                                    AS prompt_template,
    count()                                                AS calls,
    countIf(src.status = 'error')                          AS errors,
    sum(toUInt64(src.input_tokens))                        AS input_tokens,
    sum(toUInt64(src.output_tokens))                       AS output_tokens,
    sum(toUInt64(src.cache_read_tokens))                   AS cache_read_tokens,
    sum(toUInt64(src.cache_write_tokens))                  AS cache_write_tokens,
    sum(toUInt64(src.reasoning_tokens))                    AS reasoning_tokens,
    sum(src.cost_usd)                                      AS cost_usd,
    sum(src.cache_savings_usd)                             AS cache_savings_usd,
    countIf(src.cache_hit)                                 AS cache_hits,
    sum(src.cost_avoided_usd)                              AS cost_avoided_usd,
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
FROM {{all:llm_calls}} AS src
WHERE (SELECT count() FROM {{all:llm_calls_1d}}) = 0
GROUP BY project_id, day, model, provider, operation, feature, prompt_template;
