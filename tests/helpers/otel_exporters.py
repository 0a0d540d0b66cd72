"""OpenTelemetry metric exporters for tests and benches: the SDK's default one would send to a collector."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult


class NullMetricExporter(MetricExporter):
    """Metrics go nowhere (the default exporter would retry against 127.0.0.1:4318 on every flush)."""

    def __init__(self) -> None:
        super().__init__(preferred_temporality={})

    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


class KeepingMetricExporter(NullMetricExporter):
    """Keeps every metrics batch it is given, to assert on what the SDK recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[Any] = []

    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        self.batches.append(metrics_data)
        return MetricExportResult.SUCCESS
