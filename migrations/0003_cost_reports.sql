-- 0003_cost_reports: what cost reports and what-if repricing need to read cost_1d fast (issue 4).
-- Placeholders as in 0001_init.sql.
--
-- cost_1d is keyed down to the hashed user, so it holds about one row per (day, model, feature, template, user):
-- at 10M calls that is nearly 9M rows, and a report by model read them all (measured: 2.6 s for a month).
-- Two aggregate projections hold the same sums at the grain reports ask for: by_dims drops the user (a few
-- thousand rows per month), by_user keeps only the user (one row per user and day). ClickHouse answers a
-- matching GROUP BY from the projection and keeps it in step with the table on every insert, merge and delete,
-- so the cost recompute job's DELETE + INSERT rebuild of cost_1d needs no change.
-- cost_1d is an AggregatingMergeTree, whose merges combine rows: its projections must be rebuilt on merge, and
-- on lightweight deletes, or ClickHouse refuses them (the MODIFY SETTING comes first for that reason).
-- MATERIALIZE builds them for parts that existed before this migration (a background mutation; until it is done,
-- such parts are read from the table itself, with the same results).

ALTER TABLE {{t:cost_1d}} {{on_cluster}}
    MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild'
    {{ddl_settings}};

ALTER TABLE {{t:cost_1d}} {{on_cluster}}
    ADD PROJECTION IF NOT EXISTS by_dims
    (
        SELECT project_id, day, provider, model, feature, prompt_template, price_version,
            sum(calls), sum(errors), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
            sum(cache_write_tokens), sum(cache_write_1h_tokens), sum(reasoning_tokens), sum(cost_usd),
            sum(cost_input_usd), sum(cost_cache_read_usd), sum(cost_cache_write_usd), sum(cost_output_usd),
            sum(cost_reasoning_usd), sum(cache_savings_usd), sum(unpriced), sum(usage_missing), sum(cache_hits),
            sum(cost_avoided_usd)
        GROUP BY project_id, day, provider, model, feature, prompt_template, price_version
    )
    {{ddl_settings}};

ALTER TABLE {{t:cost_1d}} {{on_cluster}}
    ADD PROJECTION IF NOT EXISTS by_user
    (
        SELECT project_id, day, user_hash, price_version,
            sum(calls), sum(errors), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
            sum(cache_write_tokens), sum(cache_write_1h_tokens), sum(reasoning_tokens), sum(cost_usd),
            sum(cost_input_usd), sum(cost_cache_read_usd), sum(cost_cache_write_usd), sum(cost_output_usd),
            sum(cost_reasoning_usd), sum(cache_savings_usd), sum(unpriced), sum(usage_missing), sum(cache_hits),
            sum(cost_avoided_usd)
        GROUP BY project_id, day, user_hash, price_version
    )
    {{ddl_settings}};

ALTER TABLE {{t:cost_1d}} {{on_cluster}} MATERIALIZE PROJECTION by_dims {{ddl_settings}};

ALTER TABLE {{t:cost_1d}} {{on_cluster}} MATERIALIZE PROJECTION by_user {{ddl_settings}};
