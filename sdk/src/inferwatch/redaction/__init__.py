"""PII and secret redaction that finds what Presidio finds, with the standard library only.

:class:`Redactor` reproduces Microsoft Presidio's predefined recognizers (presidio-analyzer 2.2.366) for the
entities below: the same regular expressions, the same scores, the same validators (Luhn, IBAN mod-97 plus the
per-country formats, the SSN never-issued ranges and published sample numbers, bitcoin base58check/bech32, e-mail
domains checked against the public-suffix list the way ``tldextract`` does, ``ipaddress`` for IPs), the same
``finditer`` semantics, the same context-word score boost, the same duplicate removal as ``AnalyzerEngine`` and the
same conflict resolution as ``AnonymizerEngine``. Phone numbers are found the way Presidio's ``PhoneRecognizer``
finds them (``phonenumbers.PhoneNumberMatcher`` at leniency VALID over the regions US, GB, DE, FR, IL, IN, CA,
BR) by a port of that matcher onto the numbering-plan metadata embedded at the end of this module. A test
(``tests/sdk/test_redaction.py``) runs both on a labelled corpus and requires the same findings.

It is fast because it never runs a recognizer where it cannot match, and finds those places at C speed: one
``bytes.translate`` turns the text into a mask of character classes (digits, separators, capitals, letters, the
phone matcher's characters) in which literal-led regexes and ``bytes.find`` locate digit runs, phone "zones",
IBAN starts and long alphanumeric runs; ``str.find`` of a substring every literal of a secret holds rules most
secrets out; ``'@' in text``, '.' followed by a letter (URLs) and '::' or six close colons (IPv6) gate the
others. Each of Presidio's patterns is then applied there only, anchored where its matches can start (secrets at
their literals, quoted URLs at their quotes), which gives what ``finditer`` over the whole text gives. The phone
matcher walks each zone with 4+ digits on its own, rejects most candidates for all 8 regions at once with one
precompiled test of their digits, and shares parses and checks between regions. Context words are looked up by
walking back whitespace-separated chunks (a chunk of letters is one token) rather than tokenizing the text. After
a redaction, only the zones next to a placeholder are looked at again (``_Zones``). No result is cached across
calls: nothing of a text is kept once a call returns. ``bench/redaction.py`` measures it against Presidio on the
corpus and times the collector's content path, which uses this redactor (``inferwatch_collector.redaction``).

==================  ========  =================================================================================
entity              score     what matches (the finding's span is what gets replaced)
==================  ========  =================================================================================
EMAIL_ADDRESS       1.0       Presidio's e-mail pattern; the domain must end in a public suffix
PHONE_NUMBER        0.4       numbers valid for one of the 8 regions above in any format the matcher accepts;
                              written with ``+`` or an IDD: valid in their own country's numbering plan
US_SSN              0.05-0.5  ``AAA-GG-SSSS`` (0.5), ``AAAGGSSSS``/``AAAAA-SSSS``/``AAA-GGSSSS`` (0.05, very weak)
CREDIT_CARD         1.0       13-19 digits with Presidio's prefixes and grouping, Luhn-valid
IP_ADDRESS          0.6       IPv4 (+CIDR), IPv6, IPv4-mapped/embedded IPv6, valid for ``ipaddress``
IBAN_CODE           1.0       mod-97 checksum plus the country's format
URL                 0.5-0.6   Presidio's URL patterns (with or without scheme, quoted)
CRYPTO              1.0       bitcoin P2PKH/P2SH (base58check) and bech32/bech32m addresses
OPENAI_API_KEY      0.95      ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…``
ANTHROPIC_API_KEY   1.0       ``sk-ant-…``
AWS_ACCESS_KEY_ID   0.95      ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 upper-case base32 characters
AWS_SECRET_KEY      0.9       the 40-character value after ``aws_secret_access_key =``/``:``
GITHUB_TOKEN        1.0       ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36-255, ``github_pat_…``
SLACK_TOKEN         0.95      ``xoxb-``/``xoxp-``/``xoxa-``/``xoxr-``/``xoxs-`` tokens
GOOGLE_API_KEY      0.95      ``AIza`` + 35 characters
STRIPE_API_KEY      0.95      ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` keys
HUGGINGFACE_TOKEN   0.9       ``hf_`` + 30+ characters
JWT                 1.0       three base64url parts whose header decodes to a JSON object with ``alg``
BEARER_TOKEN        0.8       the credential after ``Bearer`` (the word ``Bearer`` is kept)
PASSWORD            0.7       the value after ``password``/``passwd``/``pwd``/``secret`` (+ ``:``/``=``)
==================  ========  =================================================================================

Secrets are case sensitive (``akia…`` is not an AWS key id); context words (Presidio's lists; ``key``, ``token``,
``secret``, ``api``, ``authorization``, ``password``, ``credential`` for secrets) add 0.35 to a score, as
Presidio's ``LemmaContextAwareEnhancer`` does with a lower-case lemma (``notes/pii-notifiers-ui-tooling.md`` §1a).
The score threshold defaults to 0, Presidio's default, so very weak findings (a bare 9-digit number as US_SSN at
0.05) are redacted too; pass ``score_threshold=0.4`` to keep those.

Every finding is replaced by ``<ENTITY_TYPE>`` (what Presidio's ``replace`` operator writes), so a redacted text
stays readable, and counts per entity are returned. Overlaps are resolved the way ``AnonymizerEngine`` resolves
them: overlapping findings of one type are merged, a finding inside another is dropped (on equal spans the lower
score goes), findings of one type separated only by spaces are merged, and two partly overlapping findings of
different types become adjacent placeholders. Redacting is stable: ``redact(redact(x).text)`` changes nothing.
No pattern matches a placeholder, and where replacing a finding uncovers another one (a rejected candidate can hide
an overlapping valid one, Presidio's way of validating after ``finditer``), the text is redacted again; checking
for that costs little, because such a finding can only sit right next to a placeholder (see ``_Zones``).

Two deliberate differences, privacy first (``Redactor(presidio_compatible=True)`` drops both):

* US SSN: Presidio treats the published sample numbers 078-05-1120, 123-45-6789 and 987-65-4320 as "not an SSN";
  they are redacted here (they identify nobody, but a prompt holding one is usually a test of exactly this).
* E-mail: Presidio drops an address whose domain does not end in a public suffix; addresses under reserved and
  internal TLDs (:data:`RESERVED_TLDS`: ``jane@corp.example``, ``ops@build.internal``) are redacted here.

Known differences of the reimplementation (documented by tests; none occurs in the test corpus):

* Phone numbers: the matcher's carrier-code case (``xx`` inside a number) is not ported; such candidates are
  rejected. The numbering-plan metadata is phonenumbers' (every country, as of the version the table was made
  from; a test compares it with the installed phonenumbers).
* E-mail domains: ``tldextract`` with the bundled public-suffix snapshot decides; here the last label must be an
  ICANN TLD of that snapshot (and a two-label domain under a wildcard TLD such as ``.ck`` is rejected). A domain
  that is itself a multi-label public suffix (``someone@co.uk``) is accepted here, rejected there.
* ``\\w``/``\\b`` follow Python's ``re`` (the ``regex`` module Presidio uses also counts combining marks as word
  characters); context words use a tokenizer that approximates spaCy's English rules (scores only).

Optional NER (PERSON, LOCATION) needs Presidio and an installed spaCy model: see :class:`PresidioRedactor`
(``pip install 'inferwatch[presidio]'``). This module itself imports nothing outside the standard library.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import json
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ._data import (  # generated: Presidio's TLDs and IBAN formats, the PSL, stop words, phone metadata
    _IBAN_FORMATS,
    _PHONE_CC_REGIONS,
    _PHONE_META,
    _PSL_TLDS,
    _PSL_WILDCARD_TLDS,
    _STOP_WORDS,
    _URL_TLDS,
)

__all__ = [
    "ALL_ENTITIES",
    "DEFAULT_PHONE_REGIONS",
    "DEFAULT_REDACTOR",
    "ENTITIES",
    "NER_ENTITIES",
    "PII_ENTITIES",
    "PLACEHOLDERS",
    "POLICY",
    "REGEX_POLICY",
    "RESERVED_TLDS",
    "SECRET_ENTITIES",
    "SECRET_RECOGNIZERS",
    "Finding",
    "PresidioRedactor",
    "RedactionResult",
    "Redactor",
    "SecretPattern",
    "SecretRecognizer",
    "SupportsRedact",
    "crypto_valid",
    "email_domain_valid",
    "iban_valid",
    "ip_valid",
    "jwt_header_valid",
    "luhn_valid",
    "redact",
    "resolve_conflicts",
    "ssn_valid",
]

logger = logging.getLogger("inferwatch.redaction")

POLICY = "inferwatch-redact/2"
"""Name/version of the default rules (stored with every prompt log row); bumped whenever a rule changes."""
REGEX_POLICY = POLICY  # the collector's historical name for it

PII_ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS", "PHONE_NUMBER", "US_SSN", "CREDIT_CARD", "IP_ADDRESS", "IBAN_CODE", "URL", "CRYPTO",
)  # fmt: skip
SECRET_ENTITIES: frozenset[str] = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_KEY", "GITHUB_TOKEN", "SLACK_TOKEN",
    "GOOGLE_API_KEY", "STRIPE_API_KEY", "HUGGINGFACE_TOKEN", "JWT", "BEARER_TOKEN", "PASSWORD",
})  # fmt: skip
NER_ENTITIES: tuple[str, ...] = ("PERSON", "LOCATION")
DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR")  # PhoneRecognizer's


# --- public types ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Finding:
    """One detected entity: ``text[start:end]`` is ``entity_type`` with confidence ``score`` (0-1)."""

    entity_type: str
    start: int
    end: int
    score: float


class RedactionResult(NamedTuple):
    text: str
    counts: dict[str, int]  # entity -> number of placeholders written


@runtime_checkable
class SupportsRedact(Protocol):
    """Anything that can redact a text; ``policy`` names the rules and their version (stored with the text)."""

    policy: str

    def redact(self, text: str) -> RedactionResult: ...


# --- secret recognizers ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SecretPattern:
    """``prefix`` must precede the secret and stays in the text; ``value`` is the secret (the finding)."""

    name: str
    value: str
    score: float
    prefix: str = ""

    def presidio_regex(self) -> str:
        """The same pattern for Presidio's ``PatternRecognizer`` (``regex`` module; ``\\K`` drops the prefix)."""
        return f"(?:{self.prefix})\\K(?:{self.value})" if self.prefix else self.value


@dataclass(frozen=True)
class SecretRecognizer:
    """A case-sensitive pattern recognizer, usable here and (see ``presidio_regex``) as a Presidio one."""

    entity: str
    patterns: tuple[SecretPattern, ...]
    literals: tuple[str, ...]  # every match starts with one of these (in the lower-cased text if ``fold``)
    fold: bool = False
    validator: Callable[[str], bool] | None = None  # Presidio's validate_result: True -> score 1.0, False -> drop
    context: tuple[str, ...] = ("key", "token", "secret", "api", "authorization", "password", "credential")


def jwt_header_valid(token: str) -> bool:
    """The first part of ``token`` is base64url of a JSON object with an ``alg`` member (a real JWT header)."""
    head = token.split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return isinstance(header, dict) and "alg" in header


