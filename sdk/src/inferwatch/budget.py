"""Budget guard: stop (or downgrade) LLM calls once a hard budget is spent, from the collector's budget status.

Usage::

    inferwatch.init(api_key="iwk_...", budget_guard=True)                  # raise BudgetExceeded, or:
    inferwatch.budget_guard(downgrade={"gpt-4o": "gpt-4o-mini", "claude-sonnet-4-5": "claude-haiku-4-5"})

    try:
        with inferwatch.tags(feature="chat", user_id=uid):
            client.chat.completions.create(model="gpt-4o", messages=...)
    except inferwatch.BudgetExceeded as exc:
        print(exc.budget_id, exc.scope, exc.limit_usd, exc.spent_usd)

What applies to a call: the collector's hard budgets (``kind == "hard"``) marked ``exceeded`` whose scope matches
the call's context: the project (always), the ``feature`` of ``inferwatch.tags(feature=...)``, the hashed user
of ``inferwatch.tags(user_id=...)`` (the collector keys user budgets by the same HMAC hash; init's
``user_hash_key`` must be the deployment's). Soft budgets, and forecasts, never block. The check runs before each
provider call made through the wrapped/instrumented OpenAI and Anthropic clients (calls those integrations record;
``with_raw_response`` calls are passed through unchecked) and in :func:`inferwatch.llm_call`. On a match:

* no ``downgrade`` policy: :class:`BudgetExceeded` is raised before the provider is called (for an async
  client, by the awaitable the call returns, as the provider's own errors are);
* ``downgrade={"from": "to", ...}``: a call to a ``from`` model is sent to its ``to`` model instead (the request's
  ``model`` is rewritten; the span keeps ``inferwatch.budget.downgraded_from``), a call to a ``to`` model goes
  through as is, a call to any other model raises :class:`BudgetExceeded`. Models match exactly.

Where the status comes from: ``GET {endpoint}/api/v1/budgets/status`` with the ingest key (Bearer), fetched by a
daemon thread at start and then every ``refresh_s`` seconds, never on a caller's thread. Each fetch that parses
replaces an immutable snapshot (one reference assignment); a call reads that reference and does at most three
dictionary lookups, with no lock and no I/O. The fetch goes through :mod:`inferwatch.transport` (one attempt per
refresh).

Fail open: until the first status arrives, and when the collector cannot be reached, answers an error or sends
something unreadable for longer than ``max_stale_s`` (default three refresh intervals; until then the last good
status is kept), no call is blocked. ``inferwatch.stats()["budget_guard"]`` says so (``fail_open``) and counts
refreshes (ok / failed, the last error, the last good refresh's age), calls blocked and calls downgraded. Nothing
but :class:`BudgetExceeded` ever raises into the app from here: a malformed budget entry is skipped (counted), an
internal error is counted and the call proceeds.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import _guard, client, context
from .options import env_var, resolve
from .transport import Transport, suppress_instrumentation

log = logging.getLogger("inferwatch")

PATH = "/api/v1/budgets/status"
MAX_BODY_BYTES = 8 << 20
SCOPES = frozenset({"project", "feature", "user"})
_PROJECT = ("project", "")


@dataclass(frozen=True)
class Budget:
    """One budget as the collector reported it."""

    budget_id: str
    scope_type: str  # project | feature | user
    scope_value: str  # "" for the project; the feature name; the user's HMAC hash
    period: str  # day | month
    kind: str  # soft | hard
    limit_usd: float
    spent_usd: float
    used_ratio: float
    exceeded: bool
    forecast_exceeds: bool


class BudgetExceeded(Exception):
    """A hard budget that applies to this call is exceeded; raised before the provider is called."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.budget_id = budget.budget_id
        self.scope_type = budget.scope_type
        self.scope_value = budget.scope_value
        self.period = budget.period
        self.limit_usd = budget.limit_usd
        self.spent_usd = budget.spent_usd
        super().__init__(f"inferwatch: hard budget {budget.budget_id!r} ({self.scope}, per {budget.period}) is "
                         f"exceeded: ${budget.spent_usd:.2f} spent of ${budget.limit_usd:.2f}")

    @property
    def scope(self) -> str:
        """``"project"``, ``"feature:<name>"`` or ``"user:<hash>"``."""
        return self.scope_type if self.scope_type == "project" else f"{self.scope_type}:{self.scope_value}"

    def __reduce__(self) -> Any:
        return (type(self), (self.budget,))


