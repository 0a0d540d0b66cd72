"""One LLM call being recorded: the manual API, and the recorder behind every provider integration.

Usage for any client or a self-hosted model server::

    with inferwatch.llm_call(model="llama-3.1-70b", provider="vllm", streamed=True) as call:
        for chunk in my_client.stream(prompt):
            call.first_token()          # the first call wins; later ones are ignored
            ...
        call.usage(input_tokens=812, output_tokens=164)
        call.response(text=answer, finish_reason="stop")
    print(call.metrics.ttft_ms)

Every method is guarded: a mistake in recording never raises into the app, and the ``with`` block never
swallows or alters the app's exception (it is only recorded as ``error.type``). Work on the caller's thread is
limited to reading clocks and setting attributes; redaction and export happen in the export thread.
"""

from __future__ import annotations

import random
import time
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from . import client, context
from . import semconv as sc
from ._guard import guard
from .metrics import InferenceMetrics


class LlmCall:
    """Records one call; inert (but still measuring ``metrics``) when the SDK is not initialised."""

    def __init__(self, *, model: str = "", provider: str = "", operation: str = "chat", streamed: bool = False,
                 attributes: dict[str, Any] | None = None) -> None:
        self.metrics = InferenceMetrics(operation=operation, provider=provider, request_model=model,
                                        streamed=streamed, attributes=dict(attributes or {}))
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
        with guard("llm_call.start"):
            tags = context.current_tags()
            m.feature = tags.get("feature", "")
            m.prompt_template = tags.get("prompt_template", "")
            m.prompt_version = tags.get("template_version", "")
            m.experiment = tags.get("experiment", "")
            m.variant = tags.get("variant", "")
            m.user_hash = tags.get("user_hash", "")
            pipeline = client.get_pipeline()
            if pipeline is None:
                return self
            options = client.get_options()
            self._sampled = options is None or options.sample_rate >= 1.0 or random.random() < options.sample_rate
            if self._sampled:
                self._span = self._open_span(pipeline, m.start_time_ns)
                if make_current:
                    self._token = otel_context.attach(trace.set_span_in_context(self._span))
        return self

    def _open_span(self, pipeline: Any, start_ns: int) -> Any:
        m = self.metrics
        name = f"{m.operation} {m.request_model}".strip()
        span = pipeline.tracer.start_span(name, kind=trace.SpanKind.CLIENT, start_time=start_ns, attributes={
            sc.GEN_AI_OPERATION_NAME: m.operation, sc.GEN_AI_PROVIDER_NAME: m.provider,
            sc.GEN_AI_REQUEST_MODEL: m.request_model,
        })
        ctx = span.get_span_context()
        m.trace_id, m.span_id = f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"
        return span

    def __enter__(self) -> "LlmCall":
        return self.start(make_current=True)

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        self.end(exc)
        return False  # never swallow the app's exception

    # --- facts, as they become known ---
    def first_token(self) -> None:
        """Mark the first content chunk (TTFT); only the first call counts."""
        if self.metrics.first_token_time_ns is None:
            self.metrics.first_token_time_ns = time.time_ns()
            self.metrics.streamed = True

    def usage(self, *, input_tokens: int | None = None, output_tokens: int | None = None,
              cache_read_tokens: int = 0, cache_write_tokens: int = 0, reasoning_tokens: int = 0) -> None:
        """Token counts in the OTel convention: input includes cache reads/writes, output includes reasoning."""
        with guard("llm_call.usage"):
            m = self.metrics
            m.input_tokens, m.output_tokens = input_tokens, output_tokens
            m.cache_read_tokens, m.cache_write_tokens = cache_read_tokens or 0, cache_write_tokens or 0
            m.reasoning_tokens = reasoning_tokens or 0

    def response(self, *, text: str | None = None, chars: int | None = None, finish_reason: str | None = None,
                 response_model: str | None = None, response_id: str | None = None, refusal: bool = False,
                 tool_calls: int | None = None) -> None:
        """What came back: text (only its length is kept unless capture is on), finish reason, ids."""
        with guard("llm_call.response"):
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

    def tool_call_failed(self, count: int = 1) -> None:
        """A tool call that could not run: unparseable arguments, unknown tool, or an error reported back."""
        self.metrics.tool_call_failures += count

    def content(self, *, input: Any = None, output: Any = None) -> None:  # noqa: A002 - mirrors the convention
        """Prompt/completion text; kept only when capture is on, redacted later in the export thread."""
        options = client.get_options()
        if options is None or options.capture == "off" or self._span is None:
            return
        limit = options.max_attribute_chars
        if input is not None:
            self._content[sc.GEN_AI_INPUT_MESSAGES] = (input if isinstance(input, str) else _json(input))[:limit]
        if output is not None:
            self._content[sc.GEN_AI_OUTPUT_MESSAGES] = (output if isinstance(output, str) else _json(output))[:limit]

    def end(self, error: BaseException | None = None) -> InferenceMetrics:
        """Finish: stamp the end time, set every attribute, end the span, record the metrics (once)."""
        m = self.metrics
        if self._ended:
            return m
        self._ended = True
        m.end_time_ns = time.time_ns()
        if error is not None:
            m.status = "error"
            m.error_type = type(error).__qualname__
        with guard("llm_call.end"):
            if self._token is not None:
                otel_context.detach(self._token)
                self._token = None
            pipeline = client.get_pipeline()
            if pipeline is None:
                return m
            if self._span is None and self._sampled is False:
                if m.status != "error":  # errors are always kept, whatever the sample rate
                    pipeline.count_drop("sampled")
                    return m
                self._span = self._open_span(pipeline, m.start_time_ns)
            if self._span is None:
                return m
            span = self._span
            if m.response_model:
                span.update_name(f"{m.operation} {m.request_model or m.response_model}")
            span.set_attributes(m.span_attributes())
            if self._content:
                span.set_attributes(self._content)
            if m.status == "error":
                span.set_status(trace.Status(trace.StatusCode.ERROR, m.error_type))
            span.end(end_time=m.end_time_ns)
            ttft = m.ttft_ms
            pipeline.record_metrics(
                operation=m.operation, provider=m.provider, request_model=m.request_model,
                response_model=m.response_model, duration_s=m.latency_ms / 1000, input_tokens=m.input_tokens,
                output_tokens=m.output_tokens, ttfc_s=None if ttft is None else ttft / 1000,
                error_type=m.error_type or None,
            )
        return m


def _json(value: Any) -> str:
    import json

    return json.dumps(value, default=str, ensure_ascii=False)


def llm_call(*, model: str = "", provider: str = "", operation: str = "chat", streamed: bool = False,
             attributes: dict[str, Any] | None = None) -> LlmCall:
    """Record a call to any LLM client by hand (use as a context manager)."""
    return LlmCall(model=model, provider=provider, operation=operation, streamed=streamed, attributes=attributes)
