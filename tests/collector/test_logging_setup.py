"""Structured JSON logs never carry payload content or keys (issue 8, operability)."""

from __future__ import annotations

import io
import json
import logging

import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.app import create_app
from inferwatch_collector.logging_setup import JsonFormatter, configure_from_env, configure_logging, scrub

from tests.helpers import payloads

PROMPT = "my card is 4111 1111 1111 1111 and my secret plan is ZEBRA-MOONLIGHT"
PROVIDER_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def json_logs():
    """Route every log record through the JSON formatter into a buffer; restore the root logger afterwards."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_scheduler_level = logging.getLogger("apscheduler").level
    buffer = io.StringIO()
    configure_logging("json", "INFO", stream=buffer)
    try:
        yield buffer
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
        logging.getLogger("apscheduler").setLevel(saved_scheduler_level)


def test_a_logged_ingest_error_holds_no_prompt_text_and_no_key(app_settings, store, keys, json_logs):
    span = payloads.otel_genai_span(**{"gen_ai.input.messages": PROMPT, "gen_ai.system_instructions": PROVIDER_KEY})
    body = payloads.make_request(span).SerializeToString()

    async def exploding(raw, content_type, encoding, project_id, max_bytes=None):
        # a bug deep in normalisation whose message quotes the data it choked on, and the caller's key
        raise ValueError(f"cannot normalise {PROMPT!r} sent with {keys.ingest} / Bearer {keys.ingest} "
                         f"and {PROVIDER_KEY}")

    with TestClient(create_app(app_settings, store=store)) as client:
        client.app.state.ingest_pool.process = exploding
        response = client.post("/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf",
                                                                     "Authorization": f"Bearer {keys.ingest}"})
        assert response.status_code == 400
        logging.getLogger("inferwatch_collector.test").warning("ingest key %s used", keys.ingest)

    lines = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    errors = [entry for entry in lines if entry["level"] == "ERROR"]
    assert errors, "the ingest failure was not logged"
    failure = errors[0]
    assert failure["logger"] == "inferwatch_collector.routes.otlp"
    assert failure["exc_type"] == "builtins.ValueError" and "exc_message" not in failure
    assert any("otlp.py" in frame for frame in failure["exc_stack"])
    text = json_logs.getvalue()
    # the key's secret part is everything after "iwk_<id>_" (it may itself start with "_": split once, twice)
    for secret in ("ZEBRA-MOONLIGHT", "4111 1111", PROVIDER_KEY, keys.ingest, keys.ingest.split("_", 2)[2]):
        assert secret not in text
    assert any(entry["message"] == "ingest key iwk_<redacted> used" for entry in lines)


def test_connection_errors_keep_their_message_scrubbed():
    try:
        raise ConnectionRefusedError("cannot reach http://admin:hunter2@clickhouse:8123 (refused)")
    except ConnectionRefusedError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "insert failed", None, sys_exc_info())
    record.batch_rows = 512
    record.body = "x" * 1000  # a long string extra (could be content): left out
    entry = json.loads(JsonFormatter().format(record))
    assert entry["exc_message"] == "cannot reach http://admin:<redacted>@clickhouse:8123 (refused)"
    assert entry["batch_rows"] == 512 and "body" not in entry


def sys_exc_info():
    import sys

    return sys.exc_info()


@pytest.mark.parametrize("raw, expected", [
    ("Authorization: Bearer abcdefghijkl123", "Authorization: Bearer <redacted>"),
    ("key=iwk_0123456789ab_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "key=iwk_<redacted>"),
    ("password=s3cret&user=x", "password=<redacted>&user=x"),
    ("plain text stays", "plain text stays"),
    # the shared redactor's other secret kinds
    ("creds AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "creds <AWS_ACCESS_KEY_ID>,<AWS_SECRET_KEY>"),
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=<AWS_SECRET_KEY>"),
    ("bad key -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY----- x",
     "bad key <PRIVATE_KEY> x"),
    ("cannot reach postgres://app:pa55w0rd@db/app", "cannot reach postgres://app:<redacted>@db/app"),
    ("langfuse sk-lf-Q2hvb3NlIGEgc2VjcmV0IGtleSB0aGF0", "langfuse sk-<redacted>"),
])
def test_scrub(raw, expected):
    assert scrub(raw) == expected


def test_the_environment_picks_the_format(json_logs, monkeypatch):
    monkeypatch.setenv("INFERWATCH_LOG_FORMAT", "json")
    monkeypatch.setenv("INFERWATCH_LOG_LEVEL", "warning")
    buffer = io.StringIO()
    configure_from_env(buffer)
    logging.getLogger("uvicorn.error").info("not at this level")
    logging.getLogger("uvicorn.error").warning("server %s", "up")  # uvicorn's loggers come out the same way
    (entry,) = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert (entry["logger"], entry["level"], entry["message"]) == ("uvicorn.error", "WARNING", "server up")
    monkeypatch.setenv("INFERWATCH_LOG_FORMAT", "nonsense")
    text = io.StringIO()
    configure_from_env(text)
    logging.getLogger("x").warning("plain")
    assert text.getvalue().rstrip().endswith("WARNING x: plain")


def test_scheduler_chatter_only_at_debug(json_logs):
    """APScheduler's two INFO lines per job run (the lease runs every 10 s) stay out unless the level is DEBUG;
    its warnings still come through."""
    job_log = logging.getLogger("apscheduler.executors.default")
    job_log.info('Running job "scheduler-lease"')
    job_log.warning("Run time of job missed")
    assert [json.loads(line)["message"] for line in json_logs.getvalue().splitlines()] == ["Run time of job missed"]
    debug = io.StringIO()
    configure_logging("text", "DEBUG", stream=debug)
    job_log.info('Running job "scheduler-lease"')
    assert debug.getvalue().rstrip().endswith('INFO apscheduler.executors.default: Running job "scheduler-lease"')
