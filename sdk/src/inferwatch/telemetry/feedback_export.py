"""The feedback stage of the export pipeline: items queued by :func:`inferwatch.feedback`, sent by the export
thread as JSON to ``{endpoint}/api/v1/feedback`` (up to :data:`MAX_BATCH` per request, :data:`RETRY`).

Before sending, an item named only by a provider response id is given the trace of the call that produced it
where this process made that call (the ids remembered by :mod:`inferwatch._responses`, then the calls still
waiting in the span queue), and ``comment`` and ``label`` are redacted unless capture is ``"full"``.

The collector stores feedback that arrives before its call's span unmatched, and lists it ``unmatched`` in its
answer; an item that names its call by trace id is then sent once more, :data:`RESEND_UNMATCHED_AFTER_S` later,
which fills in the call's fields. At a flush the spans go first, then the queued items, then the waiting ones at
once (an item still unmatched then names another process's call: it keeps its later send, once).

Counters (:func:`counts`) are per process, over its lifetime.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import _guard, _responses
from ..options import Options
from ..transport import RetryPolicy, Transport
from .content import Scrub, load_scrubbers

log = logging.getLogger("inferwatch")

PATH = "/api/v1/feedback"
MAX_QUEUE = 1000  # items waiting to be sent; beyond this they are dropped (counted as queue_full)
MAX_BATCH = 100  # items per request (the collector takes up to 1000)
# the collector's feedback API: 408, 429 and any 5xx are worth another attempt
RETRY = RetryPolicy(attempts=4, first_backoff_s=0.5, max_backoff_s=10.0, max_retry_after_s=10.0,
                    retry_statuses=frozenset({408, 429, *range(500, 600)}))
MAX_COMMENT_BYTES = 4096  # the collector's limit (UTF-8); longer comments are truncated after redaction
# An item the collector stored before its call arrived that names its call by trace id is sent once more this
# long after: the call's span has been exported by then, and the same feedback_id replaces the row with the
# call's fields copied in.
RESEND_UNMATCHED_AFTER_S = 10.0
DROP_REASONS = ("invalid", "queue_full", "internal_error", "shutdown")

PendingIds = Callable[[set[str]], dict[str, tuple[int, int]]]

_counts_lock = threading.Lock()
_counts: dict[str, Any] = {"sent": 0, "failed": 0, "resent": 0, "resend_failed": 0,
                           "dropped": dict.fromkeys(DROP_REASONS, 0)}
_logged: set[str] = set()


def count(key: str, n: int = 1, reason: str | None = None) -> None:
    """Add ``n`` to counter ``key``, or to ``dropped[reason]``."""
    with _counts_lock:
        if reason is None:
            _counts[key] += n
        else:
            _counts["dropped"][reason] = _counts["dropped"].get(reason, 0) + n


def counts() -> dict[str, Any]:
    """A copy of the counters: ``sent``, ``failed``, ``resent``, ``resend_failed``, ``dropped`` by reason."""
    with _counts_lock:
        return {key: dict(value) if isinstance(value, dict) else value for key, value in _counts.items()}


def reset_counts() -> None:
    """Forget counters and logged warnings (tests)."""
    with _counts_lock:
        _counts.update(sent=0, failed=0, resent=0, resend_failed=0, dropped=dict.fromkeys(DROP_REASONS, 0))
        _logged.clear()


def warn_once(kind: str, message: str, *args: Any) -> None:
    with _counts_lock:
        first = kind not in _logged
        _logged.add(kind)
    if first:
        log.warning("inferwatch feedback: " + message + " (further ones are only counted)", *args)


def after_fork_in_child() -> None:
    global _counts_lock
    _counts_lock = threading.Lock()  # a parent thread may have held it at fork time


class FeedbackExport:
    """The feedback of one process: a bounded queue (any thread) and the sending (export thread only)."""

    def __init__(self, options: Options, *, transport: Transport, pending_ids: PendingIds,
                 abort: threading.Event) -> None:
        self.queue: deque[dict[str, Any]] = deque()
        self.submitted = 0  # items ever queued (a flush sends those queued before it)
        # (due, item, sent early): unmatched items to send once more, in due order; "sent early" once a flush
        # sent the item before its time and the collector still had not seen its call (then it waits for its time)
        self.again: list[tuple[float, dict[str, Any], bool]] = []
        self._transport = transport
        self._pending_ids = pending_ids
        self._abort = abort
        self._timeout_s = max(1.0, min(float(options.export_timeout_s), 10.0))
        self._redact_text = options.capture != "full"
        self._scrub: Scrub | None = None
        self._lock = threading.Lock()

    # --- any thread -------------------------------------------------------------------------------------------
    def submit(self, item: dict[str, Any]) -> bool:
        """Queue an item; False when the queue is full."""
        with self._lock:
            if len(self.queue) >= MAX_QUEUE:
                return False
            self.queue.append(item)
            self.submitted += 1
        return True

    def pending(self) -> int:
        return len(self.queue)

    def next_due(self) -> float | None:
        """When the first waiting item is due for its send once more (monotonic), if any."""
        again = self.again
        return again[0][0] if again else None

    # --- export thread ----------------------------------------------------------------------------------------
    def send_queued(self, upto: int | None = None, spans_out: bool = False) -> None:
        """Send the items queued so far (``upto``: those among the first ``upto`` ever queued; items queued
        meanwhile wait for the export thread's next round, after any flush asked for meanwhile); ``spans_out``:
        sent right after this process's spans were exported (see :meth:`_keep_unmatched`)."""
        if upto is None:
            upto = self.submitted
        while True:
            with self._lock:
                taken = self.submitted - len(self.queue)
                n = min(len(self.queue), max(upto - taken, 0))
                batch = [self.queue.popleft() for _ in range(min(n, MAX_BATCH))]
            if not batch:
                return
            with _guard.guard("feedback.deliver"):
                self.deliver(batch, spans_out)

    def resend_due(self) -> None:
        """Send the due unmatched items once more; whatever the answer, they are not kept again. ``again`` is in
        order of due time (every item waits the same delay), so the due ones lead it."""
        now = time.monotonic()
        n = next((i for i, (at, _, _) in enumerate(self.again[:MAX_BATCH]) if at > now),
                 min(len(self.again), MAX_BATCH))
        if not n:
            return
        due = [item for _, item, _ in self.again[:n]]
        del self.again[:n]
        self._send_again(due)

    def resend_early(self, deadline: float) -> None:
        """At a flush, the spans exported: send the waiting items not sent early yet, without waiting for their
        time, until ``deadline`` (the rest wait as they were). An item the collector still lists unmatched, or
        whose send failed, waits for its time again, marked so that the next flush does not send it early."""
        early = [entry for entry in self.again if not entry[2]]
        if not early:
            return
        self.again = [entry for entry in self.again if entry[2]]
        waiting: set[str] = set()
        done = 0
        try:
            while done < len(early) and time.monotonic() < deadline:
                items = [item for _, item, _ in early[done:done + MAX_BATCH]]
                unmatched = self._send_again(items)
                done += len(items)
                waiting |= {item["feedback_id"] for item in items} if unmatched is None else unmatched
        finally:  # whatever happened, nothing waiting is lost: the unsent keep their place and their early send
            back = [(due, item, True) for due, item, _ in early[:done] if item["feedback_id"] in waiting]
            self.again = sorted(self.again + back + early[done:], key=lambda entry: entry[0])

    def drop_queued(self) -> int:
        """Empty the queue (the pipeline stopped); how many items were in it."""
        with self._lock:
            n = len(self.queue)
            self.queue.clear()
        return n

    def deliver(self, batch: list[dict[str, Any]], spans_out: bool = False) -> None:
        """Link, redact and post ``batch``; a batch refused as invalid (422) is sent again item by item."""
        self._link(batch)
        ready = []
        for item in batch:
            try:
                ready.append(self._prepare(item))
            except Exception as exc:  # noqa: BLE001 - a bug of ours drops the item, never the thread
                _guard.record_internal_error("feedback.prepare", exc)
                count("dropped", reason="internal_error")
        if not ready:
            return
        status, answer = self._post(ready)
        if 200 <= status < 300:
            count("sent", len(ready))
            self._keep_unmatched(ready, answer, spans_out)
        elif status == 422 and len(ready) > 1:
            for item in ready:
                status, answer = self._post([item])
                if 200 <= status < 300:
                    count("sent")
                    self._keep_unmatched([item], answer, spans_out)
                else:
                    self._failed(status, 1)
        else:
            self._failed(status, len(ready))

    def _keep_unmatched(self, sent: list[dict[str, Any]], answer: bytes, spans_out: bool) -> None:
        """Schedule the sent items the collector could not match to their call yet, and that name it by trace id,
        for one more send. Items sent right after this process's spans were exported (``spans_out``) are
        scheduled as sent early already: their call is not one of this process's spans, so a flush sending them
        again would not help."""
        unmatched = _unmatched(answer)
        if not unmatched:
            return
        due = time.monotonic() + RESEND_UNMATCHED_AFTER_S
        self.again += [(due, item, spans_out) for item in sent
                       if item["feedback_id"] in unmatched and "trace_id" in item]

    def _send_again(self, items: list[dict[str, Any]]) -> set[str] | None:
        """Post ``items`` once more; counted as ``resent`` or ``resend_failed`` (they were counted ``sent``
        already). Returns the ids the collector still lists unmatched, None when the send failed."""
        status, answer = self._post(items)
        if not 200 <= status < 300:
            count("resend_failed", len(items))
            return None
        count("resent", len(items))
        return _unmatched(answer)

    def _failed(self, status: int, n: int) -> None:
        count("failed", n)
        url = self._transport.url(PATH)
        if status:
            warn_once(f"http:{status}", "the collector answered HTTP %d to %s", status, url)
        else:
            warn_once("unreachable", "cannot reach the collector at %s", url)

    def _link(self, batch: list[dict[str, Any]]) -> None:
        """Give the items named only by a response id the trace of the call that produced it, where this process
        made that call: the ids remembered so far, then the calls still waiting in the span queue (once per
        batch), then the remembered ids again. A failure here sends the items as they are."""
        try:
            unknown = [item for item in batch if "trace_id" not in item and "response_id" in item
                       and not _link_item(item, _responses.lookup(item["response_id"]))]
            if not unknown:
                return
            pending = self._pending_ids({item["response_id"] for item in unknown})
            for item in unknown:
                ids = pending.get(item["response_id"])
                _link_item(item, _responses.as_hex(*ids) if ids is not None
                           else _responses.lookup(item["response_id"]))  # remembered meanwhile
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("feedback.link", exc)

    def _prepare(self, item: dict[str, Any]) -> dict[str, Any]:
        out = dict(item)
        for key in ("comment", "label"):
            text = out.get(key)
            if text is None:
                continue
            if self._redact_text:
                try:
                    text = self._redact(text)
                except Exception as exc:  # noqa: BLE001 - fail closed: the text is dropped, never sent raw
                    _guard.record_internal_error("feedback.redact", exc)
                    out.pop(key)
                    continue
            if key == "comment":
                text = text.encode("utf-8", "ignore")[:MAX_COMMENT_BYTES].decode("utf-8", "ignore")
            out[key] = text
        if not {"comment", "label", "score", "thumbs_up"} & out.keys():
            raise ValueError("nothing left to send once the text that failed redaction was dropped")
        return out

    def _redact(self, text: str) -> str:
        if self._scrub is None:
            self._scrub = load_scrubbers().redact
            if self._scrub is None:
                raise RuntimeError("the redaction package is unavailable")
        return self._scrub(text)

    def _post(self, items: list[dict[str, Any]]) -> tuple[int, bytes]:
        """(the last HTTP status or 0, the answer's body when it was 2xx)."""
        body = json.dumps(items, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")
        answer = self._transport.send(PATH, body, "application/json", RETRY, timeout_s=self._timeout_s,
                                        accept="application/json", abort=self._abort)
        return answer.status, answer.body


def _unmatched(answer: bytes) -> set[str]:
    """The feedback ids a collector's 2xx answer lists as ``unmatched`` (none for anything else)."""
    try:
        ids = json.loads(answer or b"{}").get("unmatched")
    except (ValueError, AttributeError):
        return set()
    return {one for one in ids if isinstance(one, str)} if isinstance(ids, list) else set()


def _link_item(item: dict[str, Any], recorded: tuple[str, str] | None) -> bool:
    """Give ``item`` the (trace id, span id) hex pair, if any (a span id given by the app stays)."""
    if recorded is None:
        return False
    item["trace_id"] = recorded[0]
    item.setdefault("span_id", recorded[1])
    return True
