"""Alert rules: the YAML schema, loading, and validation that names the line of every mistake.

A rules file is refused whole when anything in it is wrong (a scheduler that silently skips a misspelt rule
is worse than one that does not start), and every problem is reported with its line, so one run fixes them all.
The packaged ``default_rules.yaml`` holds the product's defaults and is the worked example of this schema.

Schema (durations are ``30s``, ``5m``, ``2h``, ``1d``, ``1h30m`` or a number of seconds)::

    version: 1                      # required
    evaluation_offset: 60s          # windows end this far behind now, so late-arriving rows are not a dip
    dashboard_url: https://...      # optional; notifications link to it
    defaults:                       # optional; any rule key below that a rule may leave out
      renotify: 4h
      no_data: keep
      min_requests: 20
    channels:                       # name -> notifier spec, handed to inferwatch_alerts.notifiers.config
      slack: {type: slack, webhook_url_env: INFERWATCH_SLACK_WEBHOOK_URL}
      pagerduty: {type: pagerduty, routing_key_env: INFERWATCH_PAGERDUTY_ROUTING_KEY}
    routing:                        # severity -> channel names (a rule may name its own `channels`)
      critical: [pagerduty, slack]
      warning: [slack]
    rules:
      - id: ttft-p95-high           # required; lower-case letters, digits, - _ . (unique)
        title: TTFT p95 above 2 s   # optional; the notification's headline
        description: ...            # optional
        signal: ttft_p95            # required; see inferwatch_alerts.signals.SIGNALS
        group_by: [project, model]  # project is always included; model provider operation feature
                                    #   prompt_template prompt_version experiment variant service
        window: 5m                  # the signal is computed over this trailing window (default 5m)
        every: 1m                   # evaluation interval, a multiple of 1m (default 1m)
        for: 5m                     # the condition must hold this long before firing (default 0)
        min_requests: 20            # fewer calls in the window = no data (quiet hours do not page)
        severity: warning           # critical | warning | info
        # exactly one of threshold / baseline / detector:
        threshold: {op: ">", value: 2s}       # ops > >= < <=; latency values may be durations, rates "1%"
        baseline: {kind: daily_average, factor: 2, lookback: 24h, min_value: 0.1}
                                    # or {kind: same_hour, days: 7, factor: 2}: value op factor * baseline,
                                    #   compared when the value or the baseline reaches min_value
        detector: {kind: proportion_spike, baseline_days: 7, alpha: 0.0001, min_ratio: 1.5, min_increase: 0.01}
                                    # (also min_day_cv); length_shift {baseline_days, alpha, min_distance,
                                    #   spread_factor}
                                    # percentile_creep {reference_days, monitor_days, k, h, min_rel_sd,
                                    #   confidence}
        renotify: 4h                # re-send while firing (default: never); `never` switches it off
        no_data: keep               # keep | ok | alert (alert: missing data for max(for, window) alerts)
        channels: [slack]           # overrides routing for this rule
        projects: [shop]            # only these projects (default: every project)
        enabled: true

Which file: ``INFERWATCH_ALERT_RULES_FILE`` (or a settings field ``alert_rules_file`` when present), else the
packaged defaults.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from .lifecycle import NoDataPolicy, Policy
from .signals import FEEDBACK, GROUP_COLUMNS, RAW, SIGNALS, Signal, groupable

RULES_FILE_ENV: Final = "INFERWATCH_ALERT_RULES_FILE"
DEFAULT_RULES: Final = "default_rules.yaml"
SEVERITIES: Final = ("critical", "warning", "info")
OPS: Final[Mapping[str, Callable[[float, float], bool]]] = {
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}
CHANNEL_TYPES: Final = ("slack", "pagerduty", "webhook")
_ID = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_CHANNEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


class RulesError(ValueError):
    """The rules file is invalid; ``errors`` lists each problem as ``file:line: where: what``."""

    def __init__(self, source: str, errors: Sequence[str]) -> None:
        self.source = source
        self.errors = list(errors)
        super().__init__(f"invalid alert rules in {source}:\n  " + "\n  ".join(self.errors))


# ------------------------------------------------------------------------------------------------ model


@dataclass(frozen=True)
class Threshold:
    op: str
    value: float

    def describe(self, signal: Signal) -> str:
        return f"{self.op} {format_value(signal, self.value)}"


@dataclass(frozen=True)
class BaselineSpec:
    """``value op factor * baseline``; the baseline is the same signal over ``lookback`` before the window
    (``daily_average``) or over the same window on each of ``days`` previous days, averaged (``same_hour``)."""

    kind: Literal["daily_average", "same_hour"]
    factor: float = 2.0
    op: str = ">"
    lookback_s: int = 86400
    days: int = 7
    min_value: float = 0.0

    def describe(self, signal: Signal) -> str:
        what = "the trailing daily average" if self.kind == "daily_average" else \
            f"the same window on the previous {self.days} days"
        return f"{self.op} {self.factor:g}x {what}"


@dataclass(frozen=True)
class DetectorSpec:
    kind: Literal["proportion_spike", "length_shift", "percentile_creep"]
    params: Mapping[str, float]

    def describe(self, signal: Signal) -> str:
        return {"proportion_spike": "significantly above its baseline days",
                "length_shift": "distribution shifted from its baseline days",
                "percentile_creep": "creeping up against its reference days"}[self.kind]


Condition = Threshold | BaselineSpec | DetectorSpec


@dataclass(frozen=True)
class Rule:
    id: str
    signal: Signal
    condition: Condition
    severity: Literal["critical", "warning", "info"]
    group_by: tuple[str, ...] = ("project",)
    window_s: int = 300
    every_s: int = 60
    for_s: int = 0
    min_requests: int = 0
    renotify_s: int | None = None
    no_data: NoDataPolicy = "keep"
    title: str = ""
    description: str = ""
    channels: tuple[str, ...] | None = None
    projects: tuple[str, ...] | None = None
    line: int = 0

    @property
    def policy(self) -> Policy:
        return Policy(for_s=self.for_s, renotify_s=self.renotify_s, no_data=self.no_data,
                      no_data_grace_s=max(self.for_s, self.window_s))

    @property
    def headline(self) -> str:
        return self.title or f"{self.signal.name} {self.condition.describe(self.signal)}"

    def to_json(self, routing: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        cond = self.condition
        condition: dict[str, Any] = {"type": type(cond).__name__.removesuffix("Spec").lower()}
        if isinstance(cond, Threshold):
            condition |= {"op": cond.op, "value": cond.value}
        elif isinstance(cond, BaselineSpec):
            condition |= {"kind": cond.kind, "factor": cond.factor, "op": cond.op, "lookback_s": cond.lookback_s,
                          "days": cond.days, "min_value": cond.min_value}
        else:
            condition |= {"kind": cond.kind, **cond.params}
        return {"id": self.id, "title": self.headline, "description": self.description,
                "signal": self.signal.name, "unit": self.signal.unit, "group_by": list(self.group_by),
                "window_s": self.window_s, "every_s": self.every_s, "for_s": self.for_s,
                "min_requests": self.min_requests, "severity": self.severity, "condition": condition,
                "renotify_s": self.renotify_s, "no_data": self.no_data,
                "channels": list(self.channels_for(routing)), "projects": list(self.projects or [])}

    def channels_for(self, routing: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
        return tuple(self.channels if self.channels is not None else routing.get(self.severity, ()))


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    channels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    routing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    evaluation_offset_s: int = 60
    dashboard_url: str | None = None
    source: str = "<defaults>"
    channel_lines: Mapping[str, int] = field(default_factory=dict)

    def rule(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def channels_of(self, rule: Rule) -> tuple[str, ...]:
        return rule.channels_for(self.routing)


def format_value(signal: Signal, value: float | None) -> str:
    """A value in the signal's unit, as a person reads it (2.35 s, 1.20%, $4.10/h)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if signal.unit == "ms":
        return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"
    if signal.unit == "ratio":
        return f"{value:.2%}"
    if signal.unit == "USD/h":
        return f"${value:,.2f}/h"
    return f"{value:,.1f} {signal.unit}"