_KEYCH = r"[A-Za-z0-9_-]"
SECRET_RECOGNIZERS: tuple[SecretRecognizer, ...] = (
    # each value starts with its literal prefix (so ``re`` can skip ahead to it) and checks the character before
    # the prefix with a lookbehind placed after it
    SecretRecognizer("ANTHROPIC_API_KEY", (
        SecretPattern("anthropic", rf"sk-ant-(?<!{_KEYCH}sk-ant-){_KEYCH}{{20,}}", 1.0),), ("sk-ant-",)),
    SecretRecognizer("OPENAI_API_KEY", (
        SecretPattern("openai", rf"sk-(?<!{_KEYCH}sk-)(?!ant-)(?:proj-|svcacct-|admin-)?{_KEYCH}{{20,}}", 0.95),),
        ("sk-",)),
    SecretRecognizer("AWS_ACCESS_KEY_ID", (
        SecretPattern("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)(?<!\w....)[A-Z2-7]{16}\b", 0.95),),
        ("AKIA", "ASIA", "ABIA", "ACCA")),
    SecretRecognizer("AWS_SECRET_KEY", (
        SecretPattern("aws_secret_access_key", r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])", 0.9,
                      prefix=r"(?i:aws_?secret(?:_?access_?key)?)(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"),),
        ("aws",), fold=True),
    SecretRecognizer("GITHUB_TOKEN", (
        SecretPattern("github_classic", r"gh[pousr]_(?<!\wgh._)[A-Za-z0-9]{36,255}\b", 1.0),
        SecretPattern("github_fine_grained", r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{22,255}\b", 1.0)),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    SecretRecognizer("SLACK_TOKEN", (
        SecretPattern("slack", r"xox[abprs]-(?<!\wxox.-)[A-Za-z0-9-]{10,}", 0.95),), ("xox",)),
    SecretRecognizer("GOOGLE_API_KEY", (
        SecretPattern("google_api_key", rf"AIza(?<!\wAIza)[0-9A-Za-z_-]{{35}}(?!{_KEYCH})", 0.95),), ("AIza",)),
    SecretRecognizer("STRIPE_API_KEY", (
        SecretPattern("stripe_secret", r"sk_(?<!\wsk_)(?:live|test)_[A-Za-z0-9]{16,}", 0.95),
        SecretPattern("stripe_restricted", r"rk_(?<!\wrk_)(?:live|test)_[A-Za-z0-9]{16,}", 0.95)),
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_")),
    SecretRecognizer("HUGGINGFACE_TOKEN", (
        SecretPattern("huggingface", r"hf_(?<!\whf_)[A-Za-z0-9]{30,}\b", 0.9),), ("hf_",)),
    SecretRecognizer("JWT", (
        SecretPattern("jwt", rf"eyJ(?<!{_KEYCH}eyJ){_KEYCH}{{5,}}\.eyJ{_KEYCH}{{5,}}\.{_KEYCH}{{10,}}", 0.95),),
        ("eyJ",), validator=jwt_header_valid),
    # the credential may not end with '.', so a sentence-ending period survives
    SecretRecognizer("BEARER_TOKEN", (
        SecretPattern("bearer", r"[A-Za-z0-9\-._~+/]{15,}[A-Za-z0-9\-_~+/]=*", 0.8,
                      prefix=r"(?<![A-Za-z0-9_])(?i:bearer)\s+"),), ("bearer",), fold=True),
    # the value is never a placeholder (so "password: <PASSWORD>" stays as it is); the quotes around the key and
    # the value may be escaped (a JSON document inside a JSON string: captured prompts are JSON messages), and the
    # value stops before an escaped quote (which stays, so the JSON stays valid); other backslashes are its own
    SecretRecognizer("PASSWORD", (
        SecretPattern("password", r"(?!<[A-Z_]+>)(?:[^\s\"',;\\]|\\(?![\"'])){3,}", 0.7,
                      prefix=r"(?i:pass(?:word|wd)|pwd|secret)(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"),),
        ("pass", "pwd", "secret"), fold=True),
)  # fmt: skip

ENTITIES: tuple[str, ...] = PII_ENTITIES + tuple(r.entity for r in SECRET_RECOGNIZERS)
ALL_ENTITIES: frozenset[str] = frozenset(ENTITIES)
PLACEHOLDERS: dict[str, str] = {entity: f"<{entity}>" for entity in (*ENTITIES, *NER_ENTITIES)}


# --- Presidio's patterns (presidio-analyzer 2.2.366, predefined_recognizers; a test compares them) ---------------
_F = re.DOTALL | re.MULTILINE | re.IGNORECASE  # PatternRecognizer's default global_regex_flags

_EMAIL_RX = (
    r"\b((([!#$%&'*+\-/=?^_`{|}~\w])|([!#$%&'*+\-/=?^_`{|}~\w][!#$%&'*+\-/=?^_`{|}~\.\w]{0,}"
    r"[!#$%&'*+\-/=?^_`{|}~\w]))[@]\w+(?:-+\w+)*(?:\.\w+(?:-+\w+)*)+)\b"
)
_CREDIT_CARD_RX = (
    r"\b(?!1\d{12}(?!\d))((4\d{3})|(5[0-5]\d{2})|(6\d{3})|(1\d{3})|(3\d{3}))[- ]?(\d{3,4})[- ]?(\d{3,4})[- ]?"
    r"(\d{3,5})\b"
)
_SSN_PATTERNS: tuple[tuple[str, str, float], ...] = (
    ("SSN1 (very weak)", r"\b([0-9]{5})-([0-9]{4})\b", 0.05),
    ("SSN2 (very weak)", r"\b([0-9]{3})-([0-9]{6})\b", 0.05),
    ("SSN3 (very weak)", r"\b(([0-9]{3})-([0-9]{2})-([0-9]{4}))\b", 0.05),
    ("SSN4 (very weak)", r"\b[0-9]{9}\b", 0.05),
    ("SSN5 (medium)", r"\b([0-9]{3})[- .]([0-9]{2})[- .]([0-9]{4})\b", 0.5),
)
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
_V6_PREFIX = r"(?:/(?:12[0-8]|1[01]\d|[1-9]?\d))?"
_IP_PATTERNS: tuple[tuple[str, str, float], ...] = (
    ("IPv4_mapped", rf"(?<![\w:])::(?:ffff(?::0{{1,4}})?:)?(?:{_OCTET}\.){{3}}{_OCTET}{_V6_PREFIX}\b", 0.6),
    ("IPv4_embedded",
     r"(?<![\w:])(?:(?:[0-9A-Fa-f]{1,4}:){1,5}:(?:[0-9A-Fa-f]{1,4}:){0,4}|(?:[0-9A-Fa-f]{1,4}:){6})"
     rf"(?:{_OCTET}\.){{3}}{_OCTET}{_V6_PREFIX}\b", 0.6),
    ("IPv4", rf"\b{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}(?:/(?:[0-2]?\d|3[0-2]))?\b", 0.6),
    ("IPv6",
     r"(?<![\w:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:"
     r"|:(?::[0-9A-Fa-f]{1,4}){1,7}"
     r"|(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}"
     r"|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}"
     r"|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}"
     rf"|:(?::[0-9A-Fa-f]{{1,4}}){{1,6}})(?:%[0-9a-zA-Z]+)?{_V6_PREFIX}(?![\w:]|\.\d)", 0.6),
    ("IPv6_unspecified", rf"(?<![\w:])::{_V6_PREFIX}(?![\w:])", 0.1),
)
_IBAN_RX = (
    r"(?<![A-Z0-9])([A-Z]{2}[0-9]{2}(?:[ -]?[A-Z0-9]{4}){2,6})((?:[ -]?[A-Z0-9]{4})?)((?:[ -]?[A-Z0-9]{1,3})?)"
    r"(?![A-Z0-9])"
)
_CRYPTO_RX = r"(bc1|[13])[a-zA-HJ-NP-Z0-9]{25,59}"


def _url_base() -> str:
    tlds = "|".join(f"(?:{t})" for t in _URL_TLDS)
    return rf"((www\d{{0,3}}[.])?[a-z0-9.\-]{{1,253}}[.](?:{tlds})(?:/[^\s()<>\"']*)?)"


def _url_patterns() -> tuple[tuple[str, str, float], ...]:
    base = _url_base()
    return (
        ("Standard Url", "(?i)(?:https?://)" + base, 0.6),
        ("Non schema URL", "(?i)" + base, 0.5),
        ("Quoted URL", r'(?i)["\'](https?://' + base + r')["\']', 0.6),
        ("Quoted Non-schema URL", r'(?i)["\'](' + base + r')["\']', 0.5),
    )


def _iban_country_regex() -> dict[str, str]:
    """Presidio's ``iban_patterns.regex_per_country``, rebuilt from the compact table."""
    blocks = {"A": "[A-Z][ ]?", "C": "[a-zA-Z0-9][ ]?", "N": "[0-9][ ]?", "0": "[0]"}
    out = {}
    for country, spec in _IBAN_FORMATS.items():
        parts = [f"({country})", "[0-9]{2}[ ]?"]
        for token in spec.split():
            kind, count = token[0], token[1:]
            parts.append(f"({blocks[kind]}){{{count}}}" if count else blocks[kind])
        out[country] = "".join(parts)
    return out


# Presidio's context words per entity (the recognizers' CONTEXT lists)
_CONTEXT: dict[str, tuple[str, ...]] = {
    "EMAIL_ADDRESS": ("email",),
    "PHONE_NUMBER": ("phone", "number", "telephone", "cell", "cellphone", "mobile", "call"),
    "US_SSN": ("social", "security", "ssn", "ssns", "ssid"),
    "CREDIT_CARD": ("credit", "card", "visa", "mastercard", "cc ", "amex", "discover", "jcb", "diners", "maestro",
                    "instapayment"),
    "IP_ADDRESS": ("ip", "ipv4", "ipv6"),
    "IBAN_CODE": ("iban", "bank", "transaction"),
    "URL": ("url", "website", "link"),
    "CRYPTO": ("wallet", "btc", "bitcoin", "crypto"),
}
for _r in SECRET_RECOGNIZERS:
    _CONTEXT[_r.entity] = _r.context


# --- validators --------------------------------------------------------------------------------------------------
def luhn_valid(digits: str) -> bool:
    """Luhn checksum of a string of digits (Presidio's CreditCardRecognizer.__luhn_checksum). ASCII digits: the
    doubled ones are mapped to the digit sum of their double by ``str.translate``, all at C speed."""
    if digits.isascii() and digits.isdigit():
        return (sum(map(int, digits[-1::-2])) + sum(map(int, digits[-2::-2].translate(_LUHN_DOUBLED)))) % 10 == 0
    values = [int(d) for d in digits]
    total = sum(values[-1::-2])
    for d in values[-2::-2]:
        total += sum(int(x) for x in str(d * 2))
    return total % 10 == 0


_LUHN_DOUBLED = {ord(str(d)): str(sum(divmod(2 * d, 10))) for d in range(10)}


_SAMPLE_SSNS = frozenset({"123456789", "987654320", "078051120"})
_SSN_DELIMITERS = {ord(c): None for c in ".- "}


def ssn_valid(text: str, *, allow_samples: bool = False) -> bool:
    """Presidio's UsSsnRecognizer.invalidate_result, inverted (``allow_samples``: published samples count)."""
    if ("." in text) + ("-" in text) + (" " in text) > 1:
        return False  # mismatched delimiters
    digits = text.translate(_SSN_DELIMITERS)
    if not digits.isdigit():
        digits = "".join(c for c in digits if c.isdigit())
    if not digits or digits.count(digits[0]) == len(digits):
        return False
    if digits[3:5] == "00" or digits[5:] == "0000" or digits[:3] in ("000", "666"):
        return False
    return allow_samples or digits not in _SAMPLE_SSNS


_B58 = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = [_B58.find(bytes([c])) for c in range(256)]
_BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32_valid(bech: str) -> bool:
    if any(ord(x) < 33 or ord(x) > 126 for x in bech) or (bech.lower() != bech and bech.upper() != bech):
        return False
    bech = bech.lower()
    pos = bech.rfind("1")
    if pos < 1 or pos + 7 > len(bech) or len(bech) > 90:
        return False
    if not all(x in _BECH32_CHARSET for x in bech[pos + 1:]):
        return False
    hrp = bech[:pos]
    values = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp] + [_BECH32_CHARSET.find(x)
                                                                             for x in bech[pos + 1:]]
    chk = 1
    for value in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i, g in enumerate((0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)):
            chk ^= g if ((top >> i) & 1) else 0
    return chk in (1, 0x2BC830A3)


def crypto_valid(text: str) -> bool:
    """Presidio's CryptoRecognizer.validate_result: base58check for 1…/3…, bech32(m) for bc1…."""
    if text.startswith(("1", "3")):
        raw = text.encode()
        stripped = raw.lstrip(b"1")
        n = 0
        for char in stripped:
            index = _B58_INDEX[char]
            if index < 0:
                return False  # Presidio: ValueError from bytes.index
            n = n * 58 + index
        try:
            data = n.to_bytes(len(raw) - len(stripped) + (n.bit_length() + 7) // 8, "big")
        except OverflowError:  # pragma: no cover - cannot happen with the computed length
            return False
        return data[-4:] == hashlib.sha256(hashlib.sha256(data[:-4]).digest()).digest()[:4]
    if text.startswith("bc1"):
        return _bech32_valid(text)
    return False


def iban_valid(text: str) -> bool | None:
    """Presidio's IbanRecognizer.validate_result (True valid, False invalid, None: valid only upper-cased)."""
    value = text.replace("-", "").replace(" ", "")
    try:
        transformed = (value[:2] + "00" + value[4:]).upper()
        number = (transformed[4:] + transformed[:4]).translate(_IBAN_LETTERS)
        check = f"{98 - (int(number) % 97):0>2}"
    except ValueError:
        return False
    if check != value[2:4]:
        return False
    if _iban_format_ok(value):
        return True
    if _iban_format_ok(value.upper()):
        return None
    return False


_IBAN_LETTERS = {ord(d): str(i) for i, d in enumerate("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")}
_IBAN_COUNTRY_RE: dict[str, re.Pattern[str]] = {}


def _iban_format_ok(iban: str) -> bool:
    country = iban[:2]
    if not _IBAN_COUNTRY_RE:
        _IBAN_COUNTRY_RE.update({c: re.compile(rx, re.DOTALL | re.MULTILINE)
                                 for c, rx in _iban_country_regex().items()})
    rx = _IBAN_COUNTRY_RE.get(country)
    return bool(rx and rx.match(iban))


def ip_valid(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return True


def email_domain_valid(text: str, *, reserved: bool = False) -> bool:
    """Presidio's EmailRecognizer.validate_result: ``tldextract.extract(text).fqdn != ""`` with the bundled
    public-suffix snapshot (ICANN section), reduced to the TLD (see "Differences" in the module docstring).
    ``reserved``: also accept the reserved and internal TLDs of :data:`RESERVED_TLDS`."""
    # tldextract.remote.lenient_netloc: scheme, then path/query/fragment, userinfo, port, root label
    url = text
    slashes = url.find("//")
    if slashes == 0:
        url = url[2:]
    elif slashes >= 2 and url[slashes - 1] == ":" and not set(url[:slashes - 1]) - _SCHEME_CHARS:
        url = url[slashes + 2:]
    authority = url.partition("/")[0].partition("?")[0].partition("#")[0]
    host = authority.rpartition("@")[-1]
    if host and host[0] == "[":
        return False  # bracketed: IPv6 or nothing, never a public suffix
    host = host.partition(":")[0].strip().rstrip(".\u3002\uff0e\uff61")
    host = host.replace("\u3002", ".").replace("\uff0e", ".").replace("\uff61", ".")
    labels = host.split(".")
    if len(labels) < 2:
        return False
    tld = _decode_punycode(labels[-1])
    if tld in _PSL_WILDCARD_TLDS:  # '*.ck': the second label belongs to the suffix (but '!www.ck')
        return len(labels) > 2 or (tld == "ck" and _decode_punycode(labels[-2]) == "www")
    if tld not in _PSL_TLDS:
        return reserved and tld in RESERVED_TLDS and bool(labels[-2])
    return bool(labels[-2])


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
RESERVED_TLDS: frozenset[str] = frozenset({
    "example", "test", "invalid", "localhost",  # RFC 2606 / 6761
    "local", "internal", "intranet", "corp", "home", "lan", "private",  # in use on private networks
})
"""Top-level labels of addresses that are not on the public-suffix list but are still someone's address
(``jane@corp.example``, ``ops@build.internal``): redacted unless ``presidio_compatible``."""


def _decode_punycode(label: str) -> str:
    lowered = label.lower()
    if lowered.startswith("xn--"):
        try:
            return lowered.encode("ascii").decode("idna")
        except (UnicodeError, IndexError):
            pass
    return lowered


# --- the engine --------------------------------------------------------------------------------------------------
class _R:
    """A mutable result, compared like Presidio's ``RecognizerResult`` (the resolution code mutates them)."""

    __slots__ = ("entity", "start", "end", "score", "rec")

    def __init__(self, entity: str, start: int, end: int, score: float, rec: str) -> None:
        self.entity, self.start, self.end, self.score, self.rec = entity, start, end, score, rec

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _R) and self.start == other.start and self.end == other.end
                and self.entity == other.entity and self.score == other.score)

    def __hash__(self) -> int:
        return hash((self.start, self.end, self.score, self.entity))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"_R({self.entity}, {self.start}, {self.end}, {self.score}, {self.rec})"


def _remove_duplicates(results: list[_R]) -> list[_R]:
    """Presidio's ``EntityRecognizer.remove_duplicates``: drop zero scores and results contained in a result of
    the same type with an equal or higher score; returns them ordered by (-score, start, -length)."""
    unique = sorted(set(results), key=lambda r: (r.entity, r.start, -(r.end - r.start), -r.score))
    kept: list[_R] = []
    active: list[_R] = []
    entity = None
    for r in unique:
        if r.entity != entity:
            entity, active = r.entity, []
        if r.score == 0:
            continue
        active = [a for a in active if a.end >= r.start]
        if any(r.start >= a.start and r.end <= a.end and r.score <= a.score for a in active):
            continue
        kept.append(r)
        active.append(r)
    return sorted(kept, key=lambda r: (-r.score, r.start, -(r.end - r.start)))


def resolve_conflicts(text: str, findings: Sequence[Finding]) -> list[Finding]:
    """What Presidio's ``AnonymizerEngine.anonymize`` replaces, for ``findings`` in analyzer order (the default
    ``MERGE_SIMILAR_OR_CONTAINED`` strategy, then the merge of same-type findings separated by spaces)."""
    results = [_R(f.entity_type, f.start, f.end, f.score, "") for f in findings]
    return [Finding(r.entity, r.start, r.end, r.score) for r in _resolve(text, results)]


_SPACES_ONLY = re.compile(r"^( )+$")


def _resolve(text: str, results: list[_R]) -> list[_R]:
    results = [_R(r.entity, r.start, r.end, r.score, r.rec) for r in results]
    results.sort(key=lambda r: (r.start, r.end))
    merged: list[_R] = []
    others = results.copy()
    for r in results:
        others.remove(r)
        for o in others:
            if o.entity != r.entity or _intersects(r, o) == 0:
                continue
            o.start, o.end, o.score = min(r.start, o.start), max(r.end, o.end), max(r.score, o.score)
            break
        else:
            others.append(r)
            merged.append(r)
    unique: list[_R] = []
    others = merged.copy()
    for r in merged:
        others.remove(r)
        if not any(_has_conflict(r, o) for o in others):
            others.append(r)
            unique.append(r)
    out: list[_R] = []
    prev: _R | None = None
    for r in unique:
        if prev is not None and prev.entity == r.entity and _SPACES_ONLY.search(text[prev.end:r.start]):
            out.remove(prev)
            r.start = prev.start
        out.append(r)
        prev = r
    return out


def _intersects(a: _R, b: _R) -> int:
    if a.end < b.start or b.end < a.start:
        return 0
    return min(a.end, b.end) - max(a.start, b.start)


