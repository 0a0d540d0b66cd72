"""User feedback and evaluation scores: ``inferwatch.feedback(trace_id, thumbs_up=True)``.

Each call becomes one OpenTelemetry ``gen_ai.evaluation.result`` item posted as JSON to the collector's
``{endpoint}/api/v1/feedback`` with the ingest key, which stores it next to the call (model, feature, experiment,
variant and prompt template are copied from the call there).

Like the rest of the SDK this never breaks the host (DESIGN §4): the caller only validates its arguments and
appends to a bounded deque (O(1), no I/O); a daemon thread redacts, batches (up to :data:`MAX_BATCH` items per
request), posts, and retries 408/429/5xx and connection errors :data:`RETRY_DELAYS_S` times with jittered backoff
(honouring ``Retry-After``). Bad arguments, a full queue and every internal error are counted, never raised.
Before ``inferwatch.init()`` (or with ``enabled=False``) it does nothing and returns ``""``.

Privacy: the user is identified only by the ``user_hash`` of the current :func:`inferwatch.tags`; unless capture
is ``"full"``, ``comment`` and ``label`` are redacted in the export thread before they leave the process (with
``inferwatch.redaction.DEFAULT_REDACTOR`` when that module exists, else the SDK's built-in scrub); the collector
redacts them again whatever the SDK did. The default feedback id is an HMAC of the content with the SDK's user
hash key, so the same feedback sent twice is one row and the id reveals nothing about the comment.

Linking: feedback by a provider response id is given the call's trace where this process made the call (at once,
or by the sender thread from the calls still waiting for the span export). Feedback that reaches the collector
before its call's span does is stored unmatched (no model, feature, experiment or variant copied in); an item that
names its call by trace id is then sent once more, :data:`RESEND_UNMATCHED_AFTER_S` later, which fills them in. A
:func:`flush` (and so the one at exit, and ``inferwatch.flush()``/``shutdown()``) does not wait for that: it
exports the process's spans and sends such items at once, so that a short-lived job's feedback (a script, a
serverless function, the demo's last seconds) gets its call's fields too. An item still unmatched then (its call
made by another process) keeps its later send.

Counters: :func:`stats` (``sent``, ``failed``, ``resent``, ``resend_failed``, ``queued`` and ``dropped`` by
reason). Delivery: :func:`flush` (also at exit, after the spans: :func:`flush_at_exit`). Both are also reachable as
``inferwatch.feedback.stats()`` and ``inferwatch.feedback.flush(timeout)``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import re
import threading
import time
import weakref
from collections import deque
from datetime import datetime, timezone
from typing import Any

from . import _guard, _responses, client, context

log = logging.getLogger("inferwatch")

PATH = "/api/v1/feedback"
MAX_QUEUE = 1000  # items waiting to be sent; beyond this they are dropped (counted as queue_full)
MAX_BATCH = 100  # items per request (the collector takes up to 1000)
RETRY_DELAYS_S: tuple[float, ...] = (0.5, 1.0, 2.0)  # backoff before each retry (jittered ×0.5-1.5)
MAX_RETRY_AFTER_S = 10.0
MAX_COMMENT_BYTES = 4096  # the collector's limit (UTF-8); longer comments are truncated after redaction
MAX_RAW_COMMENT_CHARS = 16_384  # what the caller's thread keeps before redaction
MAX_NAME_CHARS = 128
# An item the collector stored before its call arrived (listed ``unmatched`` in its answer) that names its call by
# trace id is sent once more, this long after: the call's span has been exported by then (every 0.5 s by default),
# and the same feedback_id replaces the row with the call's model, feature, experiment and variant copied in.
# Feedback sent right after its call usually arrives first (the demo: every item).
RESEND_UNMATCHED_AFTER_S = 10.0
IDLE_EXIT_S = 30.0  # the thread exits after this long with nothing to send (restarted on the next item)
ATEXIT_TIMEOUT_S = 2.0
DROP_REASONS = ("invalid", "queue_full", "internal_error")

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_HEX16 = re.compile(r"[0-9a-fA-F]{16}")
_FEEDBACK_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

_counts_lock = threading.Lock()
_counts: dict[str, Any] = {"sent": 0, "failed": 0, "resent": 0, "resend_failed": 0,
                           "dropped": dict.fromkeys(DROP_REASONS, 0)}
_logged: set[str] = set()


class _Invalid(ValueError):
    """A bad argument: the call is dropped (counted as invalid) and logged once per kind."""


def _count(key: str, n: int = 1, reason: str | None = None) -> None:
    with _counts_lock:
        if reason is None:
            _counts[key] += n
        else:
            _counts["dropped"][reason] = _counts["dropped"].get(reason, 0) + n


def _warn_once(kind: str, message: str, *args: Any) -> None:
    with _counts_lock:
        first = kind not in _logged
        _logged.add(kind)
    if first:
        log.warning("inferwatch feedback: " + message + " (further ones are only counted)", *args)


# --- the public call ---------------------------------------------------------------------------------------------
def feedback(trace_id: str | int | None = None, response_id: str | None = None, *, thumbs_up: bool | None = None,
             score: float | None = None, comment: str | None = None, label: str | None = None,
             name: str = "user_feedback", feedback_id: str | None = None, span_id: str | int | None = None) -> str:
    """Record feedback on an LLM call; returns its feedback id, or ``""`` when nothing was queued.

    The call is named by ``trace_id`` (32 hex, or the int of an OTel span context; optionally with ``span_id``)
    or ``response_id`` (the provider's response id); with neither, the current span's trace is used. Give
    ``thumbs_up`` (stored as +1/-1) or ``score``, and/or a ``label`` and a ``comment``. ``feedback_id`` is the
    idempotency key: sending the same id again replaces the earlier feedback (a changed vote); by default it is
    derived from the content. Never blocks on I/O and never raises.
    """
    try:
        pipeline = client.get_pipeline()
        options = client.get_options()
        if pipeline is None or options is None:
            return ""  # inert before init()
        item = _build(trace_id, response_id, thumbs_up, score, comment, label, name, feedback_id, span_id)
        if not _sender_for(pipeline, options).submit(item):
            _count("dropped", reason="queue_full")
            _warn_once("queue_full", "queue full (%d items), feedback dropped", MAX_QUEUE)
            return ""
        return item["feedback_id"]
    except _Invalid as exc:
        _count("dropped", reason="invalid")
        _warn_once(f"invalid:{exc.args[1]}", "%s", exc.args[0])
        return ""
    except Exception as exc:  # noqa: BLE001 - never raise into the app
        _count("dropped", reason="internal_error")
        _guard.record_internal_error("feedback", exc)
        return ""


def _hex_id(value: Any, width: int, pattern: re.Pattern[str], what: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 < value < 1 << (4 * width):
            raise _Invalid(f"{what} must be a non-zero {4 * width}-bit id", what)
        return f"{value:0{width}x}"
    if isinstance(value, str) and pattern.fullmatch(value) and value.strip("0"):
        return value.lower()
    raise _Invalid(f"{what} must be {width} hexadecimal characters (not all zero)", what)


def _text(value: Any, what: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Invalid(f"{what} must be a string", what)
    return value[:limit]


def _build(trace_id: Any, response_id: Any, thumbs_up: Any, score: Any, comment: Any, label: Any, name: Any,
           feedback_id: Any, span_id: Any) -> dict[str, Any]:
    """The item as it will be sent (comment and label still raw: the export thread redacts them)."""
    trace = _hex_id(trace_id, 32, _HEX32, "trace_id")
    span = _hex_id(span_id, 16, _HEX16, "span_id")
    if response_id is not None and (not isinstance(response_id, str) or not 0 < len(response_id) <= 256
                                    or _CONTROL.search(response_id)):
        raise _Invalid("response_id must be a non-empty string of at most 256 printable characters", "response_id")
    if trace is None and response_id is None:
        trace, current_span = _current_ids()
        span = span or current_span
        if trace is None:
            raise _Invalid("feedback needs trace_id or response_id (or a current span)", "ids")
    named = (trace, span)  # the call as the app named it: what the default feedback id is derived from
    if trace is None:
        recorded = _responses.lookup(response_id)  # a call this process made: link it by its trace now
        if recorded is not None:  # (or, later, the sender: _Sender._link)
            trace, span = recorded[0], span or recorded[1]
    if thumbs_up is not None and not isinstance(thumbs_up, bool):
        raise _Invalid("thumbs_up must be True or False", "thumbs_up")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise _Invalid("score must be a finite number", "score")
        if thumbs_up is not None:
            raise _Invalid("give score or thumbs_up, not both", "score")
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS or _CONTROL.search(name):
        raise _Invalid(f"name must be a non-empty string of at most {MAX_NAME_CHARS} characters", "name")
    label = _text(label, "label", MAX_NAME_CHARS)
    comment = _text(comment, "comment", MAX_RAW_COMMENT_CHARS)
    if label is not None and _CONTROL.search(label):
        raise _Invalid("label must not contain control characters", "label")
    if thumbs_up is None and score is None and label is None and comment is None:
        raise _Invalid("nothing to record: give thumbs_up, score, label or comment", "empty")
    if feedback_id is not None and (not isinstance(feedback_id, str) or not _FEEDBACK_ID.fullmatch(feedback_id)):
        raise _Invalid("feedback_id must be 1-128 characters of letters, digits and ._:-", "feedback_id")

    user_hash = context.current_tags().get("user_hash") or None
    item: dict[str, Any] = {"trace_id": trace, "span_id": span, "response_id": response_id, "name": name}
    if thumbs_up is not None:
        item["thumbs_up"] = thumbs_up
        kind, value = "thumbs", 1.0 if thumbs_up else -1.0
    elif score is not None:
        item["score"] = float(score)
        kind, value = "score", float(score)
    else:
        kind, value = ("label" if label is not None else "comment"), 0.0
    item.update(label=label, comment=comment, user_hash=user_hash)
    if feedback_id is None:
        # the ids as named, not as linked: the same feedback by response id gets the same id whether its call
        # was linked here or later by the sender (:meth:`_Sender._link`)
        content = [named[0] or "", named[1] or "", response_id or "", name, kind, repr(value), label or "",
                   comment or "", user_hash or ""]
        feedback_id = context.hash_user_id(json.dumps(content, ensure_ascii=False))[:32]
    item["feedback_id"] = feedback_id
    item["timestamp"] = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    item["source"] = "sdk"
    return {k: v for k, v in item.items() if v is not None}


def _current_ids() -> tuple[str | None, str | None]:
    from opentelemetry import trace as otel_trace

    ctx = otel_trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None, None
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


# --- the sender --------------------------------------------------------------------------------------------------
class _Flush:
    __slots__ = ("deadline", "done")

    def __init__(self, timeout: float) -> None:
        self.done = threading.Event()
        self.deadline = time.monotonic() + timeout  # for the work the flush asks of the sender thread


class _Sender:
    """One bounded queue and (while there is work) one daemon thread, for one pipeline (one ``init()``)."""

    def __init__(self, pipeline: Any, options: Any) -> None:
        self.pipeline = weakref.ref(pipeline)
        self.pid = os.getpid()
        self.url = options.endpoint.rstrip("/") + PATH
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "User-Agent": "inferwatch-python-feedback"}
        if options.api_key:
            self.headers["Authorization"] = f"Bearer {options.api_key}"
        self.timeout_s = max(1.0, min(float(options.export_timeout_s), 10.0))
        self.redact_text = options.capture != "full"
        self.queue: deque[Any] = deque()
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.retired = False  # a newer init() replaced this sender: exit as soon as the queue is empty
        self._scrub: Any = None
        self._opener: Any = None
        # (due, item, sent early): unmatched items to send once more, in due order; "sent early" once a flush sent
        # the item before its time and the collector still had not seen its call (then it waits for its time)
        self.again: list[tuple[float, dict[str, Any], bool]] = []

    # caller threads
    def submit(self, item: dict[str, Any]) -> bool:
        with self.lock:
            if len(self.queue) >= MAX_QUEUE:  # flush markers count too; they are rare and short-lived
                return False
            self._ensure_thread()  # first: if no thread can start, the item is not queued (and not counted sent)
            self.queue.append(item)
        self.wake.set()
        return True

    def flush(self, timeout: float) -> bool:
        if threading.current_thread() is self.thread:
            return False  # a hook inside our own thread: waiting would deadlock
        pipeline = self.pipeline()
        if pipeline is not None and pipeline.on_export_thread():
            return False  # an app's hook in the export thread (on_call, before_send): this flush waits for it
        marker = _Flush(max(timeout, 0.0))
        with self.lock:
            if not self.queue and self.thread is None:
                return True
            self.queue.append(marker)
            self._ensure_thread()
        self.wake.set()
        return marker.done.wait(max(timeout, 0.0))

    def pending(self) -> int:
        return sum(1 for x in list(self.queue) if type(x) is not _Flush)

    def _ensure_thread(self) -> None:  # with self.lock held
        if self.thread is None:
            thread = threading.Thread(target=self._run, name="inferwatch-feedback", daemon=True)
            thread.start()  # may raise (e.g. at interpreter exit): then the next item tries again
            self.thread = thread

    # the sender thread
    def _run(self) -> None:
        with _guard.guard("feedback.suppress_instrumentation"):
            from opentelemetry import context as otel_context

            ctx = otel_context.set_value(otel_context._SUPPRESS_INSTRUMENTATION_KEY, True)
            otel_context.attach(otel_context.set_value(otel_context._SUPPRESS_HTTP_INSTRUMENTATION_KEY, True, ctx))
        idle_since = time.monotonic()
        while True:
            if self.again and self.again[0][0] <= time.monotonic():
                with _guard.guard("feedback.resend"):
                    self._resend()
            batch: list[dict[str, Any]] = []
            marker: _Flush | None = None
            with self.lock:
                while self.queue and len(batch) < MAX_BATCH:
                    entry = self.queue.popleft()
                    if type(entry) is _Flush:
                        marker = entry
                        break
                    batch.append(entry)
                if not batch and marker is None:
                    idle = (self.retired or client.get_pipeline() is not self.pipeline()  # shut down
                            or time.monotonic() - idle_since >= IDLE_EXIT_S)
                    if idle and not self.queue and not self.again:
                        self.thread = None
                        return
            try:
                spans_out = False  # this process's spans exported just now: the collector knows their calls
                if marker is not None and (batch or any(not early for _, _, early in self.again)):
                    with _guard.guard("feedback.flush_spans"):
                        spans_out = self._flush_spans(marker.deadline)
                if batch:
                    with _guard.guard("feedback.deliver"):
                        self._deliver(batch, spans_out)
                if spans_out and self.again:
                    with _guard.guard("feedback.resend"):
                        self._resend_early(marker.deadline)  # type: ignore[union-attr]
            finally:
                if marker is not None:
                    marker.done.set()
            if batch or marker is not None:
                idle_since = time.monotonic()
                continue
            self.wake.wait(min(1.0, max(self.again[0][0] - time.monotonic(), 0.0)) if self.again else 1.0)
            self.wake.clear()

    def _deliver(self, batch: list[dict[str, Any]], spans_out: bool = False) -> None:
        """Post ``batch`` (retried); ``spans_out``: sent right after this process's spans were exported (see
        :meth:`_keep_unmatched`)."""
        self._link(batch)
        ready = []
        for item in batch:
            try:
                ready.append(self._prepare(item))
            except Exception as exc:  # noqa: BLE001 - a bug of ours drops the item, never the thread
                _guard.record_internal_error("feedback.prepare", exc)
                _count("dropped", reason="internal_error")
        if not ready:
            return
        status, answer = self._post_with_retries(ready)
        if 200 <= status < 300:
            _count("sent", len(ready))
            self._keep_unmatched(ready, answer, spans_out)
        elif status == 422 and len(ready) > 1:  # one bad item fails a whole batch: send them one by one
            for item in ready:
                self._deliver_one(item, spans_out)
        else:
            self._failed(status, len(ready))

    def _deliver_one(self, item: dict[str, Any], spans_out: bool) -> None:
        status, answer = self._post_with_retries([item])
        if 200 <= status < 300:
            _count("sent")
            self._keep_unmatched([item], answer, spans_out)
        else:
            self._failed(status, 1)

    def _keep_unmatched(self, sent: list[dict[str, Any]], answer: bytes, spans_out: bool) -> None:
        """Schedule the sent items the collector could not match to their call yet, and that name it by trace id,
        for one more send (:data:`RESEND_UNMATCHED_AFTER_S`). An answer without ``unmatched`` schedules nothing.
        Items sent right after this process's spans were exported (``spans_out``) are scheduled as sent early
        already: their call is not one of this process's spans, so a flush sending them again would not help."""
        unmatched = _unmatched(answer)
        if not unmatched:
            return
        due = time.monotonic() + RESEND_UNMATCHED_AFTER_S
        self.again += [(due, item, spans_out) for item in sent
                       if item["feedback_id"] in unmatched and "trace_id" in item]

    def _resend(self) -> None:
        """Send the due unmatched items once more (sender thread); whatever the answer, they are not kept again.
        ``again`` is in order of due time (every item waits the same delay), so the due ones lead it."""
        now = time.monotonic()
        count = next((n for n, (at, _, _) in enumerate(self.again[:MAX_BATCH]) if at > now),
                     min(len(self.again), MAX_BATCH))
        due = [item for _, item, _ in self.again[:count]]
        del self.again[:count]
        self._send_again(due)

    def _flush_spans(self, deadline: float) -> bool:
        """At a flush, before the feedback is sent: export the spans of this process's calls, so that the
        collector (which acknowledges them once stored) finds the calls the feedback names; True when that
        finished in time. Half the time left at most: a collector throttling spans must not keep the feedback
        itself from being sent. (At exit the spans have been exported already: see :func:`flush_at_exit`.)"""
        pipeline = self.pipeline()
        return pipeline is not None and bool(pipeline.flush(max((deadline - time.monotonic()) / 2, 0.0)))

    def _resend_early(self, deadline: float) -> None:
        """At a flush, the spans exported: send the waiting items not sent early yet, without waiting for their
        time (see the module), until ``deadline`` (the rest wait as they were). An item the collector still lists
        unmatched (its call is another process's, or its span was not delivered), or whose send failed, waits for
        its time again, marked so that the next flush does not send it early once more."""
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

    def _send_again(self, items: list[dict[str, Any]]) -> set[str] | None:
        """Post ``items`` once more; counted as ``resent`` or ``resend_failed`` (they were counted ``sent``
        already). Returns the ids the collector still lists unmatched, None when the send failed."""
        status, answer = self._post_with_retries(items)
        if not 200 <= status < 300:
            _count("resend_failed", len(items))
            return None
        _count("resent", len(items))
        return _unmatched(answer)

    def _failed(self, status: int, n: int) -> None:
        _count("failed", n)
        if status:
            _warn_once(f"http:{status}", "the collector answered HTTP %d to %s", status, self.url)
        else:
            _warn_once("unreachable", "cannot reach the collector at %s", self.url)

    def _link(self, batch: list[dict[str, Any]]) -> None:
        """Give the items named only by a response id the trace of the call that produced it, where this process
        made that call and the export thread has not remembered its id yet (:func:`feedback` links those it
        already has). Why here: a call's response id is remembered by the export thread as it records the call
        (a tapped stream's is read from its events there; reading it on the app's thread as the stream ended cost
        that thread about 3.4 µs per streamed call, bench/README.md, twelfth session), so feedback sent right after
        the call often finds it unknown. Then the calls still waiting for the export are asked for the unknown ids
        (once per batch, newest first, a bounded number:
        :meth:`inferwatch.telemetry.Pipeline.pending_response_ids`), and the remembered ids again: no waiting,
        nothing exported early. A failure here sends the items as they are."""
        try:
            unknown = [item for item in batch if "trace_id" not in item and "response_id" in item
                       and not _link_item(item, _responses.lookup(item["response_id"]))]
            if not unknown:
                return
            pipeline = self.pipeline()
            pending = pipeline.pending_response_ids({item["response_id"] for item in unknown}) if pipeline else {}
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
            if self.redact_text:
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
            self._scrub = _load_scrub()
        return self._scrub(text)

    def _post_with_retries(self, items: list[dict[str, Any]]) -> tuple[int, bytes]:
        """(the last HTTP status or 0, the answer's body when it was 2xx)."""
        body = json.dumps(items, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")
        attempt = 0
        while True:
            status, retry_after, answer = self._post(body)
            retryable = status == 0 or status in (408, 429) or status >= 500
            if not retryable or attempt >= len(RETRY_DELAYS_S):
                return status, answer
            delay = retry_after if retry_after is not None else RETRY_DELAYS_S[attempt] * (0.5 + random.random())
            time.sleep(min(max(delay, 0.0), MAX_RETRY_AFTER_S))
            attempt += 1

    def _post(self, body: bytes) -> tuple[int, float | None, bytes]:
        """(HTTP status or 0 when unreachable, Retry-After seconds, the body of a 2xx answer)."""
        import http.client
        import urllib.error
        import urllib.request

        if self._opener is None:
            self._opener = urllib.request.build_opener()
        request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                return response.status, None, response.read(1 << 16)
        except urllib.error.HTTPError as exc:
            retry_after: float | None = None
            try:
                retry_after = float(exc.headers.get("Retry-After", ""))
            except (TypeError, ValueError):
                retry_after = None
            try:
                exc.read(1 << 16)
                exc.close()
            except Exception:  # noqa: BLE001, S110 - the body is not needed
                pass
            return exc.code, retry_after, b""
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError):
            return 0, None, b""


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


