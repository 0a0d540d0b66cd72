"""Streamlit entry file: page config, the navigation between views, and the shared sidebar. Nothing else.

Run it with ``inferwatch-server dashboard`` (or ``up``), which sets the collector URL and key. The sidebar is drawn
here, before the page, so its URL-bound choices survive page switches (see :mod:`inferwatch_dashboard.context`).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from inferwatch_dashboard import context

VIEWS = Path(__file__).resolve().parent / "views"
PAGES: tuple[tuple[str, str, str], ...] = (
    ("overview.py", "Overview", ":material/dashboard:"),
    ("cost.py", "Cost", ":material/payments:"),
    ("latency.py", "Latency", ":material/speed:"),
    ("quality.py", "Quality", ":material/verified:"),
    ("experiments.py", "Experiments", ":material/science:"),
    ("alerts.py", "Alerts", ":material/notifications_active:"),
    ("traces.py", "Traces", ":material/account_tree:"),
    ("capacity.py", "Capacity", ":material/dns:"),
)


def run() -> None:
    st.set_page_config(page_title="inferwatch", page_icon=":material/monitoring:", layout="wide")
    page = st.navigation([st.Page(VIEWS / file, title=title, icon=icon, default=file == "overview.py")
                          for file, title, icon in PAGES])
    if context.setup() is None:
        st.stop()
    page.run()


run()
