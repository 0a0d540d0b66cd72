"""Data requests: forget one user (``inferwatch-server forget``, ``POST /api/v1/forget``).

:func:`forget` removes or blanks, within one project, everything stored about a user, found by their hash
``u`` (the SDK's ``inferwatch.user.hash``; third-party ``enduser.id``/``user.id``-style attributes are hashed
into the same value at ingest):

* **the user's traces**: every trace with an ``llm_calls`` row whose ``user_hash`` is ``u`` (bloom-filter
  index), or a ``spans``/``llm_calls`` row with ``u`` among its attribute values (``has(mapValues(attributes),
  u)``; ``llm_calls`` has a bloom-filter index on the values, ``spans`` is scanned within the project), or an
  ``llm_calls_held`` copy whose payload holds ``u``. In those traces, the rows of *another* user are left
  alone: an LLM call whose ``user_hash`` is someone else's (and whose attributes do not hold ``u``). Everything
  else in them is the user's, calls without a user hash and non-LLM spans included (a trace is one request).
* ``prompt_logs``: the user's spans' rows are **deleted**.
* ``llm_calls_held`` (the pairing window's durable copies): the user's spans' rows, and any whose payload holds
  ``u``, are **deleted**.
* ``spans``: the user's spans are **scrubbed** (:mod:`.forget_scrub`): the name becomes the span's operation or
  kind, the status message is emptied, the attributes keep numbers, booleans and structural keys only.
* ``llm_calls``: the user's calls are scrubbed the same way (name ``"{operation} {model}"``) and ``user_hash``
  ``u`` is replaced by a random pseudonym (below). Tokens, latency, cost and every other number stay.
* ``feedback``: ``comment`` and ``label`` are blanked on every version of the user's rows (by ``user_hash``, and
  rows without a user hash about the user's traces), and ``user_hash`` ``u`` becomes the pseudonym. Scores,
  thumbs and the rows stay, so quality metrics keep their counts.
* ``cost_1d`` (the per-user cost rollup, ``user_hash`` in its sort key, which cannot be updated): the user's
  rows are copied under the pseudonym, then deleted.
* ``budgets`` scoped to the user (``scope_type = 'user'``, ``scope_value = u``) are deleted; their
  ``alert_state`` rows (the series key names the user) too; ``u`` in ``alert_events`` and ``notifications``
  (series keys, messages, labels) becomes the pseudonym.

**Why the hash goes too.** ``u`` is a pseudonym, not an anonymous value: whoever holds the deployment's hash key
and the user's id computes it again and finds every remaining row. After a data request nothing may lead back to
the person, so ``u`` is replaced everywhere by a pseudonym drawn at random for this request (64 hex characters,
the shape of a hash, so every filter and report still takes it) and never stored with ``u``. The user's past
calls stay one (anonymous) user: per-user cost, cost reports, A/B analyses by user and project totals stay right;
a per-user budget on ``u`` is gone. Calls that arrive later with ``u`` (a user who keeps using the app) are new
data, and a call still inside the pairing window while this runs is written after it: run it again then.

Every change is a mutation that rewrites the affected parts (``ALTER TABLE ... DELETE/UPDATE`` with
``mutations_sync = 2``): the text is physically gone when the call returns, not merely hidden as with a
lightweight ``DELETE`` or a newer ``ReplacingMergeTree`` version. Every statement is parameterised and filtered
by ``project_id``; each is skipped when a count finds nothing to change, so running it again changes nothing and
reports zeros. Steps run in an order that keeps a retry after a failure complete: in each batch of traces the
rows that lead to them (``spans``, ``llm_calls``) are rewritten after the rest, whatever else is found by ``u``
directly comes after that, and the ``cost_1d`` copy is inserted with a deduplication token derived from what it
copies, so a retry does not count the user's cost twice (on a sharded cluster the copy goes through the
``Distributed`` table, where that protection depends on the shards' deduplication window). A retry draws a new
pseudonym: rows changed before the failure keep the first one.

On a sharded cluster the mutations run ``ON CLUSTER`` against the ``<name>_local`` tables (a ``Distributed``
table accepts no mutation); on a replicated one the replicas apply them through Keeper.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

from . import forget_scrub as scrub
from .auth import validate_project
from .store import Store

USER_HASH_RE = re.compile(r"[0-9a-f]{16,128}")
_MUTATION_SETTINGS: dict[str, Any] = {"mutations_sync": 2}
_CHUNK = 5_000  # trace ids per mutation, so a very active user does not build one huge statement
#: Tables whose text may name the user's hash in a budget's alerts: (table, String columns, Map columns).
_ALERT_TEXT: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("alert_events", ("series_key", "message"), ("labels",)),
    ("notifications", ("series_key", "dedup_key", "error"), ()),
)
#: Every table :func:`forget` may change, as :attr:`ForgetResult.changed` reports them.
CHANGED_TABLES: tuple[str, ...] = ("prompt_logs", "llm_calls_held", "spans", "llm_calls", "feedback", "cost_1d",
                                   "budgets", "alert_state", "alert_events", "notifications")


class ForgetError(ValueError):
    """A request that cannot be run (bad project or user hash)."""


@dataclass(frozen=True)
class ForgetResult:
    """What :func:`forget` found and changed. ``changed``: rows deleted or rewritten, per table."""

    project_id: str
    user_hash: str
    calls_found: int  # the user's LLM calls (kept: metrics only)
    traces: int  # distinct traces of the user
    prompt_logs_deleted: int
    feedback_blanked: int  # feedback rows (all versions) whose comment/label were blanked
    changed: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def normalise_user_hash(user_hash: str) -> str:
    """The hash as stored (lower-case hex); anything else is refused, so a raw id is never sent to the DB."""
    value = (user_hash or "").strip().lower()
    if not USER_HASH_RE.fullmatch(value):
        raise ForgetError("user_hash must be 16-128 hexadecimal characters (the hash the SDK sends, "
                          "never a raw user id)")
    return value


def _mutation_table(store: Store, name: str, target: Any | None) -> str:
    """``db.name``, or on a sharded target ``db.name_local ON CLUSTER c`` (mutations need the local tables)."""
    if _sharded(target):
        return f"{store.database}.{name}_local ON CLUSTER {target.cluster}"
    return store.table(name)


def _sharded(target: Any | None) -> bool:
    return target is not None and getattr(target, "mode", "single") == "sharded"


def _chunks(values: list[str]) -> list[list[str]]:
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)] or [[]]


class _Run:
    """One forget request: counts what each statement would change, runs it only then, and adds it up."""

    def __init__(self, store: Store, target: Any | None, base: dict[str, Any]) -> None:
        self.store, self.target, self.base = store, target, base
        self.changed: dict[str, int] = dict.fromkeys(CHANGED_TABLES, 0)

    def count(self, table: str, where: str, params: dict[str, Any]) -> int:
        return int(self.store.query(f"SELECT count() FROM {self.store.table(table)} WHERE {where}",
                                    params).result_rows[0][0])

    def delete(self, table: str, where: str, params: dict[str, Any]) -> int:
        found = self.count(table, where, params)
        if found:
            self.store.command(f"ALTER TABLE {_mutation_table(self.store, table, self.target)} DELETE "
                               f"WHERE {where}", parameters=params, settings=_MUTATION_SETTINGS)
        return self._add(table, found)

    def update(self, table: str, assignments: str, where: str, params: dict[str, Any]) -> int:
        found = self.count(table, where, params)
        if found:
            self.store.command(f"ALTER TABLE {_mutation_table(self.store, table, self.target)} UPDATE "
                               f"{assignments} WHERE {where}", parameters=params, settings=_MUTATION_SETTINGS)
        return self._add(table, found)

    def _add(self, table: str, n: int) -> int:
        self.changed[table] = self.changed.get(table, 0) + n
        return n


def forget(store: Store, project_id: str, user_hash: str, *, target: Any | None = None) -> ForgetResult:
    """Remove or blank everything stored about the user ``user_hash`` in ``project_id`` (see the module
    docstring); returns what was found and changed. Idempotent.

    ``target`` (:func:`inferwatch_collector.migrations.target_for`) only matters on a sharded cluster.
    """
    try:
        validate_project(project_id)
    except ValueError as exc:
        raise ForgetError(str(exc)) from exc
    user = normalise_user_hash(user_hash)
    base = {"p": project_id, "u": user, "T": secrets.token_hex(32), **scrub.params()}
    run = _Run(store, target, base)

    calls_found = int(store.query(
        "SELECT count() FROM llm_calls WHERE project_id = {p:String} "
        "AND (user_hash = {u:String} OR has(mapValues(attributes), {u:String}))", base).result_rows[0][0])
    traces = sorted({trace for (trace,) in store.query(
        "SELECT DISTINCT trace_id FROM llm_calls WHERE project_id = {p:String} "
        "AND (user_hash = {u:String} OR has(mapValues(attributes), {u:String})) "
        "UNION DISTINCT SELECT DISTINCT trace_id FROM spans WHERE project_id = {p:String} "
        "AND has(mapValues(attributes), {u:String}) "
        "UNION DISTINCT SELECT DISTINCT trace_id FROM llm_calls_held WHERE project_id = {p:String} "
        "AND position(payload, {u:String}) > 0", base).result_rows if trace})

    run.delete("llm_calls_held", "project_id = {p:String} AND position(payload, {u:String}) > 0", base)
    prompt_deleted = feedback_blanked = 0
    for chunk in _chunks(traces):
        if not chunk:
            break
        params = {**base, "t": chunk}
        # LLM calls in these traces that are another user's: their prompts and rows are not this user's.
        others = store.query(
            "SELECT DISTINCT trace_id, span_id FROM llm_calls WHERE project_id = {p:String} "
            "AND trace_id IN {t:Array(String)} AND user_hash NOT IN ('', {u:String}) "
            "AND NOT has(mapValues(attributes), {u:String})", params).result_rows
        params["o"] = [(t, s) for t, s in others]
        users_spans = ("project_id = {p:String} AND trace_id IN {t:Array(String)} "
                       "AND (trace_id, span_id) NOT IN {o:Array(Tuple(String, String))}")
        prompt_deleted += run.delete("prompt_logs", users_spans, params)
        run.delete("llm_calls_held", users_spans, params)  # the held copies carry the calls' prompt logs
        # Feedback without a user hash (sent before the call arrived) about the user's traces is theirs too.
        feedback_blanked += run.update(
            "feedback", "comment = '', label = ''",
            "project_id = {p:String} AND user_hash = '' AND trace_id IN {t:Array(String)} "
            "AND (comment != '' OR label != '')", params)
        run.update("spans", f"name = {scrub.SPAN_NAME}, status_message = '', attributes = {scrub.KEPT_ATTRIBUTES}",
                   f"{users_spans} AND {scrub.SPAN_NOT_SCRUBBED}", params)
        run.update("llm_calls", f"user_hash = if(user_hash = {{u:String}}, {{T:String}}, user_hash), "
                                f"span_name = {scrub.CALL_NAME}, attributes = {scrub.KEPT_ATTRIBUTES}",
                   f"{users_spans} AND {scrub.CALL_NOT_SCRUBBED}", params)

    feedback_blanked += run.update(
        "feedback", "comment = '', label = '', user_hash = {T:String}",
        "project_id = {p:String} AND user_hash = {u:String}", base)
    _relabel_cost(run)
    run.delete("budgets", "project_id = {p:String} AND scope_type = 'user' AND scope_value = {u:String}", base)
    run.delete("alert_state", "project_id = {p:String} AND position(series_key, {u:String}) > 0", base)
    for table, texts, maps in _ALERT_TEXT:
        assignments = [f"{c} = replaceAll({c}, {{u:String}}, {{T:String}})" for c in texts]
        assignments += [f"{c} = mapApply((k, v) -> (k, replaceAll(v, {{u:String}}, {{T:String}})), {c})"
                        for c in maps]
        found = [f"position({c}, {{u:String}}) > 0" for c in texts]
        found += [f"arrayExists(v -> position(v, {{u:String}}) > 0, mapValues({c}))" for c in maps]
        run.update(table, ", ".join(assignments), f"project_id = {{p:String}} AND ({' OR '.join(found)})", base)

    return ForgetResult(project_id, user, calls_found, len(traces), prompt_deleted, feedback_blanked,
                        dict(run.changed))


def _relabel_cost(run: _Run) -> None:
    """Move the user's ``cost_1d`` rows to the pseudonym: ``user_hash`` is in the table's sort key, so the rows
    are copied (sums unchanged) and the originals deleted. The copy's deduplication token is derived from the
    rows it copies, so a retry after a failure between the two statements inserts nothing twice."""
    store, base = run.store, run.base
    where = "project_id = {p:String} AND user_hash = {u:String}"
    columns = [name for (name,) in store.query(
        "SELECT name FROM system.columns WHERE database = {db:String} AND table = 'cost_1d' ORDER BY position",
        {"db": store.database}).result_rows]
    listed = ", ".join(f"`{c}`" for c in columns)
    selected = ", ".join("{T:String} AS `user_hash`" if c == "user_hash" else f"`{c}`" for c in columns)
    digest = store.query("SELECT count(), sum(calls), sum(cost_usd), min(day), max(day) FROM cost_1d "
                         f"WHERE {where}", base).result_rows[0]
    if not digest[0]:
        return
    token = hashlib.sha256(f"inferwatch-forget\0{base['p']}\0{base['u']}\0{digest}".encode()).hexdigest()
    settings: dict[str, Any] = {"insert_deduplication_token": token, "insert_deduplicate": 1}
    if _sharded(run.target):
        settings["insert_distributed_sync"] = 1
    # The filter sits in a subquery: in the outer SELECT, user_hash names the pseudonym.
    store.command(f"INSERT INTO {store.table('cost_1d')} ({listed}) SELECT {selected} FROM "
                  f"(SELECT * FROM {store.table('cost_1d')} WHERE {where})", parameters=base, settings=settings)
    run.delete("cost_1d", where, base)


# --- per-project retention ----------------------------------------------------------------------------------------
# table -> its time column. Rollups are aggregates without content or user ids and keep their own TTLs.
RETENTION_TABLES: dict[str, str] = {
    "llm_calls": "start_time",
    "spans": "start_time",
    "prompt_logs": "start_time",
    "feedback": "created_at",
}


def apply_project_retention(store: Store, retention_days: dict[str, int], *, target: Any | None = None
                            ) -> dict[str, dict[str, int]]:
    """Delete each listed project's rows older than its own number of days (``Settings.project_retention_days``).

    The tables' TTLs apply the global ``retention_days`` / ``prompt_retention_days`` to every project; this
    shortens them per project (a longer per-project value changes nothing: the TTL drops the rows first). Run it
    daily (the scheduler's job); lightweight ``DELETE`` (rows are hidden at once and removed by the next merges),
    parameterised and filtered by project. Returns ``{project: {table: rows deleted}}``; idempotent.
    """
    deleted: dict[str, dict[str, int]] = {}
    for project_id, days in sorted(retention_days.items()):
        try:
            validate_project(project_id)
        except ValueError as exc:
            raise ForgetError(str(exc)) from exc
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise ForgetError(f"retention of project {project_id} must be a whole number of days >= 1, "
                              f"not {days!r}")
        counts = {}
        for table, column in RETENTION_TABLES.items():
            where = f"project_id = {{p:String}} AND {column} < now64(3) - toIntervalDay({{d:UInt32}})"
            params = {"p": project_id, "d": days}
            found = int(store.query(f"SELECT count() FROM {table} WHERE {where}", params).result_rows[0][0])
            if found:
                if target is not None and getattr(target, "mode", "single") == "sharded":
                    statement = (f"DELETE FROM {store.database}.{table}_local ON CLUSTER {target.cluster} "
                                 f"WHERE {where}")
                else:
                    statement = f"DELETE FROM {store.table(table)} WHERE {where}"
                store.command(statement, parameters=params, settings={"lightweight_deletes_sync": 2})
            counts[table] = found
        deleted[project_id] = counts
    return deleted
