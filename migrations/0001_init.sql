-- 0001_init: every inferwatch table, rendered per target by inferwatch_collector.migrations.render().
--
-- Placeholders (double braces; ClickHouse macros such as {replica} and query parameters stay single-braced):
--   {{on_cluster}}                 ON CLUSTER <cluster> on replicated/sharded targets, empty on single
--   {{engine:ReplacingMergeTree(v)}} the engine, Replicated* on clustered targets
--   {{t:name}}                     db.name, or db.name_local on sharded targets
--   {{distributed:name,key}}       sharded only: the Distributed table <name> over <name>_local, sharded by key
--   {{settings: a = 1}}            table SETTINGS; single adds non_replicated_deduplication_window (retry dedup)
--   {{ddl_settings}}               SETTINGS alter_sync = 2 on clustered ALTERs, empty on single
--   {{retention_days}} {{prompt_retention_days}} {{rollup_1m_retention_days}} {{rollup_1h_retention_days}}
--
-- Rules: every statement is idempotent (IF NOT EXISTS) and ends with ';' at the end of a line; comments sit on
-- their own lines (the renderer drops them); column order of llm_calls, spans and prompt_logs is the insert order
-- of rows.py (a test compares it with DESCRIBE TABLE). Never edit this file once released: add 0002_*.sql.

-- ---------------------------------------------------------------------------------------------------------
-- Raw facts: append-only MergeTree, whole-day partitions dropped by TTL, no FINAL needed to read them.
-- ---------------------------------------------------------------------------------------------------------