def _has_conflict(a: _R, b: _R) -> bool:
    if a.start == b.start and a.end == b.end:
        return a.score <= b.score
    return b.start <= a.start and b.end >= a.end


def _replace(text: str, results: list[_R], counts: dict[str, int]) -> str:
    """``AnonymizerEngine._operate`` with the ``replace`` operator (right to left; partial overlaps become adjacent
    placeholders)."""
    out = text
    last = len(text)
    for r in sorted(results, key=lambda r: (r.start, r.end), reverse=True):
        end = min(r.end, last)
        last = r.start
        out = out[:r.start] + PLACEHOLDERS.get(r.entity, f"<{r.entity}>") + out[end:]
        counts[r.entity] = counts.get(r.entity, 0) + 1
    return out


_JSON_ESCAPE = re.compile(r"\\[\\nrtbf]")  # an escaped backslash, or an escaped newline, tab, CR, BS, FF


_ESCAPED_AS = {"\\\\": "\\\\", "\\n": "\n ", "\\r": "\r ", "\\t": "\t ", "\\b": "  ", "\\f": "  "}


def _blank_escape(match: re.Match[str]) -> str:
    return _ESCAPED_AS[match.group()]


def json_view(text: str) -> str:
    """``text`` as the recognizers read it in :meth:`Redactor.redact`: for a JSON document (it starts with ``[``,
    ``{`` or ``"``), each escaped newline, tab or carriage return becomes that character and a space, an escaped
    backspace or form feed two spaces; an escaped backslash stays. The same length, so what is found there is
    replaced at the same place in ``text``.

    Why: captured prompts are JSON messages (the SDK's capture, and other instrumentations' content attributes),
    where a value at the start of a line follows ``\\n``: a card, SSN, IP address or key was then glued to the
    letter ``n``, which no word boundary separates from it, and went unredacted (an e-mail took the ``n`` in, and
    its placeholder left a lone backslash: invalid JSON). Other texts are read as they are."""
    if "\\" not in text or text.lstrip()[:1] not in ("[", "{", '"'):
        return text
    return _JSON_ESCAPE.sub(_blank_escape, text)


