"""The dashboard in a real browser: Debian's chromium driven by Playwright (no Playwright browser download).

1. ``streamlit run`` (started by :mod:`inferwatch_dashboard.launch`, as ``up`` starts it) against the seeded
   collector: every page opened from the sidebar, its key content visible, no Streamlit exception box, the
   filters kept in the URL across pages, a screenshot of each page saved as a test artifact.
2. ``inferwatch-server up`` itself: it starts the dashboard, prints its URL, the dashboard shows the demo
   project, and stopping ``up`` stops the dashboard.

Without /usr/bin/chromium these tests skip with the reason; with ``INFERWATCH_REQUIRE_BROWSER=1`` (set by
``.ci/run``) they fail instead, so CI cannot pass without having run them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from inferwatch_dashboard import launch
from tests.helpers.live_collector import Collector, free_port
from tests.helpers.processes import interrupt_group

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parents[2]
# Screenshots; CI may point INFERWATCH_TEST_ARTIFACTS at its artifact folder.
ARTIFACTS = Path(os.environ.get("INFERWATCH_TEST_ARTIFACTS",
                                Path(tempfile.gettempdir()) / "inferwatch-test-artifacts")) / "dashboard"
#: sidebar link -> text that proves the page rendered its data
PAGES = {
    "Overview": "Cost / successful call",
    "Cost": "Download CSV",
    "Latency": "above the 2,000 ms objective",
    "Quality": "Thumbs-down rate",
    "Experiments": "Sample progress",
    "Alerts": "Job runs",
    "Traces": "Matching calls",
    "Capacity": "Tensor parallel",
}


def _browser_or_skip() -> Any:
    required = os.environ.get("INFERWATCH_REQUIRE_BROWSER") == "1"
    reason = None
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} not found (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = reason or "playwright is not installed (pip install -e '.[test]')"
    if reason:
        if required:
            pytest.fail(f"INFERWATCH_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return sync_playwright


@pytest.fixture
def browser() -> Iterator[Any]:
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def wait_rendered(page: Any, text: str) -> None:
    """The text is visible and the script run has finished (Streamlit renders over a websocket)."""
    page.get_by_text(text).first.wait_for(timeout=45_000)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'",
        timeout=45_000)


def charts_drawn(page: Any) -> None:
    """Plotly draws after the script run ends: wait for every chart's SVG before a screenshot."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(chart => chart.querySelector('.main-svg'))", timeout=45_000)


def no_exception_box(page: Any) -> None:
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, boxes.first.inner_text()


def test_every_page_in_a_real_browser(collector: Collector, browser: Any) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    dashboard = launch.start(collector.url, [collector.key], port=free_port(), stderr=subprocess.STDOUT)
    try:
        dashboard.wait_ready(60)
        page = browser.new_page(viewport={"width": 1500, "height": 2200})
        page.goto(f"{dashboard.url}/?range=Last+7+days", wait_until="domcontentloaded")
        for name, proof in PAGES.items():
            if name != "Overview":
                page.get_by_role("link", name=name).click()
            wait_rendered(page, proof)
            charts_drawn(page)
            no_exception_box(page)
            assert "range=Last+7+days" in page.url, (name, page.url)  # the sidebar's choice survives
            page.screenshot(path=str(ARTIFACTS / f"{name.lower()}.png"))
        page.get_by_role("link", name="Overview").click()
        wait_rendered(page, "Cost / successful call")
        assert page.locator('[data-testid="stPlotlyChart"]').count() >= 2
        assert page.get_by_text("Project: ").first.is_visible()
    finally:
        dashboard.stop()
    assert dashboard.process.returncode is not None


@pytest.mark.slow
def test_up_starts_the_dashboard_and_stops_it(tmp_path: Path, browser: Any) -> None:
    port, ui_port = free_port(), free_port()
    env = {**os.environ, "INFERWATCH_DATA_DIR": str(tmp_path / "data"), "INFERWATCH_PORT": str(port),
           "INFERWATCH_DASHBOARD_PORT": str(ui_port), "INFERWATCH_INGEST_WORKERS": "0",
           "INFERWATCH_COLLECTOR_SCHEDULER": "off", "INFERWATCH_FLUSH_INTERVAL_S": "0.2"}
    log_path = tmp_path / "up.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "inferwatch_server", "up"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{ui_port}"
    try:
        deadline = time.monotonic() + 120
        while "dashboard ready" not in log_path.read_text():
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.3)
        printed = log_path.read_text()
        assert f"dashboard   {url}" in printed
        assert httpx.get(f"{url}/_stcore/health", timeout=5).text == "ok"
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        page.goto(url, wait_until="domcontentloaded")
        wait_rendered(page, "No traffic yet in this time range")
        no_exception_box(page)
        assert page.get_by_text("Project: demo").first.is_visible()
        page.screenshot(path=str(tmp_path / "up-overview.png"))
    finally:
        interrupt_group(proc)
    assert proc.returncode is not None
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{url}/_stcore/health", timeout=2)


