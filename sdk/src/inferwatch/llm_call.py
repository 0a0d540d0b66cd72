"""One LLM call being recorded: the manual API, and the recorder behind every provider integration.

Usage for any client or a self-hosted model server::

    with inferwatch.llm_call(model="llama-3.1-70b", provider="vllm", streamed=True) as call:
        for chunk in my_client.stream(prompt):
            call.first_token()          # the first call wins; later ones are ignored
            ...
        call.usage(input_tokens=812, output_tokens=164)
        call.response(text=answer, finish_reason="stop")
    print(call.metrics.ttft_ms)

An answer served from the app's own cache is recorded too, with the usage of the answer that was served::

    with inferwatch.llm_call(model="gpt-4o", provider="openai", cache_hit="semantic") as call:
        call.usage(input_tokens=cached.input_tokens, output_tokens=cached.output_tokens)

The collector prices such a call at $0 and records what it would have cost as avoided (cache savings).

With a budget guard (``inferwatch.budget_guard``), ``llm_call()`` checks the hard budgets of the current tags
when it is called: it raises :class:`inferwatch.BudgetExceeded`, or, under a downgrade policy, records the call
under the cheaper model, which the app reads from ``call.model`` and must then call itself (the manual API does
not see the app's client). Calls made with ``cache_hit=`` are never blocked (they cost nothing).

Every method is guarded: a mistake in recording never raises into the app, and the ``with`` block never
swallows or alters the app's exception (it is only recorded as ``error.type``). Work on the caller's thread is
limited to reading clocks and context (tags, the parent span), drawing the span's ids and copying the facts; the
span's attributes, the metric values, redaction and export are made in the export thread.

The provider integrations record through :class:`ProviderCall`, which keeps even less on the caller's thread: the
:class:`LlmCall` itself (metrics and span) is made from it when needed, in the export thread where the response
can be recorded there (see the class).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan

from . import _responses, budget, client, context
from . import semconv as sc
from ._guard import record_internal_error
from .metrics import CACHE_HIT_KINDS, InferenceMetrics
from .telemetry.pipeline import Pipeline
from .telemetry.spans import _CURRENT_CONTEXT, _SPAN_KEY, LightSpan, parent_of

_CLIENT = trace.SpanKind.CLIENT
# bound once for ProviderCall, which every provider call makes (see "names bound once" in integrations._streams)
_current_context = otel_context.get_current if _CURRENT_CONTEXT is None else _CURRENT_CONTEXT.get
_enqueue = Pipeline.enqueue  # pipeline.enqueue stayed unspecialised in the bench's process (adaptive dis)


class LlmCall:
    """Records one call; inert (but still measuring ``metrics``) when the SDK is not initialised."""

    __slots__ = ("_content", "_ended", "_sampled", "_span", "_token", "metrics")

    def __init__(self, *, model: str = "", provider: str = "", operation: str = "chat", streamed: bool = False,
                 attributes: dict[str, Any] | None = None) -> None:
        # the first three fields by position, the rest only when not the default (no copy of an empty attributes
        # dict): every provider call makes one of these
        m = self.metrics = InferenceMetrics(operation, provider, model)
        if streamed is not False:
            m.streamed = streamed
        if attributes:
            m.attributes = dict(attributes)
        self._span: Any = None
        self._token: Any = None
        self._sampled = True
        self._ended = False
        self._content: dict[str, str] = {}

    # --- lifecycle ---
    def start(self, *, make_current: bool = False) -> "LlmCall":
        """Start timing (and the span). ``make_current`` nests spans started inside under this one; only
        use it when :meth:`end` runs in the same context (not for streams consumed elsewhere)."""
        m = self.metrics
        m.start_time_ns = time.time_ns()
        try:
            tags = context._current.get()  # context.current_tags(), read directly: every call runs this
            if tags:
                _set_tags(m, tags)
            pipeline = client._pipeline  # get_pipeline() / get_options(), read directly: every call runs this
            if pipeline is None:
                return self
            options = client._options
            self._sampled = options is None or options.sample_rate >= 1.0 or random.random() < options.sample_rate
            if self._sampled:
                self._span = self._open_span(pipeline, m.start_time_ns)
                if make_current:
                    self._token = otel_context.attach(trace.set_span_in_context(self._span))
        except Exception as exc:  # noqa: BLE001 - never break the host
            record_internal_error("llm_call.start", exc)
        return self

    def _open_span(self, pipeline: Any, start_ns: int) -> Any:
        # pipeline.span(), without the call: named and given attributes from the metrics at the end
        return self._use_span(LightSpan(pipeline, None, _CLIENT, start_ns))

    def _use_span(self, span: LightSpan) -> LightSpan:
        m = self.metrics
        m.trace_id, m.span_id = span.trace_id.to_bytes(16, "big").hex(), span.span_id.to_bytes(8, "big").hex()
        return span

    def __enter__(self) -> "LlmCall":
        return self.start(make_current=True)

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        self.end(exc)
        return False  # never swallow the app's exception

    @property
    def model(self) -> str:
        """The model to call: the requested one, or its cheaper replacement under a budget downgrade."""
        return self.metrics.request_model

    # --- facts, as they become known ---
    def cache_hit(self, kind: str = "exact") -> None:
        """Mark this call as answered from the application's own cache (``kind``: ``"exact"`` or
        ``"semantic"``): the provider was not called. Give the served answer's usage to :meth:`usage`; the
        collector prices the call at $0 and records that usage's price as the cost avoided by the cache."""
        m = self.metrics
        m.cache_hit = True
        if isinstance(kind, str) and kind in CACHE_HIT_KINDS:
            m.cache_hit_kind = kind
        else:
            record_internal_error("llm_call.cache_hit", ValueError("kind must be 'exact' or 'semantic'"))

    def first_token(self) -> None:
        """Mark the first content chunk (TTFT); only the first call counts."""
        if self.metrics.first_token_time_ns is None:
            self.metrics.first_token_time_ns = time.time_ns()
            self.metrics.streamed = True

    def usage(self, *, input_tokens: int | None = None, output_tokens: int | None = None,
              cache_read_tokens: int = 0, cache_write_tokens: int = 0, reasoning_tokens: int = 0,
              cache_write_1h_tokens: int = 0) -> None:
        """Token counts in the OTel convention: input includes cache reads/writes, output includes reasoning;
        ``cache_write_1h_tokens`` is the part of ``cache_write_tokens`` written with a 1-hour TTL."""
        try:
            m = self.metrics
            m.input_tokens, m.output_tokens = input_tokens, output_tokens
            m.cache_read_tokens, m.cache_write_tokens = cache_read_tokens or 0, cache_write_tokens or 0
            m.cache_write_1h_tokens = min(cache_write_1h_tokens or 0, m.cache_write_tokens)
            m.reasoning_tokens = reasoning_tokens or 0
        except Exception as exc:  # noqa: BLE001
            record_internal_error("llm_call.usage", exc)

    def response(self, *, text: str | None = None, chars: int | None = None, finish_reason: str | None = None,
                 response_model: str | None = None, response_id: str | None = None, refusal: bool = False,
                 tool_calls: int | None = None) -> None:
        """What came back: text (only its length is kept unless capture is on), finish reason, ids."""
        try:
            m = self.metrics
            if text is not None:
                m.response_chars = len(text)
                self.content(output=text)
            elif chars is not None:
                m.response_chars = chars
            if finish_reason:
                m.finish_reason = str(finish_reason)
            if response_model:
                m.response_model = response_model
            if response_id:
                m.response_id = response_id
            if refusal:
                m.refusal = True
            if tool_calls is not None:
                m.tool_calls = tool_calls
        except Exception as exc:  # noqa: BLE001
            record_internal_error("llm_call.response", exc)

    def tool_call_failed(self, count: int = 1) -> None:
        """A tool call that could not run: unparseable arguments, unknown tool, or an error reported back. A
        count that is not a non-negative int is counted as an internal error, never raised."""
        if type(count) is int and count >= 0:
            self.metrics.tool_call_failures += count
        else:
            record_internal_error("llm_call.tool_call_failed", TypeError("count must be a non-negative int"))

    def content(self, *, input: Any = None, output: Any = None) -> None:  # noqa: A002 - mirrors the convention
        """Prompt/completion text; kept only when capture is on, redacted later in the export thread."""
        options = client.get_options()
        if options is None or options.capture == "off" or self._span is None:
            return
        try:
            limit = options.max_attribute_chars
            if input is not None:
                text = input if isinstance(input, str) else _json(input)
                self._content[sc.GEN_AI_INPUT_MESSAGES] = text[:limit]
            if output is not None:
                text = output if isinstance(output, str) else _json(output)
                self._content[sc.GEN_AI_OUTPUT_MESSAGES] = text[:limit]
        except Exception as exc:  # noqa: BLE001 - never break the host
            record_internal_error("llm_call.content", exc)

    def end(self, error: BaseException | None = None,
            later: Callable[[], None] | None = None) -> InferenceMetrics:
        """Finish (once): stamp the end time and hand the call to the export thread, which builds its span and
        records its metrics from a snapshot of :attr:`metrics` taken here.

        ``later`` is for the SDK's own integrations, whose metrics the app never sees: the metrics object is
        handed over without a copy and ``later()`` (which must guard itself) completes it in the export thread
        from the response objects the integration kept (usage, finish reason, tool calls...), so the caller's
        thread does no parsing. Where no span will be exported (sampled out, no pipeline) it runs here."""
        m = self.metrics
        if self._ended:
            return m
        self._ended = True
        m.end_time_ns = time.time_ns()
        if error is not None:
            m.status = "error"
            m.error_type = type(error).__qualname__
        try:
            if self._token is not None:
                otel_context.detach(self._token)
                self._token = None
            pipeline = client._pipeline
            if later is not None and (pipeline is None or self._span is None):
                later()  # a failed response may make this call an error, which sampling always keeps
                later = None
            if pipeline is None:
                return m
            if self._span is None and self._sampled is False:
                if m.status != "error":  # errors are always kept, whatever the sample rate
                    pipeline.count_drop("sampled")
                    return m
                self._span = self._open_span(pipeline, m.start_time_ns)
            span = self._span
            if span is None:
                return m
            if m.response_id:  # feedback by response id can name this trace before the span is exported
                _responses.remember(m.response_id, span.trace_id, span.span_id)
            # the export thread derives the span's name, attributes and status and the metric values from this
            # snapshot (telemetry.spans.LightSpan): the caller's thread only copies the fields, or, for an
            # integration's call, hands the metrics over as they are
            content = dict(self._content) if self._content else None
            if later is None:
                span.end_call(m._snapshot(), content)
            else:
                span.end_call(m, content, later)
        except Exception as exc:  # noqa: BLE001 - never break the host
            record_internal_error("llm_call.end", exc)
        return m


