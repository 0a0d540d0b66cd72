"""inferwatch.redaction: Presidio parity on a labelled corpus, each entity, validators, resolution, properties,
and the speed-ups (prefilters, anchored matching) against the plain patterns run over the whole text.

The reference is Presidio's ``AnalyzerEngine`` set up offline (``redaction_corpus.presidio_reference``): a blank
English spaCy pipeline with a lower-case lemma, tldextract's bundled suffix list, our secret recognizers registered
as Presidio pattern recognizers. Agreement on a text means the same set of (entity, start, end) findings.

``python tests/sdk/test_redaction.py --print-data`` prints the generated data of ``inferwatch/redaction/_data.py``
(from the installed presidio-analyzer, phonenumbers, tldextract and spaCy);
``test_embedded_data_matches_the_reference_libraries`` fails when it is stale.
"""

from __future__ import annotations

import json
import pkgutil
import random
import re
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script (--print-data): make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from inferwatch import redaction as rd  # noqa: E402
from inferwatch.redaction import (  # noqa: E402
    DEFAULT_REDACTOR,
    ENTITIES,
    PLACEHOLDERS,
    POLICY,
    SECRET_ENTITIES,
    Finding,
    PresidioRedactor,
    RedactionResult,
    Redactor,
    SupportsRedact,
    luhn_valid,
    resolve_conflicts,
    ssn_valid,
)
from inferwatch.redaction import _data as rd_data  # noqa: E402
from inferwatch.redaction import conflicts as rd_conflicts  # noqa: E402
from inferwatch.redaction import context as rd_context  # noqa: E402
from inferwatch.redaction import findings as rd_findings  # noqa: E402
from inferwatch.redaction import recognizers as rd_recognizers  # noqa: E402
from inferwatch.redaction import redactor as rd_redactor  # noqa: E402
from inferwatch.redaction import rules as rd_rules  # noqa: E402
from inferwatch.redaction import scan as rd_scan  # noqa: E402
from inferwatch.redaction import validators as rd_validators  # noqa: E402
from inferwatch.redaction.phones import patterns as ph  # noqa: E402
from inferwatch.redaction.phones import plans as phone_plans  # noqa: E402

from tests.helpers.redaction_corpus import (  # noqa: E402
    Sample,
    btc_bech32,
    btc_p2pkh,
    corpus,
    iban,
    luhn_complete,
    presidio_reference,
)

CORPUS_SIZE = 300  # ~10 s of Presidio on a slow 2-core machine
AGREEMENT = 0.99


# --- the Presidio comparison -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference() -> Any:
    pytest.importorskip("presidio_analyzer")
    return presidio_reference()


@pytest.fixture(scope="module")
def compared(reference: Any) -> list[tuple[Sample, list[Finding], list[Finding]]]:
    """(sample, Presidio's findings, ours) for the corpus, computed once."""
    out = []
    for sample in corpus(CORPUS_SIZE):
        ref = [Finding(r.entity_type, r.start, r.end, r.score) for r in reference(sample.text)]
        out.append((sample, ref, DEFAULT_REDACTOR.analyze(sample.text)))
    return out


def _report(title: str, mismatches: list[str], total: int) -> str:
    return f"{title}: {total - len(mismatches)}/{total} texts agree\n" + "\n".join(mismatches[:10])


def _spans(findings: list[Finding], text: str, with_score: bool = False) -> set[tuple[Any, ...]]:
    return {(f.entity_type, f.start, f.end, text[f.start:f.end]) + ((round(f.score, 6),) if with_score else ())
            for f in findings}


def test_findings_agree_with_presidio(compared: list[tuple[Sample, list[Finding], list[Finding]]]) -> None:
    mismatches = []
    for sample, ref, ours in compared:
        theirs, mine = _spans(ref, sample.text), _spans(ours, sample.text)
        if theirs != mine:
            mismatches.append(f"  Presidio only {sorted(theirs - mine)}, ours only {sorted(mine - theirs)}")
    assert 1 - len(mismatches) / len(compared) >= AGREEMENT, _report("findings", mismatches, len(compared))


def test_replaced_spans_and_scores_agree_with_presidio(
        compared: list[tuple[Sample, list[Finding], list[Finding]]]) -> None:
    span_mismatches, score_mismatches = [], []
    for sample, ref, ours in compared:
        theirs = _spans(resolve_conflicts(sample.text, ref), sample.text)
        mine = _spans(DEFAULT_REDACTOR.resolve(sample.text, ours), sample.text)
        if theirs != mine:
            span_mismatches.append(f"  Presidio only {sorted(theirs - mine)}, ours only {sorted(mine - theirs)}")
        theirs, mine = _spans(ref, sample.text, True), _spans(ours, sample.text, True)
        if theirs != mine:
            score_mismatches.append(f"  Presidio {sorted(theirs - mine)}, ours {sorted(mine - theirs)}")
    assert 1 - len(span_mismatches) / len(compared) >= AGREEMENT, _report("replaced spans", span_mismatches,
                                                                           len(compared))
    assert 1 - len(score_mismatches) / len(compared) >= AGREEMENT, _report("scores", score_mismatches,
                                                                            len(compared))


def test_every_planted_entity_is_found_and_redacted() -> None:
    missed = []
    for sample in corpus(CORPUS_SIZE):
        found = DEFAULT_REDACTOR.analyze(sample.text)
        redacted = DEFAULT_REDACTOR.redact(sample.text).text
        for p in sample.planted:
            if not any(f.entity_type == p.entity and f.start <= p.start and f.end >= p.end for f in found):
                missed.append(f"  not found: {p.entity} {p.value!r}")
            if p.value in redacted:
                missed.append(f"  survived: {p.entity} {p.value!r}")
    assert not missed, "\n".join(missed[:20])


