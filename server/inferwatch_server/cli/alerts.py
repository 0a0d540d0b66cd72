"""``inferwatch-server alerts ...``: backtest rules on stored traffic, manage silences, list or check rules.

* ``alerts backtest --from T1 --to T2 [--rules FILE] [--project P] [--step 5m] [--notify] [--persist] [--json]``
  replays the scheduler's evaluation over history and prints what would have fired and resolved, and when;
  nothing is sent unless ``--notify``, and ``alert_state`` is untouched unless ``--persist``.
* ``alerts silence add --project P [--rule R] [--match label=value ...] (--for 2h | --until T) [--comment C]``,
  ``alerts silence list [--project P] [--all]``, ``alerts silence expire --project P SILENCE_ID``.
* ``alerts rules`` lists the rules in force; ``alerts rules --check FILE`` validates a file and prints every
  problem with its line (exit status 2 when invalid), without opening the database.

Times are ISO 8601 (UTC when no offset is given), ``now``, or ``now-<duration>`` (``now-7d``). Commands that
read or write the database open the configured store directly (``--data-dir`` / ``INFERWATCH_*``), so on the
embedded database the collector must be stopped (one process per chDB directory); use the API otherwise.
``inferwatch_alerts`` is imported when a command runs, so ``--help`` stays quick.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from .common import open_migrated, settings_from


def register(sub: Any) -> None:
    """Add ``alerts`` (backtest, silence, rules) to the ``inferwatch-server`` parser."""
    alerts = sub.add_parser("alerts", help="alert rules: backtest on stored traffic, silences, list/check rules")
    alerts_sub = alerts.add_subparsers(dest="alerts_command", required=True)

    bt = alerts_sub.add_parser(
        "backtest", help="replay rule evaluation over stored history: what would have fired and resolved",
        description="Runs the scheduler's evaluation at every step between --from and --to on stored traffic. "
                    "No notification is sent unless --notify; alert_state is not touched unless --persist.")
    bt.add_argument("--from", dest="start", required=True, help="first evaluation time (ISO 8601, now-7d)")
    bt.add_argument("--to", dest="end", required=True, help="last evaluation time (ISO 8601, now)")
    bt.add_argument("--rules", help="rules file (default: the configured one, else the packaged defaults)")
    bt.add_argument("--project", action="append", help="only this project (repeatable)")
    bt.add_argument("--step", default="1m", help="time between evaluations (default 1m; larger is faster)")
    bt.add_argument("--notify", action="store_true", help="really send the notifications to the channels")
    bt.add_argument("--persist", action="store_true", help="write states and events to alert_state/alert_events")
    bt.add_argument("--json", action="store_true", help="print the report as JSON")
    bt.set_defaults(func=cmd_alerts)

    silence = alerts_sub.add_parser("silence", help="silence alerts (add, list, expire)")
    silence_sub = silence.add_subparsers(dest="silence_command", required=True)
    add = silence_sub.add_parser("add", help="silence a rule (or every rule) for some series")
    add.add_argument("--project", required=True)
    add.add_argument("--rule", help="rule id (default: every rule)")
    add.add_argument("--match", action="append", default=[], metavar="LABEL=VALUE",
                     help="series label that must match, e.g. model=gpt-4o (repeatable)")
    until = add.add_mutually_exclusive_group(required=True)
    until.add_argument("--for", dest="duration", help="how long, e.g. 2h")
    until.add_argument("--until", help="end time (ISO 8601)")
    add.add_argument("--comment", default="")
    add.set_defaults(func=cmd_alerts)
    lst = silence_sub.add_parser("list", help="list silences (active ones unless --all)")
    lst.add_argument("--project")
    lst.add_argument("--all", action="store_true", help="include ended silences")
    lst.set_defaults(func=cmd_alerts)
    expire = silence_sub.add_parser("expire", help="end a silence now")
    expire.add_argument("--project", required=True)
    expire.add_argument("silence_id")
    expire.set_defaults(func=cmd_alerts)

    rules = alerts_sub.add_parser("rules", help="list the rules in force, or --check a rules file")
    rules.add_argument("--check", metavar="FILE", help="validate this file (every problem, with its line)")
    rules.add_argument("--json", action="store_true", help="print the rules as JSON")
    rules.set_defaults(func=cmd_alerts)


def parse_time(text: str, now: datetime | None = None) -> datetime:
    """ISO 8601 (UTC when naive), ``now`` or ``now-<duration>``; ValueError otherwise."""
    from inferwatch_alerts.rules import parse_duration

    now = now or datetime.now(UTC)
    value = text.strip()
    if value == "now":
        return now
    if value.startswith("now-"):
        return now - timedelta(seconds=parse_duration(value[4:]))
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a time: {text!r} (use ISO 8601, now or now-7d)") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def cmd_alerts(args: argparse.Namespace) -> int:
    from inferwatch_alerts.rules import RulesError

    try:
        if args.alerts_command == "rules":
            return _rules(args)
        if args.alerts_command == "backtest":
            return _backtest(args)
        return _silence(args)
    except RulesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _rules(args: argparse.Namespace) -> int:
    from inferwatch_alerts import rules

    if args.check:
        ruleset = rules.load_rules(args.check)
        print(f"{args.check}: OK, {len(ruleset.rules)} rule(s), {len(ruleset.channels)} channel(s)")
        return 0
    ruleset = rules.load_configured(settings_from(args))
    if args.json:
        print(json.dumps({"source": ruleset.source, "rules": [r.to_json(ruleset.routing) for r in ruleset.rules]},
                         indent=2))
        return 0
    print(f"rules from {ruleset.source} (windows end {ruleset.evaluation_offset_s} s behind now)")
    for rule in ruleset.rules:
        channels = ", ".join(ruleset.channels_of(rule)) or "no channel"
        held = f"{rule.for_s}s"
        if rule.sustain:
            held = f"{rule.sustain.breaching} of the last {rule.sustain.of} minutes"
            if rule.sustain.confidence is not None:
                c = rule.sustain.confidence
                held += f" (each at {c:.0%} confidence: {rule.sustain.false_rate(c):.1%} false runs)"
        resolve = f", resolves after {rule.resolve_after_s}s clear" if rule.resolve_after_s else ""
        print(f"  {rule.id:28} {rule.severity:8} {rule.headline}  [{', '.join(rule.group_by)}; window "
              f"{rule.window_s}s, for {held}{resolve}, every {rule.every_s}s; -> {channels}]")
    return 0


def _backtest(args: argparse.Namespace) -> int:
    from inferwatch_alerts import rules
    from inferwatch_alerts.backtest import backtest
    from inferwatch_alerts.evaluate import build_channels

    settings = settings_from(args)
    ruleset = rules.load_rules(args.rules) if args.rules else rules.load_configured(settings)
    now = datetime.now(UTC)
    start, end = parse_time(args.start, now), parse_time(args.end, now)
    step = int(rules.parse_duration(args.step))
    store = open_migrated(settings)
    dispatcher = None
    try:
        if args.notify:
            from inferwatch_alerts.notifiers.dispatch import Dispatcher

            dispatcher = Dispatcher(build_channels(ruleset), store)
        report = backtest(store, ruleset, start, end, step_s=step, projects=args.project, dispatcher=dispatcher,
                          persist=args.persist)
    finally:
        if dispatcher is not None:
            dispatcher.close()
        store.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
        return 0
    incidents = report.incidents()
    print(f"backtest of {len(ruleset.rules)} rule(s) from {ruleset.source}: {report.ticks} evaluations, "
          f"{_iso(start)} to {_iso(end)}, every {step}s")
    print(f"{len(incidents)} alert(s) would have fired"
          + (f"; {len(report.sent)} notification(s) {'sent' if args.notify else 'would have been sent'}"
             if report.sent else ""))
    for i in incidents:
        resolved = _iso(i.resolved_at) if i.resolved_at else "still firing"
        print(f"  {_iso(i.fired_at)}  FIRED     {i.project_id:16} {i.rule_id:28} {i.series_key:28} "
              f"{i.severity:8} peak {i.peak:.4g}  resolved {resolved}")
    if report.events:
        print("transitions:")
        for e in report.events:
            print(f"  {_iso(e.event_time)}  {e.state.upper():9} {e.project_id:16} {e.rule_id:28} "
                  f"{e.series_key:28} {e.message}")
    for rule_id, count in report.failed.items():
        print(f"warning: rule {rule_id} failed in {count} evaluation(s) (see the log)", file=sys.stderr)
    return 1 if report.failed else 0


def _silence(args: argparse.Namespace) -> int:
    from inferwatch_alerts import silences
    from inferwatch_alerts.rules import parse_duration

    store = open_migrated(settings_from(args))
    try:
        if args.silence_command == "add":
            matchers = {}
            for item in args.match:
                label, sep, value = item.partition("=")
                if not sep:
                    raise ValueError(f"--match {item!r}: use LABEL=VALUE")
                matchers[label.strip()] = value.strip()
            now = datetime.now(UTC)
            ends = now + timedelta(seconds=parse_duration(args.duration)) if args.duration else \
                parse_time(args.until, now)
            silence = silences.create_silence(store, args.project, rule_id=args.rule, matchers=matchers,
                                              ends_at=ends, comment=args.comment, created_by="cli", now=now)
            print(f"created silence {silence.silence_id}: {_describe(silence)}")
        elif args.silence_command == "list":
            found = silences.list_silences(store, args.project, include_expired=args.all)
            now = datetime.now(UTC)
            for s in found:
                state = "active" if s.active(now) else ("pending" if s.starts_at > now else "ended")
                print(f"{s.project_id:16} {s.silence_id:20} {state:8} {_describe(s)}")
        else:
            silence = silences.expire_silence(store, args.project, args.silence_id)
            if silence is None:
                print(f"no silence {args.silence_id!r} in project {args.project!r}", file=sys.stderr)
                return 1
            print(f"silence {silence.silence_id} ends {_iso(silence.ends_at)}")
        return 0
    finally:
        store.close()


def _describe(silence: Any) -> str:
    what = silence.rule_id or "every rule"
    where = ", ".join(f"{k}={v}" for k, v in silence.matchers.items()) or "every series"
    note = f" ({silence.comment})" if silence.comment else ""
    return f"{what} for {where} until {_iso(silence.ends_at)}{note}"


def _iso(value: datetime) -> str:
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="seconds").replace("+00:00", "Z")
