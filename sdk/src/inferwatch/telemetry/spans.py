"""The SDK's own spans (:class:`LightSpan`): a few fields on the caller's thread, a ``ReadableSpan`` in the export
thread.

On the caller's thread the OTel SDK's ``start_span`` + ``set_attributes`` + ``end`` costs tens of microseconds per
span (each value cleaned through a chain of checks, locks, a ``ReadableSpan`` copy), so a :class:`LightSpan` keeps
only what cannot be known later (times, ids, the parent and trace state of the current context, what is set through
the span API) and the export thread builds the rest (architecture §4 rule 7).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util import BoundedList

from .. import _guard
from .. import semconv as sc
from ..metrics import InferenceMetrics

# The pipeline that makes and exports the spans (:class:`inferwatch.telemetry.pipeline.Pipeline`); typed loosely
# here because the pipeline is built on this module.
_Pipeline = Any

_RANDOM_FLAG = int(getattr(trace.TraceFlags, "RANDOM_TRACE_ID", 0))  # W3C level 2 (newer OTel APIs)
_SAMPLED = trace.TraceFlags(trace.TraceFlags.SAMPLED)
_SAMPLED_RANDOM = trace.TraceFlags(trace.TraceFlags.SAMPLED | _RANDOM_FLAG)
_UNSET = trace.Status(trace.StatusCode.UNSET)


def _current_context_var() -> ContextVar[otel_context.Context] | None:
    """The ContextVar behind ``opentelemetry.context.get_current()`` when the runtime context is OTel's default
    (``contextvars``); None otherwise (another runtime context chosen through ``OTEL_PYTHON_CONTEXT``), and then
    the public call is used. Why: reading the variable saves ``get_current()``'s two Python calls on every LLM
    call."""
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    if type(runtime) is not ContextVarsRuntimeContext:
        return None
    var = getattr(runtime, "_current_context", None)
    return var if isinstance(var, ContextVar) else None


_CURRENT_CONTEXT = _current_context_var()

# the context key under which the OTel API keeps the current span (derived through the API, not hard-coded)
_SPAN_KEY = next(iter(trace.set_span_in_context(trace.INVALID_SPAN, otel_context.Context())))


def parent_of(current: Any) -> trace.SpanContext | None:
    """The span context a new span started under ``current`` (the context's span, or None) takes as its parent:
    None when there is no valid one (no span, a non-recording ``INVALID_SPAN``, or an object that is not a
    span)."""
    if current is None or not isinstance(current, trace.Span):
        return None
    parent = current.get_span_context()
    return parent if parent.is_valid else None


_PLAIN = frozenset({str, bool, int, float})


def _plain(attributes: Mapping[str, Any]) -> bool:
    """True when every value is a str, bool, int or float, or a tuple of str: valid as it is, nothing to clean."""
    plain = _PLAIN
    for value in attributes.values():
        if type(value) not in plain and not (type(value) is tuple and all(type(v) is str for v in value)):
            return False
    return True


class Recorded(Protocol):
    """What the caller's thread queues besides finished OTel SDK spans: a :class:`LightSpan`, or a provider call
    (:class:`inferwatch.llm_call.ProviderCall`) whose span is made from it in the export thread."""

    def readable(self) -> ReadableSpan: ...


class LightSpan(trace.Span):
    """A span of ours: a few fields while it runs, turned into a ``ReadableSpan`` by the export thread.

    * an LLM call (:meth:`end_call`) hands over a snapshot of its :class:`~inferwatch.metrics.InferenceMetrics`
      (an integration's call: the metrics themselves, and a ``later`` that completes them from the facts it kept
      of the response); the export thread derives the span's name, attributes (``span_attributes()``), status
      and the metric values from it (:meth:`readable`);
    * values set through the API (``set_attribute(s)``, ``add_event``, ``record_exception``) are cleaned and
      bounded as the OTel SDK does (``BoundedAttributes``, the span limits of ``OTEL_SPAN_*_LIMIT`` /
      ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``); the attributes the SDK derives itself are taken as they are when
      every value is a plain str, bool, int, float or tuple of str (:func:`_plain`), else cleaned the same way.

    What is exported is what the SDK's span would have been: ids from the provider's id generator, the parent
    and trace state of the current (or given) context, the sampled flag (our provider samples everything;
    ``sample_rate`` is applied before a span is opened), kind, status, times, resource and instrumentation scope.
    It is a full API span for code that finds it current (``trace.get_current_span()`` inside
    ``with inferwatch.llm_call()``). After it ends it never changes.
    """

    __slots__ = ("_attributes", "_call", "_context", "_end", "_ended", "_events", "_flags", "_kind", "_name",
                 "_parent", "_pipeline", "_start", "_state", "_status", "span_id", "trace_id")

    def __init__(self, pipeline: _Pipeline, name: str | None, kind: trace.SpanKind = trace.SpanKind.INTERNAL,
                 start_time: int | None = None, context: otel_context.Context | None = None) -> None:
        # trace.get_current_span(context), with four calls less (this runs on every LLM call)
        if context is None:
            context = otel_context.get_current() if _CURRENT_CONTEXT is None else _CURRENT_CONTEXT.get()
        current = context.get(_SPAN_KEY)
        parent = None if current is None else parent_of(current)  # a root span (the usual case): no call
        random_ids = pipeline._random_ids  # the default RandomIdGenerator, inlined: random bits, never 0
        trace_id = parent.trace_id if parent is not None else (
            (random_ids and random.getrandbits(128)) or pipeline._id_generator.generate_trace_id())
        span_id = (random_ids and random.getrandbits(64)) or pipeline._id_generator.generate_span_id()
        self._setup(pipeline, name, kind, time.time_ns() if start_time is None else start_time, parent, trace_id,
                    span_id)

    @classmethod
    def of_call(cls, pipeline: _Pipeline, parent: trace.SpanContext | None, trace_id: int, span_id: int,
                start_time: int) -> LightSpan:
        """The span of a provider call whose parent and ids were taken on the caller's thread when it started
        (:class:`inferwatch.llm_call.ProviderCall`); made later, in whichever thread records the call."""
        span = cls.__new__(cls)
        span._setup(pipeline, None, trace.SpanKind.CLIENT, start_time, parent, trace_id, span_id)
        return span

    def _setup(self, pipeline: _Pipeline, name: str | None, kind: trace.SpanKind, start_time: int,
               parent: trace.SpanContext | None, trace_id: int, span_id: int) -> None:
        self.trace_id, self.span_id = trace_id, span_id
        self._parent: trace.SpanContext | None = parent
        if parent is not None:
            self._state = parent.trace_state
            self._flags = _SAMPLED_RANDOM if parent.trace_flags & _RANDOM_FLAG else _SAMPLED
        else:
            self._state = None
            self._flags = pipeline._root_flags
        self._context: trace.SpanContext | None = None  # built when first asked for
        self._pipeline = pipeline
        self._name = name  # None: derived from the call (LLM calls)
        self._kind = kind
        self._start = start_time
        self._end = 0
        self._ended = False
        self._attributes: dict[str, Any] | None = None
        self._events: Any = None
        self._status = _UNSET
        self._call: tuple[Any, dict[str, Any] | None, Callable[[], None] | None] | None = None

    # --- opentelemetry.trace.Span ---
    def get_span_context(self) -> trace.SpanContext:
        ctx = self._context
        if ctx is None:
            ctx = self._context = trace.SpanContext(self.trace_id, self.span_id, False, self._flags, self._state)
        return ctx

    def is_recording(self) -> bool:
        return not self._ended

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if self._ended or not attributes:
            return
        limit = self._pipeline._span_limits.max_span_attribute_length
        if self._attributes is None:
            self._attributes = {}
        self._attributes.update(BoundedAttributes(None, attributes, immutable=False, max_value_len=limit))

    def set_attribute(self, key: str, value: Any) -> None:
        self.set_attributes({key: value})

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None,
                  timestamp: int | None = None) -> None:
        if self._ended:
            return
        limits = self._pipeline._span_limits
        if self._events is None:
            self._events = BoundedList(limits.max_events)
        self._events.append(Event(name, BoundedAttributes(limits.max_event_attributes, attributes, immutable=True,
                                                          max_value_len=limits.max_attribute_length),
                                  time.time_ns() if timestamp is None else timestamp))

    def record_exception(self, exception: BaseException, attributes: Mapping[str, Any] | None = None,
                         timestamp: int | None = None, escaped: bool = False) -> None:
        import traceback

        module, qualname = type(exception).__module__, type(exception).__qualname__
        event: dict[str, Any] = {
            "exception.type": f"{module}.{qualname}" if module and module != "builtins" else qualname,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(type(exception), exception,
                                                                       exception.__traceback__)),
            "exception.escaped": str(escaped),
        }
        event.update(attributes or {})
        self.add_event("exception", event, timestamp)

    def set_status(self, status: trace.Status | trace.StatusCode, description: str | None = None) -> None:
        if self._ended or self._status.status_code is trace.StatusCode.OK:  # OK is final (OTel's rule)
            return
        if isinstance(status, trace.StatusCode):
            status = trace.Status(status, description)
        if isinstance(status, trace.Status) and status.status_code is not trace.StatusCode.UNSET:
            self._status = status

    def update_name(self, name: str) -> None:
        if not self._ended:
            self._name = name

    def end(self, end_time: int | None = None) -> None:
        """Finish and queue for export (once; later calls, and changes after it, are ignored)."""
        if self._ended:
            return
        self._end = time.time_ns() if end_time is None else end_time
        self._ended = True
        self._pipeline.enqueue(self)

    def end_call(self, snapshot: tuple[Any, ...] | InferenceMetrics, content: dict[str, Any] | None,
                 later: Callable[[], None] | None = None) -> None:
        """End an LLM call's span: ``snapshot`` is ``InferenceMetrics._snapshot()`` taken at its end, or the
        metrics object itself when the SDK's own integration owns it (nobody changes it after the end, so no
        copy is needed); ``content`` the captured prompt/completion attributes (capture on). ``later`` (owned
        metrics only) completes the metrics from the response objects the integration kept, in the export
        thread: parsing them is off the caller's thread (architecture §4 rule 7). Name, attributes, status and
        metric values are derived in the export thread."""
        if self._ended:
            return
        self.close_call(snapshot, content, later)
        if not self._pipeline.enqueue(self):  # dropped (queue full): the call's metrics are kept all the same
            self.record_metrics_only()

    def close_call(self, snapshot: tuple[Any, ...] | InferenceMetrics, content: dict[str, Any] | None,
                   later: Callable[[], None] | None = None) -> None:
        """:meth:`end_call` without queueing: for a call that is queued as a whole
        (:class:`inferwatch.llm_call.ProviderCall`), whose span is made when the export thread reads it."""
        self._call = (snapshot, content, later)
        self._end = snapshot.end_time_ns if type(snapshot) is InferenceMetrics else snapshot[_END_TIME]
        self._ended = True

    def record_metrics_only(self) -> None:
        """Record the ended call's metric values without its span (the span was dropped: queue full)."""
        self._pipeline.record_metric_row(_metric_row(self._call_metrics()))

    def _call_metrics(self) -> InferenceMetrics:
        """The call's metrics, completed by its ``later`` (run once: a span may be read again)."""
        snapshot, content, later = self._call  # type: ignore[misc]
        if type(snapshot) is not InferenceMetrics:
            return InferenceMetrics(*snapshot)
        if later is not None:
            self._call = (snapshot, content, None)
            try:
                later()
            except Exception as exc:  # noqa: BLE001 - the integration guards its own; the span still goes
                _guard.record_internal_error("telemetry.call.later", exc)
        return snapshot

    # --- export thread ---
    def readable(self) -> ReadableSpan:
        """The finished span as the exporters take it; an LLM call's metric values are recorded on the way."""
        p = self._pipeline
        attributes: Any = self._attributes
        name, status = self._name, self._status
        if self._call is not None:
            m = self._call_metrics()
            content = self._call[1]
            try:
                p._record_call_metrics(_metric_row(m))
            except Exception as exc:  # noqa: BLE001 - the span still goes
                _guard.record_internal_error("telemetry.metrics.record", exc)
            if m.response_model:
                name = f"{m.operation} {m.request_model or m.response_model}"
            elif name is None:
                name = f"{m.operation} {m.request_model}".strip()
            merged = {sc.GEN_AI_OPERATION_NAME: m.operation, sc.GEN_AI_PROVIDER_NAME: m.provider,
                      sc.GEN_AI_REQUEST_MODEL: m.request_model}  # what the span started with
            if attributes:
                merged.update(attributes)
            ours = m.span_attributes()
            if content:
                ours.update(content)
            if p._plain_ok and _plain(ours) and _plain(merged):
                merged.update(ours)
                attributes = merged
            else:
                attributes = BoundedAttributes(None, merged, immutable=False,
                                               max_value_len=p._span_limits.max_span_attribute_length)
                attributes.update(ours)
                attributes = dict(attributes)
            if m.status == "error" and status.status_code is not trace.StatusCode.OK:
                status = trace.Status(trace.StatusCode.ERROR, m.error_type)
            if p._on_call is not None:
                p._tell_app(m)
        if attributes and len(attributes) > p._span_limits.max_span_attributes:  # the oldest go, as OTel's do
            attributes = BoundedAttributes(p._span_limits.max_span_attributes, attributes)
        return ReadableSpan(
            name=name or "", context=self.get_span_context(), parent=self._parent, resource=p._resource,
            attributes=attributes, events=() if self._events is None else self._events, kind=self._kind,
            status=status, start_time=self._start, end_time=self._end, instrumentation_scope=p._scope)


def _metric_row(m: InferenceMetrics) -> tuple[Any, ...]:
    """The histogram values of one call (see :meth:`Pipeline.record_metrics`)."""
    ttft = m.ttft_ms
    served = not m.cache_hit  # a cache hit used no provider tokens: kept out of the token histogram
    return (m.operation, m.provider, m.request_model, m.response_model, m.latency_ms / 1000,
            m.input_tokens if served else None, m.output_tokens if served else None,
            None if ttft is None else ttft / 1000, m.error_type or None)


_END_TIME = [f.name for f in dataclasses.fields(InferenceMetrics)].index("end_time_ns")
