"""Data requests: ``forget`` removes or blanks everything stored about one user, in one project only."""

from __future__ import annotations

import re
import time

import pytest

from inferwatch_collector.forget import ForgetError, forget
from inferwatch_collector.routes.feedback import COLUMNS as FEEDBACK_COLUMNS
from inferwatch_collector.pairing.held import HeldCall, to_held_row
from inferwatch_collector.rows import (LLM_CALL_COLUMNS, PROMPT_LOG_COLUMNS, SPAN_COLUMNS, HeldCallRow,
                                       PromptLogRow, SpanRow)

from tests.helpers.keys import Keys
from tests.helpers.db_scan import places_holding
from tests.helpers.factories import llm_call

ALICE = "a1" * 32
BOB = "b0" * 32
NOW_US = int(time.time() * 1_000_000) - 120_000_000


def _insert_calls(store, rows) -> None:
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)


def _prompt(project: str, trace: str, span: str, text: str) -> PromptLogRow:
    return PromptLogRow(project, NOW_US, trace, span, "gpt-4o-mini", "answer", f"prompt {text}",
                        f"completion {text}", "default-v1")


def _feedback(project: str, fid: str, trace: str, user: str, comment: str, label: str = "bad") -> list:
    now = int(time.time() * 1000)
    return [project, fid, now, now, trace, "", user, "thumbs", "user_feedback", -1.0, label, comment, "api",
            "gpt-4o-mini", "", "", "answer", "search", 0]


def _seed(store) -> dict[str, str]:
    """p1: alice has two calls (one in a trace she shares with bob), bob one; p2: alice (same hash) one."""
    t_alice, t_shared, t_bob, t_p2 = "a" * 32, "c" * 32, "b" * 32, "d" * 32
    _insert_calls(store, [
        llm_call("p1", trace_id=t_alice, span_id="1" * 16, user_hash=ALICE, start_time=NOW_US),
        llm_call("p1", trace_id=t_shared, span_id="2" * 16, user_hash=ALICE, start_time=NOW_US),
        llm_call("p1", trace_id=t_shared, span_id="3" * 16, user_hash=BOB, start_time=NOW_US),
        llm_call("p1", trace_id=t_bob, span_id="4" * 16, user_hash=BOB, start_time=NOW_US),
        llm_call("p2", trace_id=t_p2, span_id="5" * 16, user_hash=ALICE, start_time=NOW_US),
    ])
    prompts = [
        _prompt("p1", t_alice, "1" * 16, "alice-1"),
        _prompt("p1", t_alice, "9" * 16, "alice-workflow"),  # a non-LLM span of her trace
        _prompt("p1", t_shared, "2" * 16, "alice-2"),
        _prompt("p1", t_shared, "3" * 16, "bob-shared"),
        _prompt("p1", t_bob, "4" * 16, "bob-1"),
        _prompt("p2", t_p2, "5" * 16, "alice-p2"),
    ]
    store.insert_columns("prompt_logs", [list(c) for c in zip(*prompts)], PROMPT_LOG_COLUMNS)
    feedback = [
        _feedback("p1", "f1", t_alice, ALICE, "alice says my phone is [PHONE]"),
        _feedback("p1", "f2", t_shared, "", "unowned comment on alice's trace"),
        _feedback("p1", "f3", t_bob, BOB, "bob's comment"),
        _feedback("p2", "f4", t_p2, ALICE, "alice in p2"),
    ]
    store.insert_columns("feedback", [list(c) for c in zip(*feedback)], FEEDBACK_COLUMNS)
    return {"alice": t_alice, "shared": t_shared, "bob": t_bob, "p2": t_p2}


def _prompts(store, project: str) -> set[str]:
    rows = store.query("SELECT prompt FROM prompt_logs WHERE project_id = {p:String}", {"p": project}).result_rows
    return {r[0].removeprefix("prompt ") for r in rows}


def _comments(store, project: str) -> dict[str, tuple[str, str]]:
    rows = store.query("SELECT feedback_id, comment, label FROM feedback FINAL WHERE project_id = {p:String}",
                       {"p": project}).result_rows
    return {r[0]: (r[1], r[2]) for r in rows}


