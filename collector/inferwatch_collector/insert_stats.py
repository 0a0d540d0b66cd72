"""What the writer's inserts look like, per table, for /metrics: how many, how many rows and bytes each.

Why: every insert into a MergeTree table makes a new part (one per partition its rows fall in, and one in each
materialized view's table), and ClickHouse refuses inserts once a partition holds too many active parts. The
insert count per table is the rate operators compare with the merge rate (``rate(inferwatch_inserts_total[1m])``
is inserts per second), and the size histograms say whether the group commit batches well (many tiny inserts
mean many tiny parts).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Sequence

from .rows import TABLE_COLUMNS

#: Upper bounds of the rows-per-insert histogram buckets.
ROW_BUCKETS: tuple[float, ...] = (1, 10, 100, 1_000, 10_000, 100_000)
#: Upper bounds of the bytes-per-insert histogram buckets (Native bytes handed to ClickHouse).
BYTE_BUCKETS: tuple[float, ...] = (1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20)


@dataclass
class Histogram:
    """A Prometheus histogram: counts per upper bound (cumulated when rendered), the sum and the count."""

    bounds: Sequence[float]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def lines(self, name: str, labels: str) -> list[str]:
        """The ``_bucket``/``_sum``/``_count`` lines; ``labels`` is ``key="value"`` pairs without braces."""
        out, running = [], 0
        for bound, n in zip([*self.bounds, float("inf")], self.counts):
            running += n
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            out.append(f'{name}_bucket{{{labels},le="{le}"}} {running}')
        out.append(f"{name}_sum{{{labels}}} {self.total:g}")
        out.append(f"{name}_count{{{labels}}} {self.count}")
        return out


@dataclass
class InsertStats:
    """Inserts per table and their sizes (updated by the writer thread only, read by /metrics)."""

    inserts: dict[str, int] = field(default_factory=lambda: {t: 0 for t in TABLE_COLUMNS})
    rows: dict[str, Histogram] = field(default_factory=lambda: {t: Histogram(ROW_BUCKETS) for t in TABLE_COLUMNS})
    bytes: dict[str, Histogram] = field(
        default_factory=lambda: {t: Histogram(BYTE_BUCKETS) for t in TABLE_COLUMNS})

    def record(self, table: str, rows: int, nbytes: int) -> None:
        """One insert statement into ``table`` landed."""
        self.inserts[table] = self.inserts.get(table, 0) + 1
        self.rows.setdefault(table, Histogram(ROW_BUCKETS)).observe(rows)
        self.bytes.setdefault(table, Histogram(BYTE_BUCKETS)).observe(nbytes)

    def metric_lines(self) -> list[str]:
        """Prometheus lines: ``inferwatch_inserts_total``, ``inferwatch_insert_rows``, ``inferwatch_insert_bytes``."""
        lines = ["# TYPE inferwatch_inserts_total counter",
                 *(f'inferwatch_inserts_total{{table="{t}"}} {n}' for t, n in list(self.inserts.items())),
                 "# TYPE inferwatch_insert_rows histogram"]
        for table, histogram in list(self.rows.items()):
            lines += histogram.lines("inferwatch_insert_rows", f'table="{table}"')
        lines.append("# TYPE inferwatch_insert_bytes histogram")
        for table, histogram in list(self.bytes.items()):
            lines += histogram.lines("inferwatch_insert_bytes", f'table="{table}"')
        return lines
