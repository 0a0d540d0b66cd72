"""The experiment registry: what each experiment is meant to be, so its results can be judged against it.

An experiment has variants with weights (the same mapping the app passes to ``inferwatch.experiment(name,
{"A": 0.5, "B": 0.5})``), a control, a primary metric (the one decision metric, fixed before looking), guardrail
metrics (must not get worse), a start, and a plan: a planned number of users, or an end, or neither. ``mde`` is
the smallest relative effect worth detecting; ``sequential`` chooses tests that stay valid when the results are
read every day (see :mod:`.stats`).

Definitions come from the API or the CLI, or are registered automatically when the results job first sees an
experiment in traffic (``source = 'auto'``): the variants seen, equal weights assumed, the first variant named
like a control (``control``, ``baseline``, ``a``, ...) or else the first by name as the control, cost per call as
the primary metric. Weights are the registry's claim about the assignment; the results job compares them with the
users actually observed per variant (sample ratio mismatch), so an SDK configured with other weights than the
registry is reported, not silently trusted. Registering an automatically registered experiment by hand replaces
its assumptions.

Stored in ``experiments`` (migration 0007), a ReplacingMergeTree read with FINAL.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from inferwatch_collector.store import Store

from .metrics import DECISION_METRICS, observed_variants
from ..timeutil import iso_ms as _iso, to_ms as _ms, utc as _utc

Source = Literal["api", "cli", "auto"]

DEFAULT_PRIMARY: Final = "cost_per_call"
DEFAULT_GUARDRAILS: Final = ("error_rate", "refusal_rate", "latency_ms")
DEFAULT_MDE: Final = 0.05
DEFAULT_ALPHA: Final = 0.05
MAX_VARIANTS: Final = 20
MAX_NAME: Final = 200
MAX_PLANNED_USERS: Final = 10**12  # more than there are people; within the UInt64 column
#: Variant names taken as the control of an automatically registered experiment (case-insensitive, in order).
CONTROL_NAMES: Final = ("control", "baseline", "default", "a", "off", "old", "v1")
#: How far back traffic is searched for experiments nobody registered (the raw calls' default retention).
DISCOVERY_DAYS: Final = 90

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
COLUMNS: Final = ("project_id", "name", "variants", "weights", "control", "primary_metric", "guardrails",
                  "start_time", "end_time", "planned_users", "mde", "alpha", "sequential", "source",
                  "description", "created_at", "updated_at", "is_deleted")


class ExperimentError(ValueError):
    """An invalid definition; ``field`` names what is wrong (the API answers 422 with it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class ExperimentExists(Exception):
    """An experiment of this name was registered by hand already (the API answers 409 unless replacing)."""


@dataclass(frozen=True)
class Experiment:
    """One registered experiment."""

    project_id: str
    name: str
    variants: tuple[str, ...]
    weights: tuple[float, ...]
    control: str
    primary_metric: str
    guardrails: tuple[str, ...]
    start: datetime
    end: datetime | None = None
    planned_users: int | None = None
    mde: float = DEFAULT_MDE
    alpha: float = DEFAULT_ALPHA
    sequential: bool = True
    source: Source = "api"
    description: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def weight_map(self) -> dict[str, float]:
        """Variant -> weight normalised to sum 1."""
        total = sum(self.weights)
        return {v: w / total for v, w in zip(self.variants, self.weights)}

    @property
    def treatments(self) -> tuple[str, ...]:
        return tuple(v for v in self.variants if v != self.control)

    @property
    def has_plan(self) -> bool:
        """A planned sample size or end: what lets the sequential test spend all of alpha by a horizon."""
        return bool(self.planned_users) or self.end is not None

    def to_json(self) -> dict[str, Any]:
        """The definition as the API and the CLI show it."""
        return {"name": self.name, "variants": [{"name": v, "weight": w} for v, w in zip(self.variants,
                                                                                         self.weights)],
                "control": self.control, "primary_metric": self.primary_metric,
                "guardrails": list(self.guardrails),
                "start": _iso(self.start), "end": _iso(self.end) if self.end else None,
                "planned_users": self.planned_users, "mde": self.mde, "alpha": self.alpha,
                "sequential": self.sequential, "source": self.source, "description": self.description,
                "created_at": _iso(self.created_at) if self.created_at else None,
                "updated_at": _iso(self.updated_at) if self.updated_at else None}


def validate_experiment(*, project_id: str, name: str, variants: Mapping[str, float] | Sequence[tuple[str, float]],
                        control: str | None = None, primary_metric: str = DEFAULT_PRIMARY,
                        guardrails: Iterable[str] | None = None, start: datetime | None = None,
                        end: datetime | None = None, planned_users: int | None = None,
                        mde: float = DEFAULT_MDE, alpha: float = DEFAULT_ALPHA, sequential: bool = True,
                        source: Source = "api", description: str = "", now: datetime | None = None
                        ) -> Experiment:
    """Check a definition and normalise it; :class:`ExperimentError` names the first field that is wrong.

    Shared by the API, the CLI and automatic registration, so all refuse the same things with the same words.
    ``start`` defaults to now; the first variant is the control unless ``control`` names another.
    """
    now = _utc(now or datetime.now(UTC))
    name = _name(name, "name")
    pairs = list(variants.items()) if isinstance(variants, Mapping) else list(variants)
    if len(pairs) < 2:
        raise ExperimentError("variants", "an experiment needs at least two variants")
    if len(pairs) > MAX_VARIANTS:
        raise ExperimentError("variants", f"at most {MAX_VARIANTS} variants")
    names = [_name(v, "variants") for v, _ in pairs]
    if len(set(names)) != len(names):
        raise ExperimentError("variants", "variant names must be unique")
    weights: list[float] = []
    for variant, weight in pairs:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) \
                or weight < 0:
            raise ExperimentError("variants", f"the weight of {variant!r} must be a non-negative number")
        weights.append(float(weight))
    if sum(weights) <= 0:
        raise ExperimentError("variants", "at least one weight must be positive")
    if not math.isfinite(sum(weights)):  # (each finite, 1e308 + 1e308 is not: normalising would give NaN)
        raise ExperimentError("variants", "the weights are too large; they are relative, e.g. 1 and 1")
    control = names[0] if control is None or control == "" else control
    if control not in names:
        raise ExperimentError("control", f"{control!r} is not one of the variants ({', '.join(names)})")
    if weights[names.index(control)] <= 0:
        raise ExperimentError("control", "the control must have a positive weight")
    if sum(1 for v, w in zip(names, weights) if v != control and w > 0) == 0:
        raise ExperimentError("variants", "at least one variant other than the control needs a positive weight")
    if primary_metric not in DECISION_METRICS:
        raise ExperimentError("primary_metric", f"must be one of {', '.join(DECISION_METRICS)}")
    chosen = tuple(dict.fromkeys(DEFAULT_GUARDRAILS if guardrails is None else guardrails))
    for metric in chosen:
        if metric not in DECISION_METRICS:
            raise ExperimentError("guardrails", f"{metric!r} is not one of {', '.join(DECISION_METRICS)}")
    chosen = tuple(m for m in chosen if m != primary_metric)
    start = _utc(start) if start else now
    end = _utc(end) if end else None
    if end is not None and end <= start:
        raise ExperimentError("end", "must be after the start")
    if planned_users is not None:
        if isinstance(planned_users, bool) or not isinstance(planned_users, int) or planned_users < 0:
            raise ExperimentError("planned_users", "must be a non-negative whole number of users")
        if planned_users > MAX_PLANNED_USERS:
            raise ExperimentError("planned_users", f"at most {MAX_PLANNED_USERS:,} users")
        planned_users = planned_users or None
    if isinstance(mde, bool) or not isinstance(mde, (int, float)) or not 0 < mde < 10:
        raise ExperimentError("mde", "the minimum detectable effect is a relative change in (0, 10), e.g. 0.05")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 0.2:
        raise ExperimentError("alpha", "the significance level must be in (0, 0.2]")
    if len(description) > 2000 or _CONTROL_CHARS.sub("", description.replace("\n", " ")) != \
            description.replace("\n", " "):
        raise ExperimentError("description", "at most 2000 characters, no control characters")
    return Experiment(project_id=project_id, name=name, variants=tuple(names), weights=tuple(weights),
                      control=control, primary_metric=primary_metric, guardrails=chosen, start=start, end=end,
                      planned_users=planned_users, mde=float(mde), alpha=float(alpha), sequential=bool(sequential),
                      source=source, description=description)