def test_forget_removes_the_users_prompts_and_feedback_text_in_one_project(store) -> None:
    _seed(store)
    result = forget(store, "p1", ALICE.upper())
    assert (result.calls_found, result.traces, result.prompt_logs_deleted, result.feedback_blanked) == (2, 2, 3, 2)
    assert result.user_hash == ALICE
    assert _prompts(store, "p1") == {"bob-shared", "bob-1"}  # bob's prompt in the shared trace stays
    assert _prompts(store, "p2") == {"alice-p2"}  # same hash, other project: untouched
    comments = _comments(store, "p1")
    assert comments["f1"] == ("", "") and comments["f2"] == ("", "")
    assert comments["f3"] == ("bob's comment", "bad")
    assert _comments(store, "p2")["f4"] == ("alice in p2", "bad")
    # scores stay (quality metrics keep their counts), and so do the call metrics, under one pseudonym
    assert store.query("SELECT count() FROM feedback FINAL WHERE project_id = 'p1'").result_rows[0][0] == 3
    users = store.query("SELECT project_id, user_hash, count(), sum(input_tokens) FROM llm_calls "
                        "GROUP BY project_id, user_hash ORDER BY project_id, count()").result_rows
    assert [(p, n, tokens) for p, _, n, tokens in users] == [("p1", 2, 1000), ("p1", 2, 1000), ("p2", 1, 500)]
    pseudonym = next(u for p, u, _, _ in users if p == "p1" and u != BOB)
    assert pseudonym != ALICE and len(pseudonym) == 64 and int(pseudonym, 16) >= 0
    assert users[2][1] == ALICE  # the same hash in another project is another project's business
    assert store.query("SELECT count() FROM feedback WHERE user_hash = {u:String} AND project_id = 'p1'",
                       {"u": ALICE}).result_rows[0][0] == 0
    assert result.changed["llm_calls"] == 2 and result.changed["prompt_logs"] == 3


def test_forget_removes_the_held_copies_of_the_users_calls(store) -> None:
    traces = _seed(store)
    held = [to_held_row(HeldCall(llm_call("p1", trace_id=trace, span_id=span, user_hash=user, start_time=NOW_US),
                                 (_prompt("p1", trace, span, text),)), NOW_US // 1000)
            for trace, span, user, text in ((traces["alice"], "1" * 16, ALICE, "alice-1"),
                                            (traces["shared"], "3" * 16, BOB, "bob-shared"))]
    store.insert_columns("llm_calls_held", [list(c) for c in zip(*held)], HeldCallRow._fields)
    forget(store, "p1", ALICE)
    payloads = [row[0] for row in store.query("SELECT payload FROM llm_calls_held").result_rows]
    assert len(payloads) == 1 and "bob-shared" in payloads[0]


def test_forget_is_idempotent_and_a_stranger_changes_nothing(store) -> None:
    _seed(store)
    forget(store, "p1", ALICE)
    again = forget(store, "p1", ALICE)
    assert (again.prompt_logs_deleted, again.feedback_blanked) == (0, 0)
    nobody = forget(store, "p1", "f" * 64)
    assert (nobody.calls_found, nobody.prompt_logs_deleted, nobody.feedback_blanked) == (0, 0, 0)
    assert _prompts(store, "p1") == {"bob-shared", "bob-1"}


def test_forget_refuses_anything_but_a_hex_hash(store) -> None:
    _seed(store)
    for bad in ("", "alice@example.com", "' OR 1=1 --", "abc", "g" * 64, "a" * 200):
        with pytest.raises(ForgetError):
            forget(store, "p1", bad)
    with pytest.raises(ForgetError):
        forget(store, "P1; DROP TABLE llm_calls", ALICE)
    assert len(_prompts(store, "p1")) == 5


def test_forget_api_needs_admin_and_acts_on_the_keys_project_only(store, keys: Keys, client) -> None:
    _seed(store)
    body = {"user_hash": ALICE}
    assert client.post("/api/v1/forget", json=body).status_code == 401
    for key in (keys.ingest, keys.read, keys.prompts):
        response = client.post("/api/v1/forget", json=body, headers=Keys.header(key))
        assert response.status_code == 403, response.text
    assert len(_prompts(store, "p1")) == 5
    response = client.post("/api/v1/forget", json={"user_hash": "not a hash"},
                                   headers=Keys.header(keys.admin))
    assert response.status_code == 422 and "user_hash" in response.json()["error"]
    # p2's admin key forgets alice in p2 only
    response = client.post("/api/v1/forget", json=body, headers=Keys.header(keys.other_project))
    assert response.status_code == 200, response.text
    assert response.json()["project_id"] == "p2" and response.json()["prompt_logs_deleted"] == 1
    assert len(_prompts(store, "p1")) == 5
    response = client.post("/api/v1/forget", json=body, headers=Keys.header(keys.admin))
    assert response.status_code == 200, response.text
    answer = response.json()
    changed = answer.pop("changed")
    assert answer == {"project_id": "p1", "user_hash": ALICE, "calls_found": 2, "traces": 2,
                      "prompt_logs_deleted": 3, "feedback_blanked": 2}
    assert changed["prompt_logs"] == 3 and changed["feedback"] == 2 and changed["llm_calls"] == 2
    assert _prompts(store, "p1") == {"bob-shared", "bob-1"}


def test_forget_cli(store, settings, capsys) -> None:
    import argparse

    from inferwatch_server.cli import forget as forget_cli

    _seed(store)
    store.close()  # chDB: one open directory per process; the command opens its own
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir")
    forget_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["--data-dir", str(settings.data_dir), "forget", "--project", "p1",
                              "--user-hash", ALICE])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "deleted 3 prompt logs" in out and "blanked 2 feedback" in out
    assert "  prompt_logs: 3 rows changed" in out and "  llm_calls: 2 rows changed" in out
    args = parser.parse_args(["--data-dir", str(settings.data_dir), "forget", "--project", "p1",
                              "--user-hash", "alice"])
    assert args.func(args) == 2


