"""User feedback and evaluation scores: ``inferwatch.feedback(trace_id, thumbs_up=True)``.

Each call becomes one OpenTelemetry ``gen_ai.evaluation.result`` item, sent by the export pipeline (its
feedback stage, :mod:`inferwatch.telemetry.feedback_export`) as JSON to the collector's
``{endpoint}/api/v1/feedback`` with the ingest key; the collector stores it next to the call (model, feature,
experiment, variant and prompt template are copied from the call there).

Like the rest of the SDK this never breaks the host (architecture §4): the caller only validates its arguments and
queues the item (O(1), no I/O). Bad arguments, a full queue and every internal error are counted, never raised.
Before ``inferwatch.init()`` (or with ``enabled=False``) it does nothing and returns ``""``.

Privacy: the user is identified only by the ``user_hash`` of the current :func:`inferwatch.tags`; unless capture
is ``"full"``, ``comment`` and ``label`` are redacted in the export thread before they leave the process; the
collector redacts them again whatever the SDK did. The default feedback id is an HMAC of the content with the
SDK's user hash key, so the same feedback sent twice is one row and the id reveals nothing about the comment.

Linking: feedback by a provider response id is given the call's trace where this process made the call (at once,
or by the export thread from the calls still waiting for the span export). Feedback that reaches the collector
before its call's span is stored unmatched and sent once more later; a :func:`flush` (and so the one at exit, and
``inferwatch.flush()``/``shutdown()``) exports the process's spans first and then sends such items at once.

Counters: :func:`stats` (``sent``, ``failed``, ``resent``, ``resend_failed``, ``queued`` and ``dropped`` by
reason). Both :func:`flush` and :func:`stats` are also reachable as ``inferwatch.feedback.flush(timeout)`` and
``inferwatch.feedback.stats()``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from typing import Any

from . import _guard, _responses, client, context
from .telemetry import feedback_export
from .telemetry.feedback_export import count, warn_once

MAX_RAW_COMMENT_CHARS = 16_384  # what the caller's thread keeps before redaction
MAX_NAME_CHARS = 128

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_HEX16 = re.compile(r"[0-9a-fA-F]{16}")
_FEEDBACK_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Invalid(ValueError):
    """A bad argument: the call is dropped (counted as invalid) and logged once per kind."""


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
        if pipeline is None:
            return ""  # inert before init()
        item = _build(trace_id, response_id, thumbs_up, score, comment, label, name, feedback_id, span_id)
        if not pipeline.submit_feedback(item):
            count("dropped", reason="queue_full")
            warn_once("queue_full", "queue full (%d items), feedback dropped", feedback_export.MAX_QUEUE)
            return ""
        return item["feedback_id"]
    except _Invalid as exc:
        count("dropped", reason="invalid")
        warn_once(f"invalid:{exc.args[1]}", "%s", exc.args[0])
        return ""
    except Exception as exc:  # noqa: BLE001 - never raise into the app
        count("dropped", reason="internal_error")
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
        if recorded is not None:  # (or, later, the export thread: FeedbackExport._link)
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
        # was linked here or later by the export thread
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


def flush(timeout: float = 5.0) -> bool:
    """Send every feedback item queued so far; True when each was sent or counted failed within ``timeout``. The
    process's spans are exported first, and items waiting to be sent once more because the collector had not seen
    their call are sent then too (see the module)."""
    pipeline = client.get_pipeline()
    try:
        return pipeline is None or bool(pipeline.flush(timeout))
    except Exception as exc:  # noqa: BLE001
        _guard.record_internal_error("feedback.flush", exc)
        return False


def stats() -> dict[str, Any]:
    """``{"queued", "sent", "failed", "resent", "resend_failed", "dropped": {reason: n}}`` (items; process
    lifetime). ``resent``: items sent once more because the collector had not seen their call yet (each send
    counts; an item can be sent early at a flush and again at its time); ``resend_failed``: such sends that failed
    (the item itself was delivered, but without its call's fields)."""
    pipeline = client.get_pipeline()
    counts = feedback_export.counts()
    return {"queued": 0 if pipeline is None else pipeline.feedback.pending(), "sent": counts["sent"],
            "failed": counts["failed"], "resent": counts["resent"], "resend_failed": counts["resend_failed"],
            "dropped": counts["dropped"]}


feedback.flush = flush  # type: ignore[attr-defined]
feedback.stats = stats  # type: ignore[attr-defined]
feedback_stats = stats  # exported as inferwatch.feedback_stats()