@dataclass(frozen=True)
class _Snapshot:
    """What one refresh produced; never changed once published."""

    blocked: Mapping[tuple[str, str], Budget]  # exceeded hard budgets by (scope_type, scope_value)
    budgets: tuple[Budget, ...] = ()
    generated_at: str = ""
    fetched_at: float | None = None  # monotonic; None: no status in use (fail open)


_EMPTY = _Snapshot(blocked={})


class _RefreshFailed(Exception):
    """The status could not be used; the message is the short reason shown in stats."""


class BudgetGuard:
    """One guard: its configuration, its snapshot and its refresh thread. Made by :func:`budget_guard`."""

    def __init__(self, *, endpoint: str, api_key: str = "", downgrade: Mapping[str, str] | None = None,
                 refresh_s: float = 30.0, max_stale_s: float | None = None, ca_file: str = "") -> None:
        if isinstance(refresh_s, bool) or not isinstance(refresh_s, (int, float)) or not refresh_s > 0:
            raise ValueError(f"refresh_s must be a positive number of seconds, not {refresh_s!r}")
        if max_stale_s is not None and (isinstance(max_stale_s, bool) or not isinstance(max_stale_s, (int, float))
                                        or max_stale_s < 0):
            raise ValueError(f"max_stale_s must be a non-negative number of seconds, not {max_stale_s!r}")
        if downgrade is not None and (not isinstance(downgrade, Mapping) or not all(
                isinstance(k, str) and k and isinstance(v, str) and v for k, v in downgrade.items())):
            raise TypeError("downgrade must map model names to model names, e.g. {'gpt-4o': 'gpt-4o-mini'}")
        self._transport = Transport(endpoint, api_key, ca_file)
        self.url = self._transport.url(PATH)
        self.refresh_s = float(refresh_s)
        self.max_stale_s = 3 * self.refresh_s if max_stale_s is None else float(max_stale_s)
        self.timeout_s = min(max(self.refresh_s, 1.0), 5.0)
        self.downgrade: dict[str, str] | None = dict(downgrade) if downgrade is not None else None
        self._targets = frozenset(self.downgrade.values()) if self.downgrade else frozenset()
        self._snapshot = _EMPTY
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # counters of the (rare) blocked/downgraded paths
        self.refreshes_ok = self.refreshes_failed = self.entries_skipped = 0  # written by the refresh thread only
        self.calls_blocked = self.calls_downgraded = 0
        self.last_error = ""
        self._last_ok: float | None = None
        self._warned = False

    # --- reading ---
    def budgets(self) -> tuple[Budget, ...]:
        """Every budget of the status in use (soft ones too), e.g. to warn users; ``()`` while failing open."""
        return self._snapshot.budgets

    def stats(self) -> dict[str, Any]:
        snap = self._snapshot
        last_ok = self._last_ok
        return {"enabled": True, "fail_open": snap.fetched_at is None, "refreshes_ok": self.refreshes_ok,
                "refreshes_failed": self.refreshes_failed, "last_error": self.last_error,
                "last_refresh_age_s": None if last_ok is None else round(time.monotonic() - last_ok, 3),
                "budgets": len(snap.budgets), "hard_exceeded": len(snap.blocked),
                "entries_skipped": self.entries_skipped, "calls_blocked": self.calls_blocked,
                "calls_downgraded": self.calls_downgraded, "refresh_s": self.refresh_s}

    def _route(self, model: Any) -> str | None | bool:
        """Under an exceeded budget: the replacement model, True (proceed unchanged) or None (block)."""
        if self.downgrade is not None and isinstance(model, str):
            target = self.downgrade.get(model)
            if target is not None:
                return target
            if model in self._targets:
                return True
        return None

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    # --- the refresh thread ---
    def start(self) -> None:
        thread = threading.Thread(target=self._run, name="inferwatch-budget-guard", daemon=True)
        thread.start()
        self._thread = thread

    def stop(self) -> None:
        """Stop refreshing (the thread exits at its next wake-up) and fail open."""
        self._stop.set()
        self._snapshot = _EMPTY

    def _run(self) -> None:
        with _guard.guard("budget.suppress_instrumentation"):
            suppress_instrumentation()
        stop = self._stop
        while not stop.is_set():
            self.refresh()
            stop.wait(self.refresh_s)
        with _guard.guard("budget.close"):
            self._transport.close()

    def refresh(self) -> bool:
        """Fetch the status once and publish it; True when it was used. Never raises. The refresh thread calls
        this every ``refresh_s``; calling it yourself blocks on the HTTP request."""
        try:
            body = self._fetch()
            snapshot = self._parse(body)
        except _RefreshFailed as exc:
            self._failed(str(exc))
            return False
        except Exception as exc:  # noqa: BLE001 - a bug of ours: counted, the guard fails open
            _guard.record_internal_error("budget.refresh", exc)
            self._failed("internal_error")
            return False
        if self._stop.is_set():
            return False
        self._snapshot = snapshot  # the one write the callers see
        self._last_ok = snapshot.fetched_at
        self.refreshes_ok += 1
        self.last_error = ""
        return True

    def _failed(self, reason: str) -> None:
        self.refreshes_failed += 1
        first, self._warned = not self._warned, True
        self.last_error = reason
        fetched = self._snapshot.fetched_at
        if fetched is not None and time.monotonic() - fetched > self.max_stale_s:
            self._snapshot = _EMPTY  # too old to trust: fail open
        if first:
            log.warning("inferwatch: budget status unavailable from %s (%s); calls are not blocked while it is "
                        "(see inferwatch.stats()['budget_guard'])", self.url, reason)

    def _fetch(self) -> bytes:
        answer = self._transport.get(PATH, timeout_s=self.timeout_s, max_bytes=MAX_BODY_BYTES)
        if not answer.status:
            raise _RefreshFailed("unreachable")
        if not answer.ok:
            raise _RefreshFailed(f"http_{answer.status}")
        if len(answer.body) > MAX_BODY_BYTES:
            raise _RefreshFailed("too_large")
        return answer.body

    def _parse(self, body: bytes) -> _Snapshot:
        try:
            data = json.loads(body)
        except ValueError:
            raise _RefreshFailed("bad_json") from None
        entries = data.get("budgets") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise _RefreshFailed("bad_shape")
        budgets: list[Budget] = []
        blocked: dict[tuple[str, str], Budget] = {}
        skipped = 0
        for entry in entries:
            budget = _budget(entry)
            if budget is None:
                skipped += 1
                continue
            budgets.append(budget)
            if budget.kind == "hard" and budget.exceeded:
                key = _PROJECT if budget.scope_type == "project" else (budget.scope_type, budget.scope_value)
                held = blocked.get(key)
                if held is None or budget.used_ratio > held.used_ratio:
                    blocked[key] = budget
        self.entries_skipped += skipped
        generated = data.get("generated_at")
        return _Snapshot(blocked=blocked, budgets=tuple(budgets),
                         generated_at=generated if isinstance(generated, str) else "", fetched_at=time.monotonic())