def test_forget_cli_takes_a_raw_user_id_and_never_prints_it(store, settings, capsys, monkeypatch) -> None:
    import argparse

    from inferwatch_collector.user_ids import UserHasher
    from inferwatch_server.cli import forget as forget_cli

    monkeypatch.setenv("INFERWATCH_USER_HASH_KEY", "cli-test-key")
    raw = "bob.cli@example.com"
    bob = UserHasher(b"cli-test-key").hash(raw)
    _insert_calls(store, [llm_call("p1", trace_id="b" * 32, span_id="2" * 16, user_hash=bob, start_time=NOW_US)])
    store.close()  # chDB: one open directory per process; the command opens its own
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir")
    forget_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["--data-dir", str(settings.data_dir), "forget", "--project", "p1", "--user-id", raw])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert f"user {bob}: 1 calls in 1 traces" in out and raw not in out


def test_project_retention_deletes_only_that_projects_old_rows(store) -> None:
    from inferwatch_collector.forget import apply_project_retention

    day_us = 86_400_000_000
    old_us, recent_us = NOW_US - 10 * day_us, NOW_US - day_us
    rows = [llm_call(p, trace_id=f"{n:032x}", span_id=f"{n:016x}", start_time=t, user_hash=ALICE)
            for n, (p, t) in enumerate([("p1", old_us), ("p1", recent_us), ("p2", old_us)], start=1)]
    _insert_calls(store, rows)
    prompts = [PromptLogRow(p, t, f"{n:032x}", f"{n:016x}", "m", "t", "x", "y", "v1")
               for n, (p, t) in enumerate([("p1", old_us), ("p1", recent_us), ("p2", old_us)], start=1)]
    store.insert_columns("prompt_logs", [list(c) for c in zip(*prompts)], PROMPT_LOG_COLUMNS)
    old_ms = (NOW_US - 10 * day_us) // 1000
    feedback = [_feedback("p1", "old", "1" * 32, ALICE, "old comment"), _feedback("p1", "new", "2" * 32, ALICE, "c")]
    feedback[0][2] = feedback[0][3] = old_ms
    store.insert_columns("feedback", [list(c) for c in zip(*feedback)], FEEDBACK_COLUMNS)

    result = apply_project_retention(store, {"p1": 7})
    assert result == {"p1": {"llm_calls": 1, "spans": 0, "prompt_logs": 1, "feedback": 1}}
    left = store.query("SELECT project_id, count() FROM llm_calls GROUP BY project_id ORDER BY 1").result_rows
    assert left == [("p1", 1), ("p2", 1)]
    assert store.query("SELECT count() FROM prompt_logs WHERE project_id = 'p2'").result_rows[0][0] == 1
    assert store.query("SELECT feedback_id FROM feedback FINAL").result_rows == [("new",)]
    assert apply_project_retention(store, {"p1": 7})["p1"] == {"llm_calls": 0, "spans": 0, "prompt_logs": 0,
                                                               "feedback": 0}
    for bad in ({"p1": 0}, {"P1; DROP": 7}):
        with pytest.raises(ForgetError):
            apply_project_retention(store, bad)


