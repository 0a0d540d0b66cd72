-- 0004_budgets_jobs: what the scheduler needs (issues 4 and 5). Placeholders as in 0001_init.sql.
--
-- job_runs: one row per run of a scheduled job (budget evaluation, cost reports, ...). A run is inserted as
-- 'running' when it starts and replaced by its outcome ('success' or 'failure', with the error) when it ends,
-- so a run that never ended (the process died) stays visible as 'running'. Job runs are platform-wide: the
-- scheduler serves every project in one run. Sharded by job so both versions of a run meet on one shard and
-- FINAL stays correct. Short TTL: the table is operational history, not an audit log.

CREATE TABLE IF NOT EXISTS {{t:job_runs}} {{on_cluster}}
(
    job         LowCardinality(String),
    run_id      String,
    started_at  DateTime64(3, 'UTC'),
    ended_at    Nullable(DateTime64(3, 'UTC')),
    outcome     LowCardinality(String),
    error       String CODEC(ZSTD(3)),
    trigger     LowCardinality(String),
    host        LowCardinality(String),
    details     Map(LowCardinality(String), String),
    updated_at  DateTime64(3, 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree(updated_at)}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (job, started_at, run_id)
TTL toDateTime(started_at) + INTERVAL 30 DAY;

{{distributed:job_runs,cityHash64(job)}};