def _load_scrub() -> Any:
    """``inferwatch.redaction``'s redactor when present, else the SDK's built-in scrub (secrets and PII)."""
    try:
        from . import redaction  # type: ignore[attr-defined]
    except ImportError:
        redaction = None
    redactor = getattr(redaction, "DEFAULT_REDACTOR", None)
    if redactor is not None:
        def scrub(text: str) -> str:
            result = redactor.redact(text)
            return result if isinstance(result, str) else result.text

        return scrub
    from .telemetry import fallback_scrub

    return lambda text: fallback_scrub(text, pii=True)


# --- process-wide sender, flush, stats ---------------------------------------------------------------------------
_state_lock = threading.Lock()
_sender: _Sender | None = None
_senders: weakref.WeakSet[_Sender] = weakref.WeakSet()  # the current one and retired ones still draining
_hooks_registered = False


def _sender_for(pipeline: Any, options: Any) -> _Sender:
    global _sender
    sender = _sender
    if sender is not None and sender.pipeline() is pipeline and sender.pid == os.getpid():
        return sender
    with _state_lock:
        sender = _sender
        if sender is None or sender.pipeline() is not pipeline or sender.pid != os.getpid():
            if sender is not None:
                sender.retired = True
                sender.wake.set()
            sender = _sender = _Sender(pipeline, options)
            _senders.add(sender)
            _register_hooks()
    return sender