def _name(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExperimentError(field, "names must be non-empty strings")
    if len(value) > MAX_NAME or _CONTROL_CHARS.search(value):
        raise ExperimentError(field, f"names are at most {MAX_NAME} characters, without control characters")
    return value


# ------------------------------------------------------------------------------------------ storage


def _row(exp: Experiment, created_at: datetime, updated_at: datetime) -> list[Any]:
    return [exp.project_id, exp.name, list(exp.variants), list(exp.weights), exp.control, exp.primary_metric,
            list(exp.guardrails), exp.start, exp.end, exp.planned_users or 0, exp.mde, exp.alpha, exp.sequential,
            exp.source, exp.description, created_at, updated_at, 0]


def _write(store: Store, rows: Sequence[list[Any]]) -> None:
    if rows:
        store.insert_columns("experiments", [list(col) for col in zip(*rows)], COLUMNS)


def save_experiment(store: Store, exp: Experiment, *, replace_existing: bool = False,
                    now: datetime | None = None) -> Experiment:
    """Store a definition from the API or the CLI; returns it as stored.

    An automatically registered experiment of the same name is replaced (its creation time is kept); one
    registered by hand is replaced only with ``replace_existing``, otherwise :class:`ExperimentExists`.
    """
    now = _ms(now or datetime.now(UTC))
    existing = get_experiment(store, exp.project_id, exp.name)
    if existing is not None and existing.source != "auto" and not replace_existing:
        raise ExperimentExists(f"experiment {exp.name!r} already exists in project {exp.project_id!r}")
    created = existing.created_at if existing is not None and existing.created_at else now
    # Newer than the row it replaces whatever the clocks say (the newest updated_at wins).
    version = max(now, existing.updated_at + timedelta(milliseconds=1)) if existing and existing.updated_at \
        else now
    stored = replace(exp, start=_ms(exp.start), end=_ms(exp.end) if exp.end else None, created_at=created,
                     updated_at=version)
    _write(store, [_row(stored, created, version)])
    return stored


_SELECT = ("SELECT project_id, name, variants, weights, control, primary_metric, guardrails, start_time, "
           "end_time, planned_users, mde, alpha, sequential, source, description, created_at, updated_at "
           "FROM experiments FINAL WHERE is_deleted = 0")


def _from_row(row: Sequence[Any]) -> Experiment:
    (project_id, name, variants, weights, control, primary, guardrails, start, end, planned, mde, alpha,
     sequential, source, description, created, updated) = row
    return Experiment(project_id=project_id, name=name, variants=tuple(variants),
                      weights=tuple(float(w) for w in weights), control=control, primary_metric=primary,
                      guardrails=tuple(guardrails), start=_utc(start), end=_utc(end) if end else None,
                      planned_users=int(planned) or None, mde=float(mde), alpha=float(alpha),
                      sequential=bool(sequential), source=source, description=description,
                      created_at=_utc(created), updated_at=_utc(updated))


def get_experiment(store: Store, project_id: str, name: str) -> Experiment | None:
    """The experiment's current definition, or None."""
    rows = store.query(_SELECT + " AND project_id = {p:String} AND name = {n:String}",
                       {"p": project_id, "n": name}).result_rows
    return _from_row(rows[0]) if rows else None


def list_experiments(store: Store, project_id: str | None = None) -> list[Experiment]:
    """Every experiment (of one project, or of all), by project and name."""
    where = " AND project_id = {p:String}" if project_id is not None else ""
    rows = store.query(_SELECT + where + " ORDER BY project_id, name", {"p": project_id or ""}).result_rows
    return [_from_row(row) for row in rows]


# ---------------------------------------------------------------------------------------- discovery


def pick_control(variants: Sequence[str]) -> str:
    """The control of an automatically registered experiment: a variant named like one, else the first."""
    lowered = {v.lower(): v for v in sorted(variants, reverse=True)}
    for candidate in CONTROL_NAMES:
        if candidate in lowered:
            return lowered[candidate]
    return sorted(variants)[0]


@dataclass(frozen=True)
class Discovery:
    """What one discovery pass registered (new experiments) and updated (new variants of automatic ones)."""

    registered: tuple[Experiment, ...]
    updated: tuple[Experiment, ...]
    skipped: tuple[str, ...]  # names that are not valid experiment names (left to the logs)


def discover(store: Store, now: datetime) -> Discovery:
    """Register experiments seen in traffic but not in the registry, and add newly seen variants to automatically
    registered ones; experiments registered by hand are never changed (their mismatches are reported instead).

    An experiment seen with a single variant so far is not registered yet: there is nothing to compare.
    """
    seen: dict[tuple[str, str], dict[str, datetime]] = {}
    for project, name, variant, first, _calls in observed_variants(store, now - timedelta(days=DISCOVERY_DAYS)):
        if variant:
            seen.setdefault((project, name), {})[variant] = first
    known = {(e.project_id, e.name): e for e in list_experiments(store)}
    registered: list[Experiment] = []
    updated: list[Experiment] = []
    skipped: list[str] = []
    rows: list[list[Any]] = []
    for (project, name), variants in sorted(seen.items()):
        existing = known.get((project, name))
        if existing is not None and (existing.source != "auto" or set(variants) <= set(existing.variants)):
            continue
        names = sorted(set(variants) | set(existing.variants if existing else ()))
        if len(names) < 2:
            continue
        try:
            control = existing.control if existing else pick_control(names)
            exp = validate_experiment(project_id=project, name=name, variants=[(v, 1.0) for v in names],
                                      control=control, start=min(variants.values()), source="auto", now=now)
        except ExperimentError:
            skipped.append(name)
            continue
        # Versioned by when the newest variant was first seen: older than any registration made by hand since.
        version = _ms(max(variants.values()))
        created = existing.created_at if existing and existing.created_at else version
        if existing is not None:
            exp = replace(exp, start=existing.start)
            version = max(version, (existing.updated_at or version) + timedelta(milliseconds=1))
        stored = replace(exp, start=_ms(exp.start), created_at=created, updated_at=version)
        rows.append(_row(stored, created, version))
        (updated if existing else registered).append(stored)
    _write(store, rows)
    return Discovery(tuple(registered), tuple(updated), tuple(skipped))


__all__ = ["DEFAULT_GUARDRAILS", "DEFAULT_PRIMARY", "Discovery", "Experiment", "ExperimentError",
           "ExperimentExists", "discover", "get_experiment", "list_experiments", "pick_control",
           "save_experiment", "validate_experiment"]