def test_the_phone_port_matches_presidios_phone_recognizer() -> None:
    """Phone-like snippets (digit groups, '+', IDDs, brackets, extensions, dates, letters around) against
    PhoneRecognizer itself (phonenumbers' matcher over the 8 regions)."""
    pytest.importorskip("phonenumbers")
    from presidio_analyzer.predefined_recognizers import PhoneRecognizer

    recognizer = PhoneRecognizer()
    ours = Redactor(entities=["PHONE_NUMBER"], context=False)
    rng = random.Random(20261202)
    pieces = ["+", "+1 ", "+44 ", "+49 ", "+33 ", "+91 ", "+55 ", "+972 ", "+61 ", "+81 ", "+7 ", "+86 ", "+353 ",
              "+94 ", "00", "011 ", "0", "(", ")", "-", ".", " ", "/", " x", " ext. ", "#", ", ", "; ", "a",
              "Tel: ", "$", "%", "20", "2024-05-01", "12:30", "1-800-", "555", "7700", "\n", "\u2013", " - "]
    mismatches = []
    for _ in range(1500):
        text = "".join(rng.choice(string.digits) * rng.randint(1, 4) if rng.random() < 0.2 else
                       "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 5))) if rng.random() < 0.6
                       else rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        theirs = sorted((r.start, r.end) for r in recognizer.analyze(text, ["PHONE_NUMBER"]))
        mine = sorted((f.start, f.end) for f in ours.analyze(text))
        if theirs != mine:
            mismatches.append(f"  {text!r}: Presidio {theirs}, ours {mine}")
    assert not mismatches, "\n".join(mismatches[:10])


@pytest.mark.parametrize("text", [
    "Test record: SSN 078-05-1120, backup 123-45-6789.",  # published sample numbers
    "Ping jane@corp.example or ops@build.internal today.",  # reserved / internal TLDs
    "GET /users/jane@example.com/profile, then a/b/ops@example.org",  # an address after a path
])
def test_the_deliberate_differences_and_presidio_compatible_mode(reference: Any, text: str) -> None:
    theirs = {(r.entity_type, r.start, r.end) for r in reference(text)}
    strict = {(f.entity_type, f.start, f.end) for f in Redactor(presidio_compatible=True).analyze(text)}
    default = {(f.entity_type, f.start, f.end) for f in DEFAULT_REDACTOR.analyze(text)}
    assert strict == theirs
    assert default > theirs  # a superset: more is redacted, nothing less
    assert {e for e, _, _ in default - theirs} <= {"US_SSN", "EMAIL_ADDRESS"}


def test_an_address_after_a_path_is_redacted_from_after_the_last_slash() -> None:
    text = "GET /users/jane@example.com/profile"
    assert DEFAULT_REDACTOR.redact(text, entities=["EMAIL_ADDRESS"]).text == "GET /users/<EMAIL_ADDRESS>/profile"
    assert Redactor(presidio_compatible=True).redact(text, entities=["EMAIL_ADDRESS"]).text == text  # Presidio's
    assert DEFAULT_REDACTOR.redact("see a/b/c@d and x/@example.com", entities=["EMAIL_ADDRESS"]).text == (
        "see a/b/c@d and x/@example.com")  # no address after the slash: nothing


# --- each entity -------------------------------------------------------------------------------------------------
_IWK = "iwk_0f1e2d3c4b5a_Q2hvb3NlIGEgc2VjcmV0IGtleSB0aGF0IGlzIGxvbmc"  # auth.new_key's shape
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9OiJjRazXBZ1BjP5CE/Wm/Rr500P\n"
        "RK+Lh9x5eJPo5CAZ3/ANBE0sTK0ZsDGMak2m1g7T8bHE2X3F0D2/r1CpQCK1xWqkR\n-----END RSA PRIVATE KEY-----")
_JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")


