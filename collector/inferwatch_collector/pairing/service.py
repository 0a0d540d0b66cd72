"""The pairing window: held LLM calls in memory, settled into one row per provider request.

``add`` takes a request's held calls once their request committed (they are in ``llm_calls_held`` by then);
a background thread settles every call whose window has passed, together with whatever it pairs with
(:func:`.match.group_calls`): held calls of the same trace, or a row already in ``llm_calls`` (a twin that
arrived after its partner was settled is then absorbed into that row). A settled group is one write of
``llm_calls`` + ``spans`` + ``prompt_logs`` through the writer; a write that fails leaves the group held for the
next tick, so nothing acknowledged is lost. ``settle_all`` settles everything now (shutdown, tests).
``recover`` re-holds, at start, what ``llm_calls_held`` kept but the tables do not have (a collector that stopped
abruptly), looking back :data:`RECOVER_LOOKBACK_S` from the newest held row.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..conventions import REFUSAL_REASONS, TRUNCATION_REASONS
from ..native import encode_rows
from ..normalize.batch import Pricer
from ..prompt_view import covers
from ..rows import LlmCallRow, PromptLogRow, SpanRow
from ..store import Store
from .held import HeldCall, from_payload
from .match import ROOT_TOLERANCE_US, CallView, group_calls
from .merge import absorbed_span, kept_first, merged_row, moved_logs

log = logging.getLogger(__name__)

RECOVER_LOOKBACK_S = 900
SETTLE_BATCH = 20_000  # due calls per write (with their twins): past the writer's flush_rows, so it commits at once
_WRITE_TIMEOUT_S = 60.0
_SLACK_US = 600_000_000  # how far around the held calls' times a written twin is looked for


@dataclass
class PairingStats:
    settled_calls: int = 0  # rows written to llm_calls (or absorbed into one already there)
    merged_spans: int = 0  # spans that became part of another span's row
    late_merges: int = 0  # of those, absorbed into a row written before they arrived
    settle_failures: int = 0
    recovered_calls: int = 0


@dataclass
class _Entry:
    call: HeldCall
    due: float


class CallPairing:
    """Held LLM calls of every project, settled after ``window_s`` (see the module docstring)."""

    def __init__(self, store: Store, submit: Callable[[dict], Any], price: Pricer | None, window_s: float, *,
                 max_held: int = 200_000, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._submit = submit
        self._price = price
        self.window_s = window_s
        self.max_held = max_held
        self._clock = clock
        self._pending: dict[tuple[str, str], _Entry] = {}
        self._by_trace: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._lock = threading.Lock()
        self._settling = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.stats = PairingStats()

    # --- input ---
    def add(self, calls: Iterable[HeldCall]) -> None:
        """Hold ``calls`` (already durable in ``llm_calls_held``) for the window."""
        due = self._clock() + self.window_s
        with self._lock:
            for call in calls:
                if call.key not in self._pending:
                    self._pending[call.key] = _Entry(call, due)
                    self._by_trace[(call.row.project_id, call.row.trace_id)].add(call.row.span_id)

    def patch_finish_reasons(self, project_id: str, reasons: dict[tuple[str, str], str]) -> int:
        """Give held calls that lack a finish reason the one a log event reported ((trace_id, span_id) ->
        reason). Returns how many were applied (the logs route counts both outcomes)."""
        applied = 0
        with self._lock:
            for (trace_id, span_id), reason in reasons.items():
                entry = self._pending.get((project_id, span_id))
                if entry is None or entry.call.row.trace_id != trace_id or entry.call.row.finish_reason:
                    continue
                reason = reason.lower().replace("-", "_")
                row = entry.call.row._replace(
                    finish_reason=reason, truncated=entry.call.row.truncated or reason in TRUNCATION_REASONS,
                    refusal=entry.call.row.refusal or reason in REFUSAL_REASONS)
                entry.call = HeldCall(row, entry.call.logs)
                applied += 1
        return applied

    @property
    def held(self) -> int:
        return len(self._pending)

    # --- settling ---
    def settle_all(self) -> int:
        """Settle every held call now; returns the rows written (or absorbed)."""
        return self._settle(force=True)

    def settle_due(self) -> int:
        """Settle the calls whose window has passed (and the oldest beyond ``max_held``)."""
        return self._settle(force=False)

    def _settle(self, force: bool) -> int:
        settled = 0
        while True:
            count, more = self._settle_batch(force)
            settled += count
            if not more:
                return settled

    def _settle_batch(self, force: bool) -> tuple[int, bool]:
        """Settle up to :data:`SETTLE_BATCH` of the oldest due calls (with what they pair with); returns (rows
        settled, whether more are due)."""
        with self._settling:  # one settlement at a time: the background thread and settle_all never interleave
            now = self._clock()
            with self._lock:
                overflow = len(self._pending) - self.max_held
                due: set[tuple[str, str]] = set()
                for index, (key, entry) in enumerate(self._pending.items()):  # arrival order: oldest first
                    if len(due) >= SETTLE_BATCH or not (force or entry.due <= now or index < overflow):
                        break
                    due.add(key)
                if not due:
                    return 0, False
                traces = {(project, self._pending[(project, span)].call.row.trace_id) for project, span in due}
                batch = {(project, span): self._pending[(project, span)]
                         for project, trace in traces for span in self._by_trace.get((project, trace), ())}
                batch.update(self._roots_beside(due))
            by_project: dict[str, list[_Entry]] = defaultdict(list)
            for (project, _), entry in batch.items():
                by_project[project].append(entry)
            settled = 0
            failed = False
            for project, entries in by_project.items():
                try:
                    settled += self._settle_project(project, entries, due)
                except Exception:
                    failed = True
                    self.stats.settle_failures += 1
                    log.exception("settling held LLM calls of a project failed; they stay held and are retried")
            return settled, len(due) >= SETTLE_BATCH and not failed

    def _roots_beside(self, due: set[tuple[str, str]]) -> dict[tuple[str, str], _Entry]:
        """Held root calls, of any trace, near a due root call of their project (rule 4 of :mod:`.match`)."""
        windows: dict[str, tuple[int, int]] = {}
        for key in due:
            row = self._pending[key].call.row
            if not row.parent_span_id:
                low, high = windows.get(key[0], (row.start_time, row.end_time))
                windows[key[0]] = (min(low, row.start_time), max(high, row.end_time))
        if not windows:
            return {}
        return {key: entry for key, entry in self._pending.items()
                if not entry.call.row.parent_span_id and key[0] in windows
                and windows[key[0]][0] - ROOT_TOLERANCE_US <= entry.call.row.start_time
                and entry.call.row.end_time <= windows[key[0]][1] + ROOT_TOLERANCE_US}

    def _settle_project(self, project: str, entries: list[_Entry], due: set[tuple[str, str]]) -> int:
        calls = {entry.call.row.span_id: entry for entry in entries}
        views = [CallView.of(entry.call.row) for entry in entries]
        groups = [group for group in group_calls(views, self._written(project, entries))
                  if any((project, view.span_id) in due for view in group)]
        llm_rows: list[LlmCallRow] = []
        span_rows: list[SpanRow] = []
        logs: list[PromptLogRow] = []
        done: list[tuple[str, str]] = []
        merged = late = 0
        for group in groups:
            held = [calls[view.span_id] for view in group if view.span_id in calls]
            done.extend((project, entry.call.row.span_id) for entry in held)
            written = [view for view in group if view.span_id not in calls]
            if written:  # the request's row is already in llm_calls: these spans are part of it
                kept_id = written[0].span_id
                span_rows.extend(absorbed_span(entry.call.row, kept_id) for entry in held)
                logs.extend(log_row for entry in held for log_row in entry.call.logs)
                merged += len(held)
                late += len(held)
                continue
            with_content = {entry.call.row.span_id for entry in held if entry.call.logs}
            rows = kept_first([entry.call.row for entry in held], with_content)
            row = merged_row(rows, self._price)
            llm_rows.append(row)
            span_rows.extend(absorbed_span(other, row.span_id) for other in rows[1:])
            logs.extend(moved_logs(row, {entry.call.row.span_id: entry.call.logs for entry in held}))
            merged += len(rows) - 1
        logs = self._not_yet_written(project, logs)
        tables = {name: encode_rows(name, rows) for name, rows in
                  (("llm_calls", llm_rows), ("spans", span_rows), ("prompt_logs", logs)) if rows}
        if tables:
            self._submit(tables).result(timeout=_WRITE_TIMEOUT_S)
        with self._lock:
            for key in done:
                entry = self._pending.pop(key, None)
                if entry is not None:
                    spans = self._by_trace.get((key[0], entry.call.row.trace_id))
                    if spans is not None:
                        spans.discard(key[1])
                        if not spans:
                            del self._by_trace[(key[0], entry.call.row.trace_id)]
            self.stats.settled_calls += len(groups)
            self.stats.merged_spans += merged
            self.stats.late_merges += late
        return len(groups)

    def _not_yet_written(self, project: str, logs: list[PromptLogRow]) -> list[PromptLogRow]:
        """``logs`` less those whose prompt and completion are already stored for their span: the same content
        sent as GenAI log events to ``/v1/logs`` during the window (OpenLIT sends both)."""
        if not logs:
            return logs
        result = self._store.query(
            f"SELECT span_id, prompt, completion FROM {self._store.table('prompt_logs')}"
            " WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}"
            " AND span_id IN {spans:Array(String)}",
            {"project": project, "traces": sorted({log.trace_id for log in logs}),
             "spans": sorted({log.span_id for log in logs})},
        )
        stored: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
        for span_id, prompt, completion in result.result_rows:
            stored[span_id][0].append(prompt)
            stored[span_id][1].append(completion)
        return [log for log in logs if log.span_id not in stored
                or not (covers(stored[log.span_id][0], log.prompt) and covers(stored[log.span_id][1], log.completion))]

    def _written(self, project: str, entries: list[_Entry]) -> list[CallView]:
        """Rows already in llm_calls that the held calls may duplicate: those of their traces or response ids,
        and, for held root calls, root calls of any trace close in time (rule 4 of :mod:`.match`; our SDK's span is a root of its
        own trace beside the provider client's)."""
        rows = [entry.call.row for entry in entries]
        roots = [row for row in rows if not row.parent_span_id]
        root_low = min((row.start_time for row in roots), default=0) - ROOT_TOLERANCE_US
        root_high = max((row.end_time for row in roots), default=0) + ROOT_TOLERANCE_US
        result = self._store.query(
            "SELECT span_id, parent_span_id, trace_id, response_id, provider, request_model, response_model,"
            " toUnixTimestamp64Micro(start_time), toUnixTimestamp64Micro(end_time), attributes['otel.scope.name'],"
            f" service_name FROM {self._store.table('llm_calls')}"
            " WHERE project_id = {project:String}"
            " AND start_time BETWEEN fromUnixTimestamp64Micro({low:Int64}) AND fromUnixTimestamp64Micro({high:Int64})"
            " AND (trace_id IN {traces:Array(String)} OR response_id IN {responses:Array(String)}"
            " OR (parent_span_id = '' AND {roots:Bool}"
            " AND start_time >= fromUnixTimestamp64Micro({root_low:Int64})"
            " AND end_time <= fromUnixTimestamp64Micro({root_high:Int64})))",
            {"project": project, "traces": sorted({row.trace_id for row in rows}),
             "responses": sorted({row.response_id for row in rows if row.response_id}),
             "low": min(row.start_time for row in rows) - _SLACK_US,
             "high": max(row.end_time for row in rows) + _SLACK_US,
             "roots": bool(roots), "root_low": root_low, "root_high": root_high},
        )
        return [CallView(*values) for values in result.result_rows]

    # --- recovery and the background thread ---
    def recover(self) -> int:
        """Hold again what ``llm_calls_held`` has and neither ``llm_calls`` nor ``spans`` does; returns how many."""
        held_table = self._store.table("llm_calls_held")
        result = self._store.query(
            f"SELECT payload FROM {held_table} WHERE received_at >="
            f" (SELECT max(received_at) FROM {held_table}) - toIntervalSecond({{lookback:UInt32}})",
            {"lookback": RECOVER_LOOKBACK_S},
        )
        calls = {}
        for (payload,) in result.result_rows:
            call = from_payload(payload)
            calls[call.key] = call
        by_project: dict[str, list[HeldCall]] = defaultdict(list)
        for call in calls.values():
            by_project[call.row.project_id].append(call)
        missing: list[HeldCall] = []
        for project, project_calls in by_project.items():
            present = self._present(project, project_calls)
            missing.extend(call for call in project_calls if call.row.span_id not in present)
        self.add(missing)
        self.stats.recovered_calls += len(missing)
        return len(missing)

    def _present(self, project: str, calls: list[HeldCall]) -> set[str]:
        parameters = {"project": project, "traces": sorted({call.row.trace_id for call in calls}),
                      "spans": sorted({call.row.span_id for call in calls})}
        present: set[str] = set()
        for table in ("llm_calls", "spans"):
            result = self._store.query(
                f"SELECT span_id FROM {self._store.table(table)} WHERE project_id = {{project:String}}"
                " AND trace_id IN {traces:Array(String)} AND span_id IN {spans:Array(String)}", parameters)
            present.update(span_id for (span_id,) in result.result_rows)
        return present

    def start(self, tick_s: float = 1.0) -> None:
        """Settle due calls every ``tick_s`` seconds on a background thread."""
        def run() -> None:
            while not self._stop.wait(tick_s):
                self.settle_due()

        self._thread = threading.Thread(target=run, name="inferwatch-pairing", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and settle everything still held (call before the writer drains)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=_WRITE_TIMEOUT_S)
        self.settle_all()

    def metric_lines(self) -> list[str]:
        stats = self.stats
        return [
            "# TYPE inferwatch_pairing_held_calls gauge",
            f"inferwatch_pairing_held_calls {self.held}",
            "# TYPE inferwatch_pairing_settled_calls_total counter",
            f"inferwatch_pairing_settled_calls_total {stats.settled_calls}",
            "# TYPE inferwatch_llm_spans_merged_total counter",
            f"inferwatch_llm_spans_merged_total {stats.merged_spans}",
            "# TYPE inferwatch_llm_spans_merged_late_total counter",
            f"inferwatch_llm_spans_merged_late_total {stats.late_merges}",
            "# TYPE inferwatch_pairing_settle_failures_total counter",
            f"inferwatch_pairing_settle_failures_total {stats.settle_failures}",
            "# TYPE inferwatch_pairing_recovered_calls_total counter",
            f"inferwatch_pairing_recovered_calls_total {stats.recovered_calls}",
        ]
