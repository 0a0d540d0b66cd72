"""Driving the dashboard headlessly (Streamlit's AppTest) and reading what it shows: metrics, texts, tables and
the charts' Plotly specs. Shared by the dashboard's page tests."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

APP_FILE = Path(__file__).resolve().parents[2] / "dashboard" / "inferwatch_dashboard" / "app.py"
PAGES = ("overview", "cost", "latency", "quality", "experiments", "alerts", "traces", "capacity")


def app(monkeypatch: pytest.MonkeyPatch, url: str, key: str, **query: str) -> AppTest:
    """The whole app (entry file, sidebar, navigation) run once against the collector at ``url``."""
    monkeypatch.setenv("INFERWATCH_DASHBOARD_API_URL", url)
    monkeypatch.setenv("INFERWATCH_DASHBOARD_API_KEY", key)
    at = AppTest.from_file(str(APP_FILE), default_timeout=60)
    at.query_params.update(query)
    return at.run()


def goto(at: AppTest, page: str) -> AppTest:
    """Switch to a page (its file name under views/) and run it; it must not raise."""
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(at: AppTest) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.metric}


def texts(at: AppTest) -> str:
    kinds = ("markdown", "caption", "info", "success", "warning", "error", "title", "subheader")
    parts = [e.value for kind in kinds for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def chart_specs(at: AppTest) -> list[dict[str, Any]]:
    """Every chart's Plotly figure (data and layout) as the browser receives it."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def frames(at: AppTest) -> list[Any]:
    return [frame.value for frame in at.dataframe]


def values(trace: dict[str, Any], field: str) -> list[Any]:
    """A trace's ``x``/``y``/``z`` as a list (Plotly sends numeric arrays base64-encoded), NaN as None."""
    raw = trace.get(field)
    if isinstance(raw, dict) and "bdata" in raw:
        array = np.frombuffer(base64.b64decode(raw["bdata"]), dtype=raw["dtype"])
        if "shape" in raw:
            array = array.reshape([int(n) for n in str(raw["shape"]).split(",")])
        raw = array.tolist()
    if raw is None:
        return []
    return [_plain(v) for v in raw]


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value