@pytest.mark.parametrize(("text", "expected", "entity"), [
    ("mail jane.roe+tag@corp.example.co.uk now", "mail <EMAIL_ADDRESS> now", "EMAIL_ADDRESS"),
    ("call (415) 555-2671.", "call <PHONE_NUMBER>.", "PHONE_NUMBER"),
    ("call +1 415 555 2671 today", "call <PHONE_NUMBER> today", "PHONE_NUMBER"),
    ("call +44 20 7946 0958", "call <PHONE_NUMBER>", "PHONE_NUMBER"),
    ("ruf 030 12345678 an", "ruf <PHONE_NUMBER> an", "PHONE_NUMBER"),
    ("my ssn is 536-22-8763 ok", "my ssn is <US_SSN> ok", "US_SSN"),
    ("card 4111 1111 1111 1111 exp", "card <CREDIT_CARD> exp", "CREDIT_CARD"),
    ("amex 3782 822463 10005", "amex <CREDIT_CARD>", "CREDIT_CARD"),
    ("from 192.168.10.24 at", "from <IP_ADDRESS> at", "IP_ADDRESS"),
    ("host 2001:db8:85a3::8a2e:370:7334 up", "host <IP_ADDRESS> up", "IP_ADDRESS"),
    ("iban DE89 3704 0044 0532 0130 00 ok", "iban <IBAN_CODE> ok", "IBAN_CODE"),
    ("see https://docs.example.com/a?b=1 now", "see <URL> now", "URL"),
    ("btc 1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "btc <CRYPTO>", "CRYPTO"),
    ("btc bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "btc <CRYPTO>", "CRYPTO"),
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz012345", "key <OPENAI_API_KEY>", "OPENAI_API_KEY"),
    ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123-xyz", "key <ANTHROPIC_API_KEY>", "ANTHROPIC_API_KEY"),
    ("id AKIAIOSFODNN7EXAMPLE.", "id <AWS_ACCESS_KEY_ID>.", "AWS_ACCESS_KEY_ID"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws_secret_access_key = <AWS_SECRET_KEY>", "AWS_SECRET_KEY"),
    ("GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GH_TOKEN=<GITHUB_TOKEN>", "GITHUB_TOKEN"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijkl", "pat <GITHUB_TOKEN>", "GITHUB_TOKEN"),
    ("slack xoxb-1234567890-abcdefghij", "slack <SLACK_TOKEN>", "SLACK_TOKEN"),
    ("g AIzaSyA-1234567890abcdefghijklmnopqrstu", "g <GOOGLE_API_KEY>", "GOOGLE_API_KEY"),
    ("stripe sk_live_abcdefghijklmnop1234", "stripe <STRIPE_API_KEY>", "STRIPE_API_KEY"),
    ("hf hf_abcdefghijklmnopqrstuvwxyz01234567", "hf <HUGGINGFACE_TOKEN>", "HUGGINGFACE_TOKEN"),
    (f"t={_JWT} end", "t=<JWT> end", "JWT"),
    ("Authorization: Bearer abc.def-ghi_jkl~mno+pqr/stu=.", "Authorization: Bearer <BEARER_TOKEN>.",
     "BEARER_TOKEN"),
    ('{"password": "hunter22"}', '{"password": "<PASSWORD>"}', "PASSWORD"),
    ("DB_PASSWORD=s3cr3t!", "DB_PASSWORD=<PASSWORD>", "PASSWORD"),
    ("dsn postgres://user:pa55w0rd@host/db", "dsn postgres://user:<PASSWORD>@host/db", "PASSWORD"),
    (f"key {_IWK} ok", "key <INFERWATCH_API_KEY> ok", "INFERWATCH_API_KEY"),
    (f"{_PEM}\n", "<PRIVATE_KEY>\n", "PRIVATE_KEY"),
])  # fmt: skip
def test_each_entity_is_replaced_by_its_placeholder(text: str, expected: str, entity: str) -> None:
    result = DEFAULT_REDACTOR.redact(text)
    assert result.text == expected
    assert result.counts == {entity: 1}


@pytest.mark.parametrize("text", [
    "card 4111 1111 1111 1112 was declined",  # fails Luhn
    "ssn 000-12-3456 and 666-12-3456 are never issued",
    "scikit: sk-learn is a library",
    "a bearer of bad news",
    "akiaiosfodnn7example",  # AWS ids are upper case
    "ghp_short",
    "eyJ is how base64 JSON starts",
    "eyJub3QganNvbg.eyJub3QganNvbg.c2lnbmF0dXJlc2ln",  # JWT-shaped, but the header is not JSON with "alg"
    "the password is long enough",
    "the @mention and user@",
    "price $1,234.56 and 42 items, 17% off",
    "write to someone@localhost",  # no dot, no suffix
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",  # a bare 40-character value: no AWS secret key
    "AKIA is how an id starts: 3f786850e387550fdab836ed7e6dc881de23001b",  # hex, and no key id before it
    "c2VjcmV0IGJ1dCBqdXN0IGJhc2U2NCB0ZXh0IGhlcmU=",  # ordinary base64
    "secret_key = 3f786850e387550fdab836ed7e6dc881de23001bx",  # 41 characters
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "-----BEGIN RSA PRIVATE KEY----- is how such a file starts",  # a BEGIN line alone holds no key
    "http://localhost:8080/health, redis://cache:6379/0, ssh://git@host:22",  # ports, a user without password
    "pk-lf-0f1e2d3c4b5a",  # the public half of a Langfuse-style pair is the key id
    "iwk_ is the prefix of inferwatch keys; sk-lf- the Langfuse spelling",
])  # fmt: skip
def test_lookalikes_are_left_alone(text: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == RedactionResult(text, {})


def test_a_token_inside_a_url_goes_with_what_contains_it() -> None:
    # Presidio's e-mail pattern reads "ghp_…@github.com" as an address (it contains the token), and the URL
    # "github.com/x/y" overlaps it partly: two adjacent placeholders, the token gone
    result = DEFAULT_REDACTOR.redact("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y")
    assert result == RedactionResult("git clone https://<EMAIL_ADDRESS><URL>", {"EMAIL_ADDRESS": 1, "URL": 1})


def test_secrets_are_case_sensitive_and_keep_their_key() -> None:
    assert DEFAULT_REDACTOR.redact("AKIAIOSFODNN7EXAMPLE").counts == {"AWS_ACCESS_KEY_ID": 1}
    assert DEFAULT_REDACTOR.redact("akiaiosfodnn7example").counts == {}
    assert DEFAULT_REDACTOR.redact("SK-PROJ-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345").counts == {}
    assert DEFAULT_REDACTOR.redact("BEARER abcdefghijklmnop0123").text == "BEARER <BEARER_TOKEN>"
    assert DEFAULT_REDACTOR.redact("Password: 'hunter22'").text == "Password: '<PASSWORD>'"


def test_values_at_the_start_of_a_line_of_a_json_capture_are_found() -> None:
    """A captured prompt is JSON: a line break before a value is the two characters ``\\n``, and the value used to
    be glued to that ``n`` (no word boundary): cards, SSNs, IPs and keys went unredacted, an e-mail took the ``n``
    in and left invalid JSON. Every planted value of a corpus slice, after a line break, a tab or CRLF, inside a
    JSON capture: all found, the JSON still valid."""
    import json

    from tests.helpers.redaction_corpus import corpus

    missed: list[tuple[str, str]] = []
    for sample in corpus(60):
        for sep in ("\n", "\t", "\r\n"):
            chars = list(sample.text)
            for planted in sample.planted:
                if planted.start > 0 and chars[planted.start - 1] == " ":
                    chars[planted.start - 1] = sep
            captured = json.dumps([{"role": "user", "content": "".join(chars)}], ensure_ascii=False)
            redacted = DEFAULT_REDACTOR.redact(captured).text
            json.loads(redacted)
            missed += [(p.entity, sep) for p in sample.planted
                       if json.dumps(p.value, ensure_ascii=False)[1:-1] in redacted]
    assert missed == []
    assert rd_redactor.json_view("card:\\n4111") == "card:\\n4111"  # not JSON: read as it is
    assert rd_redactor.json_view('["a\\\\nb\\nc"]') == '["a\\\\nb\n c"]'  # an escaped backslash stays


def test_passwords_with_backslashes_are_redacted_whole() -> None:
    for text in ("password=C:\\Users\\bob\\secrets.txt", "password: p\\4ssw0rd!", "pwd=ab\\cdefgh",
                 "secret: \\\\server\\share\\key", "password=hunter2\\xyz"):
        redacted = DEFAULT_REDACTOR.redact(text).text
        assert redacted.endswith("<PASSWORD>") and "\\" not in redacted, (text, redacted)


def test_secrets_in_json_escaped_text_are_found_and_the_json_stays_valid() -> None:
    """Captured prompts are JSON messages: a JSON document the user pasted is escaped inside them
    (``\\"password\\": \\"...``), which once hid a password from its recognizer (found by the end-to-end PII
    property test)."""
    import json

    secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    for pasted, placeholder in (('{"password": "oP3RzdpDrPNc"}', "<PASSWORD>"),
                                ('{"db_password": "oP3RzdpDrPNc", "x": 1}', "<PASSWORD>"),
                                (f'{{"aws_secret_access_key": "{secret_key}"}}', "<AWS_SECRET_KEY>")):
        captured = json.dumps([{"role": "user", "content": f"my config: {pasted} why?"}])
        redacted = DEFAULT_REDACTOR.redact(captured).text
        assert "oP3RzdpDrPNc" not in redacted and secret_key not in redacted
        [message] = json.loads(redacted)  # still JSON: the escaped closing quote is kept
        assert placeholder in message["content"] and message["content"].endswith("} why?")


@pytest.mark.parametrize("text", [
    f"aws_secret_access_key={_AWS_SECRET}",
    f"AWS_SECRET_ACCESS_KEY: {_AWS_SECRET}",
    f"export AWS_SECRET_KEY=\"{_AWS_SECRET}\"",
    f'{{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "{_AWS_SECRET}", "Expiration": 1}}',
    f"awsSecretAccessKey: '{_AWS_SECRET}'",
    f"Secret access key: {_AWS_SECRET}",
    f'provider "aws" {{ secret_key = "{_AWS_SECRET}" }}',
    f"AKIAIOSFODNN7EXAMPLE,{_AWS_SECRET}",  # credentials.csv
    f"AKIAIOSFODNN7EXAMPLE {_AWS_SECRET}",
    f"AKIAIOSFODNN7EXAMPLE:{_AWS_SECRET}",
])  # fmt: skip
def test_aws_secret_keys_are_found_by_key_name_or_next_to_their_key_id(text: str) -> None:
    """A bare 40-character value is ambiguous (a git SHA-1, base64): it is an AWS secret key after a key name or
    right after an access key id (look-alikes without either are in ``test_lookalikes_are_left_alone``)."""
    result = DEFAULT_REDACTOR.redact(text)
    assert _AWS_SECRET not in result.text and "<AWS_SECRET_KEY>" in result.text
    assert result.counts["AWS_SECRET_KEY"] == 1
    assert DEFAULT_REDACTOR.redact(result.text).counts == {}


def test_a_hex_value_next_to_a_key_id_is_no_secret_key() -> None:
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    assert DEFAULT_REDACTOR.redact(f"AKIAIOSFODNN7EXAMPLE {sha}").text == f"<AWS_ACCESS_KEY_ID> {sha}"
    assert DEFAULT_REDACTOR.redact(f"AKIAIOSFODNN7EXAMPLE {sha.upper()}").text == f"<AWS_ACCESS_KEY_ID> {sha.upper()}"


@pytest.mark.parametrize("label", ["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "DSA ", "", "PGP "])
def test_private_key_blocks_are_redacted_whole(label: str) -> None:
    import json

    block = _PEM.replace("RSA ", label)
    if label == "PGP ":
        block = block.replace("PRIVATE KEY-----", "PRIVATE KEY BLOCK-----")
    for text, expected in (
            (f"my key:\n{block}\nwhy?", "my key:\n<PRIVATE_KEY>\nwhy?"),
            (block.replace("\n", "\r\n"), "<PRIVATE_KEY>"),
            ("PRIVATE_KEY=\"" + block.replace("\n", "\\n") + "\"", "PRIVATE_KEY=\"<PRIVATE_KEY>\""),  # escaped
            (block.rsplit("\n", 1)[0] + "\nwhat is wrong with it?",  # cut off: no END line
             "<PRIVATE_KEY>\nwhat is wrong with it?")):
        result = DEFAULT_REDACTOR.redact(text)
        assert result == RedactionResult(expected, {"PRIVATE_KEY": 1}), text
    # inside a captured JSON message, and in a JSON document (escaped newlines): still valid JSON
    captured = json.dumps([{"role": "user", "content": f"debug this:\n{block}\nthanks"}])
    assert json.loads(DEFAULT_REDACTOR.redact(captured).text)[0]["content"] == "debug this:\n<PRIVATE_KEY>\nthanks"
    document = json.dumps({"type": "service_account", "private_key": block + "\n", "n": 1})
    assert json.loads(DEFAULT_REDACTOR.redact(document).text)["private_key"] == "<PRIVATE_KEY>\n"


def test_a_cut_off_private_key_keeps_what_follows_its_base64_lines() -> None:
    text = ("-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n"
            "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI\nthe rest is missing")
    assert DEFAULT_REDACTOR.redact(text).text == "<PRIVATE_KEY>\nthe rest is missing"


@pytest.mark.parametrize(("text", "expected"), [
    ("postgres://user:pa55w0rd@host/db", "postgres://user:<PASSWORD>@host/db"),
    ("connection_string=postgresql://admin:S3cr3tPass@db:5432/app",
     "connection_string=postgresql://admin:<PASSWORD>@db:5432/app"),
    ("mysql://root:p@ss@10.0.0.5:3306/db", "mysql://root:<PASSWORD>@<IP_ADDRESS>:3306/db"),  # a raw '@' in it
    ("redis://:s3cret@cache:6379/0", "redis://:<PASSWORD>@cache:6379/0"),
    ("amqp://guest:guest@rabbit:5672/", "amqp://guest:<PASSWORD>@rabbit:5672/"),
    ("mongodb+srv://app:Zx9!k2@cluster0.abcd.mongodb.net/prod?retryWrites=true",
     "mongodb+srv://app:<PASSWORD>@<URL>"),
    ("git clone https://user:tok3n-abc@github.com/org/repo.git", "git clone https://user:<PASSWORD>@<URL>"),
    ('{"dsn": "postgres://app:pa55w0rd@db/app"}', '{"dsn": "postgres://app:<PASSWORD>@db/app"}'),
])  # fmt: skip
def test_passwords_in_uris_are_redacted_and_the_uri_stays_readable(text: str, expected: str) -> None:
    """The password goes, the scheme, user name and the rest stay (the host as any host does: a URL, an IP), and
    redacting again changes nothing."""
    result = DEFAULT_REDACTOR.redact(text)
    assert result.text == expected
    assert result.counts["PASSWORD"] == 1
    assert DEFAULT_REDACTOR.redact(result.text) == RedactionResult(result.text, {})


def test_a_uri_password_before_a_host_is_no_email_unless_presidio_compatible(reference: Any) -> None:
    """Presidio reads ``password@host.tld`` as an e-mail address, which swallows the password and half the host;
    a deliberate difference drops that address (``presidio_compatible`` keeps it, as Presidio does)."""
    text = "postgresql://admin:S3cr3tPass@db.example.com/app"
    theirs = {(r.entity_type, r.start, r.end) for r in reference(text)}
    strict = {(f.entity_type, f.start, f.end) for f in Redactor(presidio_compatible=True).analyze(text)}
    default = {(f.entity_type, f.start, f.end) for f in DEFAULT_REDACTOR.analyze(text)}
    assert strict == theirs and {e for e, _, _ in theirs - default} == {"EMAIL_ADDRESS"}
    assert DEFAULT_REDACTOR.redact(text).text == "postgresql://admin:<PASSWORD>@<URL>"
    assert "S3cr3tPass" not in Redactor(presidio_compatible=True).redact(text).text
    # a user name alone (no password) keeps Presidio's reading: the address goes, whatever it is
    assert DEFAULT_REDACTOR.redact("ssh://git@github.com/x").counts["EMAIL_ADDRESS"] == 1


def test_inferwatch_keys_and_their_langfuse_spelling_are_redacted() -> None:
    secret = _IWK.split("_", 2)[2]
    assert DEFAULT_REDACTOR.redact(f"INFERWATCH_API_KEY={_IWK}").text == "INFERWATCH_API_KEY=<INFERWATCH_API_KEY>"
    result = DEFAULT_REDACTOR.redact(f"LANGFUSE_PUBLIC_KEY=pk-lf-0f1e2d3c4b5a LANGFUSE_SECRET_KEY=sk-lf-{secret}")
    assert result == RedactionResult("LANGFUSE_PUBLIC_KEY=pk-lf-0f1e2d3c4b5a LANGFUSE_SECRET_KEY=<INFERWATCH_API_KEY>",
                                     {"INFERWATCH_API_KEY": 1})  # not an OpenAI key
    assert [f.entity_type for f in DEFAULT_REDACTOR.analyze(f"sk-lf-{secret}")] == ["INFERWATCH_API_KEY"]


def test_validators() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("378282246310005") and not luhn_valid("4111111111111112")
    assert ssn_valid("536-22-8763") and ssn_valid("536 22 8763")
    assert not any(ssn_valid(s) for s in ("000-12-3456", "666-12-3456", "123-00-4567", "123-45-0000",
                                          "111-11-1111", "536-22.8763"))
    assert not ssn_valid("078-05-1120") and ssn_valid("078-05-1120", allow_samples=True)
    assert rd.iban_valid("DE89370400440532013000") and rd.iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not rd.iban_valid("DE89370400440532013001")
    assert rd.crypto_valid("1BoatSLRHtKNngkdXEeobR76b53LETtpyT") and rd.crypto_valid(
        "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy") and rd.crypto_valid("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")
    assert not rd.crypto_valid("1BoatSLRHtKNngkdXEeobR76b53LETtpyU")
    assert rd.email_domain_valid("a@example.com") and rd.email_domain_valid("a@x.co.uk")
    assert not rd.email_domain_valid("a@corp.example") and rd.email_domain_valid("a@corp.example", reserved=True)
    assert not rd.email_domain_valid("a/b@example.com")  # tldextract reads "a" as the host
    assert not rd.email_domain_valid("a@foo.ck") and rd.email_domain_valid("a@www.ck")  # '*.ck' and '!www.ck'
    assert rd.jwt_header_valid(_JWT) and not rd.jwt_header_valid("eyJub3QganNvbg.x.y")
    assert rd.ip_valid("10.0.0.1/24") and not rd.ip_valid("01.02.03.04")


# --- resolution, placeholders, counts ----------------------------------------------------------------------------
def test_conflicts_are_resolved_like_presidios_anonymizer() -> None:
    text = "0123456789abcdefghij"
    f = Finding
    # contained: dropped whatever its score; equal span: the lower score goes
    assert resolve_conflicts(text, [f("URL", 0, 10, 0.5), f("EMAIL_ADDRESS", 2, 5, 1.0)]) == [f("URL", 0, 10, 0.5)]
    assert resolve_conflicts(text, [f("US_SSN", 0, 9, 0.5), f("PHONE_NUMBER", 0, 9, 0.75)]) == [
        f("PHONE_NUMBER", 0, 9, 0.75)]
    # same type overlapping: merged, highest score
    assert resolve_conflicts(text, [f("URL", 0, 6, 0.5), f("URL", 4, 10, 0.6)]) == [f("URL", 0, 10, 0.6)]
    # different types partly overlapping: both stay, and become adjacent placeholders
    both = [f("IBAN_CODE", 0, 8, 1.0), f("PHONE_NUMBER", 5, 12, 0.4)]
    assert resolve_conflicts(text, both) == both
    # same type separated by spaces only: merged into one
    spaced = "a@b.com  c@d.org"
    assert DEFAULT_REDACTOR.redact(spaced) == RedactionResult("<EMAIL_ADDRESS>", {"EMAIL_ADDRESS": 1})


def test_partly_overlapping_findings_become_adjacent_placeholders() -> None:
    # an IBAN whose tail also reads as a phone number, for example, would become "<IBAN_CODE><PHONE_NUMBER>"
    results = [rd_findings._R("IBAN_CODE", 0, 8, 1.0, ""), rd_findings._R("PHONE_NUMBER", 5, 12, 0.4, "")]
    counts: dict[str, int] = {}
    assert rd_conflicts._replace("ABCDEFGHIJKLxyz", rd_conflicts._resolve("ABCDEFGHIJKLxyz", results), counts) == (
        "<IBAN_CODE><PHONE_NUMBER>xyz")
    assert counts == {"IBAN_CODE": 1, "PHONE_NUMBER": 1}


def test_several_entities_counts_and_idempotence() -> None:
    text = ("Hi, I'm reachable at jane@example.com or (415) 555-2671; my SSN is 536-22-8763. "
            "Use key sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123 and Authorization: Bearer abcdefghijklmnop0123. "
            "Again: jane@example.com")
    result = DEFAULT_REDACTOR.redact(text)
    assert result.text == (
        "Hi, I'm reachable at <EMAIL_ADDRESS> or <PHONE_NUMBER>; my SSN is <US_SSN>. "
        "Use key <ANTHROPIC_API_KEY> and Authorization: Bearer <BEARER_TOKEN>. Again: <EMAIL_ADDRESS>")
    assert result.counts == {"EMAIL_ADDRESS": 2, "PHONE_NUMBER": 1, "US_SSN": 1, "ANTHROPIC_API_KEY": 1,
                             "BEARER_TOKEN": 1}
    assert DEFAULT_REDACTOR.redact(result.text) == RedactionResult(result.text, {})


def test_interface_policy_options_and_defaults() -> None:
    assert isinstance(DEFAULT_REDACTOR, SupportsRedact) and DEFAULT_REDACTOR.policy == POLICY
    assert rd.redact("x@y.io").text == "<EMAIL_ADDRESS>"
    assert DEFAULT_REDACTOR.redact("") == RedactionResult("", {})
    assert set(PLACEHOLDERS) >= set(ENTITIES) and all(PLACEHOLDERS[e] == f"<{e}>" for e in ENTITIES)
    assert SECRET_ENTITIES < set(ENTITIES) and Redactor.SECRET_ENTITIES is SECRET_ENTITIES
    assert Redactor(score_threshold=0.4).policy == POLICY + ";threshold=0.4"
    assert Redactor(entities=["US_SSN"], context=False).policy == POLICY + ";entities=US_SSN;no-context"
    assert Redactor(presidio_compatible=True).policy == POLICY + ";presidio-compatible"
    with pytest.raises(ValueError, match="unknown entities"):
        Redactor(entities=["PERSONA"])
    with pytest.raises(ValueError, match="phone regions"):
        Redactor(phone_regions=["XX"])


def test_entities_narrow_a_call_secrets_only() -> None:
    """What the SDK does for content captured in 'full' mode: secrets go, PII stays."""
    text = "mail jane@example.com with key sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    assert DEFAULT_REDACTOR.redact(text, entities=SECRET_ENTITIES).text == (
        "mail jane@example.com with key <OPENAI_API_KEY>")
    assert [f.entity_type for f in DEFAULT_REDACTOR.analyze(text, entities=["EMAIL_ADDRESS"])] == ["EMAIL_ADDRESS"]


def test_score_threshold_and_context_words() -> None:
    bare = "order 482913375 shipped"  # nine digits: Presidio's "SSN4 (very weak)" pattern, 0.05
    assert DEFAULT_REDACTOR.redact(bare).text == "order <US_SSN> shipped"
    assert Redactor(score_threshold=0.4).redact(bare).text == bare
    (with_context,) = DEFAULT_REDACTOR.analyze("my ssn: 536-22-8763")
    (without,) = Redactor(context=False).analyze("my ssn: 536-22-8763")
    assert (with_context.score, without.score) == (0.85, 0.5)


def _naive(text: str, strict: bool) -> dict[str, list[tuple[int, int, float]]]:
    """Presidio's PatternRecognizer loop, literally: every pattern's ``finditer`` over the whole text, then the
    validator. What each recognizer finds with its prefilters (masks, gates, anchored matching) must equal it.
    ``strict``: Presidio's URL and e-mail findings; else those without scheme that are dotted indexes are dropped,
    and an e-mail address after a path is checked from after its last '/'."""
    import re as _re

    def spans(entity: str, found: Any) -> None:
        out.setdefault(entity, []).extend(found)

    out: dict[str, list[tuple[int, int, float]]] = {}
    for m in rd_recognizers._EMAIL.finditer(text):
        if rd.email_domain_valid(m.group(), reserved=not strict):
            spans("EMAIL_ADDRESS", [(m.start(), m.end(), 1.0)])
        elif not strict and "/" in m.group().partition("@")[0]:  # the address after a path (not Presidio's)
            after = rd_recognizers._EMAIL.match(text, m.start() + m.group().rfind("/", 0, m.group().index("@")) + 1)
            if after is not None and rd.email_domain_valid(after.group(), reserved=True):
                spans("EMAIL_ADDRESS", [(after.start(), after.end(), 1.0)])
    spans("URL", [(m.start(), m.end(), score) for i, (_, rx, score) in enumerate(rd_recognizers._url_compiled())
                  for m in rx.finditer(text) if strict or i in (0, 2) or not rd_recognizers._dotted_index(m.group(1))])
    spans("CRYPTO", [(m.start(), m.end(), 1.0) for m in rd_recognizers._CRYPTO.finditer(text)
                     if rd.crypto_valid(m.group())])
    spans("IP_ADDRESS", [(m.start(), m.end(), score) for _, rx, score in rd_recognizers._IPS
                         for m in rx.finditer(text) if rd.ip_valid(m.group())])
    spans("US_SSN", [(m.start(), m.end(), score) for rx, score in rd_recognizers._SSN for m in rx.finditer(text)
                     if ssn_valid(m.group(), allow_samples=not strict)])
    spans("CREDIT_CARD", [(m.start(), m.end(), 1.0) for m in rd_recognizers._CARD.finditer(text)
                          if luhn_valid(m.group().replace("-", "").replace(" ", ""))])
    for spec in rd.SECRET_RECOGNIZERS:
        for p in spec.patterns:
            rx = _re.compile(f"(?:{p.prefix})(?P<v>{p.value})", _re.DOTALL | _re.MULTILINE)
            for m in rx.finditer(text):
                if spec.validator is None:
                    spans(spec.entity, [(*m.span("v"), p.score)])
                elif spec.validator(m.group("v")):
                    spans(spec.entity, [(*m.span("v"), 1.0)])
    return {entity: sorted(found) for entity, found in out.items() if found}


_PIECES = [
    "1", "23", "456", "7890", " ", "  ", "-", ".", "/", ":", "::", "@", "_", "'", '"', "\n", "a", "x", "Z", "DE",
    "GB82 WEST ", "ffff:", "fe80", "%eth0", "/64", "10.0.0.1", "256.1.1.1", "a@b.com", "x@corp.internal", "www.",
    "example", ".com", ".co.uk", ".0.", ".12.me", "name", "e.g.", "http://", "https://", "docs.acme.io/p?q=1", "sk-", "sk-ant-", "api03-",
    "proj-", "abcdefghijklmnopqrstuvwxyz", "AKIA", "IOSFODNN7EXAMPLEAB", "ghp_", "github_pat_", "xoxb-", "AIza",
    "sk_live_", "rk_test_", "hf_", "eyJ", "eyJhbGciOiJIUzI1NiJ9", "Bearer ", "bearer\t", "password=", "PASSWORD: ",
    "pwd:", "secret=", "aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/bP", "4111 1111 1111 1111",
    "5500-0000-0000-0004", "378282246310005", "536-22-8763", "536 22 8763", "53622-8763",
    "DE89 3704 0044 0532 0130 00", "1BoatSLRHtKNngkdXEeobR76b53LETtpyT",
    "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "<US_SSN>", "é", "\u0661\u0662", "\u017f", "\u212a", "\xa0", "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
    "1:2:3:4:5:6:1.2.3.4", "::ffff:10.0.0.1", "a:b:c",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END PRIVATE KEY-----", "-----BEGIN PRIVATE KEY BLOCK-----",
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQ", "\\n", "Proc-Type: 4,ENCRYPTED", "iwk_0f1e2d3c4b5a_", "sk-lf-", "pk-lf-",
    "postgres://", "redis://:", "u:", "p@ss", "@db", "SecretAccessKey\": \"", "Secret access key: ", "AWS_SECRET_KEY=",
    "AKIAIOSFODNN7EXAMPLE,", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "3f786850e387550fdab836ed7e6dc881de23001b",
]  # fmt: skip


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_prefiltered_recognizers_find_what_their_patterns_find(seed: int, strict: bool) -> None:
    """The speed-ups only skip places where a pattern cannot match: random texts from pieces that trip every
    prefilter (digits, separators, colons, quotes, literals, non-ASCII characters) give the same results."""
    rng = random.Random(seed)
    redactor = Redactor(context=False, presidio_compatible=strict)
    entities = ("EMAIL_ADDRESS", "URL", "CRYPTO", "IP_ADDRESS", "US_SSN", "CREDIT_CARD", *SECRET_ENTITIES)
    mismatches = []
    for _ in range(400):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 30)))
        ours = {}
        for entity in entities:  # each recognizer as the redactor runs it (gates included), raw results
            found = [(r.start, r.end, r.score) for rs in redactor._raw(text, frozenset({entity})) for r in rs]
            if found:
                ours[entity] = sorted(found)
        if ours != _naive(text, strict):
            mismatches.append(f"  {text!r}: ours {ours}, patterns {_naive(text, strict)}")
    assert not mismatches, "\n".join(mismatches[:5])


def test_ibans_are_found_where_the_pattern_finds_them() -> None:
    """Presidio's IBAN loop over ``finditer`` of the whole text, against ours (tried only at two capitals before
    a digit)."""
    rng = random.Random(7)
    pieces = ["DE89 3704 0044 0532 0130 00", "GB82 WEST 1234 5698 7654 32", "DE", "GB", "NL", "89", "3704", " ",
              "-", "A", "ab", "0", "12", "IBAN ", "X9"]
    for _ in range(600):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        expected = []
        for m in rd_recognizers._IBAN.finditer(text):
            for group in (3, 2, 1):
                end = m.span(group)[1] if m.span(group)[1] > 0 else m.end()
                valid = rd.iban_valid(text[m.start():end]) if end > m.start() else False
                score = 0.5 if valid is None else (1.0 if valid else 0.0)
                if score > 0:
                    expected.append((m.start(), end, score))
                    break
        assert [(r.start, r.end, r.score) for r in rd_recognizers._ibans(rd_scan._Scan(text))] == expected, text


def test_a_long_s_counts_as_an_s_in_case_insensitive_secrets() -> None:
    # re.IGNORECASE (and Presidio's regex module) read U+017F as 's': "paſſword=" is a password key
    assert DEFAULT_REDACTOR.redact("pa\u017f\u017fword=hunter22").text == "pa\u017f\u017fword=<PASSWORD>"


def test_long_texts_without_matches_stay_linear() -> None:
    # runs that naive patterns scan quadratically (Presidio's URL pattern included: this would hang, not be slow)
    for blob in ("a" * 200_000, "1" * 200_000, "a.b-c" * 40_000, "@" * 100_000, "+1" * 50_000,
                 "x" * 300 + ".q" * 50_000):
        assert DEFAULT_REDACTOR.redact(blob).counts == {}


def test_the_module_imports_with_the_standard_library_only() -> None:
    code = ("import sys, inferwatch.redaction as r; r.DEFAULT_REDACTOR.redact('a@b.io +44 20 7946 0958'); "
            "bad = {'presidio_analyzer', 'spacy', 'phonenumbers', 'tldextract', 'regex'} & "
            "{m.split('.')[0] for m in sys.modules}; print(sorted(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# --- optional NER ------------------------------------------------------------------------------------------------
def test_ner_says_clearly_when_it_is_unavailable(caplog: pytest.LogCaptureFixture) -> None:
    redactor = PresidioRedactor("no_such_spacy_model_xyz")
    assert redactor.available is False and "not installed" in redactor.reason
    assert "NER disabled" in caplog.text
    assert redactor.policy == POLICY  # nothing claimed that did not happen
    assert redactor.redact("Jane Roe: jane@example.com").text == "Jane Roe: <EMAIL_ADDRESS>"


def test_ner_adds_person_and_location_when_a_model_is_there(tmp_path: Path) -> None:
    spacy = pytest.importorskip("spacy")
    pytest.importorskip("presidio_analyzer")
    nlp = spacy.blank("en")  # no model can be downloaded here: a rule-based "NER" stands in for one
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "PERSON", "pattern": "Jane Roe"},
                                               {"label": "GPE", "pattern": "Berlin"}])
    nlp.to_disk(tmp_path / "tiny_ner")
    redactor = PresidioRedactor(str(tmp_path / "tiny_ner"))
    assert redactor.available, redactor.reason
    assert redactor.policy == POLICY + "+ner:tiny_ner"
    assert redactor.redact("Jane Roe from Berlin: jane@example.com") == RedactionResult(
        "<PERSON> from <LOCATION>: <EMAIL_ADDRESS>", {"EMAIL_ADDRESS": 1, "LOCATION": 1, "PERSON": 1})
    assert redactor.redact("Jane Roe", entities=SECRET_ENTITIES).text == "Jane Roe"


def test_ner_without_an_entity_recognizer_is_unavailable(tmp_path: Path) -> None:
    spacy = pytest.importorskip("spacy")
    pytest.importorskip("presidio_analyzer")
    spacy.blank("en").to_disk(tmp_path / "blank")
    redactor = PresidioRedactor(str(tmp_path / "blank"))
    assert not redactor.available and "no entity recognizer" in redactor.reason


# --- properties --------------------------------------------------------------------------------------------------
_LOCAL_CHARS = string.ascii_lowercase + string.digits + "._+-"
_emails = st.builds(
    lambda first, rest, labels, tld: f"{first}{rest.rstrip('.')}@{'.'.join(labels)}.{tld}",
    st.sampled_from(string.ascii_letters + string.digits),
    st.text(_LOCAL_CHARS, max_size=20).filter(lambda s: ".." not in s),
    st.lists(st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=12), min_size=1, max_size=3),
    st.sampled_from(["com", "org", "net", "io", "de", "co.uk", "fr", "ai", "dev", "example", "internal"]),
)
_ssns = st.builds(
    lambda area, group, serial, sep: f"{area:03d}{sep}{group:02d}{sep}{serial:04d}",
    st.integers(1, 999).filter(lambda a: a != 666), st.integers(1, 99), st.integers(1, 9999),
    st.sampled_from("- ."),
).filter(lambda s: len(set(s.replace("-", "").replace(" ", "").replace(".", ""))) > 1)


