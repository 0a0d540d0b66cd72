"""The GenAI client histograms, aggregated in the export thread from each call's values (a *metric row*)."""

from __future__ import annotations

import dataclasses
import math
import time
from bisect import bisect_left
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    HistogramDataPoint,
    Metric,
    MetricsData,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.metrics.export import Histogram as HistogramData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from .. import _guard
from .. import semconv as sc

# GenAI semconv bucket advice
DURATION_BUCKETS_S = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)

MetricRow = tuple[Any, ...]
"""One call's values: (operation, provider, request model, response model, duration s, input tokens, output tokens,
time to first chunk s, error type); a value that is None or negative is not recorded."""

_PLAIN = frozenset({str, bool, int, float})


class Histograms:
    """The three GenAI client histograms (explicit buckets, delta temporality), aggregated by the export thread.

    What the OTel metrics SDK's ``Histogram.record`` would aggregate, without its per-measurement cost (a
    ``Measurement`` object, attributes cleaned and hashed, locks). Only the export thread records and collects,
    so nothing here is locked. Per metric, at most :data:`MAX_POINTS` attribute sets per interval; the rest go
    to one ``otel.metric.overflow=true`` point, as the OTel SDK's cardinality limit does.
    """

    MAX_POINTS = 2000
    OVERFLOW: tuple[tuple[str, Any], ...] = (("otel.metric.overflow", True),)
    SPECS: tuple[tuple[str, str, str, tuple[float, ...]], ...] = (  # name, unit, description, bucket bounds
        (sc.METRIC_OPERATION_DURATION, "s", "GenAI operation duration", DURATION_BUCKETS_S),
        (sc.METRIC_TOKEN_USAGE, "{token}", "Number of input and output tokens used", TOKEN_BUCKETS),
        (sc.METRIC_TIME_TO_FIRST_CHUNK, "s", "Time to receive the first chunk of a stream", DURATION_BUCKETS_S),
    )

    def __init__(self, resource: Resource, version: str) -> None:
        self.resource = resource
        self.scope = InstrumentationScope("inferwatch", version)
        self.start_ns = time.time_ns()
        # one dict per metric (SPECS order): attribute pairs -> [sum, min, max, bucket counts]
        self.points: tuple[dict[tuple[tuple[str, Any], ...], list[Any]], ...] = tuple({} for _ in self.SPECS)

    def record(self, metric: int, value: float, attributes: tuple[tuple[str, Any], ...]) -> None:
        points = self.points[metric]
        point = points.get(attributes)
        if point is None:
            if len(points) >= self.MAX_POINTS:
                attributes = self.OVERFLOW
                point = points.get(attributes)
            if point is None:
                point = points[attributes] = [0, math.inf, -math.inf, [0] * (len(self.SPECS[metric][3]) + 1)]
        point[0] += value
        if value < point[1]:
            point[1] = value
        if value > point[2]:
            point[2] = value
        point[3][bisect_left(self.SPECS[metric][3], value)] += 1

    def collect(self) -> MetricsData | None:
        """The delta since the last collection (None when nothing was recorded); starts a new interval."""
        start, now = self.start_ns, time.time_ns()
        self.start_ns = now
        metrics = []
        for (name, unit, description, bounds), points in zip(self.SPECS, self.points):
            if points:
                metrics.append(Metric(name=name, description=description, unit=unit, data=HistogramData(
                    data_points=[HistogramDataPoint(
                        attributes=dict(attributes), start_time_unix_nano=start, time_unix_nano=now,
                        count=sum(counts), sum=total, bucket_counts=tuple(counts), explicit_bounds=bounds,
                        min=low, max=high, **_NO_EXEMPLARS)
                        for attributes, (total, low, high, counts) in points.items()],
                    aggregation_temporality=AggregationTemporality.DELTA)))
                points.clear()
        if not metrics:
            return None
        return MetricsData(resource_metrics=[ResourceMetrics(
            resource=self.resource, schema_url=self.resource.schema_url,
            scope_metrics=[ScopeMetrics(scope=self.scope, metrics=metrics, schema_url=self.scope.schema_url)])])


_NO_EXEMPLARS: dict[str, Any] = (  # HistogramDataPoint.exemplars exists in newer OTel SDKs only
    {"exemplars": []} if "exemplars" in {f.name for f in dataclasses.fields(HistogramDataPoint)} else {})


def record_row(histograms: Histograms, row: MetricRow) -> None:
    """Fold one call's values into ``histograms``; a bad value (a token count that is not a number) is counted
    as an internal error and the row skipped."""
    record = histograms.record
    try:
        op, provider, req_model, resp_model, duration, inp, out, ttfc, error = row
        attrs = [(sc.GEN_AI_OPERATION_NAME, op), (sc.GEN_AI_PROVIDER_NAME, provider)]
        if req_model:
            attrs.append((sc.GEN_AI_REQUEST_MODEL, req_model))
        if resp_model:
            attrs.append((sc.GEN_AI_RESPONSE_MODEL, resp_model))
        if not all(type(value) in _PLAIN for _, value in attrs):  # cleaned as the OTel SDK cleans them
            attrs = list(BoundedAttributes(None, dict(attrs)).items())
        if duration is not None and duration >= 0:
            record(0, duration, tuple(attrs + [(sc.ERROR_TYPE, error)]) if error else tuple(attrs))
        if inp is not None and inp >= 0:
            record(1, inp, tuple(attrs + [(sc.GEN_AI_TOKEN_TYPE, "input")]))
        if out is not None and out >= 0:
            record(1, out, tuple(attrs + [(sc.GEN_AI_TOKEN_TYPE, "output")]))
        if ttfc is not None and ttfc >= 0:
            record(2, ttfc, tuple(attrs))
    except Exception as exc:  # noqa: BLE001
        _guard.record_internal_error("telemetry.metrics.record", exc)
