"""inferwatch.redaction on JSON documents: keys and structure stay, values are redacted, the result is JSON; and
dotted indexes ("contents.0.me") are no URLs in plain text either."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from inferwatch.redaction import DEFAULT_REDACTOR, RedactionResult, Redactor
from inferwatch.redaction import documents as rd_documents

from tests.helpers.redaction_corpus import luhn_complete

_PII = ("alice@example.com", "4111 1111 1111 1111", "536-22-8763", "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        "+1 415 555 2671", "https://docs.example.com/a?b=1")  # fmt: skip


def _shape(value: Any) -> Any:
    """Containers with their keys in order; every scalar is a leaf (a number holding PII becomes a string)."""
    if isinstance(value, dict):
        return [(key, _shape(item)) for key, item in value.items()]
    if isinstance(value, list):
        return ["list", [_shape(item) for item in value]]
    return "leaf"


_keys = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["message.contents.0.message_content.text", "items.0.name", "role", "content", "password",
                     "alice@example.com", "4111 1111 1111 1111", "https://example.com/x", "contents.0.me"]),
)  # fmt: skip
_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40).filter(lambda t: not any(ch.isdigit() for ch in t)),  # (digits: only as planted)
    st.lists(st.one_of(st.sampled_from(_PII), st.text(string.ascii_letters + " ", max_size=15)),
             max_size=4).map(" ; ".join),
    st.builds(lambda digits: int(luhn_complete("4" + digits)), st.text(string.digits, min_size=14, max_size=14)),
)  # fmt: skip
_documents = st.one_of(
    st.dictionaries(_keys, st.recursive(_leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=12), max_size=5),
    st.lists(st.recursive(_leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=12), max_size=5),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(document=_documents, indent=st.sampled_from([None, 2]))
# read value by value (the card breaks the whole-text pass's structure), the control character after the password
# key holds nothing alone but is a password as written in JSON ("\u001f")
@example(document={"": [622300279472130, {"PASSWORD": "\x1f"}]}, indent=None)
def test_any_json_document_stays_json_with_the_same_keys_and_structure(document: Any, indent: int | None) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=bool(indent))
    result = DEFAULT_REDACTOR.redact(text)
    redacted = json.loads(result.text)  # valid JSON
    assert _shape(redacted) == _shape(document)  # the same keys, in order, at every level; the same structure
    for secret in _PII:  # values are redacted (a key is kept as it is, whatever it holds)
        assert json.dumps(secret)[1:-1] not in json.dumps([_values(redacted)], ensure_ascii=False)
    assert DEFAULT_REDACTOR.redact(result.text) == RedactionResult(result.text, {})  # stable
    if not result.counts:
        assert result.text == text  # nothing found: the text as it came (its formatting too)


def _values(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return [value]


def test_an_openinference_completion_keeps_its_flattened_keys() -> None:
    """The collector rebuilds OpenInference's ``llm.output_messages.0.message.contents.0.message_content.text``
    into this document; its key used to come back as ``<URL>ssage_content.text`` (``contents.0.me``)."""
    completion = json.dumps([{
        "role": "assistant",
        "contents.0.message_content.type": "text",
        "contents.0.message_content.text": "Write to alice@example.com or call +1 415 555 2671.",
    }], separators=(",", ":"))  # fmt: skip
    result = DEFAULT_REDACTOR.redact(completion)
    assert json.loads(result.text) == [{
        "role": "assistant",
        "contents.0.message_content.type": "text",
        "contents.0.message_content.text": "Write to <EMAIL_ADDRESS> or call <PHONE_NUMBER>.",
    }]  # fmt: skip
    assert result.counts == {"EMAIL_ADDRESS": 1, "PHONE_NUMBER": 1}


def test_values_are_read_after_their_key_and_numbers_are_redacted_too() -> None:
    text = '{"password": "hunter22", "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",' \
           ' "card": 4111111111111111, "n": 3, "ok": true, "none": null, "nested": "{\\"email\\": \\"a@b.co\\"}"}'
    result = DEFAULT_REDACTOR.redact(text)
    assert json.loads(result.text) == {
        "password": "<PASSWORD>", "aws_secret_access_key": "<AWS_SECRET_KEY>", "card": "<CREDIT_CARD>", "n": 3,
        "ok": True, "none": None, "nested": '{"email": "<EMAIL_ADDRESS>"}',  # as it was written
    }  # fmt: skip
    assert result.counts == {"PASSWORD": 1, "AWS_SECRET_KEY": 1, "CREDIT_CARD": 1, "EMAIL_ADDRESS": 1}
    # a finding that reaches into the key: the value is read alone, the key stays
    assert json.loads(DEFAULT_REDACTOR.redact('{"ping jane@x.io": "ok 536-22-8763"}').text) == {
        "ping jane@x.io": "ok <US_SSN>"}


def test_what_is_not_a_document_is_read_as_text() -> None:
    for text in ('{"cut": "alice@example.com', "[1, 2", '"alice@example.com"', "{not json} alice@example.com",
                 "[" * 5000 + "]" * 5000 + " x"):
        assert rd_documents.parse_document(text) is None
    assert DEFAULT_REDACTOR.redact('{"cut": "alice@example.com').text == '{"cut": "<EMAIL_ADDRESS>'
    assert rd_documents.parse_document(' \n {"a": 1}') == {"a": 1}
    assert not rd_documents.looks_like_document("plain text {with braces}")
    deep = "[" * 5000 + '"alice@example.com"' + "]" * 5000  # deeper than the parser goes: read as text
    assert "alice@example.com" not in DEFAULT_REDACTOR.redact(deep).text
    lone = json.dumps({"a": "\ud800 alice@example.com"})  # a lone surrogate stays an escape: UTF-8 encodable
    DEFAULT_REDACTOR.redact(lone).text.encode("utf-8")
    assert json.loads(DEFAULT_REDACTOR.redact(lone).text) == {"a": "\ud800 <EMAIL_ADDRESS>"}


def test_dotted_indexes_are_no_urls_unless_presidio_compatible() -> None:
    strict = Redactor(presidio_compatible=True)
    for text in ("contents.0.message_content.text", "see items.0.name", "'messages.12.me'",
                 "response.choices.0.message.content"):
        assert DEFAULT_REDACTOR.redact(text) == RedactionResult(text, {}), text
        assert strict.redact(text).counts == {"URL": 1}, text  # Presidio reads a URL there
    for text in ("mail.163.com", "https://a.0.me/x", "go to www.example.co.uk/path now", '"docs.acme.io"'):
        assert DEFAULT_REDACTOR.redact(text).counts == {"URL": 1}, text


@settings(max_examples=300, deadline=None)
@given(word=st.text(string.ascii_letters, min_size=1, max_size=16), key=_keys)
def test_the_short_word_shortcut_skips_only_what_holds_nothing(word: str, key: str) -> None:
    """A value of at most 16 ASCII letters is returned without running the recognizers: they find nothing in
    it, read alone or after its key (a password key excepted: its value is redacted whatever it is)."""
    wanted = DEFAULT_REDACTOR.entities
    assert DEFAULT_REDACTOR._redact_text(word, wanted, {}) == word
    if "pass" not in key.lower() and "pwd" not in key.lower() and "secret" not in key.lower():
        out = DEFAULT_REDACTOR._redact_text(f"{key}: {word}", wanted, {})  # the key may hold a finding
        assert out.endswith(word) and not out[:-len(word)][-1:].isalpha(), out  # the word does not
    assert json.loads(DEFAULT_REDACTOR.redact(json.dumps({"db_password": "hunter", "Secret": "abc"})).text) == {
        "db_password": "<PASSWORD>", "Secret": "<PASSWORD>"}