def _card(prefix: str, digits: str, sep: str) -> str:
    number = luhn_complete((prefix + digits)[:15])
    return sep.join(number[i:i + 4] for i in range(0, 16, 4)) if sep else number


_cards = st.builds(_card, st.sampled_from(["4", "51", "52", "53", "54", "55", "6011"]),
                   st.text(string.digits, min_size=14, max_size=14), st.sampled_from(["", " ", "-"]))
_key_chars = string.ascii_letters + string.digits
_keys = st.one_of(
    st.text(_key_chars, min_size=24, max_size=48).map(lambda s: "sk-proj-" + s),
    st.text(_key_chars, min_size=24, max_size=48).map(lambda s: "sk-" + s),
    st.text(_key_chars + "_-", min_size=24, max_size=48).map(lambda s: "sk-ant-api03-" + s),
    st.text(string.ascii_uppercase + "234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(_key_chars, min_size=36, max_size=40).map(lambda s: "ghp_" + s),
    st.text(_key_chars, min_size=24, max_size=30).map(lambda s: "sk_live_" + s),
    st.binary(min_size=20, max_size=20).map(btc_p2pkh),
    st.binary(min_size=20, max_size=20).map(btc_bech32),
    st.text(string.digits, min_size=18, max_size=18).map(lambda s: iban("DE", s)),
    st.text(_key_chars + "_-", min_size=43, max_size=43).map(lambda s: "iwk_0f1e2d3c4b5a_" + s),
    st.text(_key_chars + "_-", min_size=43, max_size=43).map(lambda s: "sk-lf-" + s),
    st.text(_key_chars + "/+", min_size=38, max_size=38).map(lambda s: "AWS_SECRET_KEY=Ab" + s),
    st.lists(st.text(_key_chars + "/+", min_size=64, max_size=64), min_size=1, max_size=3).map(
        lambda lines: "\n".join(["-----BEGIN PRIVATE KEY-----", *lines, "-----END PRIVATE KEY-----"])),
    st.text(_key_chars + "!*~", min_size=6, max_size=20).map(lambda s: f"postgres://app:{s}@db/app"),
)
_filler = st.text(string.ascii_letters + " ,;:!?()\n", max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=_filler, secret=st.one_of(_emails, _ssns, _cards, _keys), after=_filler)
def test_generated_pii_and_keys_never_survive(before: str, secret: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    result = DEFAULT_REDACTOR.redact(text)
    assert secret not in result.text
    assert sum(result.counts.values()) >= 1


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(_emails, _ssns, _cards, _keys, st.text(string.printable, max_size=30)),
             max_size=8).map(" ".join),
))
def test_redaction_is_idempotent(text: str) -> None:
    once = DEFAULT_REDACTOR.redact(text).text
    assert DEFAULT_REDACTOR.redact(once) == RedactionResult(once, {})


