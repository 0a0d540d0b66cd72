"""Regenerate ``docs/screenshots/``: one PNG per dashboard page of the populated demo, as the README shows them.

Starts ``inferwatch-server up --demo-traffic`` on a temporary data directory (the same command as ``make demo``:
weeks of simulated history, then live traffic), waits until the live traffic runs, opens every page in Debian's
chromium through Playwright (``make venv`` installs Playwright; the browser is ``/usr/bin/chromium``, no download),
saves a 1280-pixel-wide screenshot of each, reduced to a 256-colour palette (a few hundred KB each), and stops
``up`` with SIGINT, as Ctrl-C would.

Run: ``.venv/bin/python docs/screenshots.py`` (about three minutes; ``--out DIR`` to write elsewhere).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 1500
#: page (sidebar link), time range, text that proves it rendered its data, file name
PAGES: tuple[tuple[str, str, str, str], ...] = (
    ("Overview", "Last 7 days", "Cost / successful call", "overview"),
    ("Cost", "Last 30 days", "Forecast for the month", "cost"),
    ("Latency", "Last 7 days", "Decode speed", "latency"),
    ("Quality", "Last 7 days", "Drift findings", "quality"),
    ("Experiments", "Last 30 days", "Verdict:", "experiments"),
    ("Alerts", "Last 7 days", "Notification log", "alerts"),
    ("Traces", "Last 24 hours", "Matching calls", "traces"),
    ("Capacity", "Last 7 days", "Tensor parallel", "capacity"),
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_demo(data_dir: Path, log_path: Path, ui_port: int) -> subprocess.Popen:
    """``up --demo-traffic`` in a process session of its own, so that :func:`stop_demo` reaches all its processes."""
    env = {**os.environ, "INFERWATCH_DATA_DIR": str(data_dir), "INFERWATCH_PORT": str(free_port()),
           "INFERWATCH_DASHBOARD_PORT": str(ui_port), "INFERWATCH_METRICS_PORT": "0"}
    with log_path.open("w") as log:
        return subprocess.Popen([sys.executable, "-m", "inferwatch_server", "up", "--demo-traffic"], cwd=ROOT,
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for_line(proc: subprocess.Popen, log_path: Path, text: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while text not in log_path.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"no {text!r} from up:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.5)


def stop_demo(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def rendered(page: Any, text: str) -> None:
    """The proof text is visible, the script run is over, every chart and table is drawn."""
    page.get_by_text(text).first.wait_for(timeout=90_000)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'",
        timeout=90_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(chart => chart.querySelector('.main-svg'))"
        " && [...document.querySelectorAll('[data-testid=\"stDataFrame\"]')].every(grid => grid.querySelector('td'))",
        timeout=90_000)
    page.wait_for_timeout(1500)  # Plotly's and the grids' last layout pass


def optimize(path: Path) -> None:
    """A 256-colour palette PNG: the dashboard's flat colours survive, the file is a fraction of the size."""
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def shoot(ui_port: int, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    written: list[Path] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            for name, window, proof, file in PAGES:
                path = "" if name == "Overview" else name.lower()
                page.goto(f"http://127.0.0.1:{ui_port}/{path}?range={window.replace(' ', '+')}",
                          wait_until="domcontentloaded")
                rendered(page, proof)
                target = out / f"{file}.png"
                page.screenshot(path=str(target))
                optimize(target)
                written.append(target)
                print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
                      f"{target.stat().st_size / 1024:.0f} KiB", flush=True)
        finally:
            browser.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--live-s", type=float, default=30.0,
                        help="seconds of live traffic before the screenshots (default 30)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="inferwatch-screenshots-") as tmp:
        ui_port, log_path = free_port(), Path(tmp) / "up.log"
        began = time.monotonic()
        proc = start_demo(Path(tmp) / "data", log_path, ui_port)
        try:
            wait_for_line(proc, log_path, "demo app: ~", 300)
            print(f"demo populated and live after {time.monotonic() - began:.0f} s", flush=True)
            time.sleep(args.live_s)
            shoot(ui_port, args.out)
        finally:
            stop_demo(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
