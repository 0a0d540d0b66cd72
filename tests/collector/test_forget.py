"""Data requests: ``forget`` removes one user's prompt logs and feedback text, in one project only."""

from __future__ import annotations

import time

import pytest

from inferwatch_collector.forget import ForgetError, forget
from inferwatch_collector.routes.feedback import COLUMNS as FEEDBACK_COLUMNS
from inferwatch_collector.pairing.held import HeldCall, to_held_row
from inferwatch_collector.rows import LLM_CALL_COLUMNS, PROMPT_LOG_COLUMNS, HeldCallRow, PromptLogRow

from tests.helpers.keys import Keys
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
    # scores stay (quality metrics keep their counts), and so do the call metrics
    assert store.query("SELECT count() FROM feedback FINAL WHERE project_id = 'p1'").result_rows[0][0] == 3
    assert store.query("SELECT count() FROM llm_calls WHERE user_hash = {u:String}",
                       {"u": ALICE}).result_rows[0][0] == 3


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
    assert response.json() == {"project_id": "p1", "user_hash": ALICE, "calls_found": 2, "traces": 2,
                               "prompt_logs_deleted": 3, "feedback_blanked": 2}
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
    args = parser.parse_args(["--data-dir", str(settings.data_dir), "forget", "--project", "p1",
                              "--user-hash", "alice"])
    assert args.func(args) == 2


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