# --- the embedded data -------------------------------------------------------------------------------------------
def test_embedded_data_matches_the_reference_libraries() -> None:
    """The patterns, scores and tables copied from presidio-analyzer, phonenumbers, tldextract and spaCy are the
    installed ones (else: regenerate the data block, and re-run the comparison)."""
    pytest.importorskip("presidio_analyzer")
    from phonenumbers import phonenumbermatcher as pnm
    from phonenumbers import phonenumberutil as pnu
    from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        CryptoRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        IpRecognizer,
        PhoneRecognizer,
        UrlRecognizer,
        UsSsnRecognizer,
    )
    from presidio_analyzer.predefined_recognizers.generic import iban_patterns

    def patterns(cls: Any) -> list[tuple[str, str, float]]:
        return [(p.name, p.regex, p.score) for p in cls.PATTERNS]

    assert patterns(EmailRecognizer) == [("Email (Medium)", rd_rules._EMAIL_RX, 0.5)]
    assert patterns(CreditCardRecognizer) == [("All Credit Cards (weak)", rd_rules._CREDIT_CARD_RX, 0.3)]
    assert patterns(UsSsnRecognizer) == list(rd_rules._SSN_PATTERNS)
    assert patterns(IpRecognizer) == list(rd_rules._IP_PATTERNS)
    assert patterns(IbanRecognizer) == [("IBAN Generic", rd_rules._IBAN_RX, 0.5)]
    assert patterns(CryptoRecognizer) == [("Crypto (Medium)", rd_rules._CRYPTO_RX, 0.5)]
    assert patterns(UrlRecognizer) == list(rd_rules._url_patterns())
    assert iban_patterns.regex_per_country == rd_validators._iban_country_regex()
    for cls, entity in ((EmailRecognizer, "EMAIL_ADDRESS"), (CreditCardRecognizer, "CREDIT_CARD"),
                        (UsSsnRecognizer, "US_SSN"), (IpRecognizer, "IP_ADDRESS"), (IbanRecognizer, "IBAN_CODE"),
                        (CryptoRecognizer, "CRYPTO"), (UrlRecognizer, "URL"), (PhoneRecognizer, "PHONE_NUMBER")):
        assert tuple(cls.CONTEXT) == rd_context._CONTEXT[entity], entity
    assert PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS == rd.DEFAULT_PHONE_REGIONS and PhoneRecognizer.SCORE == 0.4
    enhancer = LemmaContextAwareEnhancer()
    assert (enhancer.context_similarity_factor, enhancer.min_score_with_context_similarity,
            enhancer.context_prefix_count, enhancer.context_suffix_count) == (
        rd_context._CONTEXT_FACTOR, rd_context._CONTEXT_MIN_SCORE, rd_context._CONTEXT_PREFIX_COUNT, 0)

    assert (pnm._PATTERN.pattern, pnm._PATTERN.flags) == (ph._PH_PATTERN.pattern, ph._PH_PATTERN.flags)
    for ours, theirs in ((ph._PH_MATCHING_BRACKETS, pnm._MATCHING_BRACKETS), (ph._PH_PUB_PAGES, pnm._PUB_PAGES),
                         (ph._PH_SLASH_SEPARATED_DATES, pnm._SLASH_SEPARATED_DATES),
                         (ph._PH_TIME_STAMPS, pnm._TIME_STAMPS),
                         (ph._PH_TIME_STAMPS_SUFFIX, pnm._TIME_STAMPS_SUFFIX),
                         (ph._PH_LEAD_PATTERN, pnm._LEAD_PATTERN),
                         (ph._PH_VALID_PHONE_NUMBER, pnu._VALID_PHONE_NUMBER_PATTERN),
                         (ph._PH_EXTN, pnu._EXTN_PATTERN),
                         (ph._PH_UNWANTED_END_CHARS, pnu._UNWANTED_END_CHAR_PATTERN),
                         (ph._PH_SECOND_NUMBER_START, pnu._SECOND_NUMBER_START_PATTERN),
                         (ph._PH_VALID_START_CHAR, pnu._VALID_START_CHAR_PATTERN),
                         (ph._PH_PLUS_CHARS_PATTERN, pnu._PLUS_CHARS_PATTERN),
                         (ph._PH_VALID_ALPHA_PHONE, pnu._VALID_ALPHA_PHONE_PATTERN)):
        assert ours.pattern == theirs.pattern, theirs.pattern
    assert [p.pattern for p in ph._PH_INNER_MATCHES] == [p.pattern for p in pnm._INNER_MATCHES]

    assert rd_data._URL_TLDS == _url_tlds()
    assert rd_data._IBAN_FORMATS == _iban_formats()
    assert (rd_data._PSL_TLDS, rd_data._PSL_WILDCARD_TLDS) == _icann_tlds()
    assert rd_data._STOP_WORDS == _stop_words()
    cc_regions, meta = _phone_data()
    assert rd_data._PHONE_CC_REGIONS == cc_regions
    assert rd_data._PHONE_META == meta
    assert phone_plans._PHONE_MIN_DIGITS == 4  # the shortcut in the matcher: fewer digits are never a number