class Redactor:
    """Presidio-compatible PII and secret redactor (see the module docstring). Thread-safe; one instance can be
    shared (:data:`DEFAULT_REDACTOR`).

    ``entities``: the entity types to look for (default all of :data:`ENTITIES`); ``score_threshold``: findings
    scoring below it are dropped (Presidio's default 0 keeps everything); ``context``: apply the context-word
    boost; ``presidio_compatible``: drop the two deliberate differences (sample SSNs, reserved e-mail TLDs);
    ``phone_regions``: regions for national-format phone numbers (Presidio's PhoneRecognizer defaults).
    """

    SECRET_ENTITIES = SECRET_ENTITIES
    KNOWN_ENTITIES: frozenset[str] = ALL_ENTITIES

    def __init__(self, *, entities: Iterable[str] | None = None, score_threshold: float = 0.0,
                 context: bool = True, presidio_compatible: bool = False,
                 phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> None:
        chosen = frozenset(self.KNOWN_ENTITIES if entities is None else entities)
        unknown = chosen - self.KNOWN_ENTITIES
        if unknown:
            raise ValueError(f"unknown entities {sorted(unknown)}; known: {sorted(self.KNOWN_ENTITIES)}")
        if not 0.0 <= score_threshold <= 1.0:
            raise ValueError("score_threshold must be within [0, 1]")
        bad_regions = [r for r in phone_regions if r not in _PHONE_META]
        if bad_regions:
            raise ValueError(f"unknown phone regions {bad_regions}")
        self.entities = chosen
        self.score_threshold = float(score_threshold)
        self.context = bool(context)
        self.presidio_compatible = bool(presidio_compatible)
        self.phone_regions = tuple(phone_regions)
        options = []
        if chosen != self.KNOWN_ENTITIES:
            options.append("entities=" + ",".join(sorted(chosen)))
        if self.score_threshold:
            options.append(f"threshold={self.score_threshold:g}")
        if not self.context:
            options.append("no-context")
        if self.presidio_compatible:
            options.append("presidio-compatible")
        if self.phone_regions != DEFAULT_PHONE_REGIONS:
            options.append("phone=" + ",".join(self.phone_regions))
        self.policy: str = POLICY + (";" + ";".join(options) if options else "")
        self._pii = self._pii_recognizers()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(policy={self.policy!r})"

    # -- public API -----------------------------------------------------------------------------------------------
    def analyze(self, text: str, *, entities: Iterable[str] | None = None) -> list[Finding]:
        """What Presidio's ``AnalyzerEngine.analyze(text, "en", entities=...)`` returns: every finding (they may
        overlap), ordered by score (highest first), then position."""
        return [Finding(r.entity, r.start, r.end, r.score) for r in self._analyze(text, self._pick(entities))]

    def resolve(self, text: str, findings: Sequence[Finding]) -> list[Finding]:
        """The findings :meth:`redact` replaces (Presidio's anonymizer conflict resolution), ordered by start."""
        return resolve_conflicts(text, findings)

    def redact(self, text: str, *, entities: Iterable[str] | None = None) -> RedactionResult:
        """Replace every finding by ``<ENTITY_TYPE>``; ``entities`` narrows the types (e.g. SECRET_ENTITIES).

        The result is stable: redacting it again changes nothing. (Rarely, replacing one finding uncovers
        another: Presidio's patterns are applied with ``finditer`` and validated afterwards, so a candidate that
        fails its check can hide a valid one that overlaps it, as in "00101-1000 500000000001 0008" where the
        card shows only once the weak SSN is gone. Such texts are redacted again until nothing is found.)"""
        counts: dict[str, int] = {}
        if not text:
            return RedactionResult(text, counts)
        wanted = self._pick(entities)
        read = json_view(text)  # what the recognizers read: the same positions (see json_view)
        scan = _Scan(read)  # (kept: which secrets' literals occur, for _finds_anything)
        results = self._analyze(read, wanted, scan)
        out = text
        for _ in range(8):
            if not results:
                break
            written: dict[str, int] = {}
            replaced = _replace(out, _resolve(read, results), written)
            if replaced == out:  # pragma: no cover - no pattern matches a placeholder
                break
            out = replaced
            for entity, n in written.items():
                counts[entity] = counts.get(entity, 0) + n
            read = json_view(out)
            if not self._finds_anything(read, wanted, frozenset(scan.secret_hits)):
                break
            scan = _Scan(read)
            results = self._analyze(read, wanted, scan)
        return RedactionResult(out, counts)

    # -- internals ------------------------------------------------------------------------------------------------
    def _pick(self, entities: Iterable[str] | None) -> frozenset[str]:
        if entities is None:
            return self.entities
        return self.entities & frozenset(entities)

    def _raw(self, text: str, wanted: frozenset[str], *, first: bool = False,
             scan: _Scan | None = None) -> list[list[_R]]:
        """Each recognizer's results (cheapest first); ``first``: stop at the first recognizer that finds any;
        ``scan``: the text's ``_Scan``, when the caller wants to read it afterwards."""
        out: list[list[_R]] = []
        if not text or not wanted:
            return out
        if scan is None:
            scan = _Scan(text)
        for recognizer, gate in _SECRET_PLAN:
            if recognizer.entity not in wanted:
                continue
            if gate:  # a substring every literal holds: most texts hold none (checked here, at C speed)
                haystack = scan.folded if recognizer.fold else text
                if haystack is not None and gate not in haystack:
                    continue
            found = _secrets(scan, recognizer)
            if found:
                out.append(found)
                if first:
                    return out
        for entity, recognize in self._pii:
            if entity in wanted:
                found = recognize(scan)
                if found:
                    out.append(found)
                    if first:
                        return out
        return out

    def _analyze(self, text: str, wanted: frozenset[str], scan: _Scan | None = None) -> list[_R]:
        results = [r for found in self._raw(text, wanted, scan=scan) for r in _remove_duplicates(found)]
        if not results:
            return []
        if self.context:
            _enhance_using_context(text, results)
        threshold = self.score_threshold
        return _remove_duplicates([r for r in results if r.score >= threshold])

    def _finds_anything(self, text: str, wanted: frozenset[str], secrets: frozenset[str] | None = None) -> bool:
        """Whether ``text``, a redacted text, still holds a finding (see ``_Zones``). ``secrets``: the secret
        entities whose literals occurred in the text before it was redacted (a match starts at an occurrence;
        redacting adds occurrences only inside placeholders, where none matches), None if not known."""
        if self.score_threshold > 0:
            return bool(self._analyze(text, wanted))  # context words may lift a score over the threshold
        # every raw result scores above 0. Secrets: all of the text (their prefixes may span whitespace; cheap)
        if self._raw(text, wanted & SECRET_ENTITIES & (SECRET_ENTITIES if secrets is None else secrets),
                     first=True):
            return True
        zones = _Zones(text)
        if not zones.placeholders:
            return bool(self._raw(text, wanted - SECRET_ENTITIES, first=True))
        suspects = zones.suspects(wanted)
        if suspects and self._raw(text, suspects, first=True):
            return True
        return "PHONE_NUMBER" in wanted and zones.phone(self.phone_regions)

    def _pii_recognizers(self) -> tuple[tuple[str, Callable[[_Scan], list[_R]]], ...]:
        strict, regions = self.presidio_compatible, self.phone_regions
        return (
            ("EMAIL_ADDRESS", lambda scan: _emails(scan, strict) if "@" in scan.text else []),
            ("URL", _urls),
            ("CRYPTO", _crypto),
            ("IBAN_CODE", _ibans),
            ("IP_ADDRESS", _ips),
            ("US_SSN", lambda scan: _ssns(scan, not strict)),
            ("CREDIT_CARD", _cards),
            ("PHONE_NUMBER", lambda scan: _phones(scan, regions)),  # the most expensive, last
        )


class _Scan:
    """Per-text prefilter state shared by the recognizers (computed lazily, once).

    The recognizers share a mask of the text: one byte per character (``bytes.translate`` for ASCII text, about
    a microsecond per KB) saying whether it is a digit (``0``), a digit-run separator `` .-/`` (``.``), an ASCII
    capital that a phone-number candidate may hold (``E``) or not (``U``), another letter or digit (``[^\\W_]``)
    that a candidate may hold (``x``) or not (``l``), another character a candidate may hold (``z``) or none of
    these (`` ``). Regexes over the mask start with a literal, so ``re`` skips to the next digit at C speed, where
    a class such as ``\\d`` makes it try every character, and ``bytes.find`` over a reduced mask finds two
    capitals before a digit (IBAN) or 26 letters and digits in a row (crypto) without any regex."""

    __slots__ = ("text", "_long", "_lower", "_folded", "_chunks", "_mask", "_zones", "_digits", "secret_hits")

    def __init__(self, text: str) -> None:
        self.text = text
        self._long: list[tuple[int, int]] | None = None
        self._lower: str | None = None
        self._folded: str | None = None
        self._chunks: dict[int, list[tuple[int, int]]] = {}
        self._mask: bytes | None = None
        self._zones: list[tuple[int, int]] | None = None
        self._digits: bool | None = None
        self.secret_hits: set[str] = set()  # secret entities whose literals occur (see Redactor._finds_anything)

    def long_chunks(self, n: int) -> list[tuple[int, int]]:
        """(start, end) of the whitespace-separated chunks of at least ``n`` characters (a chunk's first
        occurrence after the previous one is the chunk itself: a shorter chunk cannot hold it)."""
        found = self._chunks.get(n)
        if found is None:
            text = self.text
            found = []
            chunks = text.split()
            if chunks and max(map(len, chunks)) >= n:  # (at C speed: most texts have no chunk that long)
                pos = 0
                for chunk in [c for c in chunks if len(c) >= n]:
                    pos = text.find(chunk, pos)
                    found.append((pos, pos + len(chunk)))
                    pos += len(chunk)
            self._chunks[n] = found
        return found

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    @property
    def folded(self) -> str | None:
        """The text lower-cased as ``re.IGNORECASE`` compares it with ASCII letters (the long s, U+017F, is an
        's'), or None when lower-casing moved characters (one whose lower case is longer): offsets would differ."""
        if self._folded is None:
            lower = self.lower
            if len(lower) != len(self.text):
                self._folded = ""
            else:
                self._folded = lower.replace("\u017f", "s") if "\u017f" in lower else lower
        return self._folded or None

    @property
    def has_digit(self) -> bool:
        if self._digits is None:
            self._digits = _has_digit(self.text)
        return self._digits

    @property
    def mask(self) -> bytes:
        if self._mask is None:
            self._mask = _mask(self.text)
        return self._mask

    def iban_starts(self) -> list[int]:
        """Where two ASCII capitals stand right before a digit (found with ``bytes.find`` in the mask reduced to
        capitals, digits and the rest)."""
        if not self.has_digit:
            return []
        reduced = self.mask.translate(_MASK_CAPITALS)
        out = []
        i = reduced.find(b"AA0")
        while i >= 0:
            out.append(i)
            i = reduced.find(b"AA0", i + 1)
        return out

    def long_runs(self) -> list[tuple[int, int]]:
        """The digit runs of at least 7 characters (IPv4 addresses, SSNs and cards need that many)."""
        if self._long is None:
            self._long = [m.span() for m in _MASK_LONG_RUN.finditer(self.mask)] if self.has_digit else []
        return self._long

    def phone_zones(self) -> list[tuple[int, int]]:
        """(begin, stop) of the stretches of the text where the phone matcher can find a number, in order.

        A candidate (a match of ``_PH_PATTERN``) is made of the characters of ``_ZONE_RUNS["phone"]`` only, so it
        lies within one maximal run of them (a zone), and ``finditer`` walks each zone as it walks the whole
        text. Only zones with at least ``_PHONE_MIN_DIGITS`` digits can hold a number (``_has_min_digits``). A
        candidate starts at most 10 characters (two lead groups) before its first digit, and no candidate of an
        earlier zone starts after that zone's last digit, so the walk of a zone starts at ``max(first digit - 10,
        one past the previous digit)`` and stops at the zone's end."""
        if self._zones is None:
            zones: list[tuple[int, int]] = []
            if self.has_digit:
                mask = self.mask
                for m in _MASK_PHONE_ZONE.finditer(mask):
                    first = m.start()
                    zones.append((max(first - 10, mask.rfind(b"0", 0, first) + 1), m.end()))
            self._zones = zones
        return self._zones


def _has_digit(text: str) -> bool:
    """Whether ``text`` holds a character of ``\\d`` (ASCII text: ten ``in`` tests at C speed)."""
    if text.isascii():
        return any(d in text for d in "0123456789")
    return _ANY_DIGIT.search(text) is not None


# the digit runs (\d(?:[\d .\-/]*\d)?, starting and ending with a digit) of 7 characters or more
_MASK_LONG_RUN = re.compile(rb"0[0.]{5,}0")
_MASK_PHONE_ZONE = re.compile(rb"0(?:[.zxE]*0){3}[0.zxE]*")  # first digit to the end of a zone with 4+ digits
_MASK_CAPITALS = bytes(ord("A") if c in b"EU" else c if c == ord("0") else ord(" ") for c in range(256))
_MASK_ALNUM = bytes(ord("a") if c in b"0EUxl" else ord(" ") for c in range(256))  # [^\W_] or not
_MASK_ASCII: bytes = b""
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _mask_class(ch: str) -> str:
    if ch.isdecimal():  # what \d matches in a str pattern
        return "0"
    if ch in " .-/":
        return "."
    zone = _ZONE_RUNS["phone"].fullmatch(ch) is not None
    if "A" <= ch <= "Z":
        return "E" if zone else "U"
    if ch.isalnum():  # (what [^\W_] matches)
        return "x" if zone else "l"
    return "z" if zone else " "


class _MaskTable(dict):  # type: ignore[type-arg]
    """``str.translate`` table for non-ASCII text: classifies each character the first time it is seen."""

    def __missing__(self, code: int) -> str:
        found = _mask_class(chr(code))
        if len(self) < 65536:
            self[code] = found
        return found


_MASK_TABLE = _MaskTable()


def _mask(text: str) -> bytes:
    """The digit / phone mask of ``text`` (see ``_Scan``), one byte per character."""
    global _MASK_ASCII
    if not _MASK_ASCII:
        _MASK_ASCII = "".join(_mask_class(chr(c)) for c in range(128)).encode("ascii") + b" " * 128
    if text.isascii():
        return text.encode("ascii").translate(_MASK_ASCII)
    others = [m.start() for m in _NON_ASCII.finditer(text)]
    if len(others) * 8 > len(text):
        return text.translate(_MASK_TABLE).encode("ascii")
    # a few characters beyond ASCII (accents in names, a dash): '?' stands in for them, then each is classified
    mask = bytearray(text.encode("ascii", "replace").translate(_MASK_ASCII))
    table = _MASK_TABLE
    for i in others:
        mask[i] = ord(table[ord(text[i])])
    return bytes(mask)


def _finditer_window(pattern: re.Pattern[str], text: str, start: int, end: int) -> Iterable[re.Match[str]]:
    """``pattern.finditer`` over ``text[start:end]`` with the text around still visible to lookarounds: every match
    of the patterns used with it lies inside a run, and their lookaheads read at most one character past it."""
    return pattern.finditer(text, start, min(len(text), end + 1))


# E-mail: a match contains '@' and its local part is the run of local characters right before it.
_EMAIL = re.compile(_EMAIL_RX, _F)
_EMAIL_LOCAL_CHAR = re.compile(r"[!#$%&'*+\-/=?^_`{|}~.\w]")


def _emails(scan: _Scan, strict: bool) -> list[_R]:
    """``finditer`` of Presidio's pattern, tried only where it can match: a match holds an '@' and its local part
    is the run of local characters right before it, and whether the domain after an '@' matches does not depend
    on where the local part starts; so for each '@' (after the previous match) the domain is checked first, then
    the start positions of its local run from the left (the leftmost match is the one ``finditer`` returns)."""
    text = scan.text
    out = []
    pos = 0
    while True:
        at = text.find("@", pos)
        if at < 0:
            return out
        if not _EMAIL_DOMAIN.match(text, at + 1):
            pos = at + 1
            continue
        start = at
        while start > pos and _EMAIL_LOCAL_CHAR.match(text, start - 1):
            start -= 1
        for p in range(start, at):
            m = _EMAIL.match(text, p)
            if m is not None:
                if email_domain_valid(m.group(), reserved=not strict):
                    out.append(_R("EMAIL_ADDRESS", m.start(), m.end(), 1.0, "email"))
                pos = m.end()
                break
        else:
            pos = at + 1


_EMAIL_DOMAIN = re.compile(r"\w+(?:-+\w+)*(?:\.\w+(?:-+\w+)*)+\b", _F)


# URL: Presidio's four patterns. "Non schema URL" has no anchor at all (at every character it tries a run of
# [a-z0-9.-] and backtracks through ~670 TLD alternatives), so it is only tried at the start of runs that contain
# '.' followed by a letter: a match starts inside such a run, and a run shorter than 254 characters that has no
# match at its start has none further in (every match from later in the run is reachable from its start).
_URL_PATTERNS: tuple[tuple[str, re.Pattern[str], float], ...] = ()
_URL_DOT_LETTER = re.compile(r"\.[a-z]", _F)
_URL_RUN_END = re.compile(r"[a-z0-9.\-]*", _F)


def _url_runs(text: str) -> list[tuple[int, int]]:
    """The maximal runs of [a-z0-9.-] (case-insensitive) that contain '.' followed by a letter, in order."""
    runs: list[tuple[int, int]] = []
    last_end = -1
    reverse = ""
    n = len(text)
    for m in _URL_DOT_LETTER.finditer(text):
        q = m.start()
        if q < last_end:
            continue
        if not reverse:
            reverse = text[::-1]
        start = q - (_URL_RUN_END.match(reverse, n - q).end() - (n - q))
        end = _URL_RUN_END.match(text, q).end()
        runs.append((start, end))
        last_end = end
    return runs


def _url_compiled() -> tuple[tuple[str, re.Pattern[str], float], ...]:
    global _URL_PATTERNS
    if not _URL_PATTERNS:
        _URL_PATTERNS = tuple((name, re.compile(rx, _F), score) for name, rx, score in _url_patterns())
    return _URL_PATTERNS


def _urls(scan: _Scan) -> list[_R]:
    """Presidio's four URL patterns. Each match holds a host, a run of [a-z0-9.-] with '.' and a TLD, so there is
    none without such a run (``_url_runs``); a quoted match starts at the quote right before a run (or before
    "http(s)://" right before one), so it is tried only there."""
    text = scan.text
    runs = _url_runs(text)
    if not runs:
        return []
    out: list[_R] = []
    (_, standard, s_std), (_, non_schema, s_non), (_, quoted, s_q), (_, quoted_non, s_qn) = _url_compiled()
    if "://" in text:
        out += [_R("URL", m.start(), m.end(), s_std, "url") for m in standard.finditer(text)]
    if '"' in text or "'" in text:
        schema_quotes = sorted(q for p, _ in runs for q in (p - 9, p - 8) if q >= 0 and text[q] in "\"'"
                               and text.startswith("://", p - 3))
        out += [_R("URL", m.start(), m.end(), s_q, "url") for m in _matches_at(quoted, text, schema_quotes)]
        plain_quotes = [p - 1 for p, _ in runs if p > 0 and text[p - 1] in "\"'"]
        out += [_R("URL", m.start(), m.end(), s_qn, "url") for m in _matches_at(quoted_non, text, plain_quotes)]
    pos = 0
    for p, run_end in runs:
        if run_end <= pos:
            continue
        p = max(p, pos)
        if run_end - p <= 254:
            # every '.'+TLD of the run is within reach of its start: one try there (and after each match)
            while p < run_end and _tld_dot(text, p + 1, run_end):
                m = non_schema.match(text, p)
                if m is None:
                    break
                out.append(_R("URL", m.start(), m.end(), s_non, "url"))
                pos = p = m.end()  # a match ends inside its run only when its TLD does (then no path follows)
        else:
            pos = _urls_in_long_run(text, p, run_end, non_schema, s_non, out)
        # a match whose path ran past this run continues the scan from its end
    return out


def _tld_dot(text: str, start: int, end: int) -> bool:
    """Whether a '.' in ``text[start:end]`` is followed by two characters that can begin a TLD of the pattern
    (every TLD has two letters or more; characters beyond ASCII are given the benefit of the doubt)."""
    q = text.find(".", start, end)
    while q >= 0:
        pair = text[q + 1:q + 3]
        if not pair.isascii() or pair.lower() in _TLD_PAIRS:
            return True
        q = text.find(".", q + 1, end)
    return False


_TLD_PAIRS = frozenset(t[:2] for t in _URL_TLDS)
_TLD_AT: re.Pattern[str] | None = None


def _urls_in_long_run(text: str, p: int, run_end: int, non_schema: re.Pattern[str], score: float,
                      out: list[_R]) -> int:
    """The "Non schema URL" matches of a run longer than 254 characters, without trying every position: a match
    from ``p`` needs a '.' followed by a TLD within 253 characters (260 with a leading "www\\d{0,3}."), so the
    leftmost start for the next such dot ``q`` is ``q - 253`` (or a "www" a little before it). Returns where the
    scan continues."""
    global _TLD_AT
    if _TLD_AT is None:
        _TLD_AT = re.compile("|".join(f"(?:{t})" for t in _URL_TLDS), _F)
    dots = []
    q = text.find(".", p, run_end)
    while q >= 0:
        if _TLD_AT.match(text, q + 1):
            dots.append(q)
        q = text.find(".", q + 1, run_end)
    pos = p
    k = 0
    while k < len(dots):
        q = dots[k]
        if q <= pos:
            k += 1
            continue
        start = max(pos, q - 253)
        m = None
        for w in range(max(pos, q - 261), start):  # a "www." prefix reaches a little further
            if text[w:w + 3].lower() == "www":
                m = non_schema.match(text, w)
                if m is not None:
                    break
        if m is None:
            m = non_schema.match(text, start)
        if m is None:  # pragma: no cover - q - 253 always reaches q
            k += 1
            continue
        out.append(_R("URL", m.start(), m.end(), score, "url"))
        pos = m.end()
        if pos >= run_end:
            break
    return pos


# Crypto: no anchors, any '1', '3' or 'bc1' followed by 25+ characters of the class; only inside long alphanumeric
# runs (the class is a subset of [^\W_], so a match never leaves such a run).
_CRYPTO = re.compile(_CRYPTO_RX, _F)
_LONG_ALNUM = re.compile(r"(?<![^\W_])[^\W_]{26,}")
_LONG_ALNUM_MASK = b"a" * 26


def _crypto(scan: _Scan) -> list[_R]:
    text = scan.text
    out: list[_R] = []
    if _LONG_ALNUM_MASK not in scan.mask.translate(_MASK_ALNUM):
        return out  # no run of 26 letters or digits: no address
    for chunk_start, chunk_end in scan.long_chunks(26):
        for run in _LONG_ALNUM.finditer(text, chunk_start, chunk_end):
            for m in _CRYPTO.finditer(text, run.start(), run.end()):
                if crypto_valid(m.group()):
                    out.append(_R("CRYPTO", m.start(), m.end(), 1.0, "crypto"))
    return out


# IBAN: Presidio's own analyze loop (groups tried from the longest; the first that validates is kept); a match
# starts with two upper-case letters right before a digit run.
_IBAN = re.compile(_IBAN_RX, re.DOTALL | re.MULTILINE)


def _ibans(scan: _Scan) -> list[_R]:
    text = scan.text
    out: list[_R] = []
    pos = 0
    for s in scan.iban_starts():  # a match starts with two capitals right before a digit run
        if s < pos:
            continue
        m = _IBAN.match(text, s)
        if m is None:
            continue
        pos = m.end()
        for group in (3, 2, 1):
            end = m.span(group)[1] if m.span(group)[1] > 0 else m.end()
            candidate = text[s:end]
            if not candidate:
                continue
            valid = iban_valid(candidate)
            score = 0.5 if valid is None else (1.0 if valid else 0.0)
            if score > 0:
                out.append(_R("IBAN_CODE", s, end, score, "iban"))
                break
    return out


_SSN = tuple((re.compile(rx, _F), score) for _, rx, score in _SSN_PATTERNS)
_CARD = re.compile(_CREDIT_CARD_RX, _F)
_IPS = tuple((name, re.compile(rx, _F), score) for name, rx, score in _IP_PATTERNS)


_SSN_SHAPED = tuple((rx, score, needed, k == 4) for k, ((rx, score), needed) in enumerate(zip(
    _SSN, ("00000-0000", "000-000000", "000-00-0000", "000000000", "000-00-0000"))))
_DIGIT_SHAPE = {ord(d): "0" for d in "123456789"}  # (the SSN patterns use [0-9]: other digits never match)
_SSN_SEPARATORS = {ord(" "): "-", ord("."): "-"}


def _ssns(scan: _Scan, allow_samples: bool) -> list[_R]:
    text = scan.text
    out = []
    for start, end in scan.long_runs():
        if end - start < 9:
            continue
        # each pattern needs its digit groups in the run: 00000-0000, 000-000000, 000-00-0000, 000000000 and
        # 000[- .]00[- .]0000 (digits shown as 0)
        shape = text[start:end].translate(_DIGIT_SHAPE)
        spaced = shape.translate(_SSN_SEPARATORS)
        for rx, score, needed, in_spaced in _SSN_SHAPED:
            if needed not in (spaced if in_spaced else shape):
                continue
            for m in _finditer_window(rx, text, start, end):
                if ssn_valid(m.group(), allow_samples=allow_samples):
                    out.append(_R("US_SSN", m.start(), m.end(), score, "ssn"))
    return out


def _cards(scan: _Scan) -> list[_R]:
    text = scan.text
    out = []
    for start, end in scan.long_runs():
        if end - start < 13:
            continue
        for m in _finditer_window(_CARD, text, start, end):
            if luhn_valid(m.group().replace("-", "").replace(" ", "")):
                out.append(_R("CREDIT_CARD", m.start(), m.end(), 1.0, "card"))
    return out


def _ips(scan: _Scan) -> list[_R]:
    """IPv4 within digit runs with 3 dots; IPv6 within the stretches of characters an IPv6 match can hold (hex,
    ':', '.', '%' zone ids, '/' prefixes) that hold '::' or 6 colons (every IPv6 pattern needs one or the other),
    each searched on its own, with two characters after it visible to the patterns' lookaheads."""
    text = scan.text
    out = []
    (_, mapped, s1), (_, embedded, s2), (_, v4, s3), (_, v6, s4), (_, unspecified, s5) = _IPS
    for start, end in scan.long_runs():
        if text.count(".", start, end) < 3:
            continue
        for m in _finditer_window(v4, text, start, end):
            if ip_valid(m.group()):
                out.append(_R("IP_ADDRESS", m.start(), m.end(), s3, "ip"))
    if "::" not in text and not _six_close_colons(text):
        return out
    for start, end in _ipv6_runs(text):
        stop = min(len(text), end + 2)
        for rx, score in ((mapped, s1), (embedded, s2), (v6, s4), (unspecified, s5)):
            for m in rx.finditer(text, start, stop):
                if m.start() < end and ip_valid(m.group()):
                    out.append(_R("IP_ADDRESS", m.start(), m.end(), score, "ip"))
    return out


def _six_close_colons(text: str) -> bool:
    """Whether 6 colons follow each other at most 5 characters apart: what an IPv6 address without '::' holds
    (its groups have 1 to 4 hex digits)."""
    if text.count(":") < 6:
        return False
    positions = [m.start() for m in _COLON.finditer(text)]
    run = 1
    for a, b in zip(positions, positions[1:]):
        run = run + 1 if b - a <= 5 else 1
        if run == 6:
            return True
    return False


_COLON = re.compile(":")


def _ipv6_runs(text: str) -> list[tuple[int, int]]:
    """The maximal runs of ``_IPV6_CHARS`` that hold '::' or at least 6 colons, in order."""
    runs = []
    reverse = ""
    n = len(text)
    i = text.find(":")
    while i >= 0:
        if ((i == 0 or text[i - 1] not in _IPV6_ASCII) and (i + 1 == n or text[i + 1] not in _IPV6_ASCII)
                and text[max(0, i - 1):i + 2].isascii()):
            i = text.find(":", i + 1)  # a lone colon (as in JSON's "key": value): its run is just itself
            continue
        if not reverse:
            reverse = text[::-1]
        start = i - (_IPV6_CHARS.match(reverse, n - i).end() - (n - i))
        end = _IPV6_CHARS.match(text, i).end()
        if text.find("::", start, end) >= 0 or text.count(":", start, end) >= 6:
            runs.append((start, end))
        i = text.find(":", end)
    return runs


_IPV6_CHARS = re.compile(r"[0-9a-z:.%/]*", _F)  # what an IPv6 match (zone ids, prefixes, embedded IPv4) holds
_IPV6_ASCII = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:.%/")


_SECRET_COMPILED: dict[str, tuple[tuple[re.Pattern[str], float], ...]] = {}


def _secrets(scan: _Scan, recognizer: SecretRecognizer) -> list[_R]:
    """``finditer`` of the recognizer's patterns, tried only where a match can start: every match starts with
    one of its literals (case-insensitively for ``fold``), so the patterns are matched at the literals'
    occurrences, in order, each search resuming after the previous match, as ``finditer`` does."""
    if recognizer.fold:
        haystack = scan.folded
        if haystack is None:  # lower-casing moved characters: scan the text itself
            scan.secret_hits.add(recognizer.entity)
            return _secret_results(scan.text, recognizer, None)
    else:
        haystack = scan.text
    starts: list[int] = []
    for literal in recognizer.literals:
        i = haystack.find(literal)
        while i >= 0:
            starts.append(i)
            i = haystack.find(literal, i + 1)
    if not starts:
        return []
    scan.secret_hits.add(recognizer.entity)
    starts.sort()
    return _secret_results(scan.text, recognizer, starts)


def _common_substring(literals: Sequence[str]) -> str:
    """The longest substring all of ``literals`` hold ('' if none)."""
    first = min(literals, key=len)
    for size in range(len(first), 0, -1):
        for k in range(len(first) - size + 1):
            part = first[k:k + size]
            if all(part in literal for literal in literals):
                return part
    return ""


_SECRET_PLAN: tuple[tuple[SecretRecognizer, str], ...] = tuple(
    (r, _common_substring(r.literals)) for r in SECRET_RECOGNIZERS)  # (recognizer, gate)


def _secret_results(text: str, recognizer: SecretRecognizer, starts: list[int] | None) -> list[_R]:
    compiled = _SECRET_COMPILED.get(recognizer.entity)
    if compiled is None:
        compiled = tuple((re.compile(f"(?:{p.prefix})(?P<v>{p.value})", re.DOTALL | re.MULTILINE), p.score)
                         for p in recognizer.patterns)
        _SECRET_COMPILED[recognizer.entity] = compiled
    out = []
    validator = recognizer.validator
    entity = recognizer.entity
    for rx, score in compiled:
        if starts is None:
            matches: Iterable[re.Match[str]] = rx.finditer(text)
        else:
            matches = _matches_at(rx, text, starts)
        for m in matches:
            start, end = m.span("v")
            if validator is None:
                out.append(_R(entity, start, end, score, entity))
            elif validator(text[start:end]):
                out.append(_R(entity, start, end, 1.0, entity))
    return out


def _matches_at(rx: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """What ``rx.finditer(text)`` returns when every match of ``rx`` starts at one of ``starts`` (ascending)."""
    out = []
    resume = 0
    for i in starts:
        if i < resume:
            continue
        m = rx.match(text, i)
        if m is not None:
            out.append(m)
            resume = m.end() if m.end() > i else i + 1
    return out


# --- phone numbers: a port of phonenumbers' PhoneNumberMatcher (leniency VALID) and of the parsing/validation
# code it calls (phonenumbers 9.0, Apache-2.0, itself a port of Google's libphonenumber). Names follow the
# original so the two can be read side by side; the metadata is the table at the end of this module. -------------
_PH_VALID_PUNCTUATION = ("-x\u2010-\u2015\u2212\u30fc\uff0d-\uff0f \xa0\xad\u200b\u2060\u3000()"
                         "\uff08\uff09\uff3b\uff3d.\\[\\]/~\u2053\u223c\uff5e")
_PH_PLUS_CHARS = "+\uff0b"
_PH_OPENING_PARENS = "(\\[\uff08\uff3b"
_PH_CLOSING_PARENS = ")\\]\uff09\uff3d"
_PH_NON_PARENS = "[^" + _PH_OPENING_PARENS + _PH_CLOSING_PARENS + "]"
_PH_LEAD_CLASS = "[" + _PH_OPENING_PARENS + _PH_PLUS_CHARS + "]"
_PH_PUNCTUATION = "[" + _PH_VALID_PUNCTUATION + "]{0,4}"


def _ph_extn_pattern(for_parsing: bool) -> str:
    def digits(n: int) -> str:
        return "(\\d{1,%d})" % n

    separators = "[ \xa0\\t,]*"
    after_label = "[:\\.\uff0e]?[ \xa0\\t,-]*"
    explicit = "(?:e?xt(?:ensi(?:o\u0301?|\xf3))?n?|\uff45?\uff58\uff54\uff4e?|\u0434\u043e\u0431|anexo)"
    ambiguous = "(?:[x\uff58#\uff03~\uff5e]|int|\uff49\uff4e\uff54)"
    pattern = (";ext=" + digits(20) + "|" + separators + explicit + after_label + digits(20) + "#?|"
               + separators + ambiguous + after_label + digits(9) + "#?|" + "[- ]+" + digits(6) + "#")
    if for_parsing:
        no_comma = "[ \xa0\\t]*"
        pattern += ("|" + no_comma + "(?:,{2}|;)" + after_label + digits(15) + "#?"
                    + "|" + no_comma + "(?:,)+" + after_label + digits(9) + "#?")
    return pattern


_PH_I = re.UNICODE | re.IGNORECASE
_PH_PATTERN = re.compile("(?:" + _PH_LEAD_CLASS + _PH_PUNCTUATION + "){0,2}\\d{1,20}(?:" + _PH_PUNCTUATION
                         + "\\d{1,20}){0,20}(?:" + _ph_extn_pattern(False) + ")?", _PH_I)
_PH_MATCHING_BRACKETS = re.compile(
    "(?:[" + _PH_OPENING_PARENS + "])?(?:" + _PH_NON_PARENS + "+[" + _PH_CLOSING_PARENS + "])?" + _PH_NON_PARENS
    + "+(?:[" + _PH_OPENING_PARENS + "]" + _PH_NON_PARENS + "+[" + _PH_CLOSING_PARENS + "]){0,3}" + _PH_NON_PARENS
    + "*")
_PH_PUB_PAGES = re.compile("\\d{1,5}-+\\d{1,5}\\s{0,4}\\(\\d{1,4}")
_PH_SLASH_SEPARATED_DATES = re.compile("(?:(?:[0-3]?\\d/[01]?\\d)|(?:[01]?\\d/[0-3]?\\d))/(?:[12]\\d)?\\d{2}")
_PH_TIME_STAMPS = re.compile("[12]\\d{3}[-/]?[01]\\d[-/]?[0-3]\\d +[0-2]\\d$")
_PH_TIME_STAMPS_SUFFIX = re.compile(":[0-5]\\d")
_PH_INNER_MATCHES = (
    re.compile("/+(.*)"),
    re.compile("(\\([^(]*)"),
    re.compile("(?u)(?:\\s-|-\\s)\\s*(.+)"),
    re.compile("(?u)[\u2012-\u2015\uff0d]\\s*(.+)"),
    re.compile("(?u)\\.+\\s*([^.]+)"),
    re.compile("(?u)\\s+(\\S+)"),
)
_PH_BRACKETS = frozenset("()[]\uff08\uff09\uff3b\uff3d")
_PH_WIDE_HYPHENS = frozenset("\u2012\u2013\u2014\u2015\uff0d")
_PH_INNER_NEEDS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (_PH_INNER_MATCHES[0], lambda c: "/" in c),
    (_PH_INNER_MATCHES[1], lambda c: "(" in c),
    (_PH_INNER_MATCHES[2], lambda c: "-" in c and not c.isascii() or " -" in c or "- " in c or "-\t" in c
     or "\t-" in c or ("-" in c and any(ch.isspace() and ch not in " \t" for ch in c))),
    (_PH_INNER_MATCHES[3], lambda c: not _PH_WIDE_HYPHENS.isdisjoint(c)),
    (_PH_INNER_MATCHES[4], lambda c: "." in c),
    (_PH_INNER_MATCHES[5], lambda c: any(ch.isspace() for ch in c)),
)
# the same for a plain candidate (ASCII digits and " .-()/[]+" only): its only whitespace is ' ', it has no wide
# hyphen, and what _trim_unwanted_end removes from its end are the characters of _PLAIN_NON_WORD
_PH_PLAIN_INNER: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (_PH_INNER_MATCHES[0], lambda c: "/" in c),
    (_PH_INNER_MATCHES[1], lambda c: "(" in c),
    (_PH_INNER_MATCHES[2], lambda c: " -" in c or "- " in c),
    (_PH_INNER_MATCHES[4], lambda c: "." in c),
    (_PH_INNER_MATCHES[5], lambda c: " " in c),
)
_PLAIN_NON_WORD = " .-()/[]+"
_PH_LEAD_PATTERN = re.compile(_PH_LEAD_CLASS)
_PH_SECOND_NUMBER_START = re.compile("[\\\\/] *x")
_PH_UNWANTED_END_CHARS = re.compile("(?u)(?:_|[^#\\w])+$")
_PH_VALID_START_CHAR = re.compile("[" + _PH_PLUS_CHARS + "\\d]")
_PH_VALID_PHONE_NUMBER = re.compile(
    "\\d{2}|[" + _PH_PLUS_CHARS + "]*(?:[" + _PH_VALID_PUNCTUATION + "*]*\\d){3,}[" + _PH_VALID_PUNCTUATION
    + "*ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\\d]*(?:" + _ph_extn_pattern(True) + ")?", _PH_I)