def test_the_scheduler_applies_project_retention_daily(settings) -> None:
    """The scheduler's retention job reads ``project_retention_days`` from the store's settings."""
    from inferwatch_alerts.scheduler import RETENTION_JOB, default_jobs, retention_job
    from inferwatch_collector.migrations import migrate, target_for
    from inferwatch_collector.store import Store

    assert RETENTION_JOB in {spec.name for spec in default_jobs()}
    configured = settings.model_copy(update={"project_retention_days": {"p1": 7}})
    store = Store.open(configured)
    try:
        migrate(store, target_for(configured, store))
        day_us = 86_400_000_000
        _insert_calls(store, [llm_call("p1", trace_id=f"{n:032x}", span_id=f"{n:016x}", start_time=t)
                              for n, t in enumerate([NOW_US - 10 * day_us, NOW_US - day_us], start=1)])
        assert retention_job(store, None) == {"projects": "1", "rows_deleted": "1"}
        assert store.query("SELECT count() FROM llm_calls").result_rows[0][0] == 1
    finally:
        store.close()


# --- everything of the user: attributes, names, status messages, cost rollup, budgets, alerts -------------------
ALICE_MAIL = "alice@example.com"


def _span(project: str, trace: str, span: str, name: str, *, kind: str = "internal", operation: str = "",
          message: str = "", attributes: dict[str, str] | None = None) -> SpanRow:
    return SpanRow(project, NOW_US, NOW_US + 1000, trace, span, "", "svc", name, kind, operation,
                   "error" if message else "ok", message, 1.0, attributes or {})


def _seed_attribute_user(store) -> str:
    """Traces of alice found only through attribute values (a library's ``enduser.id``, hashed at ingest): a
    server span, a tool span and an LLM call without a user hash, beside bob's call; a trace of one span; and
    p2's copy."""
    trace = "e" * 32
    spans = [
        _span("p1", trace, "a" * 16, f"GET /users/{ALICE_MAIL}/profile", kind="server",
              message=f"no profile for {ALICE_MAIL}",
              attributes={"enduser.id": ALICE, "http.route": f"/users/{ALICE_MAIL}", "http.request.method": "GET",
                          "http.response.status_code": "404", "db.statement": "SELECT 1 WHERE ssn='078-05-1120'",
                          "telemetry.sdk.name": "opentelemetry", "otel.scope.name": "app"}),
        _span("p1", trace, "b" * 16, "lookup alice", operation="execute_tool",
              attributes={"tool.args": ALICE_MAIL, "retries": "2", "cached": "true"}),
        _span("p2", "f" * 32, "c" * 16, f"GET /users/{ALICE_MAIL}", attributes={"enduser.id": ALICE}),
        _span("p1", "7" * 32, "7" * 16, f"login {ALICE_MAIL}", kind="server",  # a trace without LLM calls
              attributes={"user.id": ALICE}),
    ]
    store.insert_columns("spans", [list(c) for c in zip(*spans)], SPAN_COLUMNS)
    _insert_calls(store, [
        llm_call("p1", trace_id=trace, span_id="d" * 16, user_hash="", start_time=NOW_US,
                 span_name=f"answer {ALICE_MAIL}", attributes={"enduser.id": ALICE, "langfuse.trace.name": "alice",
                                                                "gen_ai.request.temperature": "0.2"}),
        llm_call("p1", trace_id=trace, span_id="9" * 16, user_hash=BOB, start_time=NOW_US,
                 span_name="bob's own name", attributes={"note": "bob text"}),
    ])
    return trace