def _budget(entry: Any) -> Budget | None:
    """A well-formed entry as a :class:`Budget`; None for anything else (skipped, never guessed at)."""
    if not isinstance(entry, dict):
        return None
    scope_type, kind = entry.get("scope_type"), entry.get("kind")
    scope_value = entry.get("scope_value")
    scope_value = "" if scope_value is None else scope_value
    exceeded, forecast = entry.get("exceeded"), entry.get("forecast_exceeds", False)
    if (scope_type not in SCOPES or kind not in ("soft", "hard") or not isinstance(scope_value, str)
            or (scope_type != "project" and not scope_value) or not isinstance(exceeded, bool)
            or not isinstance(forecast, bool)):
        return None
    numbers = []
    for name in ("limit_usd", "spent_usd", "used_ratio"):
        value = entry.get(name, 0.0 if name == "used_ratio" else None)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        numbers.append(float(value))
    budget_id, period = entry.get("budget_id"), entry.get("period", "")
    return Budget(budget_id=str(budget_id) if budget_id is not None else "", scope_type=scope_type,
                  scope_value=scope_value, period=period if isinstance(period, str) else "", kind=kind,
                  limit_usd=numbers[0], spent_usd=numbers[1], used_ratio=numbers[2], exceeded=exceeded,
                  forecast_exceeds=forecast)


# --- the process-wide guard ------------------------------------------------------------------------------------
_active: BudgetGuard | None = None
_state_lock = threading.Lock()
_hooks_registered = False


