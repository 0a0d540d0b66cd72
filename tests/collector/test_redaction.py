"""The collector's redaction is the SDK's (shared code, not a copy), end to end: module, normaliser, /metrics.

The rules themselves (Presidio parity, each entity, validators, properties) are tested in
``tests/sdk/test_redaction.py``; here: that the collector uses that redactor everywhere it redacts, with the
interface its callers use, including entities the collector's former regex redactor never found (IBAN, IP, URL,
crypto, phone numbers of other countries), so these tests fail if it went back to a redactor of its own.
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inferwatch.redaction as shared
from inferwatch_collector.auth import langfuse_pair, new_key
from inferwatch_collector.normalize import normalize
from inferwatch_collector.otlp_decode import to_fast
from inferwatch_collector.redaction import (
    DEFAULT_REDACTOR,
    ENTITIES,
    PLACEHOLDERS,
    POLICY,
    RedactionResult,
    Redactor,
    redact,
)

from tests.helpers import payloads as P
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape

# Only the shared redactor finds these (the collector's former regex redactor left every one of them alone).
SHARED_ONLY = {
    "IBAN_CODE": "DE89 3704 0044 0532 0130 00",
    "IP_ADDRESS": "192.168.10.24",
    "URL": "https://docs.example.com/reset?token=abc",
    "CRYPTO": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "PHONE_NUMBER": "030 12345678",  # a German national number
}
PROMPT = ("Wire it to IBAN DE89 3704 0044 0532 0130 00; the request came from 192.168.10.24, see "
          "https://docs.example.com/reset?token=abc and pay bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq. "
          "Ruf mich an: 030 12345678. Mail jane@example.com")  # fmt: skip


# --- shared code -------------------------------------------------------------------------------------------------
def test_the_collector_redacts_with_the_sdk_redactor() -> None:
    assert DEFAULT_REDACTOR is shared.DEFAULT_REDACTOR
    assert isinstance(DEFAULT_REDACTOR, shared.Redactor)
    assert RedactionResult is shared.RedactionResult
    assert Redactor is shared.SupportsRedact and isinstance(DEFAULT_REDACTOR, Redactor)  # the protocol
    assert ENTITIES == shared.ENTITIES and PLACEHOLDERS is shared.PLACEHOLDERS
    assert DEFAULT_REDACTOR.policy == POLICY == shared.POLICY


def test_entities_only_the_shared_redactor_finds_are_redacted_by_the_collector() -> None:
    result = redact(PROMPT)
    for entity, value in SHARED_ONLY.items():
        assert value not in result.text, entity
        assert result.counts.get(entity) == 1, (entity, result)
    assert result == shared.redact(PROMPT)


def _content_span(text: str) -> P.Span:
    return P.otel_genai_span(**{
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}]),
        "gen_ai.output.messages": "Noted: IBAN DE89 3704 0044 0532 0130 00.",
    })  # fmt: skip


@pytest.mark.parametrize("fast", [True, False])
def test_the_normaliser_stores_content_redacted_by_the_shared_redactor(fast: bool) -> None:
    request = P.make_request(_content_span(PROMPT))
    batch = normalize(to_fast(request) if fast else request, "p1")
    (log,) = batch.prompt_logs
    assert log.redaction == shared.DEFAULT_REDACTOR.policy
    for entity, value in SHARED_ONLY.items():
        assert value not in log.prompt + log.completion, entity
        assert PLACEHOLDERS[entity] in log.prompt, entity
    assert log.completion == "Noted: IBAN <IBAN_CODE>."
    assert batch.redactions == {**{entity: 1 for entity in SHARED_ONLY}, "IBAN_CODE": 2, "EMAIL_ADDRESS": 1}


@pytest.mark.parametrize("fast", [True, False])
def test_the_normaliser_stores_no_collector_key_private_key_aws_secret_or_uri_password(fast: bool) -> None:
    """The secrets a collector's own users paste most: its keys (``keys create``, and the pair for Langfuse
    clients), a private key, an AWS key pair, a database URL. Keys made by the collector's own key code."""
    _, key = new_key()
    public, secret = langfuse_pair(key)
    aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAA\n" \
          "-----END OPENSSH PRIVATE KEY-----"
    prompt = (f"Why does INFERWATCH_API_KEY={key} fail, and LANGFUSE_PUBLIC_KEY={public} "
              f"LANGFUSE_SECRET_KEY={secret}? My key:\n{pem}\nAWS: AKIAIOSFODNN7EXAMPLE {aws_secret}, "
              "DATABASE_URL=postgres://app:pa55w0rd@db:5432/app")
    request = P.make_request(_content_span(prompt))
    batch = normalize(to_fast(request) if fast else request, "p1")
    (log,) = batch.prompt_logs
    for value in (key, secret, secret.removeprefix("sk-lf-"), "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", aws_secret,
                  "pa55w0rd"):
        assert value not in log.prompt, value
    assert public in log.prompt and "postgres://app:<PASSWORD>@db:5432/app" in log.prompt  # the key id stays
    assert {e: batch.redactions.get(e) for e in ("INFERWATCH_API_KEY", "PRIVATE_KEY", "AWS_SECRET_KEY", "PASSWORD")
            } == {"INFERWATCH_API_KEY": 2, "PRIVATE_KEY": 1, "AWS_SECRET_KEY": 1, "PASSWORD": 1}