def metric(page: Any, label: str) -> str:
    """The value shown by the ``st.metric`` labelled ``label``."""
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def table_cells(page: Any) -> list[str]:
    """The text of every rendered cell of the page's ``st.dataframe`` grids (their accessible table), once each
    grid has drawn its rows (after the script run)."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stDataFrame\"]')]"
        ".every(grid => grid.querySelector('td'))", timeout=45_000)
    return [cell.strip() for cell in page.locator('[data-testid="stDataFrame"] td').all_inner_texts()]


def cost_chart_span_days(page: Any) -> float:
    """Days between the first and the last bucket with a cost in the Cost page's over-time chart (Plotly keeps
    its decoded traces on the chart's element as ``_fullData``)."""
    return page.evaluate("""() => {
        const plot = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
        const xs = plot._fullData.flatMap(t => Array.from(t.x).filter((x, i) => t.y[i] > 0)).map(Date.parse);
        return (Math.max(...xs) - Math.min(...xs)) / 86400000;
    }""")


def wait_for_line(proc: subprocess.Popen, log_path: Path, text: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while text not in log_path.read_text():
        assert proc.poll() is None, log_path.read_text()[-5000:]
        assert time.monotonic() < deadline, f"no {text!r} within {seconds:.0f} s:\n{log_path.read_text()[-5000:]}"
        time.sleep(0.5)
    return log_path.read_text()


@pytest.mark.slow
def test_demo_starts_on_a_populated_project(tmp_path: Path, browser: Any) -> None:
    """``up --demo-traffic`` on a fresh data directory: within 2 minutes the history is in and the live traffic
    runs, and every page shows it: a cost trend over weeks with a budget forecast, fired-and-resolved alerts
    delivered to the local receiver, an experiment's verdict, a capacity plan from observed traffic."""
    port, ui_port = free_port(), free_port()
    env = {**os.environ, "INFERWATCH_DATA_DIR": str(tmp_path / "data"), "INFERWATCH_PORT": str(port),
           "INFERWATCH_DASHBOARD_PORT": str(ui_port), "INFERWATCH_METRICS_PORT": "0"}
    log_path = tmp_path / "up.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "inferwatch_server", "up", "--demo-traffic"], cwd=ROOT,
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        printed = wait_for_line(proc, log_path, "demo app: ~", 120)  # populated, then the live traffic
        assert "history: backfilled in" in printed and "[history]" in printed  # with its progress lines
        assert "Traceback" not in printed
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.goto(f"http://127.0.0.1:{ui_port}/?range=Last+30+days", wait_until="domcontentloaded")
        wait_rendered(page, "Cost / successful call")

        page.get_by_role("link", name="Cost").click()
        wait_rendered(page, "Forecast for the month")
        charts_drawn(page)
        assert cost_chart_span_days(page) >= 14  # weeks of spend, not a few minutes
        assert metric(page, "Forecast for the month").startswith("$")
        assert metric(page, "Monthly budget").startswith("$")  # the demo's budget, with its forecast beside it
        page.screenshot(path=str(ARTIFACTS / "demo-cost.png"))

        page.get_by_role("link", name="Alerts").click()
        wait_rendered(page, "Notification log")
        cells = table_cells(page)
        assert "resolved" in cells and "firing" in cells, cells[:60]
        assert {"slack", "webhook"} <= set(cells), cells  # deliveries to the local receiver, in the log
        no_exception_box(page)
        page.screenshot(path=str(ARTIFACTS / "demo-alerts.png"))

        page.get_by_role("link", name="Experiments").click()
        wait_rendered(page, "Verdict:")
        assert page.get_by_text("Verdict: ship").first.is_visible()  # concise-answers concluded, shown first
        page.screenshot(path=str(ARTIFACTS / "demo-experiments.png"))

        page.get_by_role("link", name="Capacity").click()
        wait_rendered(page, "Tensor parallel")
        assert int(metric(page, "Observed calls").replace(",", "")) > 10_000
        no_exception_box(page)
        page.screenshot(path=str(ARTIFACTS / "demo-capacity.png"))
    finally:
        interrupt_group(proc)
    assert proc.returncode == 0, log_path.read_text()[-3000:]