def budget_guard(*, downgrade: Mapping[str, str] | None = None, refresh_s: float = 30.0,
                 max_stale_s: float | None = None, endpoint: str | None = None,
                 api_key: str | None = None) -> BudgetGuard:
    """Turn the budget guard on for this process (replacing an earlier one); returns it (``.stats()``,
    ``.budgets()``). See the module docstring for what is checked and when.

    ``downgrade``: ``{"expensive model": "cheaper model"}`` to route calls instead of raising
    :class:`BudgetExceeded`. ``refresh_s``: how often the status is fetched. ``max_stale_s``: how long the last
    good status is kept while the collector cannot be reached (default ``3 * refresh_s``), then calls proceed.
    ``endpoint`` / ``api_key``: default to ``init()``'s (or ``INFERWATCH_ENDPOINT`` / ``INFERWATCH_API_KEY``).
    Raises ``ValueError`` / ``TypeError`` for bad arguments only."""
    guard = make_guard(downgrade=downgrade, refresh_s=refresh_s, max_stale_s=max_stale_s, endpoint=endpoint,
                       api_key=api_key)
    install(guard)
    return guard


def make_guard(*, endpoint: str | None = None, api_key: str | None = None, **settings: Any) -> BudgetGuard:
    """A guard (not started) with the running SDK's endpoint and key unless given."""
    options = client.get_options()
    if options is None and (endpoint is None or api_key is None):
        options = resolve()
    ca_file = options.ca_file if options is not None else os.environ.get(env_var("ca_file"), "")
    return BudgetGuard(endpoint=endpoint if endpoint is not None else options.endpoint,  # type: ignore[union-attr]
                       api_key=api_key if api_key is not None else options.api_key,  # type: ignore[union-attr]
                       ca_file=ca_file, **settings)


def install(guard: BudgetGuard) -> None:
    """Make ``guard`` the process's guard and start its refresh thread (stopping the previous guard)."""
    global _active, _hooks_registered
    with _state_lock:
        if not _hooks_registered and hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
            _hooks_registered = True
        guard.start()
        previous, _active = _active, guard
    if previous is not None:
        previous.stop()


def stop() -> None:
    """Turn the guard off (``inferwatch.shutdown()`` does)."""
    global _active
    with _state_lock:
        guard, _active = _active, None
    if guard is not None:
        guard.stop()


def active() -> BudgetGuard | None:
    return _active


def stats() -> dict[str, Any]:
    guard = _active
    return guard.stats() if guard is not None else {"enabled": False}


def _after_fork_in_child() -> None:
    """The parent's refresh thread did not survive the fork: start the child's own."""
    global _state_lock
    _state_lock = threading.Lock()
    guard = _active
    if guard is not None:
        try:
            guard._lock = threading.Lock()
            guard.start()  # (its transport opens a session of the child's own)
        except Exception as exc:  # noqa: BLE001 - never break the child
            _guard.record_internal_error("budget.fork", exc)


# --- the check (callers' threads) ----------------------------------------------------------------------------
def enforce(model: Any) -> str | None:
    """Check the hard budgets of the current context before a call to ``model``.

    Returns None (go ahead unchanged) or the model to use instead; raises :class:`BudgetExceeded`. Cost when no
    budget is exceeded: two attribute reads and a truth test; otherwise up to three dictionary lookups."""
    guard = _active
    if guard is None:
        return None
    blocked = guard._snapshot.blocked
    if not blocked:
        return None
    try:
        hit = blocked.get(_PROJECT)
        if hit is None:
            tags = context.current_tags()
            feature = tags.get("feature")
            if feature:
                hit = blocked.get(("feature", feature))
            if hit is None:
                user = tags.get("user_hash")
                if user:
                    hit = blocked.get(("user", user))
            if hit is None:
                return None
        route = guard._route(model)
        if route is None:
            guard._count("calls_blocked")
        elif route is not True:
            guard._count("calls_downgraded")
    except Exception as exc:  # noqa: BLE001 - never break the host: the call proceeds
        _guard.record_internal_error("budget.check", exc)
        return None
    if route is None:
        raise BudgetExceeded(hit)
    return None if route is True else route  # type: ignore[return-value]


def enforce_request(kwargs: dict[str, Any]) -> str:
    """:func:`enforce` for a provider request's keyword arguments: rewrites ``kwargs["model"]`` on a downgrade
    and returns the model asked for (``""`` when nothing changed); raises :class:`BudgetExceeded`."""
    if _active is None:
        return ""
    model = kwargs.get("model")
    replacement = enforce(model)
    if replacement is None:
        return ""
    kwargs["model"] = replacement
    return model  # type: ignore[return-value]
