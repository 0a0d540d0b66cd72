-- 0010_call_pairing: LLM calls held back for a few seconds so two spans of one provider request become one row
-- (issue 27). Placeholders as in 0001_init.sql.
--
-- Why: another library's LLM span and the provider client's own span (or two instrumentations) describe the same
-- request and may arrive in different OTLP requests, seconds apart. The collector keeps such rows in memory for
-- the pairing window and writes the merged row to llm_calls once (inferwatch_collector.pairing). Each held row is
-- also written here, in the same commit as the rest of its request, so a request that was acknowledged is never
-- lost when the collector stops before the window ends: the next start settles what this table holds and
-- llm_calls does not. payload is the row and its prompt logs as JSON (pairing/held.py). Rows expire after a day.

CREATE TABLE IF NOT EXISTS {{t:llm_calls_held}} {{on_cluster}}
(
    project_id  LowCardinality(String),
    received_at DateTime64(3, 'UTC') CODEC(Delta(8), ZSTD(1)),
    trace_id    String CODEC(ZSTD(1)),
    span_id     String CODEC(ZSTD(1)),
    payload     String CODEC(ZSTD(3))
)
ENGINE = {{engine:MergeTree}}
PARTITION BY toDate(received_at)
ORDER BY (project_id, received_at)
TTL toDateTime(received_at) + INTERVAL 1 DAY
{{settings: ttl_only_drop_parts = 1}};

{{distributed:llm_calls_held,cityHash64(trace_id)}};