@pytest.mark.parametrize("fast", [True, False])
def test_a_span_marked_redacted_by_a_client_is_redacted_again(fast: bool) -> None:
    """``inferwatch.redacted`` is the client's own record; raw text under it (an SDK sending ``capture="full"``, or
    any client setting the mark) is stored redacted all the same."""
    span = P.otel_genai_span(**{
        "gen_ai.input.messages": PROMPT, "gen_ai.output.messages": "Noted: IBAN DE89 3704 0044 0532 0130 00.",
        "inferwatch.redacted": True, "inferwatch.redaction.policy": "someone-elses/1",
    })  # fmt: skip
    request = P.make_request(span)
    (log,) = normalize(to_fast(request) if fast else request, "p1").prompt_logs
    for entity, value in SHARED_ONLY.items():
        assert value not in log.prompt + log.completion, entity
    assert log.redaction == shared.DEFAULT_REDACTOR.policy and log.completion == "Noted: IBAN <IBAN_CODE>."


def test_status_messages_and_feedback_go_through_the_shared_redactor() -> None:
    from inferwatch_collector.routes.feedback import _redact

    span = P.http_server_span()
    span.status.message = "upstream rejected IBAN DE89 3704 0044 0532 0130 00 from 192.168.10.24"
    (row,) = normalize(P.make_request(span), "p1").spans
    assert row.status_message == "upstream rejected IBAN <IBAN_CODE> from <IP_ADDRESS>"
    assert _redact("my IBAN is DE89 3704 0044 0532 0130 00") == "my IBAN is <IBAN_CODE>"


def test_metrics_count_redactions_of_the_shared_entities(client, store, keys: Keys) -> None:
    body = P.make_request(_content_span(PROMPT)).SerializeToString()
    response = client.post("/v1/traces", content=body,
                           headers={"Content-Type": "application/x-protobuf", **Keys.header(keys.ingest)})
    assert response.status_code == 200
    text = scrape(client)
    assert 'inferwatch_redactions_total{entity="IBAN_CODE"} 2' in text
    for entity in ("IP_ADDRESS", "URL", "CRYPTO", "PHONE_NUMBER", "EMAIL_ADDRESS"):
        assert f'inferwatch_redactions_total{{entity="{entity}"}} 1' in text, entity


# --- what the collector's callers rely on ------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "card 4111 1111 1111 1112 was declined",  # fails Luhn
    "ssn 000-12-3456 and 666-12-3456 are never issued",
    "scikit: sk-learn is a library",
    "a bearer of bad news",
    "akiaiosfodnn7example",  # AWS ids are upper case
    "ghp_short",
    "the password is long enough",
    "price $1,234.56 and 42 items, 17% off",
])  # fmt: skip
def test_lookalikes_are_left_alone(text: str) -> None:
    assert redact(text) == RedactionResult(text, {})