_PH_EXTN = re.compile("(?:" + _ph_extn_pattern(True) + ")$", _PH_I)
_PH_PLUS_CHARS_PATTERN = re.compile("[" + _PH_PLUS_CHARS + "]+")
_PH_VALID_ALPHA_PHONE = re.compile("(?:.*?[A-Za-z]){3}.*")
_PH_CAPTURING_DIGIT = re.compile("(\\d)", re.UNICODE)
_PH_FIRST_GROUP_ONLY_PREFIX = re.compile("\\(?\\\\1\\)?")
_PH_ALPHA_MAPPINGS = {**{c: d for d, letters in (("2", "ABC"), ("3", "DEF"), ("4", "GHI"), ("5", "JKL"),
                                                 ("6", "MNO"), ("7", "PQRS"), ("8", "TUV"), ("9", "WXYZ"))
                         for c in letters}, **{d: d for d in "0123456789"}}
_PH_LATIN_BLOCKS = ((0x0000, 0x007F), (0x0080, 0x00FF), (0x0100, 0x017F), (0x0180, 0x024F), (0x0300, 0x036F),
                    (0x1E00, 0x1EFF))

# CountryCodeSource / ValidationResult values
_FROM_PLUS, _FROM_IDD, _FROM_NO_PLUS, _FROM_DEFAULT = 1, 5, 10, 20
_IS_POSSIBLE, _IS_POSSIBLE_LOCAL_ONLY, _INVALID_CC, _TOO_SHORT, _INVALID_LENGTH, _TOO_LONG = 0, 4, 1, 2, 5, 3


class _PhoneParseError(Exception):
    def __init__(self, invalid_country_code: bool = False) -> None:
        super().__init__()
        self.invalid_country_code = invalid_country_code


class _Desc(NamedTuple):
    pattern: re.Pattern[str]
    lengths: tuple[int, ...]
    local_lengths: tuple[int, ...]


class _Format(NamedTuple):
    pattern: re.Pattern[str]
    leading_digits: re.Pattern[str] | None
    national_prefix_formatting_rule: str | None
    national_prefix_optional: bool


class _Meta:
    """The parts of one region's ``PhoneMetadata`` that matching and validation use (compiled on first use)."""

    __slots__ = ("cc", "idd", "npp", "transform", "general", "types", "leading_digits", "same_mobile_fixed",
                 "formats", "shortest_own_number", "own_quick", "idd_first", "np_required", "np_free",
                 "_special", "_fixed", "_mobile", "_types_by_length", "_format_chooser", "prefix_rule_formats")

    def __init__(self, raw: tuple[Any, ...]) -> None:
        cc, idd, npp, transform, general, types, leading, same, formats = raw
        self.cc: int = cc
        self.idd = re.compile(idd) if idd is not None else None
        self.idd_first = _first_chars(idd) if idd is not None else None
        self.npp = re.compile(npp) if npp else None
        self.transform: str | None = transform
        self.general = _desc(general)
        self.types: tuple[_Desc | None, ...] = tuple(_desc(t) for t in types)
        self.leading_digits = re.compile(leading) if leading else None
        self.same_mobile_fixed: bool = same
        self.formats = tuple(_Format(re.compile(p), re.compile(ld) if ld else None, rule, optional)
                             for p, ld, rule, optional in formats or ())
        *special, self._fixed, self._mobile = self.types
        self._special = tuple(d for d in special if d is not None)
        self._types_by_length: dict[int, re.Pattern[str] | None] = {}
        self._format_chooser: re.Pattern[str] | None = None
        # the shortest national number any region of this calling code accepts (a number is valid only when one
        # of the type descriptions matches, lengths included), provided national-prefix handling can only shorten
        # a number (no transform rule, or one that keeps a captured group); else 0 (no shortcut)
        shortest = 0
        own_quick = None
        if transform is None or re.fullmatch(r"\\[0-9]", transform):
            own = [_PHONE_META[f"001/{cc}" if x == "001" else x] for x in _PHONE_CC_REGIONS.get(cc, ())]
            shortest = min((_shortest_valid(raw) for raw in own), default=0)
            if own and all(raw[4] for raw in own):
                # a valid number matches a number type of its region: the union over the calling code's regions
                valid = "|".join(dict.fromkeys(f"(?:{t[0]})" for raw in own for t in raw[5] if t is not None))
                if transform is None:
                    np = f"(?:{npp})?" if npp else ""
                    own_quick = re.compile(f"(?:{cc}{np})?{np}(?:{valid})")
                else:  # a transform keeps a suffix of the number: any suffix
                    own_quick = re.compile(f"\\d*(?:{valid})")
        self.own_quick: re.Pattern[str] | None = own_quick
        # the formats of the calling code's main region, split by whether they want the national prefix written
        # (what _national_prefix_present_if_required checks for a number without one)
        required: list[str] = []
        free: list[str] = []
        main = _PHONE_CC_REGIONS.get(cc, ("",))[0]
        main_raw = _PHONE_META.get(f"001/{cc}" if main == "001" else main)
        rule_formats: list[tuple[str | None, str, bool]] = []
        for pattern, leading, rule, optional in (main_raw[8] or ()) if main_raw else ():
            alternative = (f"(?={leading})" if leading else "") + f"(?:{pattern})"
            wants_prefix = bool(rule and not optional and not _PH_FIRST_GROUP_ONLY_PREFIX.fullmatch(rule))
            (required if wants_prefix else free).append(alternative)
            rule_formats.append((leading, pattern, wants_prefix))
        self.prefix_rule_formats: tuple[tuple[str | None, str, bool], ...] = tuple(rule_formats)
        self.np_required = re.compile("|".join(required)) if required else None
        self.np_free = re.compile("|".join(free)) if free else None
        self.shortest_own_number: int = shortest

    def is_valid_nsn(self, nsn: str) -> bool:
        """``_number_type_helper(nsn, metadata) != UNKNOWN``: the general description matches, and one of the
        number types does (only whether one does matters here, so the types that accept the length are tried as
        one pattern)."""
        if not _matches_desc(nsn, self.general):
            return False
        n = len(nsn)
        if n not in self._types_by_length:
            descs = [*self._special, self._fixed, *(() if self.same_mobile_fixed else (self._mobile,))]
            patterns = [d.pattern.pattern for d in descs if d is not None and (not d.lengths or n in d.lengths)]
            self._types_by_length[n] = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
        rx = self._types_by_length[n]
        return rx is not None and rx.fullmatch(nsn) is not None

    def choose_format(self, nsn: str) -> _Format | None:
        """``_choose_formatting_pattern_for_number``: the first format whose leading digits and pattern match
        (the formats as one pattern, each alternative ending in a named empty group that says which it was)."""
        if not self.formats:
            return None
        if self._format_chooser is None:
            self._format_chooser = re.compile("|".join(
                (f"(?={f.leading_digits.pattern})" if f.leading_digits is not None else "")
                + f"(?:{f.pattern.pattern})\\Z(?P<f{i}>)" for i, f in enumerate(self.formats)))
        m = self._format_chooser.match(nsn)
        return None if m is None else self.formats[int((m.lastgroup or "f0")[1:])]