# ------------------------------------------------------------------------------------------------ loading


def default_rules_text() -> str:
    return resources.files("inferwatch_alerts").joinpath(DEFAULT_RULES).read_text(encoding="utf-8")


def configured_rules_path(settings: object | None = None) -> Path | None:
    """The rules file in use: a settings field ``alert_rules_file``, else ``$INFERWATCH_ALERT_RULES_FILE``;
    None means the packaged defaults."""
    value = getattr(settings, "alert_rules_file", None) or os.environ.get(RULES_FILE_ENV) or None
    return Path(value).expanduser() if value else None


def load_rules(path: str | os.PathLike[str] | None = None) -> RuleSet:
    """Load and validate a rules file (the packaged defaults when ``path`` is None); raises :class:`RulesError`."""
    if path is None:
        return parse_rules(default_rules_text(), f"<packaged {DEFAULT_RULES}>")
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesError(str(file), [f"{file}: cannot read: {exc.strerror or exc}"]) from None
    return parse_rules(text, str(file))


def load_configured(settings: object | None = None) -> RuleSet:
    return load_rules(configured_rules_path(settings))


def parse_rules(text: str, source: str = "<rules>") -> RuleSet:
    """Validate ``text`` (YAML) as a rules file; every problem is reported, each with its line."""
    data, lines, errors = _compose(text, source)
    ctx = _Ctx(source, lines)
    ctx.errors.extend(errors)
    ruleset = _ruleset(ctx, data)
    if ctx.errors:
        raise RulesError(source, ctx.errors)
    assert ruleset is not None
    return ruleset