# --- generators of the data block (see the module docstring) -----------------------------------------------------
def _url_tlds() -> tuple[str, ...]:
    from presidio_analyzer.predefined_recognizers import UrlRecognizer

    base = UrlRecognizer.BASE_URL_REGEX
    head, tail = r"((www\d{0,3}[.])?[a-z0-9.\-]{1,253}[.](?:", r")(?:/[^\s()<>\"']*)?)"
    assert base.startswith(head) and base.endswith(tail)
    middle = base[len(head):-len(tail)]
    tlds = tuple(re.findall(r"\(\?:([a-z]+)\)", middle))
    assert "|".join(f"(?:{t})" for t in tlds) == middle
    return tlds


_IBAN_BLOCKS = ("A2", "A3", "A4", "C2", "C3", "C4", "N2", "N3", "N4", "A", "C", "N")


def _iban_formats() -> dict[str, str]:
    from presidio_analyzer.predefined_recognizers.generic import iban_patterns as ip

    blocks = {name: getattr(ip, name) for name in _IBAN_BLOCKS}
    out = {}
    for country, rx in ip.regex_per_country.items():
        assert rx.startswith(f"({country})" + ip.CK)
        rest, tokens = rx[len(f"({country})") + len(ip.CK):], []
        while rest:
            if rest.startswith("[0]"):
                tokens.append("0")
                rest = rest[3:]
                continue
            name = next(n for n in _IBAN_BLOCKS if rest.startswith(blocks[n]))  # longest first
            tokens.append(name)
            rest = rest[len(blocks[name]):]
        out[country] = " ".join(tokens)
    return out


