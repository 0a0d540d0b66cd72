"""The pairing window: held LLM calls in memory, settled into one row per provider request.

``add`` takes a request's held calls once their request committed (they are in ``llm_calls_held`` by then);
a background thread settles every call whose window has passed, together with whatever it pairs with
(:func:`.match.group_calls`): held calls (of its trace, or roots beside it), or a row of its trace already in
``llm_calls`` (a twin that arrived after its partner was settled, or our SDK's row, is then absorbed into that
row). A twin in another trace whose partner is already written (our SDK's root call beside the anthropic client's
own root span) is not found: that lookup would scan an hour of calls. A settled group is one write of
``llm_calls`` + ``spans`` + ``prompt_logs`` through the writer; a write that fails leaves the group held for the
next tick, so nothing acknowledged is lost. ``settle_all`` settles everything now (shutdown, tests).
``recover`` re-holds, at start, what ``llm_calls_held`` kept but the tables do not have (a collector that stopped
abruptly), looking back :data:`RECOVER_LOOKBACK_S` from the newest held row.
"""

from __future__ import annotations

import logging
import threading
import time
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..conventions import REFUSAL_REASONS, TRUNCATION_REASONS
from ..native import encode_rows
from ..normalize.batch import Pricer
from ..prompt_view import covers
from ..rows import LlmCallRow, PromptLogRow, SpanRow
from .held import HeldCall, from_payload
from .match import ROOT_TOLERANCE_US, CallView, group_calls
from .merge import absorbed_span, kept_first, merged_row, moved_logs

if TYPE_CHECKING:  # annotations only: ingest workers import this package without a database client
    from ..store import Store

log = logging.getLogger(__name__)

RECOVER_LOOKBACK_S = 900
SETTLE_BATCH = 20_000  # due calls per write (with their twins): past the writer's flush_rows, so it commits at once
_WRITE_TIMEOUT_S = 60.0
_LOOKUP_CHUNK = 1_000
_SLACK_US = 600_000_000  # how far around the held calls' times a written twin is looked for


def _chunks(items: list) -> Iterator[list]:
    """``items`` in runs of :data:`_LOOKUP_CHUNK`: a query with tens of thousands of literals is slow to parse."""
    return (items[i:i + _LOOKUP_CHUNK] for i in range(0, len(items), _LOOKUP_CHUNK))


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
        """Held root calls, of any trace, starting within :data:`ROOT_TOLERANCE_US` of a due root call of their
        project (rule 4 of :mod:`.match`)."""
        starts: dict[str, list[int]] = defaultdict(list)
        for key in due:
            row = self._pending[key].call.row
            if not row.parent_span_id:
                starts[key[0]].append(row.start_time)
        if not starts:
            return {}
        for times in starts.values():
            times.sort()
        beside = {}
        for key, entry in self._pending.items():
            times = starts.get(key[0])
            row = entry.call.row
            if times is None or row.parent_span_id or key in due:
                continue
            at = bisect_left(times, row.start_time - ROOT_TOLERANCE_US)
            if at < len(times) and times[at] <= row.start_time + ROOT_TOLERANCE_US:
                beside[key] = entry
        return beside

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
        rows = []
        for chunk in _chunks(logs):
            rows.extend(self._store.query(
                f"SELECT span_id, prompt, completion FROM {self._store.table('prompt_logs')}"
                " WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}"
                " AND span_id IN {spans:Array(String)}",
                {"project": project, "traces": sorted({log.trace_id for log in chunk}),
                 "spans": sorted({log.span_id for log in chunk})},
            ).result_rows)
        stored: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
        for span_id, prompt, completion in rows:
            stored[span_id][0].append(prompt)
            stored[span_id][1].append(completion)
        return [log for log in logs if log.span_id not in stored
                or not (covers(stored[log.span_id][0], log.prompt) and covers(stored[log.span_id][1], log.completion))]

    def _written(self, project: str, entries: list[_Entry]) -> list[CallView]:
        """Rows of the held calls' traces already in llm_calls (trace ids have a bloom-filter index; a lookup by
        response id or time alone would scan an hour of calls), asked in chunks."""
        found: dict[str, CallView] = {}
        rows = [entry.call.row for entry in entries]
        for chunk in _chunks(rows):
            result = self._store.query(
                "SELECT span_id, parent_span_id, trace_id, response_id, provider, request_model, response_model,"
                " toUnixTimestamp64Micro(start_time), toUnixTimestamp64Micro(end_time),"
                f" attributes['otel.scope.name'], service_name FROM {self._store.table('llm_calls')}"
                " WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}"
                " AND start_time BETWEEN fromUnixTimestamp64Micro({low:Int64}) AND fromUnixTimestamp64Micro({high:Int64})",
                {"project": project, "traces": sorted({row.trace_id for row in chunk}),
                 "low": min(row.start_time for row in chunk) - _SLACK_US,
                 "high": max(row.end_time for row in chunk) + _SLACK_US},
            )
            for values in result.result_rows:
                found[values[0]] = CallView(*values)
        return list(found.values())

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
        present: set[str] = set()
        for chunk in _chunks(calls):
            parameters = {"project": project, "traces": sorted({call.row.trace_id for call in chunk}),
                          "spans": sorted({call.row.span_id for call in chunk})}
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
                try:
                    self.settle_due()
                except Exception:  # the thread must outlive a bug: what is held stays held for the next tick
                    self.stats.settle_failures += 1
                    log.exception("settling held LLM calls failed")

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
