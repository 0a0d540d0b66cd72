"""The sidebar every page shares (project, time range, filters) and the :class:`~.data.Scope` it yields.

Why the widgets are created by the entry file, before the page runs: Streamlit keeps a URL-bound widget
(``bind="query-params"``) across page switches only if it belongs to the entry script; a widget created inside a
page is bound to that page and its query parameter is dropped when another page opens. So the choices live in
the URL (a view can be shared as a link) and survive switching pages. Pages read the result with
:func:`current`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import streamlit as st

from . import charts, data, ui
from .api import ApiError
from .data import Scope
from .settings import DashboardSettings
from .timerange import CHOICES, CUSTOM, DEFAULT, Window, label, window

ALL = "(all)"
#: (URL parameter, API parameter, label), in sidebar order.
FILTERS: tuple[tuple[str, str, str], ...] = (
    ("model", "model", "Model"),
    ("provider", "provider", "Provider"),
    ("feature", "feature", "Feature"),
    ("template", "prompt_template", "Prompt template"),
    ("experiment", "experiment", "Experiment"),
    ("variant", "variant", "Variant"),
)
_STATE = "_inferwatch_scope"


def _projects(settings: DashboardSettings) -> list[tuple[str, str, frozenset[str]]]:
    """(project, key, scopes) of every configured key the collector accepts; raises the first failure if none."""
    found, failures = [], []
    for key in settings.keys:
        try:
            who = data.whoami(settings.base_url, key)
        except ApiError as error:
            failures.append(error)
            continue
        found.append((str(who["project_id"]), key, frozenset(who.get("scopes", ()))))
    if not found and failures:
        raise failures[0]
    return found


def _choice(param: str, title: str, values: list[str]) -> str | None:
    """A filter select bound to the URL; the current value stays selectable even if this range lacks it."""
    current = st.session_state.get(param) or st.query_params.get(param)
    options = sorted(set(values) | ({current} if current and current != ALL else set()))
    value = st.selectbox(title, [ALL, *options], key=param, bind="query-params")
    return value if value and value != ALL else None


def _project(projects: list[tuple[str, str, frozenset[str]]]) -> tuple[str, str, frozenset[str]]:
    names = [project for project, _, _ in projects]
    if len(projects) == 1:
        st.markdown(f"Project: **{names[0]}**")
        return projects[0]
    return projects[names.index(st.selectbox("Project", names, key="project", bind="query-params"))]


def _window() -> Window:
    # Options are the words themselves: a bound select puts the shown option in the URL (?range=Last+7+days).
    labels = [label(c) for c in CHOICES]
    shown = st.selectbox("Time range", labels, index=CHOICES.index(DEFAULT), key="range", bind="query-params")
    choice = CHOICES[labels.index(shown)]
    first = last = None
    if choice == CUSTOM:
        today = datetime.now(UTC).date()
        first = st.date_input("From (UTC)", value=today - timedelta(days=7), key="from", bind="query-params")
        last = st.date_input("To (UTC)", value=today, key="to", bind="query-params")
    return window(choice, first=first, last=last)


def _filters(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The filter selects (variant only once an experiment is chosen), as (API parameter, value) pairs."""
    chosen: list[tuple[str, str]] = []
    for param, api_name, title in FILTERS:
        if api_name == "variant":
            experiment = dict(chosen).get("experiment")
            if not experiment:
                continue
            options = values.get("variants", {}).get(experiment, [])
        else:
            options = values.get(api_name, [])
        value = _choice(param, title, list(options))
        if value:
            chosen.append((api_name, value))
    return tuple(chosen)


def _palette(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Distinct colours per dimension for every name in the project's range (see charts.assign_colors)."""
    palette: dict[str, str] = {}
    for dimension in ("model", "provider", "feature", "prompt_template"):
        palette.update(charts.assign_colors(values.get(dimension, [])))
    palette.update(charts.assign_colors(v for variants in values.get("variants", {}).values() for v in variants))
    return tuple(palette.items())


def setup() -> Scope | None:
    """Draw the sidebar and remember the scope for the page; None (with the reason shown) if nothing can load."""
    settings = DashboardSettings()
    if not settings.keys:
        st.error("No API key configured: start the dashboard with `inferwatch-server dashboard --key <read key>` "
                 "or set INFERWATCH_DASHBOARD_API_KEY.", icon=":material/key_off:")
        return None
    try:
        projects = _projects(settings)
    except ApiError as error:
        ui.show_error(error)
        return None
    with st.sidebar:
        project, key, scopes = _project(projects)
        scope = Scope(settings.base_url, key, project, scopes, _window())
        try:
            values = data.facets(scope)
        except ApiError as error:
            values = {}
            st.caption(f"Filters unavailable: {error}")
        filters = _filters(values)
        if st.button("Refresh data", icon=":material/refresh:", help="Drop cached answers and ask the API again"):
            data.clear_cache()
    scope = replace(scope, filters=filters, palette=_palette(values))
    st.session_state[_STATE] = scope
    return scope


def current() -> Scope:
    """The scope the sidebar chose for this run (set by :func:`setup` before the page runs)."""
    scope = st.session_state.get(_STATE)
    if scope is None:
        st.stop()
    return scope