def _icann_tlds() -> tuple[frozenset[str], frozenset[str]]:
    import tldextract.suffix_list as suffix_list

    text = (pkgutil.get_data("tldextract", ".tld_set_snapshot") or b"").decode("utf-8")
    public, _private = suffix_list.extract_tlds_from_suffix_list(text)
    return (frozenset(s for s in public if "." not in s),
            frozenset(s[2:] for s in public if s.startswith("*.") and s.count(".") == 1))


def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


_TYPES = ("premium_rate", "toll_free", "shared_cost", "voip", "personal_number", "pager", "uan", "voicemail",
          "fixed_line", "mobile")


def _desc(d: Any) -> tuple[str, tuple[int, ...], tuple[int, ...]] | None:
    if d is None or not d.national_number_pattern:
        return None
    return (d.national_number_pattern, tuple(d.possible_length), tuple(d.possible_length_local_only))


def _phone_data() -> tuple[dict[int, tuple[str, ...]], dict[str, tuple[Any, ...]]]:
    from phonenumbers import PhoneMetadata
    from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE

    default_ccs = {PhoneMetadata.metadata_for_region(r).country_code for r in rd.DEFAULT_PHONE_REGIONS}
    cc_regions = {cc: tuple(regions) for cc, regions in sorted(COUNTRY_CODE_TO_REGION_CODE.items())}
    meta = {}
    for cc, regions in cc_regions.items():
        for region in regions:
            m = (PhoneMetadata.metadata_for_nongeo_region(cc) if region == "001"
                 else PhoneMetadata.metadata_for_region(region))
            if m is None:
                continue
            formats = None
            if cc in default_ccs and regions[0] == region:
                formats = tuple((f.pattern, f.leading_digits_pattern[-1] if f.leading_digits_pattern else None,
                                 f.national_prefix_formatting_rule,
                                 bool(f.national_prefix_optional_when_formatting))
                                for f in m.number_format)
            meta[region if region != "001" else f"001/{cc}"] = (
                m.country_code, m.international_prefix, m.national_prefix_for_parsing,
                m.national_prefix_transform_rule,
                _desc(m.general_desc), tuple(_desc(getattr(m, t)) for t in _TYPES), m.leading_digits,
                bool(m.same_mobile_and_fixed_line_pattern), formats)
    return cc_regions, meta


