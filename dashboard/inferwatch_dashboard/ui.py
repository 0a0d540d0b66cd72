"""Small Streamlit building blocks every page shares: its header, API failures as messages, empty states.

Why a context manager for failures: each section of a page fetches its own data, so one failing endpoint (an
alerting API this collector does not have yet) must cost that section only, with a sentence saying why, and the
rest of the page must still render.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .api import ApiError, NotAvailable, NotFound, Unauthorized, Unreachable
from .data import Scope

NO_TRAFFIC = ("No traffic yet in this time range{suffix}. To get some: run the demo (`make demo`, or "
              "`inferwatch-server up --demo-traffic`), or point your SDK at this collector with "
              "`inferwatch.init(endpoint=\"{url}\", api_key=...)` in your app and make a call; or {widen}.")


def header(title: str, scope: Scope, caption: str | None = None) -> None:
    """The page title, then what it shows: project, window and active filters."""
    st.title(title)
    filters = ", ".join(f"{name.replace('_', ' ')}: {value}" for name, value in scope.filters)
    st.caption(f"Project **{scope.project}** · {scope.window.describe()}" + (f" · {filters}" if filters else ""))
    if caption:
        st.caption(caption)


def show_error(error: ApiError, what: str = "") -> None:
    """One API failure as a sentence (never a traceback)."""
    prefix = f"{what}: " if what else ""
    if isinstance(error, NotAvailable):
        st.info(f"{prefix}not available from this collector yet ({error}). Upgrade the collector to get it.",
                icon=":material/hourglass_empty:")
    elif isinstance(error, Unreachable):
        st.error(f"{prefix}{error}", icon=":material/cloud_off:")
    elif isinstance(error, Unauthorized):
        st.error(f"{prefix}{error}", icon=":material/lock:")
    elif isinstance(error, NotFound):
        st.warning(f"{prefix}{error}")
    else:
        st.error(f"{prefix}{error}")


@contextmanager
def section(what: str = "") -> Iterator[None]:
    """Run one section; an API failure inside it is shown in its place and the page goes on."""
    try:
        yield
    except ApiError as error:
        show_error(error, what)


def no_traffic_text(scope: Scope) -> str:
    """What an empty page says: why it is empty and the three ways out (demo, SDK, a wider range or fewer
    filters)."""
    widen = "widen the time range or clear a filter in the sidebar" if scope.filters else \
        "widen the time range in the sidebar"
    return NO_TRAFFIC.format(suffix=" with these filters" if scope.filters else "", url=scope.api_url, widen=widen)


def no_traffic(scope: Scope) -> None:
    st.info(no_traffic_text(scope), icon=":material/info:")


def empty_chart(message: str) -> None:
    """What stands in place of a chart that has nothing to draw: why, and what to do about it."""
    st.info(message, icon=":material/insights:")


def chart(fig: go.Figure, key: str | None = None) -> None:
    st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False})


def _cell(value: object) -> object:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return value


def table(frame: pd.DataFrame, columns: list[str] | None = None) -> None:
    """A table of API rows: only ``columns`` (those present) if given, nested values (labels, channels) as text,
    dollar columns (``*_usd``) as dollars."""
    if columns:
        frame = frame[[c for c in columns if c in frame]]
    shown = frame.copy()
    for name in shown.columns:
        if shown[name].map(lambda v: isinstance(v, (dict, list, tuple))).any():
            shown[name] = shown[name].map(_cell)
    money = {name: st.column_config.NumberColumn(name.removesuffix("_usd") + " ($)", format="$%.4f")
             for name in shown.columns if str(name).endswith("_usd")}
    st.dataframe(shown, hide_index=True, column_config=money)
