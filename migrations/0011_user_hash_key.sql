-- 0011_user_hash_key: secrets a deployment generates once and every collector shares (issue 28). Placeholders as
-- in 0001_init.sql.
--
-- deployment_secrets: one logical value per name. Today only user_hash_key, the HMAC key user-identifying
-- attribute values are hashed with when INFERWATCH_USER_HASH_KEY is not set (inferwatch_collector.user_ids).
-- Collectors starting at the same time may each insert a candidate; every reader takes the earliest row (ties:
-- the smallest value), so all of them agree on one. A plain MergeTree keeps every candidate (a replacing merge
-- could drop the one already in use); they are a few rows. Sharded by name so all candidates meet on one shard.
CREATE TABLE IF NOT EXISTS {{t:deployment_secrets}} {{on_cluster}}
(
    name       LowCardinality(String),
    value      String,
    created_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {{engine:MergeTree}}
ORDER BY (name, created_at)
{{settings}};
{{distributed:deployment_secrets,cityHash64(name)}};
