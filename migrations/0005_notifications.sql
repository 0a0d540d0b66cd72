-- 0005_notifications: one row per channel notified of an alert transition (issue 5). Placeholders as in
-- 0001_init.sql.
--
-- The dispatcher writes a row for every channel it was asked to notify, delivered or not, so a page that never
-- arrived is visible (ok = 0, with the reason) instead of only logged. dedup_key ties a row to its incident
-- (the same key for trigger and resolve), event_time to the alert_events row of the transition; attempts counts
-- the dispatcher's tries (0: the channel name is not configured). error never holds a secret or a URL: notifiers
-- build it from the channel name, the HTTP status and the error type only. Append-only, kept as long as
-- alert_events.

CREATE TABLE IF NOT EXISTS {{t:notifications}} {{on_cluster}}
(
    project_id LowCardinality(String),
    rule_id    String,
    series_key String,
    dedup_key  String,
    channel    LowCardinality(String),
    state      LowCardinality(String),
    event_time DateTime64(3, 'UTC'),
    sent_at    DateTime64(3, 'UTC'),
    ok         Bool,
    attempts   UInt16,
    error      String CODEC(ZSTD(3))
)
ENGINE = {{engine:MergeTree}}
PARTITION BY toYYYYMM(sent_at)
ORDER BY (project_id, rule_id, sent_at)
TTL toDateTime(sent_at) + INTERVAL 400 DAY
{{settings}};

{{distributed:notifications,cityHash64(project_id, rule_id)}};