def _compose(text: str, source: str) -> tuple[Any, dict[tuple[Any, ...], int], list[str]]:
    """Parse YAML into plain values plus the line of every value, refusing duplicate keys (YAML keeps the last
    one silently, which would hide a rule's first threshold)."""
    loader = yaml.SafeLoader(text)
    lines: dict[tuple[Any, ...], int] = {}
    errors: list[str] = []

    def walk(node: yaml.Node, path: tuple[Any, ...]) -> Any:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = loader.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool)):
                    errors.append(f"{source}:{key_node.start_mark.line + 1}: {_where(path)}: keys must be "
                                  f"plain values")
                    continue
                if key in out:
                    errors.append(f"{source}:{key_node.start_mark.line + 1}: {_where(path + (key,))}: duplicate "
                                  f"key (first at line {lines[path + (key,)]})")
                    continue
                out[key] = walk(value_node, path + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [walk(item, path + (i,)) for i, item in enumerate(node.value)]
        return loader.construct_object(node, deep=True)

    try:
        node = loader.get_single_node()
        data = walk(node, ()) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise RulesError(source, [f"{source}{line}: not valid YAML: {reason}"]) from None
    finally:
        loader.dispose()
    return data, lines, errors


def _where(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


class _Ctx:
    def __init__(self, source: str, lines: Mapping[tuple[Any, ...], int]) -> None:
        self.source, self.lines, self.errors = source, lines, []

    def line(self, path: tuple[Any, ...]) -> int:
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)

    def err(self, path: tuple[Any, ...], message: str) -> None:
        self.errors.append(f"{self.source}:{self.line(path)}: {_where(path)}: {message}")

    def mapping(self, value: Any, path: tuple[Any, ...], allowed: Sequence[str]) -> dict[str, Any] | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.err(path, f"must be a mapping, got {_kind(value)}")
            return None
        for key in value:
            if key not in allowed:
                self.err(path + (key,), f"unknown key {key!r}; allowed: {', '.join(allowed)}")
        return value


def _kind(value: Any) -> str:
    return {list: "a list", dict: "a mapping", str: "a string", bool: "a boolean", type(None): "nothing"}.get(
        type(value), type(value).__name__)


def parse_duration(value: Any) -> float:
    """``90``, ``"90s"``, ``"5m"``, ``"1h30m"``, ``"1d"`` -> seconds; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("a duration, not a boolean")
    if isinstance(value, (int, float)):
        if value < 0 or not math.isfinite(value):
            raise ValueError("must not be negative")
        return float(value)
    if isinstance(value, str):
        text = value.strip().replace(" ", "")
        parts = list(_DURATION.finditer(text))
        if text and parts and "".join(p.group(0) for p in parts) == text:
            return sum(float(p.group(1)) * _UNITS[p.group(2)] for p in parts)
    raise ValueError(f"not a duration: {value!r} (use e.g. 30s, 5m, 2h, 1d)")


# --------------------------------------------------------------------------------------------- validation

_TOP = ("version", "evaluation_offset", "dashboard_url", "defaults", "channels", "routing", "rules")
_RULE = ("id", "title", "description", "signal", "group_by", "window", "every", "for", "min_requests",
         "severity", "threshold", "baseline", "detector", "renotify", "no_data", "channels", "projects",
         "enabled")
_DEFAULTABLE = ("group_by", "window", "every", "for", "min_requests", "severity", "renotify", "no_data")
_DETECTOR_PARAMS: Final[Mapping[str, Mapping[str, tuple[float, float, float]]]] = {
    # name -> (default, min, max)
    "proportion_spike": {"baseline_days": (7, 3, 28), "min_baseline_days": (3, 2, 28), "alpha": (1e-4, 1e-12, 0.2),
                         "min_ratio": (1.5, 1.0, 100.0), "min_increase": (0.01, 0.0, 1.0),
                         "min_day_cv": (0.1, 0.0, 5.0)},
    "length_shift": {"baseline_days": (7, 3, 28), "min_baseline_days": (3, 2, 28), "alpha": (1e-4, 1e-12, 0.2),
                     "min_distance": (0.1, 0.0, 1.0), "spread_factor": (5.0, 1.0, 20.0)},
    "percentile_creep": {"reference_days": (7, 3, 60), "monitor_days": (7, 1, 60), "min_reference": (4, 2, 60),
                         "k": (0.5, 0.0, 10.0), "h": (5.0, 0.5, 100.0), "min_rel_sd": (0.03, 0.0, 1.0),
                         "confidence": (0.9, 0.5, 0.999)},
}
_INT_PARAMS = frozenset({"baseline_days", "min_baseline_days", "reference_days", "monitor_days", "min_reference"})


def _ruleset(ctx: _Ctx, data: Any) -> RuleSet | None:
    top = ctx.mapping(data, (), _TOP)
    if top is None:
        return None
    if data is None or "version" not in top:
        ctx.err(("version",) if data else (), "`version: 1` is required")
    elif top["version"] != 1:
        ctx.err(("version",), f"unsupported version {top['version']!r}; this inferwatch reads version 1")
    offset = _duration(ctx, top.get("evaluation_offset", 60), ("evaluation_offset",), minimum=0, maximum=3600)
    dashboard = top.get("dashboard_url")
    if dashboard is not None and not (isinstance(dashboard, str) and re.match(r"https?://", dashboard)):
        ctx.err(("dashboard_url",), "must be an http(s) URL")
        dashboard = None
    channels, channel_lines = _channels(ctx, top.get("channels"))
    routing = _routing(ctx, top.get("routing"), channels)
    defaults = ctx.mapping(top.get("defaults"), ("defaults",), _DEFAULTABLE) or {}
    rules_value = top.get("rules")
    rules: list[Rule] = []
    if not isinstance(rules_value, list):
        ctx.err(("rules",), "a list of rules is required" if rules_value is None else
                f"must be a list, got {_kind(rules_value)}")
    else:
        seen: dict[str, int] = {}
        for i, item in enumerate(rules_value):
            rule = _rule(ctx, item, ("rules", i), defaults, channels)
            if rule is None:
                continue
            if rule.id in seen:
                ctx.err(("rules", i, "id"), f"duplicate rule id {rule.id!r} (first at line {seen[rule.id]})")
                continue
            seen[rule.id] = rule.line
            rules.append(rule)
    return RuleSet(rules=tuple(rules), channels=channels, routing=routing, evaluation_offset_s=int(offset or 0),
                   dashboard_url=dashboard.rstrip("/") if dashboard else None, source=ctx.source,
                   channel_lines=channel_lines)


def _channels(ctx: _Ctx, value: Any) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    if value is None:
        return {}, {}
    if not isinstance(value, dict):
        ctx.err(("channels",), f"must be a mapping of channel name to settings, got {_kind(value)}")
        return {}, {}
    out, lines = {}, {}
    for name, spec in value.items():
        path = ("channels", name)
        if not isinstance(name, str) or not _CHANNEL.fullmatch(name):
            ctx.err(path, "channel names are letters, digits, - _ . (at most 64)")
            continue
        if not isinstance(spec, dict):
            ctx.err(path, f"must be a mapping with a `type`, got {_kind(spec)}")
            continue
        if spec.get("type") not in CHANNEL_TYPES:
            ctx.err(path + ("type",), f"type must be one of {', '.join(CHANNEL_TYPES)}")
            continue
        problem = channel_problem(name, spec)
        if problem:
            ctx.err(path, problem)
            continue
        out[name], lines[name] = dict(spec), ctx.line(path)
    return out, lines


class _AnyEnv(Mapping[str, str]):
    """An environment in which every variable is set (to a placeholder): checks a channel's structure without
    its secrets, which are only read when the scheduler builds the channel."""

    def __getitem__(self, key: str) -> str:
        return "https://placeholder.invalid/inferwatch-rules-check"

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def channel_problem(name: str, spec: Mapping[str, Any]) -> str | None:
    """Why the notifiers would refuse this channel's settings (unknown field, a secret written inline, a bad
    number or CA bundle), or None. Secrets themselves are not checked here: they may be set only where the
    scheduler runs, and a missing one disables that channel with a warning instead of stopping alerting.

    The check builds the notifier (with placeholder secrets), which costs a TLS context for PagerDuty; answers
    are remembered per settings, since the API and the CLI reload the same file again and again."""
    return _channel_problem(name, json.dumps(spec, sort_keys=True, default=str))


@lru_cache(maxsize=256)
def _channel_problem(name: str, spec_json: str) -> str | None:
    from .notifiers.config import load_channels

    spec = json.loads(spec_json)

    try:
        built = load_channels({name: spec}, env=_AnyEnv())
    except ValueError as exc:
        message = str(exc)
        if "secrets file" in message and "none was given" in message:
            return None  # refers to the secrets file, which only the scheduler is given
        return message.removeprefix(f"channel {name!r}: ")
    for notifier in built.values():
        close = getattr(notifier, "close", None)
        if callable(close):
            close()
    return None


def _names(ctx: _Ctx, value: Any, path: tuple[Any, ...], channels: Mapping[str, Any]) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.err(path, "must be a list of channel names")
        return None
    for i, name in enumerate(value):
        if name not in channels:
            known = ", ".join(channels) or "none are defined"
            ctx.err(path + (i,), f"unknown channel {name!r} (channels: {known})")
    return tuple(dict.fromkeys(value))


def _routing(ctx: _Ctx, value: Any, channels: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    mapping = ctx.mapping(value, ("routing",), SEVERITIES)
    out: dict[str, tuple[str, ...]] = {}
    for severity, names in (mapping or {}).items():
        if severity in SEVERITIES:
            checked = _names(ctx, names, ("routing", severity), channels)
            if checked is not None:
                out[severity] = checked
    return out


def _duration(ctx: _Ctx, value: Any, path: tuple[Any, ...], *, minimum: float = 0, maximum: float | None = None,
              step: int | None = None) -> float | None:
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        ctx.err(path, str(exc))
        return None
    if seconds < minimum or (maximum is not None and seconds > maximum):
        hi = f" and at most {_fmt_s(maximum)}" if maximum is not None else ""
        ctx.err(path, f"must be at least {_fmt_s(minimum)}{hi}")
        return None
    if step and seconds % step:
        ctx.err(path, f"must be a whole number of {_fmt_s(step)}")
        return None
    return seconds


def _fmt_s(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _rule(ctx: _Ctx, item: Any, path: tuple[Any, ...], defaults: Mapping[str, Any],
          channels: Mapping[str, Any]) -> Rule | None:
    spec = ctx.mapping(item, path, _RULE)
    if spec is None:
        return None
    errors_before = len(ctx.errors)

    def get(key: str, fallback: Any) -> tuple[Any, tuple[Any, ...]]:
        if key in spec:
            return spec[key], path + (key,)
        if key in defaults:
            return defaults[key], ("defaults", key)
        return fallback, path

    rule_id = spec.get("id")
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        ctx.err(path + ("id",), "an id of lower-case letters, digits, - _ . (at most 64) is required")
        rule_id = None
    signal = SIGNALS.get(spec.get("signal")) if isinstance(spec.get("signal"), str) else None
    if signal is None:
        ctx.err(path + ("signal",), f"unknown or missing signal {spec.get('signal')!r}; signals: "
                f"{', '.join(SIGNALS)}")
    group_value, group_path = get("group_by", ["project"])
    group_by = _group_by(ctx, group_value, group_path, signal)
    window = _duration(ctx, *get("window", 300), minimum=60, maximum=7 * 86400, step=60)
    every = _duration(ctx, *get("every", 60), minimum=60, maximum=86400, step=60)
    for_s = _duration(ctx, *get("for", 0), minimum=0, maximum=7 * 86400)
    renotify_value, renotify_path = get("renotify", None)
    renotify = None if renotify_value in (None, "never", False) else \
        _duration(ctx, renotify_value, renotify_path, minimum=60)
    min_requests, min_path = get("min_requests", 0)
    if isinstance(min_requests, bool) or not isinstance(min_requests, int) or min_requests < 0:
        ctx.err(min_path, "must be a whole number, 0 or more")
        min_requests = 0
    severity, severity_path = get("severity", None)
    if severity not in SEVERITIES:
        ctx.err(severity_path, f"severity must be one of {', '.join(SEVERITIES)}")
    no_data, no_data_path = get("no_data", "keep")
    if no_data not in ("keep", "ok", "alert"):
        ctx.err(no_data_path, "no_data must be keep, ok or alert")
    condition = _condition(ctx, spec, path, signal, window, group_by)
    rule_channels = _names(ctx, spec["channels"], path + ("channels",), channels) if "channels" in spec else None
    projects = None
    if "projects" in spec:
        value = spec["projects"]
        if not isinstance(value, list) or not value or not all(isinstance(p, str) and p for p in value):
            ctx.err(path + ("projects",), "must be a non-empty list of project ids")
        else:
            projects = tuple(value)
    for key in ("title", "description"):
        if key in spec and not isinstance(spec[key], str):
            ctx.err(path + (key,), "must be a string")
    enabled = spec.get("enabled", True)
    if not isinstance(enabled, bool):
        ctx.err(path + ("enabled",), "must be true or false")
    if len(ctx.errors) > errors_before or not enabled:
        return None
    assert rule_id is not None and signal is not None and condition is not None and group_by is not None
    return Rule(id=rule_id, signal=signal, condition=condition, severity=severity, group_by=group_by,
                window_s=int(window or 0), every_s=int(every or 60), for_s=int(for_s or 0),
                min_requests=min_requests, renotify_s=int(renotify) if renotify else None, no_data=no_data,
                title=spec.get("title", ""), description=spec.get("description", ""), channels=rule_channels,
                projects=projects, line=ctx.line(path))


def _group_by(ctx: _Ctx, value: Any, path: tuple[Any, ...], signal: Signal | None) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.err(path, "must be a list of group names")
        return None
    unknown = [v for v in value if v not in GROUP_COLUMNS]
    if unknown:
        ctx.err(path, f"unknown group {unknown[0]!r}; groups: {', '.join(GROUP_COLUMNS)}")
        return None
    if len(set(value)) != len(value):
        ctx.err(path, "lists a group twice")
        return None
    groups = ("project", *[v for v in value if v != "project"])
    if signal is not None and not groupable(signal, groups):
        allowed = FEEDBACK.groups if signal.family == "feedback" else RAW.groups
        ctx.err(path, f"{signal.name} cannot be grouped by {', '.join(groups)}; it can be grouped by "
                f"{', '.join(sorted(allowed))}")
        return None
    return groups


def _number(ctx: _Ctx, value: Any, path: tuple[Any, ...], signal: Signal | None) -> float | None:
    """A threshold value: a number in the signal's unit, a duration for latencies, a percentage for ratios."""
    if isinstance(value, bool):
        ctx.err(path, "must be a number")
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if signal is None:
        return None  # the unknown signal is reported; its units are unknown, so is what this value means
    if isinstance(value, str):
        text = value.strip()
        if signal.unit == "ratio" and text.endswith("%"):
            try:
                return float(text[:-1]) / 100.0
            except ValueError:
                pass
        if signal.unit == "ms":
            try:
                return parse_duration(text) * 1000.0
            except ValueError:
                pass
    hint = {"ms": " (milliseconds, or a duration such as 2s)", "ratio": " (a fraction, or a percentage such as "
            "1%)"}.get(signal.unit if signal else "", "")
    ctx.err(path, f"must be a number{hint}")
    return None


