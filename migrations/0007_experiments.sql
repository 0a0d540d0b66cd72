-- 0007_experiments: the A/B experiment registry and the verdict of each analysis (issue 6). Placeholders as in
-- 0001_init.sql.
--
-- experiments: one row per experiment and project, replaced on update (ReplacingMergeTree on updated_at, read
-- with FINAL; a tiny table). Rows come from the API or CLI (source 'api'/'cli'), or from the results job when it
-- sees an experiment in traffic that nobody registered (source 'auto', equal weights assumed). An automatic row is
-- versioned by the hour its newest variant was first seen, which is never later than the moment anybody could
-- register the experiment by hand, so a definition from the API or CLI always wins over a concurrent automatic
-- one. variants and weights are parallel arrays in the SDK's order (the SDK assigns by cumulative weights in that
-- order); planned_users 0 and a NULL end_time mean "not planned"; mde is the relative effect the experiment is
-- meant to detect (power reporting and the sequential test's mixture).
--
-- ab_verdicts: the verdict of each analysed window, beside ab_results (0001), which holds the per-metric rows.
-- Windows run from the experiment's start to the end of the current UTC day (or the experiment's end), so every
-- hourly recompute replaces the day's row and each past day keeps its final look: the history the sequential
-- tests and the dashboard's daily trajectory read.

CREATE TABLE IF NOT EXISTS {{t:experiments}} {{on_cluster}}
(
    project_id     LowCardinality(String),
    name           String,
    variants       Array(String),
    weights        Array(Float64),
    control        String,
    primary_metric LowCardinality(String),
    guardrails     Array(LowCardinality(String)),
    start_time     DateTime64(3, 'UTC'),
    end_time       Nullable(DateTime64(3, 'UTC')),
    planned_users  UInt64,
    mde            Float64,
    alpha          Float64,
    sequential     Bool,
    source         LowCardinality(String),
    description    String CODEC(ZSTD(3)),
    created_at     DateTime64(3, 'UTC'),
    updated_at     DateTime64(3, 'UTC') DEFAULT now64(3),
    is_deleted     UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
ORDER BY (project_id, name);

{{distributed:experiments,cityHash64(project_id, name)}};

CREATE TABLE IF NOT EXISTS {{t:ab_verdicts}} {{on_cluster}}
(
    project_id     LowCardinality(String),
    experiment     LowCardinality(String),
    window_start   DateTime('UTC'),
    window_end     DateTime('UTC'),
    computed_at    DateTime64(3, 'UTC'),
    data_until     DateTime64(3, 'UTC'),
    verdict        LowCardinality(String),
    trustworthy    Bool,
    winner         String,
    primary_metric LowCardinality(String),
    users          UInt64,
    srm_p_value    Float64,
    reason         String CODEC(ZSTD(3)),
    details        Map(LowCardinality(String), String)
)
ENGINE = {{engine:ReplacingMergeTree(computed_at)}}
PARTITION BY toYYYYMM(window_end)
ORDER BY (project_id, experiment, window_start, window_end);

{{distributed:ab_verdicts,cityHash64(project_id, experiment)}};
