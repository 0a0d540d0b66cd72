"""The dashboard's collector: the platform's app (the server's factory) on 127.0.0.1 with seeded traffic.

Package-scoped: the dashboard tests share one collector, torn down (server stopped, chDB closed) before the
next package runs, since a process may hold only one chDB data directory at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inferwatch_dashboard import data
from inferwatch_server.app import create_app
from tests.helpers import chart_shapes
from tests.helpers.live_collector import Collector, seeded_collector


@pytest.fixture(scope="package")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    with seeded_collector(tmp_path_factory.mktemp("dashboard") / "data", create_app) as running:
        yield running


@pytest.fixture(scope="package")
def shapes(collector: Collector) -> dict[str, chart_shapes.Shape]:
    """Projects whose traffic has each shape a chart must draw well (see tests.helpers.chart_shapes)."""
    return chart_shapes.seed(collector.store)


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    """Cached API answers are process-wide: each test starts without the previous test's."""
    data.clear_cache()
    yield
    data.clear_cache()
