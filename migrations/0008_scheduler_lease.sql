-- 0008_scheduler_lease: one active scheduler (issue 8, fault tolerance). Placeholders as in 0001_init.sql.
--
-- scheduler_lease: who may run the scheduled jobs (the ones that evaluate and notify). One logical row per lease
-- name; taking or renewing it is an insert with a newer updated_at, and the holder is whatever FINAL returns
-- (the newest version; equal versions: the last inserted, the same answer for every reader). expires_at is set
-- from the database's clock, so scheduler hosts need not agree on the time. A scheduler started by mistake
-- reads a live lease held by another and stays idle until it expires (inferwatch_alerts.lease). Sharded by name
-- so every version of a lease meets on one shard and FINAL stays correct.
CREATE TABLE IF NOT EXISTS {{t:scheduler_lease}} {{on_cluster}}
(
    name        LowCardinality(String),
    holder      String,
    acquired_at DateTime64(3, 'UTC'),
    expires_at  DateTime64(3, 'UTC'),
    updated_at  DateTime64(6, 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree(updated_at)}}
ORDER BY name
TTL toDateTime(updated_at) + INTERVAL 30 DAY;
{{distributed:scheduler_lease,cityHash64(name)}};