def test_counts_placeholders_and_stability() -> None:
    text = ("Hi, I'm reachable at jane@example.com or (415) 555-2671; my SSN is 536-22-8763. "
            "Use key sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123 and Authorization: Bearer abcdefghijklmnop0123. "
            "Again: jane@example.com")  # fmt: skip
    result = DEFAULT_REDACTOR.redact(text)
    assert result.text == (
        "Hi, I'm reachable at <EMAIL_ADDRESS> or <PHONE_NUMBER>; my SSN is <US_SSN>. "
        "Use key <ANTHROPIC_API_KEY> and Authorization: Bearer <BEARER_TOKEN>. Again: <EMAIL_ADDRESS>")
    assert result.counts == {"EMAIL_ADDRESS": 2, "PHONE_NUMBER": 1, "US_SSN": 1, "ANTHROPIC_API_KEY": 1,
                             "BEARER_TOKEN": 1}
    assert DEFAULT_REDACTOR.redact(result.text) == RedactionResult(result.text, {})
    assert redact("") == RedactionResult("", {})
    assert all(PLACEHOLDERS[e] == f"<{e}>" for e in ENTITIES)


def test_long_texts_without_matches_stay_linear() -> None:
    # runs that naive patterns scan quadratically (this would hang, not just be slow)
    for blob in ("a" * 200_000, "1" * 200_000, "a.b-c" * 40_000, "@" * 100_000, "+1" * 50_000, ":" * 100_000):
        assert redact(blob).counts == {}


# --- property: generated secrets never survive, and the output is stable ---------------------------------------
_LOCAL_CHARS = string.ascii_lowercase + string.digits + "._+-"
_emails = st.builds(
    lambda first, rest, labels, tld: f"{first}{rest.rstrip('.')}@{'.'.join(labels)}.{tld}",
    st.sampled_from(string.ascii_letters + string.digits),
    st.text(_LOCAL_CHARS, max_size=20).filter(lambda s: ".." not in s),
    st.lists(st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=12), min_size=1, max_size=3),
    st.sampled_from(["com", "org", "net", "io", "de", "co.uk", "fr", "internal"]),
)
_ssns = st.builds(
    lambda area, group, serial, sep: f"{area:03d}{sep}{group:02d}{sep}{serial:04d}",
    st.integers(1, 899).filter(lambda a: a != 666), st.integers(1, 99), st.integers(1, 9999),
    st.sampled_from("- "),
).filter(lambda s: len(set(s.replace("-", "").replace(" ", ""))) > 1)


def _card(prefix: str, digits: str, sep: str) -> str:
    body = (prefix + digits)[:15]
    number = next(body + d for d in string.digits if shared.luhn_valid(body + d))
    return sep.join(number[i:i + 4] for i in range(0, 16, 4)) if sep else number


_cards = st.builds(_card, st.sampled_from(["4", "51", "52", "53", "54", "55", "6011"]),
                   st.text(string.digits, min_size=14, max_size=14), st.sampled_from(["", " ", "-"]))
_key_chars = string.ascii_letters + string.digits
_keys = st.one_of(
    st.text(_key_chars, min_size=24, max_size=48).map(lambda s: "sk-proj-" + s),
    st.text(_key_chars + "_-", min_size=24, max_size=48).map(lambda s: "sk-ant-api03-" + s),
    st.text(string.ascii_uppercase + "234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(_key_chars, min_size=36, max_size=40).map(lambda s: "ghp_" + s),
)
_filler = st.text(string.ascii_letters + " ,;:!?()\n", max_size=40)


@settings(max_examples=200, deadline=None)
@given(before=_filler, secret=st.one_of(_emails, _ssns, _cards, _keys), after=_filler)
def test_generated_pii_and_keys_never_survive(before: str, secret: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    result = redact(text)
    assert secret not in result.text
    assert sum(result.counts.values()) >= 1
    assert redact(result.text).counts == {}