def test_forget_finds_the_user_by_attribute_values_and_scrubs_names_messages_and_free_text(store) -> None:
    trace = _seed_attribute_user(store)
    calls_before = store.query("SELECT sum(input_tokens), sum(output_tokens), sum(latency_ms) FROM llm_calls"
                               ).result_rows
    result = forget(store, "p1", ALICE)
    assert (result.calls_found, result.traces) == (1, 2)
    assert result.changed["spans"] == 3 and result.changed["llm_calls"] == 1

    spans = {r[0]: r[1:] for r in store.query(
        "SELECT span_id, name, status_message, attributes FROM spans WHERE project_id = 'p1'").result_rows}
    assert spans["a" * 16] == ("server", "", {"http.request.method": "GET", "http.response.status_code": "404",
                                              "telemetry.sdk.name": "opentelemetry", "otel.scope.name": "app"})
    assert spans["b" * 16] == ("execute_tool", "", {"retries": "2", "cached": "true"})
    assert spans["7" * 16] == ("server", "", {})
    calls = {r[0]: r[1:] for r in store.query(
        "SELECT span_id, span_name, user_hash, attributes FROM llm_calls WHERE trace_id = {t:String}",
        {"t": trace}).result_rows}
    assert calls["d" * 16] == ("chat gpt-4o-mini", "", {"gen_ai.request.temperature": "0.2"})
    assert calls["9" * 16] == ("bob's own name", BOB, {"note": "bob text"})  # bob's call in her trace stays
    assert store.query("SELECT sum(input_tokens), sum(output_tokens), sum(latency_ms) FROM llm_calls"
                       ).result_rows == calls_before  # numbers stay
    p2 = store.query("SELECT name, attributes FROM spans WHERE project_id = 'p2'").result_rows
    assert p2 == [(f"GET /users/{ALICE_MAIL}", {"enduser.id": ALICE})]  # another project's rows are its own
    assert places_holding(store, [ALICE, ALICE_MAIL, "078-05-1120"], skip=()) == [
        f"spans.attributes holds {ALICE!r}", f"spans.name holds {ALICE_MAIL!r}"]  # p2's only

    again = forget(store, "p1", ALICE)
    assert again.traces == 0 and not any(again.changed.values()), again.changed


def test_forget_moves_per_user_cost_to_a_pseudonym_once_even_when_retried_after_a_failure(store, monkeypatch
                                                                                           ) -> None:
    import inferwatch_collector.forget as forget_module

    _insert_calls(store, [llm_call("p1", user_hash=user, cost_usd=cost, start_time=NOW_US)
                          for user, cost in ((ALICE, 0.25), (ALICE, 0.5), (BOB, 1.0))])
    totals = "SELECT sum(calls), sum(cost_usd) FROM cost_1d WHERE project_id = 'p1'"
    before = store.query(totals).result_rows
    real_delete = forget_module._Run.delete

    def failing_delete(self, table, where, params):  # the process dies between the copy and the delete
        if table == "cost_1d":
            raise RuntimeError("connection lost")
        return real_delete(self, table, where, params)

    monkeypatch.setattr(forget_module._Run, "delete", failing_delete)
    with pytest.raises(RuntimeError):
        forget(store, "p1", ALICE)
    monkeypatch.setattr(forget_module._Run, "delete", real_delete)
    result = forget(store, "p1", ALICE)  # the retry
    assert result.changed["cost_1d"] >= 1

    assert store.query(totals).result_rows == before  # nothing counted twice, nothing lost
    by_user = store.query("SELECT user_hash, sum(calls), sum(cost_usd) FROM cost_1d WHERE project_id = 'p1' "
                          "GROUP BY user_hash ORDER BY 2").result_rows
    assert [(n, cost) for _, n, cost in by_user] == [(1, 1.0), (2, 0.75)]
    assert by_user[0][0] == BOB and by_user[1][0] not in (ALICE, BOB)
    assert places_holding(store, [ALICE]) == []


