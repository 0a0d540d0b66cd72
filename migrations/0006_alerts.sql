-- 0006_alerts: what the alert-rule lifecycle needs (issue 5). Placeholders as in 0001_init.sql and 0002_cost.sql
-- ({{alter:name}} alters the table and, on sharded targets, its Distributed table too).
--
-- alert_state gets what a restart in the middle of an incident must not forget: the incident's start and its
-- stable dedup key (PagerDuty's trigger and resolve carry the same one), what the receivers were last told
-- (notified = 'firing' or '', with the key that was paged and when, so a resolve is sent exactly once and a
-- re-notification only on the interval), when a gap in the data began (no-data handling), and the alert's
-- severity, threshold, baseline, labels and channels (what the dashboard shows, and what a resolve of a rule
-- deleted from the rules file is routed to). Budget alerts write the 0001 columns only; the new ones default.

{{alter:alert_state}}
    ADD COLUMN IF NOT EXISTS incident_start DateTime64(3, 'UTC') DEFAULT 0 AFTER is_deleted,
    ADD COLUMN IF NOT EXISTS dedup_key String DEFAULT '' AFTER incident_start,
    ADD COLUMN IF NOT EXISTS notified LowCardinality(String) DEFAULT '' AFTER dedup_key,
    ADD COLUMN IF NOT EXISTS notified_key String DEFAULT '' AFTER notified,
    ADD COLUMN IF NOT EXISTS last_notified_at DateTime64(3, 'UTC') DEFAULT 0 AFTER notified_key,
    ADD COLUMN IF NOT EXISTS nodata_since DateTime64(3, 'UTC') DEFAULT 0 AFTER last_notified_at,
    ADD COLUMN IF NOT EXISTS severity LowCardinality(String) DEFAULT '' AFTER nodata_since,
    ADD COLUMN IF NOT EXISTS threshold Float64 DEFAULT nan AFTER severity,
    ADD COLUMN IF NOT EXISTS baseline Float64 DEFAULT nan AFTER threshold,
    ADD COLUMN IF NOT EXISTS labels Map(LowCardinality(String), String) AFTER baseline,
    ADD COLUMN IF NOT EXISTS channels Array(LowCardinality(String)) AFTER labels
    {{ddl_settings}};

-- Silences: mute notifications of one rule (or every rule: rule_id '') for the series whose labels equal every
-- matcher, from starts_at until ends_at. Expiring one is a re-insert with ends_at = now and a newer updated_at.
-- Evaluation goes on while silenced (state and history are kept); only new pages are held back, never the
-- resolve of a page that already went out.
CREATE TABLE IF NOT EXISTS {{t:alert_silences}} {{on_cluster}}
(
    project_id LowCardinality(String),
    silence_id String,
    rule_id    String,
    matchers   Map(LowCardinality(String), String),
    starts_at  DateTime64(3, 'UTC'),
    ends_at    DateTime64(3, 'UTC'),
    comment    String CODEC(ZSTD(3)),
    created_by String,
    created_at DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC'),
    is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(updated_at, is_deleted)}}
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, silence_id);

{{distributed:alert_silences,cityHash64(project_id, silence_id)}};
