"""The regex redactor: every entity, the validators (Luhn, SSN ranges), placeholders, and a property test."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch_collector.redaction import (
    DEFAULT_REDACTOR,
    ENTITIES,
    PLACEHOLDERS,
    REGEX_POLICY,
    RedactionResult,
    Redactor,
    RegexRedactor,
    luhn_valid,
    redact,
)

R = RegexRedactor()


@pytest.mark.parametrize(
    ("text", "expected", "entity"),
    [
        ("mail jane.roe+tag@corp.example.co.uk now", "mail <EMAIL_ADDRESS> now", "EMAIL_ADDRESS"),
        ("call (555) 010-0199.", "call <PHONE_NUMBER>.", "PHONE_NUMBER"),
        ("call 555-010-0199", "call <PHONE_NUMBER>", "PHONE_NUMBER"),
        ("call 555.010.0199", "call <PHONE_NUMBER>", "PHONE_NUMBER"),
        ("call +1 555 010 0199", "call <PHONE_NUMBER>", "PHONE_NUMBER"),
        ("call +15550100199", "call <PHONE_NUMBER>", "PHONE_NUMBER"),
        ("call +44 20 7946 0958", "call <PHONE_NUMBER>", "PHONE_NUMBER"),
        ("ssn 078-05-1120 ok", "ssn <US_SSN> ok", "US_SSN"),
        ("ssn 123 45 6789", "ssn <US_SSN>", "US_SSN"),
        ("card 4111 1111 1111 1111 exp", "card <CREDIT_CARD> exp", "CREDIT_CARD"),
        ("card 4111-1111-1111-1111", "card <CREDIT_CARD>", "CREDIT_CARD"),
        ("card 5555555555554444", "card <CREDIT_CARD>", "CREDIT_CARD"),
        ("amex 3782 822463 10005", "amex <CREDIT_CARD>", "CREDIT_CARD"),
        ("key sk-proj-abcdefghijklmnopqrstuvwxyz012345", "key <OPENAI_API_KEY>", "OPENAI_API_KEY"),
        ("key sk-abcdefghijklmnopqrstuvwxyz012345", "key <OPENAI_API_KEY>", "OPENAI_API_KEY"),
        ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123-xyz", "key <ANTHROPIC_API_KEY>", "ANTHROPIC_API_KEY"),
        ("id AKIAIOSFODNN7EXAMPLE.", "id <AWS_ACCESS_KEY_ID>.", "AWS_ACCESS_KEY_ID"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = <AWS_SECRET_KEY>",
            "AWS_SECRET_KEY",
        ),
        (
            "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y",
            "git clone https://<GITHUB_TOKEN>@github.com/x/y",
            "GITHUB_TOKEN",
        ),
        ("pat github_pat_11ABCDEFG0123456789_abcdefghijkl", "pat <GITHUB_TOKEN>", "GITHUB_TOKEN"),
        ("slack xoxb-1234567890-abcdefghij", "slack <SLACK_TOKEN>", "SLACK_TOKEN"),
        ("g AIzaSyA-1234567890abcdefghijklmnopqrstu", "g <GOOGLE_API_KEY>", "GOOGLE_API_KEY"),
        ("stripe sk_live_abcdefghijklmnop1234", "stripe <STRIPE_API_KEY>", "STRIPE_API_KEY"),
        ("hf hf_abcdefghijklmnopqrstuvwxyz01234567", "hf <HUGGINGFACE_TOKEN>", "HUGGINGFACE_TOKEN"),
        (
            "Authorization: Bearer abc.def-ghi_jkl~mno+pqr/stu=.",
            "Authorization: Bearer <BEARER_TOKEN>.",
            "BEARER_TOKEN",
        ),
        (
            "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
            "t=<JWT> end",
            "JWT",
        ),
        ('{"password": "hunter22"}', '{"password": "<PASSWORD>"}', "PASSWORD"),
        ("pwd=s3cr3t!", "pwd=<PASSWORD>", "PASSWORD"),
    ],
)
def test_each_entity_is_replaced_by_its_placeholder(text: str, expected: str, entity: str) -> None:
    result = R.redact(text)
    assert result.text == expected
    assert result.counts == {entity: 1}


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112",  # fails Luhn
        "order 1234567890123",  # 13 digits, fails Luhn
        "ssn 000-12-3456",  # area 000 never issued
        "ssn 666-12-3456",
        "ssn 912-34-5678",
        "ssn 123-00-4567",
        "ssn 123-45-0000",
        "scikit: sk-learn is a library",
        "a bearer of bad news",
        "akiaiosfodnn7example",  # AWS ids are upper case
        "ghp_short",
        "eyJ is how base64 JSON starts",
        "version 1.2.3.4 released on 2024-05-01 at 10:30",
        "the @mention and user@ and @domain.com",
        "password is long",
        "price $1,234.56 and 42 items",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert R.redact(text) == RedactionResult(text, {})


def test_luhn() -> None:
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")


def test_phone_inside_a_non_card_digit_run_is_still_redacted() -> None:
    # 4-4-4-4 grouped run that fails Luhn: not a card, and no phone inside → untouched
    assert R.redact("ref 1234-5678-9012-3456").text == "ref 1234-5678-9012-3456"


def test_several_entities_counts_and_stable_placeholders() -> None:
    text = (
        "Hi, I'm reachable at jane@example.com or (555) 010-0199; my SSN is 078-05-1120. "
        "Use key sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123 and Authorization: Bearer abcdefghijklmnop0123. "
        "Again: jane@example.com"
    )
    result = R.redact(text)
    assert result.text == (
        "Hi, I'm reachable at <EMAIL_ADDRESS> or <PHONE_NUMBER>; my SSN is <US_SSN>. "
        "Use key <ANTHROPIC_API_KEY> and Authorization: Bearer <BEARER_TOKEN>. "
        "Again: <EMAIL_ADDRESS>"
    )
    assert result.counts == {
        "EMAIL_ADDRESS": 2,
        "PHONE_NUMBER": 1,
        "US_SSN": 1,
        "ANTHROPIC_API_KEY": 1,
        "BEARER_TOKEN": 1,
    }
    # idempotent: placeholders never match again
    assert R.redact(result.text) == RedactionResult(result.text, {})


def test_interface_policy_and_defaults() -> None:
    assert isinstance(R, Redactor)
    assert R.policy == REGEX_POLICY == "inferwatch-regex/1"
    assert DEFAULT_REDACTOR.policy == REGEX_POLICY
    assert redact("x@y.io").text == "<EMAIL_ADDRESS>"
    assert R.redact("") == RedactionResult("", {})
    assert set(PLACEHOLDERS) == set(ENTITIES)
    assert all(PLACEHOLDERS[e] == f"<{e}>" for e in ENTITIES)


def test_long_texts_without_matches_stay_linear() -> None:
    # runs that a naive e-mail/digit pattern would scan quadratically (this would hang, not just be slow)
    for blob in ("a" * 200_000, "1" * 200_000, "a.b-c" * 40_000, "@" * 100_000, "+1" * 100_000):
        assert R.redact(blob) == RedactionResult(blob, {})


# --- property: generated secrets never survive -------------------------------------------------------------------
_LOCAL_CHARS = string.ascii_lowercase + string.digits + "._+-"
_emails = st.builds(
    lambda first, rest, labels, tld: f"{first}{rest}@{'.'.join(labels)}.{tld}",
    st.sampled_from(string.ascii_letters + string.digits),
    st.text(_LOCAL_CHARS, max_size=20),
    st.lists(st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=12), min_size=1, max_size=3),
    st.text(string.ascii_lowercase, min_size=2, max_size=6),
)
_ssns = st.builds(
    lambda area, group, serial, sep: f"{area:03d}{sep}{group:02d}{sep}{serial:04d}",
    st.integers(1, 899).filter(lambda a: a != 666),
    st.integers(1, 99),
    st.integers(1, 9999),
    st.sampled_from("- "),
)


def _luhn_complete(body: str) -> str:
    """``body`` plus the check digit that makes it Luhn-valid."""
    return next(body + d for d in "0123456789" if luhn_valid(body + d))


def _card(prefix: str, digits: str, sep: str) -> str:
    number = _luhn_complete((prefix + digits)[:15])  # 16 digits, like Visa / Mastercard / Discover
    return sep.join(number[i : i + 4] for i in range(0, 16, 4)) if sep else number


_cards = st.builds(
    _card,
    st.sampled_from(["4", "51", "52", "53", "54", "55", "6011"]),
    st.text(string.digits, min_size=14, max_size=14),
    st.sampled_from(["", " ", "-"]),
)
_key_chars = string.ascii_letters + string.digits
_keys = st.one_of(
    st.text(_key_chars, min_size=24, max_size=48).map(lambda s: "sk-proj-" + s),
    st.text(_key_chars, min_size=24, max_size=48).map(lambda s: "sk-" + s),
    st.text(_key_chars + "_-", min_size=24, max_size=48).map(lambda s: "sk-ant-api03-" + s),
    st.text(string.ascii_uppercase + "234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(_key_chars, min_size=36, max_size=40).map(lambda s: "ghp_" + s),
)
_filler = st.text(string.ascii_letters + " ,;:!?()\n", max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=_filler, secret=st.one_of(_emails, _ssns, _cards, _keys), after=_filler)
def test_generated_pii_and_keys_never_survive(before: str, secret: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    result = R.redact(text)
    assert secret not in result.text
    assert sum(result.counts.values()) >= 1
    assert R.redact(result.text).counts == {}  # and the output is stable