-- One row per LLM call. Every rollup below reads this table, so only LLM calls belong here.
-- ingested_at and the alias first_token_time come after the rows.py columns.
CREATE TABLE IF NOT EXISTS {{t:llm_calls}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    start_time         DateTime64(6, 'UTC') CODEC(Delta(8), ZSTD(1)),
    end_time           DateTime64(6, 'UTC') CODEC(Delta(8), ZSTD(1)),
    trace_id           String CODEC(ZSTD(1)),
    span_id            String CODEC(ZSTD(1)),
    parent_span_id     String CODEC(ZSTD(1)),
    response_id        String CODEC(ZSTD(1)),
    service_name       LowCardinality(String),
    span_name          String CODEC(ZSTD(1)),
    model              LowCardinality(String),
    request_model      LowCardinality(String),
    response_model     LowCardinality(String),
    provider           LowCardinality(String),
    operation          LowCardinality(String),
    input_tokens       UInt32 CODEC(T64, ZSTD(1)),
    output_tokens      UInt32 CODEC(T64, ZSTD(1)),
    cache_read_tokens  UInt32 CODEC(T64, ZSTD(1)),
    cache_write_tokens UInt32 CODEC(T64, ZSTD(1)),
    reasoning_tokens   UInt32 CODEC(T64, ZSTD(1)),
    ttft_ms            UInt32 CODEC(T64, ZSTD(1)),
    latency_ms         UInt32 CODEC(T64, ZSTD(1)),
    decode_tps         Float32 CODEC(ZSTD(1)),
    finish_reason      LowCardinality(String),
    status             LowCardinality(String),
    error_type         LowCardinality(String),
    streamed           Bool,
    usage_missing      Bool,
    refusal            Bool,
    empty_response     Bool,
    truncated          Bool,
    tool_calls         UInt16 CODEC(T64, ZSTD(1)),
    tool_call_failures UInt16 CODEC(T64, ZSTD(1)),
    response_chars     UInt32 CODEC(T64, ZSTD(1)),
    feature            LowCardinality(String),
    prompt_template    LowCardinality(String),
    prompt_version     LowCardinality(String),
    experiment         LowCardinality(String),
    variant            LowCardinality(String),
    user_hash          String CODEC(ZSTD(1)),
    cost_usd           Float64 CODEC(ZSTD(1)),
    price_version      LowCardinality(String),
    attributes         Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    first_token_time   DateTime64(6, 'UTC') ALIAS start_time + toIntervalMillisecond(ttft_ms),
    ingested_at        DateTime('UTC') DEFAULT now() CODEC(Delta(4), ZSTD(1)),
    INDEX idx_trace_id    trace_id            TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_span_id     span_id             TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_user_hash   user_hash           TYPE bloom_filter(0.01)  GRANULARITY 1,
    INDEX idx_attr_keys   mapKeys(attributes)   TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_attr_values mapValues(attributes) TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = {{engine:MergeTree}}
PARTITION BY toDate(start_time)
ORDER BY (project_id, toStartOfHour(start_time), model, start_time)
TTL toDateTime(start_time) + INTERVAL {{retention_days}} DAY
{{settings: ttl_only_drop_parts = 1}};

-- A trace stays on one shard, and calls spread evenly.
{{distributed:llm_calls,cityHash64(trace_id)}};

-- Every non-LLM span (retrieval, tools, app code), so a trace can be shown whole.
CREATE TABLE IF NOT EXISTS {{t:spans}} {{on_cluster}}
(
    project_id     LowCardinality(String),
    start_time     DateTime64(6, 'UTC') CODEC(Delta(8), ZSTD(1)),
    end_time       DateTime64(6, 'UTC') CODEC(Delta(8), ZSTD(1)),
    trace_id       String CODEC(ZSTD(1)),
    span_id        String CODEC(ZSTD(1)),
    parent_span_id String CODEC(ZSTD(1)),
    service_name   LowCardinality(String),
    name           String CODEC(ZSTD(1)),
    kind           LowCardinality(String),
    operation      LowCardinality(String),
    status         LowCardinality(String),
    status_message String CODEC(ZSTD(1)),
    duration_ms    Float64 CODEC(ZSTD(1)),
    attributes     Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ingested_at    DateTime('UTC') DEFAULT now() CODEC(Delta(4), ZSTD(1)),
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = {{engine:MergeTree}}
PARTITION BY toDate(start_time)
ORDER BY (project_id, toStartOfHour(start_time), start_time)
TTL toDateTime(start_time) + INTERVAL {{retention_days}} DAY
{{settings: ttl_only_drop_parts = 1}};

{{distributed:spans,cityHash64(trace_id)}};

-- Redacted prompt/completion text: restricted, short-lived, separate so it never slows metric scans.
CREATE TABLE IF NOT EXISTS {{t:prompt_logs}} {{on_cluster}}
(
    project_id      LowCardinality(String),
    start_time      DateTime64(6, 'UTC') CODEC(Delta(8), ZSTD(1)),
    trace_id        String CODEC(ZSTD(1)),
    span_id         String CODEC(ZSTD(1)),
    model           LowCardinality(String),
    prompt_template LowCardinality(String),
    prompt          String CODEC(ZSTD(3)),
    completion      String CODEC(ZSTD(3)),
    redaction       LowCardinality(String),
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_span_id  span_id  TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = {{engine:MergeTree}}
PARTITION BY toDate(start_time)
ORDER BY (project_id, start_time, span_id)
TTL toDateTime(start_time) + INTERVAL {{prompt_retention_days}} DAY
{{settings: ttl_only_drop_parts = 1}};

{{distributed:prompt_logs,cityHash64(trace_id)}};

-- ---------------------------------------------------------------------------------------------------------
-- Rows that change: ReplacingMergeTree, read with FINAL (small tables). Sharded by the dedup key so that all
-- versions of a row meet on one shard and FINAL stays correct.
-- ---------------------------------------------------------------------------------------------------------

-- Model/experiment/variant/template/feature are copied from the call at ingest, so A/B feedback needs no join.
CREATE TABLE IF NOT EXISTS {{t:feedback}} {{on_cluster}}
(
    project_id      LowCardinality(String),
    feedback_id     String,
    created_at      DateTime64(3, 'UTC'),
    updated_at      DateTime64(3, 'UTC') DEFAULT now64(3),
    trace_id        String,
    span_id         String,
    user_hash       String,
    kind            LowCardinality(String),
    name            LowCardinality(String),
    value           Float64,
    label           LowCardinality(String),
    comment         String CODEC(ZSTD(3)) TTL toDateTime(created_at) + INTERVAL {{prompt_retention_days}} DAY,
    source          LowCardinality(String),
    model           LowCardinality(String),
    experiment      LowCardinality(String),
    variant         LowCardinality(String),
    prompt_template LowCardinality(String),
    feature         LowCardinality(String),
    is_deleted      UInt8 DEFAULT 0,
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_span_id  span_id  TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, toDate(created_at), feedback_id);

{{distributed:feedback,cityHash64(project_id, feedback_id)}};

-- Output of the A/B analysis job; a recomputation replaces the previous row.
CREATE TABLE IF NOT EXISTS {{t:ab_results}} {{on_cluster}}
(
    project_id   LowCardinality(String),
    experiment   LowCardinality(String),
    metric       LowCardinality(String),
    variant      LowCardinality(String),
    window_start DateTime('UTC'),
    window_end   DateTime('UTC'),
    computed_at  DateTime64(3, 'UTC'),
    n            UInt64,
    value        Float64,
    ci_low       Float64,
    ci_high      Float64,
    control      LowCardinality(String),
    lift         Float64,
    p_value      Float64,
    method       LowCardinality(String),
    details      Map(LowCardinality(String), String)
)
ENGINE = {{engine:ReplacingMergeTree(computed_at)}}
PARTITION BY toYYYYMM(window_end)
ORDER BY (project_id, experiment, metric, variant, window_start, window_end);

{{distributed:ab_results,cityHash64(project_id, experiment)}};

-- Daily/monthly cost reports (computed, provider invoices, budgets); Decimal for reconciliation.
CREATE TABLE IF NOT EXISTS {{t:cost_reports}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    period_type        LowCardinality(String),
    period_start       Date,
    source             LowCardinality(String),
    provider           LowCardinality(String),
    model              LowCardinality(String),
    calls              UInt64,
    input_tokens       UInt64,
    output_tokens      UInt64,
    cache_read_tokens  UInt64,
    cache_write_tokens UInt64,
    cost_usd           Decimal(18, 6),
    currency           LowCardinality(String) DEFAULT 'USD',
    generated_at       DateTime64(3, 'UTC'),
    details            Map(LowCardinality(String), String)
)
ENGINE = {{engine:ReplacingMergeTree(generated_at)}}
PARTITION BY toYYYYMM(period_start)
ORDER BY (project_id, period_type, period_start, source, provider, model);

{{distributed:cost_reports,cityHash64(project_id)}};

-- Append-only history of pending/firing/resolved/silenced alert events.
CREATE TABLE IF NOT EXISTS {{t:alert_events}} {{on_cluster}}
(
    project_id LowCardinality(String),
    rule_id    String,
    event_time DateTime64(3, 'UTC'),
    event_id   UUID DEFAULT generateUUIDv4(),
    series_key String,
    state      LowCardinality(String),
    severity   LowCardinality(String),
    metric     LowCardinality(String),
    value      Float64,
    threshold  Float64,
    window_s   UInt32,
    message    String CODEC(ZSTD(3)),
    labels     Map(LowCardinality(String), String),
    channels   Array(LowCardinality(String))
)
ENGINE = {{engine:MergeTree}}
PARTITION BY toYYYYMM(event_time)
ORDER BY (project_id, rule_id, event_time)
TTL toDateTime(event_time) + INTERVAL 400 DAY
{{settings}};

{{distributed:alert_events,cityHash64(project_id, rule_id)}};

-- Current state per rule and series; tiny, read with FINAL.
CREATE TABLE IF NOT EXISTS {{t:alert_state}} {{on_cluster}}
(
    project_id     LowCardinality(String),
    rule_id        String,
    series_key     String,
    state          LowCardinality(String),
    since          DateTime64(3, 'UTC'),
    last_value     Float64,
    last_eval_at   DateTime64(3, 'UTC'),
    silenced_until DateTime('UTC') DEFAULT 0,
    updated_at     DateTime64(3, 'UTC'),
    is_deleted     UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
ORDER BY (project_id, rule_id, series_key);

{{distributed:alert_state,cityHash64(project_id, rule_id)}};

CREATE TABLE IF NOT EXISTS {{t:projects}} {{on_cluster}}
(
    project_id String,
    name       String,
    created_at DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC') DEFAULT now64(3),
    is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
ORDER BY project_id;

{{distributed:projects,cityHash64(project_id)}};

-- Only the hash of a key is stored; revoking is a re-insert with revoked = 1 and a newer updated_at.
CREATE TABLE IF NOT EXISTS {{t:api_keys}} {{on_cluster}}
(
    key_id     String,
    project_id LowCardinality(String),
    key_hash   String,
    scopes     Array(LowCardinality(String)),
    name       String,
    created_at DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC') DEFAULT now64(3),
    revoked    UInt8 DEFAULT 0,
    is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
ORDER BY key_id;

{{distributed:api_keys,cityHash64(key_id)}};

CREATE TABLE IF NOT EXISTS {{t:budgets}} {{on_cluster}}
(
    project_id  LowCardinality(String),
    budget_id   String,
    scope_type  LowCardinality(String),
    scope_value String,
    period      LowCardinality(String),
    limit_usd   Decimal(18, 6),
    kind        LowCardinality(String),
    thresholds  Array(Float64),
    created_at  DateTime64(3, 'UTC'),
    updated_at  DateTime64(3, 'UTC') DEFAULT now64(3),
    is_deleted  UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
ORDER BY (project_id, budget_id);

{{distributed:budgets,cityHash64(project_id, budget_id)}};

-- ---------------------------------------------------------------------------------------------------------
-- Rollups: AggregatingMergeTree fed by materialized views on llm_calls. Counters are
-- SimpleAggregateFunction(sum) (read with sum()), latencies t-digest states (read with
-- quantilesTDigestMerge(levels)). Each MV aliases its source as src and qualifies every source column, because
-- an alias such as "AS truncated" or "AS latency_ms" would otherwise shadow the source column of that name.
-- In sharded mode the MVs attach to the _local tables, so each shard keeps its own rollups; the Distributed
-- tables (key rand(), never used for writes) combine them at read time.
-- ---------------------------------------------------------------------------------------------------------

-- Windows of 48 h or less, alert evaluation.
CREATE TABLE IF NOT EXISTS {{t:llm_calls_1m}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    minute             DateTime('UTC'),
    model              LowCardinality(String),
    provider           LowCardinality(String),
    operation          LowCardinality(String),
    calls              SimpleAggregateFunction(sum, UInt64),
    errors             SimpleAggregateFunction(sum, UInt64),
    input_tokens       SimpleAggregateFunction(sum, UInt64),
    output_tokens      SimpleAggregateFunction(sum, UInt64),
    cache_read_tokens  SimpleAggregateFunction(sum, UInt64),
    cache_write_tokens SimpleAggregateFunction(sum, UInt64),
    reasoning_tokens   SimpleAggregateFunction(sum, UInt64),
    cost_usd           SimpleAggregateFunction(sum, Float64),
    tool_calls         SimpleAggregateFunction(sum, UInt64),
    tool_call_failures SimpleAggregateFunction(sum, UInt64),
    refusals           SimpleAggregateFunction(sum, UInt64),
    empty_responses    SimpleAggregateFunction(sum, UInt64),
    truncated          SimpleAggregateFunction(sum, UInt64),
    usage_missing      SimpleAggregateFunction(sum, UInt64),
    streamed           SimpleAggregateFunction(sum, UInt64),
    ttft_ms            AggregateFunction(quantileTDigest, UInt32),
    latency_ms         AggregateFunction(quantileTDigest, UInt32)
)
ENGINE = {{engine:AggregatingMergeTree}}
PARTITION BY toYYYYMM(minute)
ORDER BY (project_id, minute, model, provider, operation)
TTL minute + INTERVAL {{rollup_1m_retention_days}} DAY
{{settings}};

{{distributed:llm_calls_1m,rand()}};

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
    countIf(src.streamed)                                  AS streamed,
    quantileTDigestStateIf(src.ttft_ms, src.ttft_ms > 0)   AS ttft_ms,
    quantileTDigestState(src.latency_ms)                   AS latency_ms
FROM {{t:llm_calls}} AS src
GROUP BY project_id, minute, model, provider, operation;

-- The 7-90-day dashboard workhorse.
CREATE TABLE IF NOT EXISTS {{t:llm_calls_1h}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    hour               DateTime('UTC'),
    model              LowCardinality(String),
    provider           LowCardinality(String),
    operation          LowCardinality(String),
    calls              SimpleAggregateFunction(sum, UInt64),
    errors             SimpleAggregateFunction(sum, UInt64),
    input_tokens       SimpleAggregateFunction(sum, UInt64),
    output_tokens      SimpleAggregateFunction(sum, UInt64),
    cache_read_tokens  SimpleAggregateFunction(sum, UInt64),
    cache_write_tokens SimpleAggregateFunction(sum, UInt64),
    reasoning_tokens   SimpleAggregateFunction(sum, UInt64),
    cost_usd           SimpleAggregateFunction(sum, Float64),
    tool_calls         SimpleAggregateFunction(sum, UInt64),
    tool_call_failures SimpleAggregateFunction(sum, UInt64),
    refusals           SimpleAggregateFunction(sum, UInt64),
    empty_responses    SimpleAggregateFunction(sum, UInt64),
    truncated          SimpleAggregateFunction(sum, UInt64),
    usage_missing      SimpleAggregateFunction(sum, UInt64),
    streamed           SimpleAggregateFunction(sum, UInt64),
    ttft_ms            AggregateFunction(quantileTDigest, UInt32),
    latency_ms         AggregateFunction(quantileTDigest, UInt32)
)
ENGINE = {{engine:AggregatingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, model, provider, operation)
TTL hour + INTERVAL {{rollup_1h_retention_days}} DAY
{{settings}};

{{distributed:llm_calls_1h,rand()}};

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
    countIf(src.streamed)                                  AS streamed,
    quantileTDigestStateIf(src.ttft_ms, src.ttft_ms > 0)   AS ttft_ms,
    quantileTDigestState(src.latency_ms)                   AS latency_ms
FROM {{t:llm_calls}} AS src
GROUP BY project_id, hour, model, provider, operation;

-- Cost and usage by feature and prompt template: sums only, so the wider key stays cheap.
CREATE TABLE IF NOT EXISTS {{t:usage_1h}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    hour               DateTime('UTC'),
    feature            LowCardinality(String),
    prompt_template    LowCardinality(String),
    model              LowCardinality(String),
    calls              SimpleAggregateFunction(sum, UInt64),
    errors             SimpleAggregateFunction(sum, UInt64),
    input_tokens       SimpleAggregateFunction(sum, UInt64),
    output_tokens      SimpleAggregateFunction(sum, UInt64),
    cache_read_tokens  SimpleAggregateFunction(sum, UInt64),
    cache_write_tokens SimpleAggregateFunction(sum, UInt64),
    reasoning_tokens   SimpleAggregateFunction(sum, UInt64),
    cost_usd           SimpleAggregateFunction(sum, Float64),
    tool_calls         SimpleAggregateFunction(sum, UInt64),
    tool_call_failures SimpleAggregateFunction(sum, UInt64),
    refusals           SimpleAggregateFunction(sum, UInt64),
    latency_sum_ms     SimpleAggregateFunction(sum, UInt64)
)
ENGINE = {{engine:AggregatingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, feature, prompt_template, model)
TTL hour + INTERVAL {{rollup_1h_retention_days}} DAY
{{settings}};

{{distributed:usage_1h,rand()}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{t:usage_1h_mv}} {{on_cluster}} TO {{t:usage_1h}} AS
SELECT
    src.project_id                        AS project_id,
    toStartOfHour(src.start_time)         AS hour,
    src.feature                           AS feature,
    src.prompt_template                   AS prompt_template,
    src.model                             AS model,
    count()                               AS calls,
    countIf(src.status = 'error')         AS errors,
    sum(toUInt64(src.input_tokens))       AS input_tokens,
    sum(toUInt64(src.output_tokens))      AS output_tokens,
    sum(toUInt64(src.cache_read_tokens))  AS cache_read_tokens,
    sum(toUInt64(src.cache_write_tokens)) AS cache_write_tokens,
    sum(toUInt64(src.reasoning_tokens))   AS reasoning_tokens,
    sum(src.cost_usd)                     AS cost_usd,
    sum(toUInt64(src.tool_calls))         AS tool_calls,
    sum(toUInt64(src.tool_call_failures)) AS tool_call_failures,
    countIf(src.refusal)                  AS refusals,
    sum(toUInt64(src.latency_ms))         AS latency_sum_ms
FROM {{t:llm_calls}} AS src
GROUP BY project_id, hour, feature, prompt_template, model;

-- Per-variant inputs for A/B tests: n, rates, latency sum and sum of squares (Welch t-test), t-digests, users.
CREATE TABLE IF NOT EXISTS {{t:ab_rollup_1h}} {{on_cluster}}
(
    project_id         LowCardinality(String),
    experiment         LowCardinality(String),
    variant            LowCardinality(String),
    hour               DateTime('UTC'),
    model              LowCardinality(String),
    prompt_template    LowCardinality(String),
    calls              SimpleAggregateFunction(sum, UInt64),
    errors             SimpleAggregateFunction(sum, UInt64),
    refusals           SimpleAggregateFunction(sum, UInt64),
    tool_call_failures SimpleAggregateFunction(sum, UInt64),
    output_tokens      SimpleAggregateFunction(sum, UInt64),
    cost_usd           SimpleAggregateFunction(sum, Float64),
    latency_sum_ms     SimpleAggregateFunction(sum, UInt64),
    latency_sq_sum     SimpleAggregateFunction(sum, Float64),
    ttft_ms            AggregateFunction(quantileTDigest, UInt32),
    latency_ms         AggregateFunction(quantileTDigest, UInt32),
    users              AggregateFunction(uniqCombined(12), String)
)
ENGINE = {{engine:AggregatingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, experiment, variant, hour, model, prompt_template)
TTL hour + INTERVAL {{rollup_1h_retention_days}} DAY
{{settings}};

{{distributed:ab_rollup_1h,rand()}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{t:ab_rollup_1h_mv}} {{on_cluster}} TO {{t:ab_rollup_1h}} AS
SELECT
    src.project_id                                        AS project_id,
    src.experiment                                        AS experiment,
    src.variant                                           AS variant,
    toStartOfHour(src.start_time)                         AS hour,
    src.model                                             AS model,
    src.prompt_template                                   AS prompt_template,
    count()                                               AS calls,
    countIf(src.status = 'error')                         AS errors,
    countIf(src.refusal)                                  AS refusals,
    sum(toUInt64(src.tool_call_failures))                 AS tool_call_failures,
    sum(toUInt64(src.output_tokens))                      AS output_tokens,
    sum(src.cost_usd)                                     AS cost_usd,
    sum(toUInt64(src.latency_ms))                         AS latency_sum_ms,
    sum(toFloat64(src.latency_ms) * src.latency_ms)       AS latency_sq_sum,
    quantileTDigestStateIf(src.ttft_ms, src.ttft_ms > 0)  AS ttft_ms,
    quantileTDigestState(src.latency_ms)                  AS latency_ms,
    uniqCombinedState(12)(src.user_hash)                  AS users
FROM {{t:llm_calls}} AS src
WHERE src.experiment != ''
GROUP BY project_id, experiment, variant, hour, model, prompt_template;
