"""OTLP logs requests as a real OpenTelemetry SDK exports them: GenAI events emitted through an SDK LoggerProvider
inside an SDK span, encoded with the OTLP exporter's own ``encode_logs``.

:func:`record_events` runs a block with a :class:`Emitter` and returns the ``ExportLogsServiceRequest`` its records
make, plus the (trace_id hex, span_id hex) of the span they were emitted in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import format_span_id, format_trace_id

SCOPE = "opentelemetry.instrumentation.openai_v2"
RESOURCE = Resource.create({"service.name": "support-bot"})


class Emitter:
    """Emits log records the way GenAI instrumentations do, in the current span unless told otherwise."""

    def __init__(self, logger: Any) -> None:
        self._logger = logger

    def event(self, name: str, body: Any = None, attributes: dict[str, Any] | None = None, *,
              legacy_name: bool = False, context: Any = None) -> None:
        """One event: named by ``event_name`` or, with ``legacy_name``, by the older ``event.name`` attribute."""
        attributes = {"gen_ai.system": "openai", **(attributes or {})}
        if legacy_name:
            self._logger.emit(body=body, attributes={**attributes, "event.name": name}, context=context)
        else:
            self._logger.emit(event_name=name, body=body, attributes=attributes, context=context)

    def log(self, body: str, **attributes: Any) -> None:
        """A plain application log line (not a GenAI event)."""
        self._logger.emit(body=body, attributes=attributes or None)


def record_events(block: Callable[[Emitter], None], *, in_span: bool = True
                  ) -> tuple[ExportLogsServiceRequest, tuple[str, str]]:
    """The logs request ``block``'s records make (inside a fresh SDK span unless ``in_span`` is false) and that
    span's (trace_id hex, span_id hex)."""
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    emitter = Emitter(provider.get_logger(SCOPE, "2.3b0"))
    ids = ("", "")
    if in_span:
        tracer = TracerProvider(resource=RESOURCE).get_tracer(SCOPE)
        with tracer.start_as_current_span("chat gpt-4o-mini") as span:
            ctx = span.get_span_context()
            ids = (format_trace_id(ctx.trace_id), format_span_id(ctx.span_id))
            block(emitter)
    else:
        block(emitter)
    provider.shutdown()
    return encode_logs(exporter.get_finished_logs()), ids