def _shortest_valid(raw: tuple[Any, ...]) -> int:
    """The shortest national number any number type of this region accepts."""
    general = raw[4]
    general_min = min(general[1]) if general and general[1] else 0
    lengths = [min(t[1]) if t[1] else general_min for t in raw[5] if t is not None]
    return min(lengths, default=general_min)


def _desc(raw: tuple[str, tuple[int, ...], tuple[int, ...]] | None) -> _Desc | None:
    if raw is None:
        return None
    return _Desc(re.compile(raw[0]), raw[1], raw[2])


def _matches_desc(nsn: str, desc: _Desc | None) -> bool:
    if desc is None:
        return False
    if desc.lengths and len(nsn) not in desc.lengths:
        return False
    return desc.pattern.fullmatch(nsn) is not None


def _match_national_number(number: str, desc: _Desc | None) -> bool:
    return desc is not None and desc.pattern.fullmatch(number) is not None


_META_CACHE: dict[str, _Meta] = {}


def _meta(key: str) -> _Meta | None:
    meta = _META_CACHE.get(key)
    if meta is None:
        raw = _PHONE_META.get(key)
        if raw is None:
            return None
        meta = _META_CACHE[key] = _Meta(raw)
    return meta


def _meta_for_cc(cc: int, region: str) -> _Meta | None:
    return _meta(f"001/{cc}" if region == "001" else region)


def _test_number_length(number: str, meta: _Meta) -> int:
    """``_test_number_length(number, metadata)`` for PhoneNumberType.UNKNOWN (the general description)."""
    general = meta.general
    if general is None:
        return _INVALID_LENGTH
    n = len(number)
    if n in general.local_lengths:
        return _IS_POSSIBLE_LOCAL_ONLY
    lengths = general.lengths
    if lengths[0] == n:
        return _IS_POSSIBLE
    if lengths[0] > n:
        return _TOO_SHORT
    if lengths[-1] < n:
        return _TOO_LONG
    return _IS_POSSIBLE if n in lengths[1:] else _INVALID_LENGTH


def _normalize_digits_only(number: str) -> str:
    if number.isascii():
        return _NON_ASCII_DIGITS.sub("", number)
    out = []
    for ch in number:
        d = unicodedata.digit(ch, -1)
        if d != -1:
            out.append(str(d))
    return "".join(out)


_NON_ASCII_DIGITS = re.compile(r"[^0-9]+")


def _normalize(number: str) -> str:
    if _PH_VALID_ALPHA_PHONE.fullmatch(number):
        return "".join(_PH_ALPHA_MAPPINGS[c.upper()] for c in number if c.upper() in _PH_ALPHA_MAPPINGS)
    return _normalize_digits_only(number)


def _strip_national_prefix(number: str, meta: _Meta) -> tuple[str, bool]:
    """``_maybe_strip_national_prefix_carrier_code``: (number, stripped)."""
    prefix = meta.npp
    if not number or prefix is None:
        return number, False
    m = prefix.match(number)
    if not m:
        return number, False
    general = meta.general
    viable_original = _match_national_number(number, general)
    groups = m.groups()
    transform = meta.transform
    if not transform or groups[len(groups) - 1] is None:
        if viable_original and not _match_national_number(number[m.end():], general):
            return number, False
        return number[m.end():], True
    transformed = prefix.sub(transform, number, count=1)
    if viable_original and not _match_national_number(transformed, general):
        return number, False
    return transformed, True


def _extract_country_code(number: str) -> tuple[int, str]:
    if not number or number[0] == "0":
        return 0, number
    for i in range(1, min(len(number), 3) + 1):
        try:
            cc = int(number[:i])
        except ValueError:
            continue
        if cc in _PHONE_CC_REGIONS:
            return cc, number[i:]
    return 0, number


def _strip_i18n_prefix(number: str, idd: re.Pattern[str] | None, normalized: str | None = None) -> tuple[int, str]:
    """``normalized``: ``_normalize`` of ``number`` after its leading '+' signs, when the caller has it."""
    if not number:
        return _FROM_DEFAULT, number
    m = _PH_PLUS_CHARS_PATTERN.match(number)
    if m:
        return _FROM_PLUS, _normalize(number[m.end():]) if normalized is None else normalized
    number = _normalize(number) if normalized is None else normalized
    if idd is not None:
        m = idd.match(number)
        if m:
            digit = _PH_CAPTURING_DIGIT.search(number[m.end():])
            if not (digit and _normalize_digits_only(digit.group(1)) == "0"):
                return _FROM_IDD, number[m.end():]
    return _FROM_DEFAULT, number


def _maybe_extract_country_code(number: str, meta: _Meta | None,
                                normalized: str | None = None) -> tuple[int, str, int]:
    """(country calling code or 0, national number or '', CountryCodeSource)."""
    if not number:
        return 0, "", _FROM_DEFAULT
    source, full = _strip_i18n_prefix(number, meta.idd if meta is not None else None, normalized)
    if source != _FROM_DEFAULT:
        if len(full) <= 2:
            raise _PhoneParseError()
        cc, rest = _extract_country_code(full)
        if cc:
            return cc, rest, source
        raise _PhoneParseError(invalid_country_code=True)
    if meta is not None:
        cc_text = str(meta.cc)
        if full.startswith(cc_text):
            potential, _ = _strip_national_prefix(full[len(cc_text):], meta)
            if ((not _match_national_number(full, meta.general)
                 and _match_national_number(potential, meta.general))
                    or _test_number_length(full, meta) == _TOO_LONG):
                return meta.cc, potential, _FROM_NO_PLUS
    return 0, "", source


class _PhoneNumber(NamedTuple):
    cc: int
    nsn: str
    extension: str | None
    source: int
    raw: str


def _extract_possible_number(number: str) -> str:
    m = _PH_VALID_START_CHAR.search(number)
    if not m:
        return ""
    number = number[m.start():]
    last = number[-1:]
    if not (last.isalnum() or last == "#"):  # else no trailing run of '_' or non-word characters
        trailing = _PH_UNWANTED_END_CHARS.search(number)
        if trailing:
            number = number[:trailing.start()]
    if "/" in number or "\\" in number:
        second = _PH_SECOND_NUMBER_START.search(number)
        if second:
            number = number[:second.start()]
    return number


def _is_viable(number: str) -> bool:
    if len(number) < 2:
        return False
    if not number.translate(_PLAIN_NUMBER_CHARS):
        # ASCII digits, spaces and . - ( ) / [ ] + only: the pattern reduces to "two digits, or leading '+'s and
        # then at least three digits among punctuation"
        rest = number.lstrip("+")
        if "+" in rest:
            return False
        digits = sum(map(str.isdigit, rest))
        return digits >= 3 or (digits == 2 and len(number) == 2)
    return _PH_VALID_PHONE_NUMBER.fullmatch(number) is not None


class _PreParsed(NamedTuple):
    """The region-independent start of ``parse``: the possible number, its extension, whether it starts with '+',
    and its digits (after the '+')."""

    national: str
    extension: str | None
    plus: bool
    digits: str
    plain: bool  # only ASCII digits, spaces and . - ( ) / [ ] +


def _preparse(number: str) -> _PreParsed | None:
    if len(number) > 250:
        return None
    national = _extract_possible_number(number)  # candidates never hold ';phone-context=' or ';isub='
    if not _is_viable(national):
        return None
    plain = not national.translate(_PLAIN_NUMBER_CHARS)  # ASCII digits and . - ( ) / [ ] + and spaces only
    extension = None  # _maybe_strip_extension (every extension form needs a letter, '#', ',', ';' or '~')
    m = None if plain else _PH_EXTN.search(national)
    if m and _is_viable(national[:m.start()]):
        group = next((g for g in m.groups() if g is not None), None)
        if group:
            extension, national = group, national[:m.start()]
    plus = national[:1] in _PH_PLUS_CHARS and _PH_PLUS_CHARS_PATTERN.match(national)
    rest = national[plus.end():] if plus else national
    digits = _NON_ASCII_DIGITS.sub("", rest) if plain else _normalize(rest)  # no letters: no vanity number
    return _PreParsed(national, extension, bool(plus), digits, plain)


_PLAIN_NUMBER_CHARS = {ord(c): None for c in "0123456789 .-()/[]+"}


def _parse(number: str, region: str, pre: _PreParsed | None = None) -> _PhoneNumber | None:
    """``phonenumbers.parse(number, region, keep_raw_input=True)``; None where it raises. ``pre`` is
    ``_preparse(number)`` when the caller has it."""
    if pre is None:
        pre = _preparse(number)
        if pre is None:
            return None
    national = pre.national
    meta = _meta(region)
    if meta is None:
        return None
    try:
        cc, nsn, source = _maybe_extract_country_code(national, meta, pre.digits)
    except _PhoneParseError as error:
        plus = _PH_PLUS_CHARS_PATTERN.match(national)
        if not (error.invalid_country_code and plus):
            return None
        try:
            cc, nsn, source = _maybe_extract_country_code(national[plus.end():], meta)
        except _PhoneParseError:
            return None
        if cc == 0:
            return None
    target: _Meta | None = meta
    if cc:
        number_region = _PHONE_CC_REGIONS[cc][0]
        if number_region != region:
            target = _meta_for_cc(cc, number_region)
    else:
        nsn += pre.digits
        cc = meta.cc
    if len(nsn) < 2:
        return None
    if target is not None:
        potential, _ = _strip_national_prefix(nsn, target)
        if _test_number_length(potential, target) not in (_TOO_SHORT, _IS_POSSIBLE_LOCAL_ONLY, _INVALID_LENGTH):
            nsn = potential
    if len(nsn) > 17:
        return None
    return _PhoneNumber(cc, nsn, pre.extension, source, number)


def _is_valid_number(num: _PhoneNumber) -> bool:
    regions = _PHONE_CC_REGIONS.get(num.cc)
    if not regions:
        return False
    region: str | None = regions[0]
    if len(regions) > 1:
        region = None
        for candidate in regions:
            meta = _meta_for_cc(num.cc, candidate)
            if meta is None:
                continue
            if meta.leading_digits is not None:
                if meta.leading_digits.match(num.nsn):
                    region = candidate
                    break
            elif meta.is_valid_nsn(num.nsn):
                return meta.cc == num.cc  # (what the check below would find again)
        if region is None:
            return False
    meta = _meta_for_cc(num.cc, region)
    if meta is None or meta.cc != num.cc:
        return False
    return meta.is_valid_nsn(num.nsn)


def _national_prefix_present_if_required(num: _PhoneNumber) -> bool:
    if num.source != _FROM_DEFAULT:
        return True
    meta = _meta_for_cc(num.cc, _PHONE_CC_REGIONS[num.cc][0])
    if meta is None:
        return True
    fmt = meta.choose_format(num.nsn)
    if fmt is None:
        return True
    rule = fmt.national_prefix_formatting_rule
    if not rule or fmt.national_prefix_optional:
        return True
    if _PH_FIRST_GROUP_ONLY_PREFIX.fullmatch(rule):
        return True
    return _strip_national_prefix(_normalize_digits_only(num.raw), meta)[1]


def _contains_only_valid_x_chars(num: _PhoneNumber, candidate: str) -> bool:
    if "x" not in candidate and "X" not in candidate:
        return True
    i = 0
    while i < len(candidate) - 1:
        if candidate[i] in "xX":
            if candidate[i + 1] in "xX":
                return False  # carrier-code case (is_number_match): not ported, rejected (see module docstring)
            if _normalize_digits_only(candidate[i:]) != num.extension:
                return False
        i += 1
    return True


def _is_latin_letter(ch: str) -> bool:
    if ch < "\x80":
        return ch.isalpha()
    category = unicodedata.category(ch)
    if category not in ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn"):
        return False
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _PH_LATIN_BLOCKS)


def _is_invalid_punctuation(ch: str) -> bool:
    if ch < "\x80":
        return ch == "%" or ch == "$"
    return unicodedata.category(ch) == "Sc"