def _set_tags(m: InferenceMetrics, tags: Any) -> None:
    """Copy the current tags (``inferwatch.tags`` / ``experiment``) into a call's metrics."""
    get = tags.get
    m.feature = get("feature", "")
    m.prompt_template = get("prompt_template", "")
    m.prompt_version = get("template_version", "")
    m.experiment = get("experiment", "")
    m.variant = get("variant", "")
    m.user_hash = get("user_hash", "")


DEFERRED_TOOL_RESULTS = 64  # requests of up to this many messages have their tool results read in the export thread


class ProviderCall:
    """One request recorded by a provider integration (``wrap_openai``, ``instrument_anthropic``...): the base of
    their recorders.

    Why not an :class:`LlmCall` from the start: an integration's metrics are never seen by the app, and in a real
    app the recording runs between the provider client's own work, with cold CPU caches, where every object made
    and every function run costs several times what it costs in a loop. So the caller's thread keeps only what
    cannot be known later: the clocks, the tags, the parent span and the drawn span ids, the request's facts and
    whatever the integration keeps of the response. The call's :class:`LlmCall` (its metrics and its span) is made
    from those when first asked for (:attr:`call`): in the export thread, which reads the whole call from the
    queue (:meth:`readable`), for the calls whose response the integration reduces to facts kept for later
    (OpenAI Chat Completions with capture off, and provider errors); on the caller's thread for those whose
    response it records at once (capture on, where the text must be taken before the call ends; the Responses API;
    Anthropic's messages), which then end through :meth:`LlmCall.end`.

    :meth:`first_token` and :meth:`end` are guarded, as :class:`LlmCall`'s methods are; :attr:`call` and
    :meth:`readable` run inside the integration's guards and the export thread's.
    """

    __slots__ = ("_call", "_end_ns", "_error", "_first_ns", "_later", "_parent", "_pipeline", "_span_id",
                 "_start_ns", "_tags", "_tool_results", "_trace_id", "downgraded_from", "failures", "model",
                 "provider", "response_id", "streamed")

    def __init__(self, model: str, provider: str, streamed: bool, downgraded_from: str = "") -> None:
        """Start the call now: the clock, the tags, the parent span and the span's ids (when sampled)."""
        self._start_ns = time.time_ns()
        self.model, self.provider, self.streamed, self.downgraded_from = model, provider, streamed, downgraded_from
        self.failures = 0  # tool results reported as errors in the request
        self._tool_results: tuple[Callable[[Any], int], tuple[Any, ...]] | None = None
        self.response_id = ""
        self._call: LlmCall | None = None
        self._first_ns: int | None = None
        self._end_ns = 0
        self._error = ""
        self._later: Callable[[], None] | None = None
        self._parent: Any = None
        self._span_id: int | None = None  # None: no span (no pipeline, or sampled out): LlmCall's rules apply
        self._trace_id = 0
        self._tags = context._current.get()  # immutable (a MappingProxyType per tags() block): kept as it is
        pipeline = self._pipeline = client._pipeline
        if pipeline is None:
            return
        options = client._options
        if options is None or options.sample_rate >= 1.0 or random.random() < options.sample_rate:
            # LightSpan.__init__'s parent and ids, taken now (the span itself is made from them later)
            ctx = _current_context()
            current = ctx.get(_SPAN_KEY)
            parent = self._parent = None if current is None else parent_of(current)
            try:
                trace_id, self._span_id = pipeline._id_pool.pop()  # drawn ahead by the export thread
            except IndexError:  # none ready (the first calls, a burst, or a custom id generator): drawn now
                random_ids = pipeline._random_ids
                trace_id = (random_ids and random.getrandbits(128)) or pipeline._id_generator.generate_trace_id()
                self._span_id = (random_ids and random.getrandbits(64)) or pipeline._id_generator.generate_span_id()
            self._trace_id = parent.trace_id if parent is not None else trace_id

    def count_tool_errors_later(self, count: Callable[[Any], int], items: list[Any] | tuple[Any, ...]) -> None:
        """Add ``count(items)`` to :attr:`failures` when the call's :class:`LlmCall` is made (in the export thread,
        for most calls) rather than now. ``items``, the request's messages, are copied as they are now (an app
        often appends the reply to its list right after the call; the messages themselves are not copied, so one
        the app changes in place before the export is read as changed). Why: reading them is work the caller's
        thread need not do. A request of more than :data:`DEFERRED_TOOL_RESULTS` messages is read now: copying a
        long conversation would cost about what reading its end does, and keep all of it alive until the
        export."""
        if len(items) > DEFERRED_TOOL_RESULTS:
            self.failures += count(items)
        else:
            self._tool_results = (count, tuple(items))

    @property
    def call(self) -> LlmCall:
        """The call's :class:`LlmCall`, made from what was taken at the start when first asked for (in whichever
        thread records the response)."""
        call = self._call
        if call is None:
            call = self._call = self._make_call()
        return call

    def _make_call(self) -> LlmCall:
        if self._tool_results is not None:
            count, items = self._tool_results
            self._tool_results = None
            try:
                self.failures += count(items)
            except Exception as exc:  # noqa: BLE001 - an app's message objects of an unexpected shape
                record_internal_error("llm_call.tool_results", exc)
        call = LlmCall(model=self.model, provider=self.provider, streamed=self.streamed)
        m = call.metrics
        m.start_time_ns = self._start_ns
        if self._first_ns is not None:
            m.first_token_time_ns, m.streamed = self._first_ns, True
        if self._tags:
            _set_tags(m, self._tags)
        if self.downgraded_from:
            m.downgraded_from = self.downgraded_from
        if self.failures:
            m.tool_call_failures = self.failures
        if self.response_id:
            m.response_id = self.response_id
        if self._span_id is not None:
            call._span = call._use_span(LightSpan.of_call(self._pipeline, self._parent, self._trace_id,
                                                          self._span_id, self._start_ns))
        elif self._pipeline is not None:
            call._sampled = False  # sampled out: an error still gets its span when the call ends
        return call

    def first_token(self, at_ns: int | None = None) -> None:
        """Mark the first content chunk (TTFT): the first call counts. ``at_ns``: when it was received, for a
        chunk read after the fact (a tapped stream's events, read in the export thread); now by default."""
        try:
            call = self._call
            if call is None:
                if self._first_ns is None:
                    self._first_ns = time.time_ns() if at_ns is None else at_ns
            elif at_ns is None:
                call.first_token()
            elif call.metrics.first_token_time_ns is None:
                call.metrics.first_token_time_ns, call.metrics.streamed = at_ns, True
        except Exception as exc:  # noqa: BLE001 - never break the host
            record_internal_error("llm_call.first_token", exc)

    def end(self, error: BaseException | None = None, later: Callable[[], None] | None = None) -> None:
        """Finish (once): stamp the end and queue the whole call for the export thread, which makes its span and
        metrics (:meth:`readable`), running ``later`` (see :meth:`LlmCall.end`) to complete them. A call whose
        :class:`LlmCall` was already made here, or without a span (sampled out, no pipeline), ends through it."""
        try:
            if self._end_ns:
                return
            self._end_ns = time.time_ns()
            if self._call is not None or self._span_id is None or client._pipeline is None:
                self.call.end(error, later)  # recorded here already, no span, or shut down meanwhile
                return
            if error is not None:
                self._error = type(error).__qualname__
            self._later = later
            if self.response_id:  # feedback by response id can name this trace before the span is exported
                _responses.remember(self.response_id, self._trace_id, self._span_id)
            if not _enqueue(self._pipeline, self):  # dropped (queue full): its metrics are kept all the same
                self._closed_span().record_metrics_only()
                self._later = None  # ran: what it refers to (a stream's tap and its chunks) goes now
        except Exception as exc:  # noqa: BLE001 - never break the host
            record_internal_error("llm_call.end", exc)

    def error_found(self, error_type: str) -> None:
        """An error learnt from the response after the call ended (export thread, in ``later``): the call is an
        error of this type, unless it already ended as one."""
        if not self._error:
            self._error = error_type
            m = self.call.metrics
            m.status, m.error_type = "error", error_type

    def remember_response_id(self, response_id: str) -> None:
        """A response id learnt after the call ended (export thread): feedback by this id finds the call's trace
        from now on (see :mod:`inferwatch._responses`)."""
        self.response_id = response_id
        if self._span_id is not None:
            _responses.remember(response_id, self._trace_id, self._span_id)

    def pending_ids(self) -> tuple[str, int, int] | None:
        """(response id, trace id, span id) of this ended call while it waits for the export thread, when it has a
        span and its response id can be told without recording the call; None otherwise. Asked for feedback by a
        response id that the export thread has not remembered yet
        (:meth:`inferwatch.telemetry.pipeline.Pipeline.pending_response_ids`)."""
        response_id = self.response_id or self._pending_response_id()
        if not response_id or self._span_id is None:
            return None
        return response_id, self._trace_id, self._span_id

    def _pending_response_id(self) -> str | None:
        """The response id kept for the export thread to record (integrations whose calls end before their
        response id is set say where it is)."""
        return None

    def readable(self) -> ReadableSpan:
        """The finished span, with the call's metric values recorded on the way (export thread). ``_later`` is let
        go only once it has run: until then :meth:`pending_ids` may read the response id through it."""
        try:
            return self._closed_span().readable()
        finally:
            self._later = None

    def _closed_span(self) -> LightSpan:
        call = self.call
        m = call.metrics
        m.end_time_ns = self._end_ns
        if self._error:
            m.status, m.error_type = "error", self._error
        call._ended = True
        span = call._span
        span.close_call(m, None, self._later)
        return span


def _json(value: Any) -> str:
    import json

    return json.dumps(value, default=str, ensure_ascii=False)


def llm_call(*, model: str = "", provider: str = "", operation: str = "chat", streamed: bool = False,
             attributes: dict[str, Any] | None = None, cache_hit: str | None = None) -> LlmCall:
    """Record a call to any LLM client by hand (use as a context manager); see the module docstring.

    ``cache_hit="exact"|"semantic"`` marks an answer served from the app's own cache (as :meth:`LlmCall.cache_hit`
    does) and skips the budget check. Raises :class:`inferwatch.BudgetExceeded` when a budget guard is on and a
    hard budget of the current tags is exceeded (and no downgrade applies); nothing else ever raises here."""
    downgraded_from = ""
    if cache_hit is None:
        decision = budget.enforce(model)  # raises BudgetExceeded; anything else in the guard is swallowed
        if decision is not None:
            downgraded_from, model = model, decision
    call = LlmCall(model=model, provider=provider, operation=operation, streamed=streamed, attributes=attributes)
    if downgraded_from:
        call.metrics.downgraded_from = downgraded_from
    if cache_hit is not None:
        call.cache_hit(cache_hit)
    return call
