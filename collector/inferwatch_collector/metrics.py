"""The collector's Prometheus metrics as text: request and writer counters, inserts per table and their sizes,
the spool, call pairing, API key checks, redactions, the scheduled jobs and notifications of the last day (from
their tables), and the active and created parts per table (from ``system.parts``).

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


def _parts_lines(store) -> list[str]:
    """Active parts per table (and in its fullest partition) and parts created per table, from ``system.parts``.

    Parts created is the table's highest block number: every insert (and mutation) takes the next number and a
    merged part keeps its range, so the number only grows, like a counter (per partition on Replicated tables,
    summed). One aggregation over a few hundred rows per scrape; empty when the database does not answer."""
    try:
        rows = store.query(
            "SELECT table, partition_id, startsWith(any(engine), 'Replicated'), countIf(active), "
            "max(max_block_number) FROM system.parts WHERE database = {db:String} GROUP BY table, partition_id "
            "ORDER BY table", parameters={"db": store.database}).result_rows
    except Exception:  # noqa: BLE001 - the database is down: the other metrics still answer
        return []
    tables: dict[str, list[int]] = {}  # table -> [active, fullest partition, created]
    for table, _, replicated, active, block in rows:
        entry = tables.setdefault(table, [0, 0, 0])
        entry[0] += active
        entry[1] = max(entry[1], active)
        entry[2] = entry[2] + block if replicated else max(entry[2], block)
    return [
        "# TYPE inferwatch_parts_created_total counter",
        *(f'inferwatch_parts_created_total{{table="{t}"}} {v[2]}' for t, v in tables.items()),
        "# TYPE inferwatch_active_parts gauge",
        *(f'inferwatch_active_parts{{table="{t}"}} {v[0]}' for t, v in tables.items()),
        "# TYPE inferwatch_active_parts_max_per_partition gauge",
        *(f'inferwatch_active_parts_max_per_partition{{table="{t}"}} {v[1]}' for t, v in tables.items()),
    ]


def render(state: Any) -> str:
    """The Prometheus text exposition of the collector whose ``app.state`` is ``state`` (set up by the app's
    lifespan). Runs the queries of the job and notifier lines and of the parts; answers without them when the
    database is down."""
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
        *state.writer.insert_metric_lines(),  # inserts per table, rows and bytes per insert
        *state.writer.metric_lines(),  # the spool: spooled/replayed batches, bytes, oldest age
        *state.call_pairing.metric_lines(),  # held LLM calls, spans merged into one row per request
        *state.keys.metric_lines(),  # key lookups, refusals, the two key caches, the revocation poll
        "# TYPE inferwatch_redactions_total counter",
        *(f'inferwatch_redactions_total{{entity="{entity}"}} {count}'
          for entity, count in sorted(ingest.redactions.items())),
        *_job_and_notifier_lines(state.store),
        *_parts_lines(state.store),
    ]
    return "\n".join(lines) + "\n"