def _wrap(words: list[str] | tuple[str, ...], width: int = 108, indent: str = "    ") -> str:
    lines, line = [], ""
    for word in words:
        if line and (len(line) + len(word) + 1 > width or "\n" in word):
            lines.append(line)
            line = ""
        line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return "\n".join(indent + line for line in lines)


def _fmt(obj: Any, indent: int, width: int = 112) -> str:
    """repr() with long strings split into implicit concatenations and long tuples broken over lines."""
    flat = repr(obj)
    if indent + len(flat) <= width:
        return flat
    pad = " " * indent
    if isinstance(obj, str):
        chunks, rest = [], obj
        while rest:
            cut = max(20, width - indent - 4)
            while len(repr(rest[:cut])) > width - indent - 2 and cut > 10:
                cut -= 5
            chunks.append(rest[:cut])
            rest = rest[cut:]
        return "(" + ("\n" + pad + " ").join(repr(c) for c in chunks) + ")"
    if isinstance(obj, tuple):
        inner = [_fmt(x, indent + 1, width) for x in obj]
        return "(" + (",\n" + pad + " ").join(inner) + ("," if len(obj) == 1 else "") + ")"
    return flat


def render_data_block() -> str:
    tlds, wildcard = _icann_tlds()
    cc_regions, meta = _phone_data()
    return "\n\n".join([
        "_URL_TLDS = tuple('''\n" + _wrap(_url_tlds()) + "\n'''.split())",
        "_IBAN_FORMATS = {\n" + _wrap([f"{k!r}: {v!r}," for k, v in _iban_formats().items()]) + "\n}",
        "_PSL_TLDS = frozenset('''\n" + _wrap(sorted(tlds)) + "\n'''.split())",
        f"_PSL_WILDCARD_TLDS = frozenset({sorted(wildcard)!r})",
        "_STOP_WORDS = frozenset('''\n" + _wrap(sorted(_stop_words())) + "\n'''.split())",
        "_PHONE_CC_REGIONS: dict[int, tuple[str, ...]] = {\n"
        + _wrap([f"{cc}: {_fmt(rs, 6 + len(str(cc)), 100)}," for cc, rs in cc_regions.items()]) + "\n}",
        "_PHONE_META: dict[str, tuple[Any, ...]] = {\n"
        + "".join(f"    {k!r}: {_fmt(v, 6 + len(repr(k)))},\n" for k, v in meta.items()) + "}",
    ]) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--print-data"]:
        print(render_data_block(), end="")
    else:
        print(json.dumps({"usage": "python tests/sdk/test_redaction.py --print-data"}))
