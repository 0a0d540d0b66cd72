"""Validating a rules file into a :class:`~.model.RuleSet`: the top level, the defaults and each rule."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..signals import FEEDBACK, GROUP_COLUMNS, RAW, SIGNALS, Signal, groupable
from .channels import channel_names, channels_section, routing_section
from .conditions import parse_condition
from .durations import checked_duration
from .model import SEVERITIES, Rule, RuleSet, Sustain, Threshold
from .yaml_lines import ParseContext, RulesError, compose, kind_of

_ID = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_TOP = ("version", "evaluation_offset", "dashboard_url", "defaults", "channels", "routing", "rules")
_RULE = ("id", "title", "description", "signal", "group_by", "window", "every", "for", "min_requests",
         "severity", "threshold", "baseline", "detector", "renotify", "no_data", "channels", "projects",
         "enabled", "resolve_after")
_DEFAULTABLE = ("group_by", "window", "every", "for", "min_requests", "severity", "renotify", "no_data",
                "resolve_after")
MAX_SUSTAIN_MINUTES = 60


def parse_rules(text: str, source: str = "<rules>") -> RuleSet:
    """Validate ``text`` (YAML) as a rules file; every problem is reported, each with its line."""
    data, lines, errors = compose(text, source)
    ctx = ParseContext(source, lines)
    ctx.errors.extend(errors)
    ruleset = _ruleset(ctx, data)
    if ctx.errors:
        raise RulesError(source, ctx.errors)
    assert ruleset is not None
    return ruleset


def _ruleset(ctx: ParseContext, data: Any) -> RuleSet | None:
    top = ctx.mapping(data, (), _TOP)
    if top is None:
        return None
    if data is None or "version" not in top:
        ctx.err(("version",) if data else (), "`version: 1` is required")
    elif top["version"] != 1:
        ctx.err(("version",), f"unsupported version {top['version']!r}; this inferwatch reads version 1")
    offset = checked_duration(ctx, top.get("evaluation_offset", 60), ("evaluation_offset",), minimum=0,
                              maximum=3600)
    dashboard = top.get("dashboard_url")
    if dashboard is not None and not (isinstance(dashboard, str) and re.match(r"https?://", dashboard)):
        ctx.err(("dashboard_url",), "must be an http(s) URL")
        dashboard = None
    channels, channel_lines = channels_section(ctx, top.get("channels"))
    routing = routing_section(ctx, top.get("routing"), channels)
    defaults = ctx.mapping(top.get("defaults"), ("defaults",), _DEFAULTABLE) or {}
    rules_value = top.get("rules")
    rules: list[Rule] = []
    if not isinstance(rules_value, list):
        ctx.err(("rules",), "a list of rules is required" if rules_value is None else
                f"must be a list, got {kind_of(rules_value)}")
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


def _rule(ctx: ParseContext, item: Any, path: tuple[Any, ...], defaults: Mapping[str, Any],
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
    window = checked_duration(ctx, *get("window", 300), minimum=60, maximum=7 * 86400, step=60)
    every = checked_duration(ctx, *get("every", 60), minimum=60, maximum=86400, step=60)
    for_value, for_path = get("for", 0)
    sustain = None
    if isinstance(for_value, dict):
        sustain = _sustain(ctx, for_value, for_path, window)
        for_s: float | None = 0
    else:
        for_s = checked_duration(ctx, for_value, for_path, minimum=0, maximum=7 * 86400)
    resolve_after = checked_duration(ctx, *get("resolve_after", 0), minimum=0, maximum=86400, step=60)
    renotify_value, renotify_path = get("renotify", None)
    renotify = None if renotify_value in (None, "never", False) else \
        checked_duration(ctx, renotify_value, renotify_path, minimum=60)
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
    condition = parse_condition(ctx, spec, path, signal, window, group_by)
    if isinstance(for_value, dict) and condition is not None and not isinstance(condition, Threshold):
        ctx.err(for_path, "for: {breaching, of} counts one-minute buckets over a threshold; a baseline or "
                "detector rule takes a plain duration")
    elif sustain is not None and sustain.confidence is not None and isinstance(condition, Threshold) \
            and condition.confidence is None:
        ctx.err(for_path + ("confidence",), "a bucket confidence needs a guarded threshold "
                "(threshold.confidence): without one the buckets are judged by their point value")
    rule_channels = (channel_names(ctx, spec["channels"], path + ("channels",), channels) if "channels" in spec
                     else None)
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
                window_s=int(window or 0), every_s=int(every or 60), for_s=int(for_s or 0), sustain=sustain,
                resolve_after_s=int(resolve_after or 0),
                min_requests=min_requests, renotify_s=int(renotify) if renotify else None, no_data=no_data,
                title=spec.get("title", ""), description=spec.get("description", ""), channels=rule_channels,
                projects=projects, line=ctx.line(path))


def _sustain(ctx: ParseContext, value: dict[str, Any], path: tuple[Any, ...], window: float | None
             ) -> Sustain | None:
    """``for: {breaching: 7m, of: 10m}``: k of the last n one-minute buckets, both whole minutes, k <= n, and
    the n buckets inside the rule's window (the window's own minutes: its data must show what they show)."""
    body = ctx.mapping(value, path, ("breaching", "of", "confidence"))
    if body is None:
        return None
    confidence = body.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                                   or not 0.5 < confidence < 1):
        ctx.err(path + ("confidence",), "confidence must be a number between 0.5 and 1 (exclusive), e.g. 0.8")
        confidence = None
    minutes = {}
    for key in ("breaching", "of"):
        if key not in body:
            ctx.err(path, f"needs `{key}` (e.g. for: {{breaching: 7m, of: 10m}})")
            continue
        if isinstance(body[key], int) and not isinstance(body[key], bool):
            ctx.err(path + (key,), f"a number of minutes, written as a duration such as {body[key]}m")
            continue
        seconds = checked_duration(ctx, body[key], path + (key,), minimum=60, maximum=MAX_SUSTAIN_MINUTES * 60,
                                   step=60)
        if seconds is not None:
            minutes[key] = int(seconds // 60)
    if len(minutes) < 2:
        return None
    k, n = minutes["breaching"], minutes["of"]
    if k > n:
        ctx.err(path + ("breaching",), f"{k} breaching minutes out of {n} can never happen: breaching must be at "
                "most `of`")
        return None
    if window is not None and n * 60 > window:
        ctx.err(path + ("of",), f"the {n} minutes must lie within the window ({int(window // 60)}m): a larger "
                "`of` judges minutes whose data the window no longer shows")
        return None
    return Sustain(k, n, None if confidence is None else float(confidence))


def _group_by(ctx: ParseContext, value: Any, path: tuple[Any, ...], signal: Signal | None
              ) -> tuple[str, ...] | None:
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