def test_forget_deletes_budgets_on_the_user_and_takes_the_hash_out_of_their_alerts(store) -> None:
    from inferwatch_alerts.budget_alerts import EVENT_COLUMNS, STATE_COLUMNS
    from inferwatch_collector.cost import budgets

    for budget_id, scope_type, value in (("b_alice", "user", ALICE), ("b_project", "project", "")):
        budgets.create_budget(store, "p1", budgets.validate_budget(
            budget_id=budget_id, scope_type=scope_type, scope_value=value, period="day", kind="soft",
            limit_usd=5.0, thresholds=None))
    now = int(time.time() * 1000)
    store.insert_columns("alert_events", [[c] for c in (
        "p1", "budget:b_alice", now, f"user={ALICE}", "firing", "warning", "cost_usd", 6.0, 5.0, 86400,
        f"Budget b_alice (user {ALICE}) is over", {"scope_value": ALICE, "budget_id": "b_alice"}, [])],
        EVENT_COLUMNS)
    store.insert_columns("alert_state", [[c] for c in (
        "p1", "budget:b_alice", f"user={ALICE}", "firing", now, 6.0, now, now, 0)], STATE_COLUMNS)
    result = forget(store, "p1", ALICE)
    assert result.changed["budgets"] == 1 and result.changed["alert_state"] == 1
    assert result.changed["alert_events"] == 1
    assert [b.budget_id for b in budgets.list_budgets(store, "p1")] == ["b_project"]
    assert places_holding(store, [ALICE]) == []
    event = store.query("SELECT message, labels FROM alert_events").result_rows[0]
    assert event[0].startswith("Budget b_alice (user ") and event[1]["budget_id"] == "b_alice"


def test_forget_api_takes_a_raw_user_id_hashes_it_and_never_keeps_it(store, keys: Keys, client, caplog) -> None:
    raw = "alice.raw-id@example.com"
    alice = client.app.state.user_hasher.hash(raw)  # the deployment's key, as ingest hashes enduser.id
    _insert_calls(store, [llm_call("p1", trace_id="a" * 32, span_id="1" * 16, user_hash=alice, start_time=NOW_US)])
    admin = Keys.header(keys.admin)
    for body in ({"user_id": raw, "user_hash": alice}, {}, {"user_id": ""}):
        response = client.post("/api/v1/forget", json=body, headers=admin)
        assert response.status_code == 422, body
        assert raw not in response.text
    with caplog.at_level("DEBUG"):
        response = client.post("/api/v1/forget", json={"user_id": raw}, headers=admin)
    assert response.status_code == 200, response.text
    assert response.json()["user_hash"] == alice and response.json()["calls_found"] == 1
    assert raw not in response.text and raw not in caplog.text
    assert places_holding(store, [raw, alice]) == []


class _ShardedNode:
    """A store as :func:`forget` sees it on one node of a sharded cluster: reads go to the real (single-node)
    tables, every write is recorded instead of run (no cluster here)."""

    def __init__(self, real) -> None:
        self.real, self.database = real, real.database
        self.commands: list[str] = []

    def table(self, name: str) -> str:
        return self.real.table(name)

    def query(self, sql, parameters=None, settings=None):
        return self.real.query(sql, parameters, settings)

    def command(self, sql, parameters=None, settings=None) -> None:
        self.commands.append(sql)


def test_forget_on_a_sharded_cluster_mutates_the_local_tables_on_cluster(store) -> None:
    from inferwatch_collector.migrations import Target

    _seed(store)
    _seed_attribute_user(store)
    node = _ShardedNode(store)
    forget(node, "p1", ALICE, target=Target(mode="sharded", cluster="iw"))  # type: ignore[arg-type]
    mutated = {re.match(r"ALTER TABLE inferwatch\.(\w+) ON CLUSTER iw (DELETE|UPDATE) ", sql).group(1)
               for sql in node.commands if sql.startswith("ALTER")}
    assert mutated == {"prompt_logs_local", "spans_local", "llm_calls_local", "feedback_local", "cost_1d_local"}
    inserts = [sql for sql in node.commands if sql.startswith("INSERT")]
    assert len(inserts) == 1 and inserts[0].startswith("INSERT INTO inferwatch.cost_1d (")  # the Distributed one
    for sql in node.commands:
        formatted = store.query("SELECT formatQuery({q:String})", {"q": sql}).result_rows[0][0]
        assert formatted.split()[0] in ("ALTER", "INSERT"), sql
