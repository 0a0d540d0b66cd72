"""Free-text attributes (error messages, stack traces, Langfuse's status message, reranker queries) of every
supported convention are stored redacted in the ``attributes`` map of llm_calls and spans, never as sent.

The attribute names and shapes are those the libraries set: Langfuse SDK 3.x/5.x
(``langfuse.observation.status_message`` with ``level`` ERROR), OpenInference (``exception.*`` on the span,
``reranker.query`` and documents), OpenLIT 1.45.0 (``error.message``, ``gen_ai.framework.error.message``,
``mcp.error.message``), and the OTel exception attributes any instrumentation may copy onto its span.
"""

from __future__ import annotations

from typing import Any

import pytest

from inferwatch_collector import conventions
from inferwatch_collector.normalize import normalize
from inferwatch_collector.otlp_decode import to_fast

from tests.helpers import payloads as P
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape

EMAIL, PHONE, CARD = "jane.roe@example.com", "+1 415 555 2671", "4111 1111 1111 1111"
QUOTED = f"Invalid request: user wrote 'I am {EMAIL}, call {PHONE}, card {CARD}'"
PLANTED = (EMAIL, PHONE, CARD, "jane.roe", "555 2671", "1111 1111")
STACK = f'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\nValueError: {QUOTED}\n'


def _spans() -> list[Any]:
    """One span per convention, each with its free-text attributes holding the planted PII."""
    return [
        P.langfuse_span(**{"langfuse.observation.level": "ERROR", "langfuse.observation.status_message": QUOTED,
                           "langfuse.experiment.item.expected_output": f"Mail {EMAIL}"}),
        P.make_span("lookup-user", {"langfuse.observation.type": "span", "langfuse.observation.level": "ERROR",
                                    "langfuse.observation.status_message": QUOTED}),
        P.openinference_span(**{"exception.type": "BadRequestError", "exception.message": QUOTED,
                                "exception.stacktrace": STACK, "exception.escaped": "False"}),
        P.make_span("rerank", {"openinference.span.kind": "RERANKER", "reranker.query": f"who is {EMAIL}?",
                               "reranker.input_documents.0.document.content": f"{EMAIL} pays with {CARD}",
                               "reranker.output_documents.0.document.content": f"{EMAIL} pays with {CARD}"}),
        P.openlit_span(**{"error.type": "BadRequestError", "error.message": QUOTED}),
        P.make_span("langchain.chain", {"gen_ai.operation.name": "invoke_workflow",
                                        "gen_ai.framework.error.message": QUOTED,
                                        "retry.error.message": QUOTED}),
        P.make_span("mcp tools/call", {"gen_ai.operation.name": "execute_tool", "mcp.error.message": QUOTED}),
        P.http_server_span(**{"exception.message": QUOTED, "exception.stacktrace": STACK,
                              "error.message": QUOTED}),
    ]


FREE_TEXT_KEYS = (
    "langfuse.observation.status_message", "langfuse.experiment.item.expected_output", "exception.message",
    "exception.stacktrace", "reranker.query", "reranker.input_documents.0.document.content",
    "reranker.output_documents.0.document.content", "error.message", "gen_ai.framework.error.message",
    "retry.error.message", "mcp.error.message",
)  # fmt: skip


def _stored(rows: list[Any]) -> dict[str, list[str]]:
    """Every stored value of the free-text keys, by key."""
    out: dict[str, list[str]] = {}
    for attributes in rows:
        for key, value in attributes.items():
            if key in FREE_TEXT_KEYS:
                out.setdefault(key, []).append(value)
    return out


def test_free_text_keys_of_every_convention_are_classified_as_free_text() -> None:
    for key in FREE_TEXT_KEYS:
        assert conventions.classify_key(key) == conventions.FREE_TEXT, key
    for key in ("error.type", "exception.type", "gen_ai.response.finish_reasons", "langfuse.observation.level"):
        assert conventions.classify_key(key) != conventions.FREE_TEXT, key


@pytest.mark.parametrize("capture", ["redacted", "off"])
def test_free_text_attributes_are_stored_redacted_by_normalize(capture: str) -> None:
    request = P.make_request(*_spans())
    batch = normalize(to_fast(request), "p1", content_capture=capture)
    assert normalize(request, "p1", content_capture=capture) == batch  # the standard path agrees
    assert batch.rejected == 0, batch.errors
    stored = _stored([row.attributes for row in (*batch.llm_calls, *batch.spans)])
    assert set(stored) == set(FREE_TEXT_KEYS)  # kept (redacted), not dropped
    for key, values in stored.items():
        for value in values:
            assert not any(p in value for p in PLANTED), (key, value)
    langfuse = next(row for row in batch.llm_calls if row.span_name == "anthropic-generation")
    assert langfuse.attributes["langfuse.observation.status_message"] == (
        "Invalid request: user wrote 'I am <EMAIL_ADDRESS>, call <PHONE_NUMBER>, card <CREDIT_CARD>'")
    assert batch.redactions["CREDIT_CARD"] >= 12  # counted for /metrics like the content's


def test_free_text_attributes_never_reach_the_store(client, store, keys: Keys) -> None:
    body = P.make_request(*_spans()).SerializeToString()
    response = client.post("/v1/traces", content=body,
                           headers={"Content-Type": "application/x-protobuf", **Keys.header(keys.ingest)})
    assert response.status_code == 200
    calls = store.query("SELECT attributes FROM llm_calls").result_rows
    spans = store.query("SELECT attributes, status_message FROM spans").result_rows
    assert len(calls) == 3 and len(spans) == 5
    stored = _stored([row[0] for row in (*calls, *spans)])
    assert set(stored) == set(FREE_TEXT_KEYS)
    everything = str(store.query("SELECT * FROM llm_calls").result_rows) + str(
        store.query("SELECT * FROM spans").result_rows)
    assert not any(p in everything for p in PLANTED)
    assert "<EMAIL_ADDRESS>" in everything and "<CREDIT_CARD>" in everything
    assert 'inferwatch_redactions_total{entity="CREDIT_CARD"}' in scrape(client)