def _phone_min_digits() -> int:
    """Fewer digits than this are never a valid number: national numbers of the default regions, or a calling
    code (1+ digits) plus the shortest national number anywhere (general descriptions cover every type)."""
    def shortest(raw: tuple[Any, ...]) -> int:
        lengths = raw[4][1] if raw[4] else ()
        return min(lengths) if lengths else 2
    national = min(shortest(_PHONE_META[r]) for r in ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR"))
    anywhere = min(shortest(raw) for raw in _PHONE_META.values())
    return max(2, min(national, 1 + anywhere))


_PHONE_MIN_DIGITS = 0  # set once the metadata is defined (end of module)


_PlanEntry = tuple[int, str, tuple[tuple[int, str, frozenset[str]], ...]]
_RegionGroup = tuple[str, tuple[str, ...], int, "frozenset[str] | None"]


class _PhoneMatcher:
    """One text, several regions. Everything that does not depend on the region (the candidates, the order in
    which a candidate and its inner parts are tried, the checks on brackets and neighbouring letters, the start of
    the parse, and the parse of numbers written with ``+``) is computed once and shared by the regions; a cheap
    necessary condition per region skips the full parse of most national-format candidates."""

    __slots__ = ("text", "regions", "_groups", "_candidates", "_subs", "_verified", "_pre", "_plans",
                 "_checked", "_possible")

    def __init__(self, text: str, regions: Sequence[str]) -> None:
        self.text = text
        self.regions = tuple(regions)
        self._groups = _region_groups(self.regions)
        self._plans: dict[tuple[int, int | None], list[_PlanEntry]] = {}
        self._candidates: dict[int, tuple[int, str] | None] = {}
        self._subs: dict[tuple[int, str], tuple[tuple[int, str, frozenset[str]], ...]] = {}
        self._verified: dict[tuple[str, str], bool] = {}
        self._checked: dict[_PhoneNumber, bool] = {}
        self._pre: dict[str, _PreParsed] = {}
        self._possible: dict[str, frozenset[str]] = {}

    def find(self, region: str, begin: int = 0, stop: int | None = None) -> list[tuple[int, int]]:
        """``PhoneNumberMatcher(text, region, leniency=VALID)``'s matches as (start, end); from ``begin`` (where
        the matcher's search must be able to start: no candidate may cross it) up to candidates that start before
        ``stop``."""
        out = []
        plan = self._plan(begin, stop)
        k = 0
        while k < len(plan):
            start, candidate, subs = plan[k]
            if stop is not None and start >= stop:
                break
            k += 1
            for offset, sub, possible in subs:
                if region in possible and self._verify(sub, region):
                    end = offset + len(sub)
                    out.append((offset, end))
                    if end != start + len(candidate):  # an inner match: the search resumes inside the candidate
                        plan, k = self._plan(end, stop), 0
                    break
        return out

    def has_candidates(self, begin: int, stop: int | None = None) -> bool:
        """Whether ``find(region, begin, stop)`` has anything to parse, for any region."""
        return bool(self._plan(begin, stop))

    def _plan(self, index: int,
              stop: int | None = None) -> list[tuple[int, str, tuple[tuple[int, str, frozenset[str]], ...]]]:
        """The candidates from ``index`` on (those starting before ``stop``), as long as none of them matches
        (each search resumes after the previous candidate), keeping those with something worth parsing."""
        key = (index, stop)
        plan = self._plans.get(key)
        if plan is None:
            plan = []
            i = index
            text = self.text
            endpos = len(text) if stop is None else stop  # (a zone's end: no candidate crosses it)
            while True:
                # finditer walks the candidates exactly as the matcher does (each search resumes at the end of
                # the previous one) until a candidate is cut short at a second number ("…/x…")
                for m in _PH_PATTERN.finditer(text, i, endpos):
                    start, candidate = m.start(), m.group()
                    if stop is not None and start >= stop:
                        break
                    if ("/" in candidate or "\\" in candidate) and _PH_SECOND_NUMBER_START.search(candidate):
                        break
                    if _has_min_digits(candidate):
                        subs = self._sub_candidates(start, candidate)
                        if subs:
                            plan.append((start, candidate, subs))
                else:
                    break
                if stop is not None and start >= stop:
                    break
                found = self._candidate(start, endpos)  # the cut candidate, then go on after it
                if found is None:  # pragma: no cover - a match was found at this very position
                    break
                start, candidate = found
                subs = self._sub_candidates(start, candidate)
                if subs:
                    plan.append((start, candidate, subs))
                i = start + len(candidate)
            self._plans[key] = plan
        return plan

    def _candidate(self, index: int, endpos: int) -> tuple[int, str] | None:
        if index in self._candidates:
            return self._candidates[index]
        text = self.text
        digit = _ANY_DIGIT.search(text, index, endpos)
        found = None
        if digit is not None:
            # a match starts at most 10 characters (two lead groups) before its first digit
            m = _PH_PATTERN.search(text, max(index, digit.start() - 10), endpos)
            if m is not None:
                candidate = m.group()
                if "/" in candidate or "\\" in candidate:
                    second = _PH_SECOND_NUMBER_START.search(candidate)
                    if second:
                        candidate = candidate[:second.start()]
                found = (m.start(), candidate)
        self._candidates[index] = found
        return found

    def _sub_candidates(self, offset: int, candidate: str) -> tuple[tuple[int, str, frozenset[str]], ...]:
        """``_extract_match``'s tries, in order, that pass the region-independent checks of
        ``_parse_and_verify`` (the whole candidate, then the inner matches), each with the regions where it may
        be valid."""
        key = (offset, candidate)
        subs = self._subs.get(key)
        if subs is not None:
            return subs
        if not _has_min_digits(candidate):  # its inner matches have even fewer digits
            self._subs[key] = ()
            return ()
        tries: list[tuple[int, str]] = []
        if not ("/" in candidate and _PH_SLASH_SEPARATED_DATES.search(candidate)) and not (
                " " in candidate and _PH_TIME_STAMPS.search(candidate)
                and _PH_TIME_STAMPS_SUFFIX.match(self.text, offset + len(candidate))):
            tries.append((offset, candidate))
            plain = not candidate.translate(_PLAIN_NUMBER_CHARS)
            for inner, needed in (_PH_PLAIN_INNER if plain else _PH_INNER_NEEDS):
                if not needed(candidate):
                    continue  # the pattern cannot match without these characters
                group_match = inner.search(candidate)
                first = True
                while group_match:
                    if first:
                        before = candidate[:group_match.start()]
                        tries.append((offset,
                                      before.rstrip(_PLAIN_NON_WORD) if plain else _trim_unwanted_end(before)))
                        first = False
                    inside = group_match.group(1)
                    tries.append((offset + group_match.start(1),
                                  inside.rstrip(_PLAIN_NON_WORD) if plain else _trim_unwanted_end(inside)))
                    group_match = inner.search(candidate, group_match.start() + 1)
        kept = []
        for i, (sub_offset, sub) in enumerate(tries):
            if (sub_offset, sub) in tries[:i]:
                continue  # the same try again (an inner match equal to the whole one): the same outcome
            possible = self._possible.get(sub)
            if possible is None:
                possible = self._possible[sub] = self._regions_for(sub)
            if possible and self._plausible(sub, sub_offset):
                kept.append((sub_offset, sub, possible))
        subs = self._subs[key] = tuple(kept)
        return subs

    def _regions_for(self, sub: str) -> frozenset[str]:
        """The regions where ``sub`` may be a valid number (none when it does not parse). Numbers written with
        '+' may be valid anywhere; for the others ``_maybe_national`` decides per group of regions; for a plain
        number (ASCII digits and `` .-()/[]`` only) all the groups are asked at once (``_national_groups``),
        before anything else, since most candidates are no number in any region."""
        digits = sub.translate(_NUMBER_SEPARATORS)
        if digits.isascii() and digits.isdigit():
            if len(digits) < _PHONE_MIN_DIGITS:
                return _NO_REGIONS
            accept = _national_filter(self.regions)  # any group at all: one quick test rejects most
            if accept is not None and accept.match(digits) is None:
                return _NO_REGIONS
            rx, names = _national_groups(self.regions)
            m = rx.match(digits)
            allowed = [region for name, group in names if m.group(name) is not None for region in group]
            if not allowed:
                return _NO_REGIONS
            if len(sub) > 250:
                return _NO_REGIONS  # (parse refuses it)
            national = sub.lstrip(" .-()/[]").rstrip(" .-()/[]")  # _extract_possible_number, plain
            self._pre[sub] = _PreParsed(national, None, False, digits, True)
            return frozenset(allowed)
        pre = self._pre.get(sub)
        if pre is None:
            parsed = _preparse(sub)
            if parsed is None:
                return _NO_REGIONS  # parse raises whatever the region
            pre = self._pre[sub] = parsed
        if pre.plus:
            return frozenset(self.regions)
        digits = pre.digits
        n, first = len(digits), digits[:1]
        found: list[str] = []
        for same, group, shortest, idd_first in self._groups:
            if n < shortest and idd_first is not None and first not in idd_first:
                continue  # too short for a national number, and no IDD (see _maybe_national)
            if _maybe_national(digits, same, pre.plain):
                found.extend(group)
        return frozenset(found)

    def _verify(self, candidate: str, region: str) -> bool:
        """``parse`` + ``_verify`` at leniency VALID. A number whose calling code came after a '+' does not depend
        on the region, so that outcome is shared by all regions."""
        verified = self._verified
        ok = verified.get((candidate, "+"))
        if ok is None:
            ok = verified.get((candidate, region))
            if ok is None:
                num = _parse(candidate, region, self._pre[candidate])
                if num is None:
                    ok = False
                else:
                    # the rest depends on the parse only (US and CA often parse a number alike)
                    ok = self._checked.get(num)
                    if ok is None:
                        ok = self._checked[num] = (_is_valid_number(num)
                                                   and _contains_only_valid_x_chars(num, candidate)
                                                   and _national_prefix_present_if_required(num))
                verified[(candidate, "+" if num is not None and num.source == _FROM_PLUS else region)] = ok
        return ok

    def _plausible(self, candidate: str, offset: int) -> bool:
        """The region-independent checks of ``_parse_and_verify`` (brackets, page ranges, adjacent letters), and
        a digit count below which no region or calling code has a valid number."""
        if not candidate or not _has_min_digits(candidate):
            return False
        if not _PH_BRACKETS.isdisjoint(candidate) and not _PH_MATCHING_BRACKETS.fullmatch(candidate):
            return False  # (without brackets the pattern is "one or more non-brackets": it matches)
        if "(" in candidate and "-" in candidate and _PH_PUB_PAGES.search(candidate):
            return False
        text = self.text
        if offset > 0 and not _PH_LEAD_PATTERN.match(candidate):
            previous = text[offset - 1]
            if _is_invalid_punctuation(previous) or _is_latin_letter(previous):
                return False
        end = offset + len(candidate)
        if end < len(text):
            following = text[end]
            if _is_invalid_punctuation(following) or _is_latin_letter(following):
                return False
        return True


_GROUPS: dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...], int, frozenset[str] | None], ...]] = {}


def _region_groups(regions: tuple[str, ...]) -> tuple[_RegionGroup, ...]:
    """Regions that share a calling code and an IDD (US and CA) give ``_maybe_national`` the same answer:
    (representative, regions, shortest national number, first characters of the IDD or None)."""
    groups = _GROUPS.get(regions)
    if groups is None:
        by_key: dict[tuple[Any, ...], list[str]] = {}
        for region in regions:
            meta = _meta(region)
            key = (meta.cc, meta.idd.pattern if meta.idd else None) if meta is not None else (region,)
            by_key.setdefault(key, []).append(region)
        out = []
        for rs in by_key.values():
            meta = _meta(rs[0])
            out.append((rs[0], tuple(rs), meta.shortest_own_number if meta else 0,
                        (meta.idd_first if meta.idd is not None else frozenset()) if meta else None))
        groups = _GROUPS[regions] = tuple(out)
    return groups


_NUMBER_SEPARATORS = {ord(c): None for c in " .-()/[]"}  # what a plain number holds besides digits and '+'
_NO_REGIONS: frozenset[str] = frozenset()


_NATIONAL_FILTERS: dict[tuple[str, ...], re.Pattern[str] | None] = {}


def _national_filter(regions: tuple[str, ...]) -> re.Pattern[str] | None:
    """The conditions of ``_national_groups`` as alternatives: its ``match`` succeeds when one group accepts the
    digits, and stops at the first that does (None: a group accepts anything)."""
    if regions not in _NATIONAL_FILTERS:
        conditions = [c for _, _, c in _national_conditions(regions)]
        _NATIONAL_FILTERS[regions] = None if not all(conditions) else re.compile("|".join(conditions) or "(?!)")
    return _NATIONAL_FILTERS[regions]


def _national_conditions(regions: tuple[str, ...]) -> list[tuple[str, tuple[str, ...], str]]:
    """Per region group: (name, its regions, ``_maybe_national(digits, group, plain=True)`` as lookaheads: its
    IDD; or the shortest length, ``own_quick`` and the national-prefix rule; '' when it accepts anything)."""
    out = []
    for k, (representative, group, _, _) in enumerate(_region_groups(regions)):
        meta = _meta(representative)
        if meta is None:
            continue  # _maybe_national: False
        national = f"(?=\\d{{{meta.shortest_own_number}}})" if meta.shortest_own_number else ""
        if meta.own_quick is not None:
            national += f"(?=(?:{meta.own_quick.pattern})\\Z)"
        if meta.np_required is not None:
            options = [f"(?={meta.npp.pattern})"] if meta.npp is not None else []
            options += [f"(?={meta.cc})", f"(?!(?:{meta.np_required.pattern})\\Z)"]
            if meta.np_free is not None:
                options.append(f"(?=(?:{meta.np_free.pattern})\\Z)")
            national += "(?:" + "|".join(options) + ")"
        condition = ("|".join(([f"(?={meta.idd.pattern})"] if meta.idd is not None else []) + [national])
                     if national else "")
        out.append((f"g{k}", group, condition))
    return out


def _national_groups(regions: tuple[str, ...]) -> tuple[re.Pattern[str], tuple[tuple[str, tuple[str, ...]], ...]]:
    """One pattern that evaluates ``_maybe_national(digits, group, plain=True)`` for every region group at once:
    each group's conditions (``_national_conditions``) followed by an empty named group that is set when they
    hold (``(?:conditions(?P<gN>)|)``: the match always succeeds). Returns the pattern and (name, regions)."""
    found = _NATIONAL_GROUPS.get(regions)
    if found is None:
        conditions = _national_conditions(regions)
        parts = [f"(?:(?:{c})(?P<{name}>)|)" for name, _, c in conditions]
        found = _NATIONAL_GROUPS[regions] = (re.compile("".join(parts)), tuple((n, g) for n, g, _ in conditions))
    return found


_NATIONAL_GROUPS: dict[tuple[str, ...], tuple[re.Pattern[str], tuple[tuple[str, tuple[str, ...]], ...]]] = {}


def _maybe_national(digits: str, region: str, plain: bool) -> bool:
    """A necessary condition for ``digits`` (a number written without '+') to parse as a valid number in
    ``region``: the region's IDD starts them (any country may follow), or they are the calling code (optional),
    national prefixes (optional) and a national number matching a number type of the calling code; and, for a
    number written without a national prefix (``plain``: no letters, so ``digits`` are the raw input's), one whose
    format does not want it written (the first matching format decides; here: not only formats that want it)."""
    meta = _meta(region)
    if meta is None:
        return False
    idd = meta.idd
    if idd is not None and (meta.idd_first is None or digits[:1] in meta.idd_first) and idd.match(digits):
        return True
    if len(digits) < meta.shortest_own_number:
        return False
    if meta.own_quick is not None and meta.own_quick.fullmatch(digits) is None:
        return False
    if (plain and meta.np_required is not None and not (meta.npp is not None and meta.npp.match(digits))
            and not digits.startswith(str(meta.cc)) and meta.np_required.fullmatch(digits)
            and not (meta.np_free is not None and meta.np_free.fullmatch(digits))):
        return False  # read as a national number without its prefix, in a format that wants the prefix
    return True


def _first_chars(pattern: str) -> frozenset[str] | None:
    """The characters a match of ``pattern`` can start with, or None when that is not simple to tell."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser  # type: ignore[no-redef]

    def first(items: Any) -> set[str] | None:
        if not len(items):
            return None
        op, arg = items[0]
        name = str(op)
        if name == "LITERAL":
            return {chr(arg)}
        if name == "IN":
            chars: set[str] = set()
            for kind, value in arg:
                if str(kind) == "LITERAL":
                    chars.add(chr(value))
                elif str(kind) == "RANGE":
                    chars.update(chr(c) for c in range(value[0], value[1] + 1))
                else:
                    return None
            return chars
        if name == "BRANCH":
            out: set[str] = set()
            for branch in arg[1]:
                sub = first(branch)
                if sub is None:
                    return None
                out |= sub
            return out
        if name == "SUBPATTERN":
            return first(arg[-1])
        if name in ("MAX_REPEAT", "MIN_REPEAT") and arg[0] >= 1:
            return first(arg[2])
        return None

    try:
        found = first(parser.parse(pattern))
    except Exception:  # noqa: BLE001 - no shortcut then
        return None
    return frozenset(found) if found else None


def _has_min_digits(candidate: str) -> bool:
    return sum(map(str.isdigit, candidate)) >= _PHONE_MIN_DIGITS


_ANY_DIGIT = re.compile(r"\d")


def _trim_unwanted_end(candidate: str) -> str:
    m = _PH_UNWANTED_END_CHARS.search(candidate)
    return candidate[:m.start()] if m else candidate


class _Zones:
    """Where a redacted text can hold a finding that the pass before did not see.

    Redacting replaces findings by placeholders ('<', capitals, '_', '>'), characters that no recognizer's match
    can contain. Take the stretch of text a recognizer's matches can be made of (its "zone" kind: digits and
    separators for cards, SSNs, IBANs, IPv4; non-space characters for e-mail, URLs, crypto, IPv6; the phone
    matcher's candidate characters). A zone that does not touch a placeholder is the text the previous pass saw,
    bounded by the same characters that no match crosses, so ``finditer`` (or the phone matcher) walks it the same
    way and finds the same matches, and every one that was a finding was replaced. So a new finding lies in a
    zone right before or after a placeholder; there it is looked for (the whole recognizer runs when such a zone
    could hold one of its matches at all)."""

    __slots__ = ("text", "placeholders", "_reversed", "_windows")

    def __init__(self, text: str) -> None:
        self.text = text
        self.placeholders = [m.span() for m in _PLACEHOLDER.finditer(text)]
        self._reversed: str | None = None
        self._windows: dict[str, list[tuple[int, int]]] = {}

    def windows(self, kind: str) -> list[tuple[int, int]]:
        """(start, end) of the zones of ``kind`` right before and right after each placeholder."""
        found = self._windows.get(kind)
        if found is None:
            run = _ZONE_RUNS[kind]
            text, n = self.text, len(self.text)
            if self._reversed is None:
                self._reversed = text[::-1]
            found = []
            for a, b in self.placeholders:
                left = a - (run.match(self._reversed, n - a).end() - (n - a))
                if left < a:
                    found.append((left, a))
                right = run.match(text, b).end()
                if right > b:
                    found.append((b, right))
            self._windows[kind] = found
        return found

    def suspects(self, wanted: frozenset[str]) -> frozenset[str]:
        """The entities of ``wanted`` whose zone test (``_ZONE_TESTS``) holds for a zone next to a placeholder
        (every zone is cut out once)."""
        text = self.text
        out = []
        for kind, entities in _ZONE_KINDS:
            asked = [e for e in entities if e in wanted]
            if not asked:
                continue
            zones = [text[a:b] for a, b in self.windows(kind)]
            if zones:
                out.extend(e for e in asked if any(map(_ZONE_TESTS[e][1], zones)))
        return frozenset(out)

    def phone(self, regions: Sequence[str]) -> bool:
        """Whether the phone matcher finds a number in a candidate zone next to a placeholder: it can start at
        the zone's start (no candidate crosses the character before it) and stops at its end."""
        matcher: _PhoneMatcher | None = None
        text = self.text
        for begin, stop in self.windows("phone"):
            if not _ANY_DIGIT.search(text, begin, stop):
                continue
            if matcher is None:
                matcher = _PhoneMatcher(text, regions)
            if not matcher.has_candidates(begin, stop):
                continue
            if any(matcher.find(region, begin, stop) for region in regions):
                return True
        return False


