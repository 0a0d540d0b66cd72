"""Data requests: forget one user's content (``inferwatch-server forget``, ``POST /api/v1/forget``).

:func:`forget` removes, within one project, what a user wrote or was shown:

* **prompt logs** (``prompt_logs`` has no ``user_hash`` column): the user's calls are found in ``llm_calls`` by
  ``user_hash`` (bloom-filter index), and every prompt log row of those traces is deleted, except rows of spans
  that are LLM calls of *another* user (a trace shared by several users keeps their prompts). Non-LLM spans of
  the user's traces (a workflow span's input, say) go with them: they carry the same conversation.
* **held copies**: the same spans' rows in ``llm_calls_held`` (the pairing window's durable copy of other
  libraries' calls, prompt logs included) are deleted.
* **feedback text**: ``comment`` and ``label`` are blanked on every version of the user's feedback rows (by
  ``user_hash``, and rows without a user hash that are about the user's traces). Scores, thumbs and the
  row itself stay, so quality metrics keep their counts.

Both are mutations that rewrite the affected parts (``ALTER TABLE ... DELETE/UPDATE`` with ``mutations_sync =
2``): the text is physically gone when the call returns, not merely hidden as with a lightweight ``DELETE``.
Call metrics in ``llm_calls`` (tokens, latency, cost, the pseudonymous hash) are kept. Every statement is
parameterised and filtered by ``project_id``; running it again finds nothing and changes nothing.

On a sharded cluster the mutations run ``ON CLUSTER`` against the ``<name>_local`` tables (a ``Distributed``
table accepts no mutation); on a replicated one the replicas apply them through Keeper.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from .auth import validate_project
from .store import Store

USER_HASH_RE = re.compile(r"[0-9a-f]{16,128}")
_MUTATION_SETTINGS: dict[str, Any] = {"mutations_sync": 2}
_CHUNK = 5_000  # trace ids per mutation, so a very active user does not build one huge statement


class ForgetError(ValueError):
    """A request that cannot be run (bad project or user hash)."""


@dataclass(frozen=True)
class ForgetResult:
    project_id: str
    user_hash: str
    calls_found: int  # the user's LLM calls (kept: metrics only)
    traces: int  # distinct traces those calls belong to
    prompt_logs_deleted: int
    feedback_blanked: int  # feedback rows (all versions) whose comment/label were blanked

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
    if target is not None and getattr(target, "mode", "single") == "sharded":
        return f"{store.database}.{name}_local ON CLUSTER {target.cluster}"
    return store.table(name)


def _chunks(values: list[str]) -> list[list[str]]:
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)] or [[]]


def forget(store: Store, project_id: str, user_hash: str, *, target: Any | None = None) -> ForgetResult:
    """Delete the user's prompt logs and blank their feedback text in ``project_id``; returns the counts.

    ``target`` (:func:`inferwatch_collector.migrations.target_for`) only matters on a sharded cluster.
    """
    try:
        validate_project(project_id)
    except ValueError as exc:
        raise ForgetError(str(exc)) from exc
    user = normalise_user_hash(user_hash)
    base = {"p": project_id, "u": user}

    calls = store.query(
        "SELECT trace_id, count() FROM llm_calls WHERE project_id = {p:String} AND user_hash = {u:String} "
        "GROUP BY trace_id",
        base,
    ).result_rows
    traces = sorted({trace for trace, _ in calls if trace})
    calls_found = sum(int(n) for _, n in calls)

    prompt_deleted = 0
    feedback_blanked = 0
    prompt_table = _mutation_table(store, "prompt_logs", target)
    held_table = _mutation_table(store, "llm_calls_held", target)
    feedback_table = _mutation_table(store, "feedback", target)
    for chunk in _chunks(traces):
        if not chunk:
            break
        params = {**base, "t": chunk}
        # Spans in these traces that are LLM calls of someone else: their prompts are not this user's.
        others = store.query(
            "SELECT DISTINCT trace_id, span_id FROM llm_calls WHERE project_id = {p:String} "
            "AND trace_id IN {t:Array(String)} AND user_hash != {u:String}",
            params,
        ).result_rows
        params["o"] = [(t, s) for t, s in others]
        prompt_where = ("project_id = {p:String} AND trace_id IN {t:Array(String)} "
                        "AND (trace_id, span_id) NOT IN {o:Array(Tuple(String, String))}")
        found = store.query(f"SELECT count() FROM prompt_logs WHERE {prompt_where}", params).result_rows[0][0]
        if found:
            store.command(f"ALTER TABLE {prompt_table} DELETE WHERE {prompt_where}", parameters=params,
                          settings=_MUTATION_SETTINGS)
            prompt_deleted += int(found)
        held_where = prompt_where  # the same spans: the held copies carry the calls' prompt logs
        if store.query(f"SELECT count() FROM llm_calls_held WHERE {held_where}", params).result_rows[0][0]:
            store.command(f"ALTER TABLE {held_table} DELETE WHERE {held_where}", parameters=params,
                          settings=_MUTATION_SETTINGS)
        # Feedback without a user hash (sent before the call arrived) about the user's traces is theirs too.
        unowned_where = ("project_id = {p:String} AND user_hash = '' AND trace_id IN {t:Array(String)} "
                         "AND (comment != '' OR label != '')")
        found = store.query(f"SELECT count() FROM feedback WHERE {unowned_where}", params).result_rows[0][0]
        if found:
            store.command(f"ALTER TABLE {feedback_table} UPDATE comment = '', label = '' WHERE {unowned_where}",
                          parameters=params, settings=_MUTATION_SETTINGS)
            feedback_blanked += int(found)

    owned_where = "project_id = {p:String} AND user_hash = {u:String} AND (comment != '' OR label != '')"
    found = store.query(f"SELECT count() FROM feedback WHERE {owned_where}", base).result_rows[0][0]
    if found:
        store.command(f"ALTER TABLE {feedback_table} UPDATE comment = '', label = '' WHERE {owned_where}",
                      parameters=base, settings=_MUTATION_SETTINGS)
        feedback_blanked += int(found)

    return ForgetResult(project_id, user, calls_found, len(traces), prompt_deleted, feedback_blanked)


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