def flush_at_exit() -> None:
    """The exit's flush (:data:`ATEXIT_TIMEOUT_S`), called by the SDK's exit hook (:mod:`inferwatch.telemetry`)
    once the process's spans are exported: feedback sent right before the exit then finds its call. Not an
    ``atexit`` hook of its own, which would run first (hooks run in reverse order of registration, and the
    pipeline's is registered at ``init()``, before any feedback)."""
    flush(ATEXIT_TIMEOUT_S)


def flush(timeout: float = 5.0) -> bool:
    """Send every feedback item queued so far; True when each was sent or counted failed within ``timeout``.
    The process's spans are exported first (at most half the time), and items waiting to be sent once more because
    the collector had not seen their call are sent now (see the module)."""
    try:
        deadline = time.monotonic() + max(timeout, 0.0)
        ok = True
        for sender in list(_senders):
            if sender.pid == os.getpid():
                ok = sender.flush(max(deadline - time.monotonic(), 0.0)) and ok
        return ok
    except Exception as exc:  # noqa: BLE001
        _guard.record_internal_error("feedback.flush", exc)
        return False


def stats() -> dict[str, Any]:
    """``{"queued", "sent", "failed", "resent", "resend_failed", "dropped": {reason: n}}`` (items; process
    lifetime). ``resent``: items sent once more because the collector had not seen their call yet (each send
    counts; an item can be sent early at a flush and again at its time); ``resend_failed``: such sends that failed
    (the item itself was delivered, but without its call's fields)."""
    queued = sum(s.pending() for s in list(_senders) if s.pid == os.getpid())
    with _counts_lock:
        return {"queued": queued, "sent": _counts["sent"], "failed": _counts["failed"],
                "resent": _counts["resent"], "resend_failed": _counts["resend_failed"],
                "dropped": dict(_counts["dropped"])}


def _reset() -> None:
    """Forget counters and logged warnings (tests)."""
    with _counts_lock:
        _counts.update(sent=0, failed=0, resent=0, resend_failed=0, dropped=dict.fromkeys(DROP_REASONS, 0))
        _logged.clear()


def _after_fork_in_child() -> None:
    global _sender, _state_lock, _counts_lock
    _state_lock = threading.Lock()  # a parent thread may have held them at fork time
    _counts_lock = threading.Lock()
    _sender = None  # the parent's queue is the parent's to send
    for sender in list(_senders):
        sender.lock = threading.Lock()


def _register_hooks() -> None:  # with _state_lock held
    global _hooks_registered
    if _hooks_registered:
        return
    _hooks_registered = True
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)


feedback.flush = flush  # type: ignore[attr-defined]
feedback.stats = stats  # type: ignore[attr-defined]
feedback_stats = stats  # exported as inferwatch.feedback_stats()