_PLACEHOLDER = re.compile(r"<[A-Z_]+>")
_ZONE_RUNS: dict[str, re.Pattern[str]] = {
    # every character a match can hold (the patterns are the judges: a superset is fine)
    "digits": re.compile(r"[\dA-Z .\-/]*"),  # cards [\d -], SSNs [0-9 .-], IBANs [A-Z0-9 -], IPv4 [0-9./]
    "word": re.compile(r"[^\s<>]*"),  # e-mail, URLs (quotes included), crypto, IPv6
    # phone candidates: digits, the leading and punctuation classes, and what the extension part of the pattern
    # allows (";ext=", "ext"/"extension"/"anexo"/"int"/"доб", ':', '.', ',', '#', '~', tab)
    "phone": re.compile(
        "[" + _PH_VALID_PUNCTUATION + "\\d" + _PH_OPENING_PARENS + _PH_PLUS_CHARS
        + ";=:,.#\uff03~\uff5e\t\uff0e\xf3\u0301exntsioa\u0434\u043e\u0431"
        + "\uff45\uff58\uff54\uff4e\uff49]*", _PH_I),
}
_IBAN_START = re.compile(r"[A-Z]{2}[0-9]{2}")
_ZONE_KINDS = (("digits", ("CREDIT_CARD", "US_SSN", "IBAN_CODE")),
               ("word", ("IP_ADDRESS", "EMAIL_ADDRESS", "URL", "CRYPTO")))
_ZONE_TESTS: dict[str, tuple[str, Callable[[str], bool]]] = {
    # what a zone must contain to hold a match at all
    "CREDIT_CARD": ("digits", lambda z: sum(map(str.isdigit, z)) >= 13),
    "US_SSN": ("digits", lambda z: sum(map(str.isdigit, z)) >= 9),
    "IBAN_CODE": ("digits", lambda z: _IBAN_START.search(z) is not None),
    "IP_ADDRESS": ("word", lambda z: z.count(".") >= 3 or z.count(":") >= 2),
    "EMAIL_ADDRESS": ("word", lambda z: "@" in z),
    "URL": ("word", lambda z: _URL_DOT_LETTER.search(z) is not None),
    "CRYPTO": ("word", lambda z: len(z) >= 26),
}


def _phones(scan: _Scan, regions: Sequence[str]) -> list[_R]:
    """The matcher's numbers over the regions, looked for only in the stretches that can hold one (see
    ``_Scan.phone_zones``): each is walked on its own, as the matcher walks it within the whole text."""
    zones = scan.phone_zones()
    if not zones:
        return []
    matcher = _PhoneMatcher(scan.text, regions)
    spans: dict[tuple[int, int], None] = {}
    for begin, stop in zones:
        if not matcher.has_candidates(begin, stop):
            continue  # (most zones: nothing worth parsing in any region)
        for region in regions:
            for span in matcher.find(region, begin, stop):
                spans[span] = None
    return [_R("PHONE_NUMBER", start, end, 0.4, "phone") for start, end in spans]


# --- context words (Presidio's LemmaContextAwareEnhancer over spaCy tokens with lemma = lower-case text) ---------
_CONTEXT_FACTOR, _CONTEXT_MIN_SCORE, _CONTEXT_PREFIX_COUNT = 0.35, 0.4, 5
# An approximation of spaCy's English tokenizer, good enough to count the keywords before a finding: contractions
# split ("do" "n't"); URLs (with a scheme, or a dotted name ending in 2+ letters, and a path) whole; runs of word
# characters with '.', '+', '@', '%', '?', '&', '#', '~' inside them kept together (e-mail addresses, "v1.2.3"),
# and ':', '<', '>', '=', '/' too unless a letter follows ("10:30", "client_ip=10.0.0.1" but "key", "=",
# "value"), ',' before a digit, '-' between a letter and a digit ("ORD-2024"; spaCy splits it before a letter and
# between digits); every other character alone; a whitespace run is a token unless it is the single space between
# two tokens (a run starting with a space loses that space, as in spaCy).
_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|[^\W\d_]+(?![\w.+@%?&#~:<>=/,'-])|\d+(?![\w.+@%?&#~:<>=/,-])"  # the common cases first (same tokens)
    r"|[^\W\d_]+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b"
    r"|(?i:[a-z][a-z0-9+.-]*://)[^\s\"'<>()\[\]{}]*[^\s\"'<>()\[\]{}.,;:!?]"
    r"|(?:[\w.+-]+@)?[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,63}(?::\d{2,5})?"
    r"(?:[/?#][^\s\"'<>()\[\]{}]*[^\s\"'<>()\[\]{}.,;:!?])?"
    r"|(?:[\w.+@%?&#~]|[:<>=/](?![^\W\d_])|(?<=[^\W\d_])-(?=\d)|,(?=\d))*[\w/]|\S"
)


class _Context:
    """Context words for the results of one text (Presidio: a result is boosted when one of its entity's words is
    inside one of the 6 keywords ending at the result's token, or inside the first keyword from that token on).

    Tokens never span whitespace, so the text is walked back from a result chunk by chunk: a chunk of letters
    only is one token (the tokenizer's first alternative takes it whole), anything else is tokenized on its own,
    and a whitespace run other than one space is a token too. The walk stops at the 6th keyword, or where no
    context word occurs any further back."""

    __slots__ = ("text", "lower", "_aligned", "_first", "_forward", "_reverse")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self._aligned = len(self.lower) == len(text)  # (else offsets in ``lower`` are not offsets in ``text``)
        self._first: dict[str, int] = {}
        self._forward: dict[int, tuple[str | None, bool]] = {}
        self._reverse = ""

    def boosted(self, entity: str, start: int) -> bool:
        words = _CONTEXT.get(entity)
        if not words:
            return False
        first = self._first.get(entity)
        if first is None:
            found = [i for i in (self.lower.find(w) for w in words) if i >= 0]
            first = self._first[entity] = (min(found) if self._aligned else 0) if found else -1
        if first < 0:
            return False
        forward, own = self._keyword_from(start)
        if forward is not None and any(w in forward for w in words):
            return True
        wanted = _CONTEXT_PREFIX_COUNT + (0 if own else 1)  # the result's own token counts among the 6
        return self._before_holds(start, words, wanted, first)

    def _before_holds(self, start: int, words: tuple[str, ...], wanted: int, first: int) -> bool:
        """Whether one of the last ``wanted`` keywords that end by ``start`` holds one of ``words``; no keyword
        before the chunk of ``first`` (the first occurrence of a word) can."""
        text = self.text
        n = len(text)
        if not self._reverse:
            self._reverse = text[::-1]
        reverse = self._reverse
        chunk_start = start - len(_REVERSE_CHUNK.match(reverse, n - start).group())
        count = 0
        # the result's own chunk: its tokens before the result's token
        tokens = []
        if chunk_start < start:
            for m in _TOKEN.finditer(text, chunk_start):
                if m.end() > start:
                    break
                tokens.append(m)
        for m in reversed(tokens):
            lemma = _token_text(m).lower()
            if lemma and _is_keyword(lemma):
                if any(w in lemma for w in words):
                    return True
                count += 1
                if count == wanted:
                    return False
        pos = chunk_start
        while pos > 0 and pos > first:
            m = _REVERSE_WS_CHUNK.match(reverse, n - pos)
            space, chunk = m.group(1), m.group(2)
            if space and space != " ":  # a whitespace token: a keyword, never holding a word
                count += 1
                if count == wanted:
                    return False
            end = pos - len(space)
            pos = end - len(chunk)
            if not chunk:
                break
            if chunk.isalpha():
                lemma = chunk[::-1].lower()
                if _is_keyword(lemma):
                    if any(w in lemma for w in words):
                        return True
                    count += 1
                    if count == wanted:
                        return False
                continue
            for m in reversed(list(_TOKEN.finditer(text, pos, end))):
                lemma = _token_text(m).lower()
                if lemma and _is_keyword(lemma):
                    if any(w in lemma for w in words):
                        return True
                    count += 1
                    if count == wanted:
                        return False
        return False

    def _keyword_from(self, start: int) -> tuple[str | None, bool]:
        """The first keyword among the tokens that end after ``start`` (the result's token on), and whether it is
        the result's own token."""
        found = self._forward.get(start)
        if found is None:
            found = (None, False)
            for m in _TOKEN.finditer(self.text, self.text.rfind(" ", 0, start) + 1):
                if m.end() <= start:
                    continue
                lemma = _token_text(m).lower()
                if lemma and _is_keyword(lemma):
                    found = (lemma, m.start() <= start)
                    break
            self._forward[start] = found
        return found


_REVERSE_CHUNK = re.compile(r"\S*")  # over the reversed text: the chunk's characters before a position
_REVERSE_WS_CHUNK = re.compile(r"(\s*)(\S*)")  # the whitespace before a chunk start, and the chunk before that


def _token_text(m: re.Match[str]) -> str:
    """A token's text; a whitespace run is a token unless it is one space, and loses a leading space ('' = no
    token)."""
    token = m.group()
    if m.lastgroup == "ws":
        if token == " ":
            return ""
        if token[0] == " ":
            return token[1:]
    return token


def _is_keyword(lemma: str) -> bool:
    """NlpArtifacts.set_keywords: not a stop word, not punctuation, not "-PRON-"/"be"; keywords are split on ':',
    so a lemma containing ':' is not itself in the keyword list and never counts. (Not memoized: lemmas are the
    user's words, e-mail addresses and keys, and nothing of the text is kept once a call returns.)"""
    if lemma in _STOP_WORDS or lemma == "be" or ":" in lemma:
        return False
    return lemma[0].isalnum() or not all(unicodedata.category(c)[0] == "P" for c in lemma)


def _enhance_using_context(text: str, results: list[_R]) -> None:
    context = _Context(text)
    for r in results:
        if context.boosted(r.entity, r.start):
            score = r.score + _CONTEXT_FACTOR
            score = max(score, _CONTEXT_MIN_SCORE)
            r.score = min(score, 1.0)


# --- optional NER through Presidio -------------------------------------------------------------------------------
class PresidioRedactor(Redactor):
    """:class:`Redactor` plus PERSON and LOCATION from a spaCy NER model through Presidio's ``SpacyRecognizer``.

    Needs ``presidio-analyzer`` and an installed spaCy pipeline with an ``ner`` component (``model``: a package
    name or a path). When either is missing it still redacts everything else, says why in :attr:`reason` (and in a
    log warning), and :attr:`available` is False; its policy then equals the plain redactor's.
    """

    KNOWN_ENTITIES = ALL_ENTITIES | frozenset(NER_ENTITIES)

    def __init__(self, model: str = "en_core_web_sm", **options: Any) -> None:
        super().__init__(**options)
        self.model = model
        self.available = False
        self.reason = ""
        self._analyzer: Any = None
        try:
            self._analyzer = _presidio_ner_analyzer(model)
        except _NerUnavailable as exc:
            self.reason = str(exc)
            logger.warning("PresidioRedactor: NER disabled (%s); redacting without PERSON/LOCATION", exc)
        else:
            self.available = True
            self.policy += f"+ner:{model.rstrip('/').rsplit('/', 1)[-1]}"

    def _finds_anything(self, text: str, wanted: frozenset[str], secrets: frozenset[str] | None = None) -> bool:
        if super()._finds_anything(text, wanted, secrets):
            return True
        ner_wanted = [e for e in NER_ENTITIES if e in wanted]  # a model's findings are not local: look again
        return bool(self.available and ner_wanted and self._analyzer.analyze(text=text, language="en",
                                                                             entities=ner_wanted))

    def _analyze(self, text: str, wanted: frozenset[str], scan: _Scan | None = None) -> list[_R]:
        results = super()._analyze(text, wanted, scan)
        ner_wanted = [e for e in NER_ENTITIES if e in wanted]
        if not self.available or not text or not ner_wanted:
            return results
        found = self._analyzer.analyze(text=text, language="en", entities=ner_wanted)
        ner = [_R(r.entity_type, r.start, r.end, float(r.score), "ner") for r in found]
        if not ner:
            return results
        return _remove_duplicates(results + [r for r in ner if r.score >= self.score_threshold])


class _NerUnavailable(Exception):
    pass


def _presidio_ner_analyzer(model: str) -> Any:
    try:
        import spacy  # noqa: F401 - optional dependency
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
    except ImportError as exc:
        raise _NerUnavailable(f"presidio-analyzer/spaCy not installed ({exc.name}); "
                              "pip install 'inferwatch[presidio]'") from None
    import importlib.util
    from pathlib import Path

    if not (Path(model).exists() or importlib.util.find_spec(model.replace("-", "_")) is not None):
        raise _NerUnavailable(f"spaCy model {model!r} is not installed (no package or directory of that name)")
    provider = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": model}],
        "ner_model_configuration": {
            "model_to_presidio_entity_mapping": {"PER": "PERSON", "PERSON": "PERSON", "LOC": "LOCATION",
                                                 "LOCATION": "LOCATION", "GPE": "LOCATION", "FAC": "LOCATION"},
            "labels_to_ignore": ["ORG", "ORGANIZATION", "CARDINAL", "EVENT", "LANGUAGE", "LAW", "MONEY", "ORDINAL",
                                 "PERCENT", "PRODUCT", "QUANTITY", "WORK_OF_ART", "NORP", "DATE", "TIME"],
        },
    })  # fmt: skip
    try:
        engine = provider.create_engine()
    except Exception as exc:  # noqa: BLE001 - any loading failure means "no NER", never a crash
        raise _NerUnavailable(f"spaCy model {model!r} failed to load: {exc}") from None
    nlp = engine.nlp.get("en") if isinstance(getattr(engine, "nlp", None), dict) else None
    if nlp is not None and not any(nlp.get_pipe_meta(name).factory in ("ner", "beam_ner", "entity_ruler")
                                   for name in nlp.pipe_names):
        raise _NerUnavailable(f"spaCy model {model!r} has no entity recognizer ('ner' or 'entity_ruler')")
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])


def redact(text: str, *, entities: Iterable[str] | None = None) -> RedactionResult:
    """Redact ``text`` with :data:`DEFAULT_REDACTOR`."""
    return DEFAULT_REDACTOR.redact(text, entities=entities)


# --- wiring that needs the data above ----------------------------------------------------------------------------
_PHONE_MIN_DIGITS = _phone_min_digits()

DEFAULT_REDACTOR = Redactor()
"""Shared instance: every entity, Presidio's default score threshold (0), context words on."""
