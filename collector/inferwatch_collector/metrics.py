"""The collector's Prometheus metrics as text: request and writer counters, the spool, call pairing, API key
checks, redactions, and the scheduled jobs and notifications of the last day (from their tables).

Served by the internal listener (``metrics_listener.py``), never on the public port.
"""

from __future__ import annotations

from typing import Any


def _job_and_notifier_lines(store) -> list[str]:
    """Scheduled jobs and notifier deliveries over the last day, from their tables (the scheduler may run in
    another process). Empty when the database does not answer: /metrics must not fail with it."""
    try:
        jobs = store.query(
            "SELECT job, countIf(outcome = 'failure'), argMax(dateDiff('millisecond', started_at, ended_at), "
            "started_at) FROM job_runs FINAL WHERE started_at >= now() - INTERVAL 1 DAY "
            "AND outcome != 'running' GROUP BY job ORDER BY job").result_rows
        deliveries = store.query(
            "SELECT channel, countIf(ok), countIf(NOT ok) FROM notifications "
            "WHERE sent_at >= now() - INTERVAL 1 DAY GROUP BY channel ORDER BY channel").result_rows
    except Exception:  # noqa: BLE001 - the database is down: the other metrics still answer
        return []
    return [
        "# TYPE inferwatch_job_failures_24h gauge",
        *(f'inferwatch_job_failures_24h{{job="{job}"}} {failures}' for job, failures, _ in jobs),
        "# TYPE inferwatch_job_last_duration_seconds gauge",
        *(f'inferwatch_job_last_duration_seconds{{job="{job}"}} {ms / 1000:.3f}' for job, _, ms in jobs),
        "# TYPE inferwatch_notifications_24h gauge",
        *(line for channel, ok, failed in deliveries for line in (
            f'inferwatch_notifications_24h{{channel="{channel}",outcome="sent"}} {ok}',
            f'inferwatch_notifications_24h{{channel="{channel}",outcome="failed"}} {failed}')),
    ]


def render(state: Any) -> str:
    """The Prometheus text exposition of the collector whose ``app.state`` is ``state`` (set up by the app's
    lifespan). Runs one query for the job and notifier lines; answers without them when the database is down."""
    writer, ingest = state.writer.stats, state.ingest_stats
    lines = [
        "# TYPE inferwatch_spans_accepted_total counter",
        f"inferwatch_spans_accepted_total {ingest.spans_accepted}",
        "# TYPE inferwatch_spans_rejected_total counter",
        f"inferwatch_spans_rejected_total {ingest.spans_rejected}",
        "# TYPE inferwatch_requests_rejected_total counter",
        *(f'inferwatch_requests_rejected_total{{reason="{reason}"}} {count}'
          for reason, count in sorted(ingest.rejected_requests.items())),
        "# TYPE inferwatch_metric_points_received_total counter",
        f"inferwatch_metric_points_received_total {ingest.metric_points_received}",
        "# TYPE inferwatch_log_records_received_total counter",
        f"inferwatch_log_records_received_total {ingest.log_records_received}",
        "# TYPE inferwatch_log_records_stored_total counter",
        f"inferwatch_log_records_stored_total {ingest.log_records_stored}",
        "# TYPE inferwatch_log_records_dropped_total counter",
        *(f'inferwatch_log_records_dropped_total{{reason="{reason}"}} {count}'
          for reason, count in sorted(ingest.log_records_dropped.items())),
        "# TYPE inferwatch_finish_reason_patches_total counter",
        *(f'inferwatch_finish_reason_patches_total{{outcome="{outcome}"}} {count}'
          for outcome, count in sorted(ingest.finish_reason_patches.items())),
        "# TYPE inferwatch_duplicate_requests_total counter",
        f"inferwatch_duplicate_requests_total {ingest.duplicate_requests}",
        "# TYPE inferwatch_rows_written_total counter",
        *(f'inferwatch_rows_written_total{{table="{table}"}} {count}'
          for table, count in writer.rows_written.items()),
        "# TYPE inferwatch_insert_batches_total counter",
        f"inferwatch_insert_batches_total {writer.batches}",
        "# TYPE inferwatch_insert_failures_total counter",
        f"inferwatch_insert_failures_total {writer.insert_failures}",
        "# TYPE inferwatch_insert_retries_total counter",
        f"inferwatch_insert_retries_total {writer.insert_retries}",
        "# TYPE inferwatch_insert_seconds_total counter",
        f"inferwatch_insert_seconds_total {writer.insert_seconds_total:.6f}",
        "# TYPE inferwatch_last_batch_rows gauge",
        f"inferwatch_last_batch_rows {writer.last_batch_rows}",
        *state.inflight.metric_lines(),  # the in-flight budget: bytes, waits and rejections by route
        "# TYPE inferwatch_write_queue_rows gauge",
        f"inferwatch_write_queue_rows {state.writer.pending_rows}",
        *state.writer.metric_lines(),  # the spool: spooled/replayed batches, bytes, oldest age
        *state.call_pairing.metric_lines(),  # held LLM calls, spans merged into one row per request
        *state.keys.metric_lines(),  # key lookups, refusals, the two key caches, the revocation poll
        "# TYPE inferwatch_redactions_total counter",
        *(f'inferwatch_redactions_total{{entity="{entity}"}} {count}'
          for entity, count in sorted(ingest.redactions.items())),
        *_job_and_notifier_lines(state.store),
    ]
    return "\n".join(lines) + "\n"
