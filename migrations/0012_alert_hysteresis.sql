-- 0012_alert_hysteresis: the quiet period of a firing alert (issue 30). Placeholders as in 0006_alerts.sql.
--
-- alert_state.clear_since: since when an alerting series has been clear without a break (EPOCH when it is not).
-- A rule with `resolve_after` resolves only once that is long enough, so a signal hovering at its threshold is
-- one incident; kept in the table so a scheduler restarted in the middle of the quiet period carries on with it.
-- Budget alerts do not write it; the default is "not clear".

{{alter:alert_state}}
    ADD COLUMN IF NOT EXISTS clear_since DateTime64(3, 'UTC') DEFAULT 0 AFTER nodata_since
    {{ddl_settings}};