def _condition(ctx: _Ctx, spec: Mapping[str, Any], path: tuple[Any, ...], signal: Signal | None,
               window: float | None, group_by: tuple[str, ...] | None) -> Condition | None:
    given = [k for k in ("threshold", "baseline", "detector") if k in spec]
    if len(given) != 1:
        ctx.err(path, "needs exactly one of threshold, baseline or detector"
                + (f" (has {', '.join(given)})" if given else ""))
        return None
    key = given[0]
    cpath = path + (key,)
    if key == "threshold":
        body = ctx.mapping(spec[key], cpath, ("op", "value"))
        if body is None:
            return None
        op = body.get("op", ">")
        if op not in OPS:
            ctx.err(cpath + ("op",), f"op must be one of {' '.join(OPS)}")
        if "value" not in body:
            ctx.err(cpath, "needs a value")
            return None
        value = _number(ctx, body["value"], cpath + ("value",), signal)
        return Threshold(op, value) if value is not None and op in OPS else None
    if key == "baseline":
        body = ctx.mapping(spec[key], cpath, ("kind", "factor", "op", "lookback", "days", "min_value"))
        if body is None:
            return None
        kind = body.get("kind")
        if kind not in ("daily_average", "same_hour"):
            ctx.err(cpath + ("kind",), "kind must be daily_average or same_hour")
            return None
        factor = body.get("factor", 2)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
            ctx.err(cpath + ("factor",), "factor must be a positive number")
            return None
        op = body.get("op", ">")
        if op not in OPS:
            ctx.err(cpath + ("op",), f"op must be one of {' '.join(OPS)}")
            return None
        lookback = _duration(ctx, body.get("lookback", 86400), cpath + ("lookback",), minimum=3600,
                             maximum=30 * 86400, step=60)
        days = body.get("days", 7)
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 28:
            ctx.err(cpath + ("days",), "days must be a whole number from 1 to 28")
            return None
        floor = _number(ctx, body.get("min_value", 0), cpath + ("min_value",), signal)
        if lookback is None or floor is None:
            return None
        if kind == "same_hour" and window is not None and window > 86400:
            ctx.err(path + ("window",), "a same_hour baseline needs a window of at most 1d")
            return None
        return BaselineSpec(kind, float(factor), op, int(lookback), days, floor)
    body = spec[key]
    if isinstance(body, str):
        body = {"kind": body}
    kind = body.get("kind") if isinstance(body, dict) else None
    if kind not in _DETECTOR_PARAMS:
        ctx.err(cpath + ("kind",) if isinstance(body, dict) else cpath,
                f"detector kind must be one of {', '.join(_DETECTOR_PARAMS)}")
        return None
    allowed = _DETECTOR_PARAMS[kind]
    body = ctx.mapping(body, cpath, ("kind", *allowed))
    if body is None:
        return None
    if signal is not None and kind not in signal.detectors:
        fits = [s.name for s in SIGNALS.values() if kind in s.detectors]
        ctx.err(path + ("signal",), f"detector {kind} does not apply to {signal.name}; it applies to "
                f"{', '.join(fits)}")
        return None
    params: dict[str, float] = {}
    for name, (default, low, high) in allowed.items():
        value = body.get(name, default)
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and low <= value <= high
        if name in _INT_PARAMS and ok and int(value) != value:
            ok = False
        if not ok:
            ctx.err(cpath + (name,), f"{name} must be a {'whole ' if name in _INT_PARAMS else ''}number from "
                    f"{low:g} to {high:g}")
            continue
        params[name] = float(value)
    if kind == "length_shift" and group_by is not None and not set(group_by) <= RAW.groups:
        ctx.err(path + ("group_by",), "response lengths cannot be grouped by these groups")
    if kind in ("proportion_spike", "length_shift") and window is not None and window > 86400:
        ctx.err(path + ("window",), f"{kind} compares the same window on earlier days: at most 1d")
        return None
    if len(params) != len(allowed):
        return None
    return DetectorSpec(kind, params)


def iter_rules(ruleset: RuleSet, project: str | None = None) -> Iterator[Rule]:
    """The rules that apply to ``project`` (every rule when None)."""
    for rule in ruleset.rules:
        if project is None or rule.projects is None or project in rule.projects:
            yield rule
