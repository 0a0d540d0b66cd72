"""The metrics stage of the export pipeline: call rows folded into the histograms, sent to
``{endpoint}/v1/metrics`` every ``metrics_interval_s`` and at each flush (export thread only)."""

from __future__ import annotations

import logging
import threading
import time

from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult
from opentelemetry.sdk.resources import Resource

from .. import _guard
from ..transport import OTLP_RETRY, Transport
from .histograms import Histograms, MetricRow, record_row

_log = logging.getLogger("inferwatch")

MAX_BACKOFF_S = 600.0  # a collector without /v1/metrics is asked again less and less often, up to this


class MetricExport:
    """The histograms of one process and their export: through ``exporter`` when one is given, else OTLP/HTTP
    protobuf through the pipeline's transport (its retry rule, cut short by ``abort``)."""

    def __init__(self, *, resource: Resource, version: str, exporter: MetricExporter | None,
                 transport: Transport, timeout_s: float, interval_s: float,
                 abort: threading.Event) -> None:
        self.exporter = exporter
        self.failures = 0  # kept apart from span export failures: a collector without /v1/metrics is common
        self._resource, self._version = resource, version
        self._transport = transport
        self._timeout_s = timeout_s
        self._interval_s = interval_s
        self._abort = abort
        self._histograms: Histograms | None = None
        self._backoff_s = 0.0
        self.next_at = time.monotonic() + interval_s  # when the next scheduled export is due (monotonic)

    def record(self, row: MetricRow) -> None:
        if self._histograms is None:
            self._histograms = Histograms(self._resource, self._version)
        record_row(self._histograms, row)

    def export_if_due(self) -> None:
        if time.monotonic() < self.next_at:
            return
        ok = self.export()
        self._backoff_s = 0.0 if ok else min(max(self._backoff_s * 2, self._interval_s), MAX_BACKOFF_S)
        self.next_at = time.monotonic() + self._interval_s + self._backoff_s

    def export(self) -> bool:
        """Collect and send the delta since the last collection; True when sent or nothing to send."""
        data = None if self._histograms is None else self._histograms.collect()
        if data is None:
            return True
        ok = False
        try:
            if self.exporter is not None:
                result = self.exporter.export(data, timeout_millis=self._timeout_s * 1000)
                ok = result is MetricExportResult.SUCCESS
            else:
                body = encode_metrics(data).SerializeToString()
                ok = self._transport.send("/v1/metrics", body, "application/x-protobuf", OTLP_RETRY,
                                            timeout_s=self._timeout_s, deadline_s=self._timeout_s, compress=True,
                                            abort=self._abort).ok
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.export_metrics", exc)
        if not ok:
            self.failures += 1
            if self.failures == 1:
                _log.warning("inferwatch: metrics export to %s failed; failures are counted in inferwatch.stats()",
                             self._transport.url("/v1/metrics"))
        return ok

    def shutdown(self) -> None:
        if self.exporter is not None:
            self.exporter.shutdown()
