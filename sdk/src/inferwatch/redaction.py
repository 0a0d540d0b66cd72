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

It is fast because it never runs a recognizer where it cannot match: cheap prefilters (``'@' in text``, digit
runs, literal key prefixes) pick the few places worth a look, and each of Presidio's patterns is then applied
there only, precompiled, with Python's ``re``; the phone matcher shares everything that does not depend on the
region between the 8 regions. ``bench/redaction.py`` measures it against Presidio on the corpus (about 12x
``AnalyzerEngine``'s throughput with a blank spaCy pipeline, same findings on every text).

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
                      prefix=r"(?i:aws_?secret(?:_?access_?key)?)[\"']?\s*[:=]\s*[\"']?"),), ("aws",), fold=True),
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
    # the value is never a placeholder (so "password: <PASSWORD>" stays as it is)
    SecretRecognizer("PASSWORD", (
        SecretPattern("password", r"(?!<[A-Z_]+>)[^\s\"',;]{3,}", 0.7,
                      prefix=r"(?i:pass(?:word|wd)|pwd|secret)[\"']?\s*[:=]\s*[\"']?"),),
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
    """Luhn checksum of a string of digits (Presidio's CreditCardRecognizer.__luhn_checksum)."""
    values = [int(d) for d in digits]
    total = sum(values[-1::-2])
    for d in values[-2::-2]:
        total += sum(int(x) for x in str(d * 2))
    return total % 10 == 0


_SAMPLE_SSNS = frozenset({"123456789", "987654320", "078051120"})


def ssn_valid(text: str, *, allow_samples: bool = False) -> bool:
    """Presidio's UsSsnRecognizer.invalidate_result, inverted (``allow_samples``: published samples count)."""
    delimiters = {c for c in text if c in ".- "}
    if len(delimiters) > 1:
        return False  # mismatched delimiters
    digits = "".join(c for c in text if c.isdigit())
    if not digits or all(c == digits[0] for c in digits):
        return False
    if digits[3:5] == "00" or digits[5:] == "0000" or digits[:3] in ("000", "666"):
        return False
    return allow_samples or digits not in _SAMPLE_SSNS


_B58 = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
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
            index = _B58.find(bytes([char]))
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
        results = self._analyze(text, wanted)
        out = text
        for _ in range(8):
            if not results:
                break
            written: dict[str, int] = {}
            replaced = _replace(out, _resolve(out, results), written)
            if replaced == out:  # pragma: no cover - no pattern matches a placeholder
                break
            out = replaced
            for entity, n in written.items():
                counts[entity] = counts.get(entity, 0) + n
            if not self._finds_anything(out, wanted):
                break
            results = self._analyze(out, wanted)
        return RedactionResult(out, counts)

    # -- internals ------------------------------------------------------------------------------------------------
    def _pick(self, entities: Iterable[str] | None) -> frozenset[str]:
        if entities is None:
            return self.entities
        return self.entities & frozenset(entities)

    def _raw(self, text: str, wanted: frozenset[str], *, first: bool = False) -> list[list[_R]]:
        """Each recognizer's results (cheapest first); ``first``: stop at the first recognizer that finds any."""
        out: list[list[_R]] = []
        if not text or not wanted:
            return out
        scan = _Scan(text)
        for recognizer in SECRET_RECOGNIZERS:
            if recognizer.entity in wanted:
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

    def _analyze(self, text: str, wanted: frozenset[str]) -> list[_R]:
        results = [r for found in self._raw(text, wanted) for r in _remove_duplicates(found)]
        if not results:
            return []
        if self.context:
            _enhance_using_context(text, results)
        threshold = self.score_threshold
        return _remove_duplicates([r for r in results if r.score >= threshold])

    def _finds_anything(self, text: str, wanted: frozenset[str]) -> bool:
        """Whether ``text``, a redacted text, still holds a finding (see ``_Zones``)."""
        if self.score_threshold > 0:
            return bool(self._analyze(text, wanted))  # context words may lift a score over the threshold
        # every raw result scores above 0. Secrets: all of the text (their prefixes may span whitespace; cheap)
        if self._raw(text, wanted & SECRET_ENTITIES, first=True):
            return True
        zones = _Zones(text)
        if not zones.placeholders:
            return bool(self._raw(text, wanted - SECRET_ENTITIES, first=True))
        suspects = frozenset(e for e in wanted & _ZONE_TESTS.keys() if zones.may_hold(e))
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
    """Per-text prefilter state shared by the recognizers (computed lazily, once)."""

    __slots__ = ("text", "_runs", "_lower", "_chunks")

    def __init__(self, text: str) -> None:
        self.text = text
        self._runs: list[tuple[int, int]] | None = None
        self._lower: str | None = None
        self._chunks: dict[int, list[tuple[int, int]]] = {}

    def long_chunks(self, n: int) -> list[tuple[int, int]]:
        """(start, end) of the whitespace-separated chunks of at least ``n`` characters."""
        found = self._chunks.get(n)
        if found is None:
            text = self.text
            found = []
            pos = 0
            for chunk in text.split():
                if len(chunk) >= n:
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

    def digit_runs(self) -> list[tuple[int, int]]:
        """Maximal runs of digits, spaces, '.', '-', '/' that start with a digit (their last digit ends them)."""
        if self._runs is None:
            self._runs = [m.span() for m in _DIGIT_RUN.finditer(self.text)]
        return self._runs


_DIGIT_RUN = re.compile(r"\d(?:[\d .\-/]*\d)?")


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
_URL_RUN_CHAR = re.compile(r"[a-z0-9.\-]", _F)
_URL_RUN_END = re.compile(r"[a-z0-9.\-]*", _F)
_URL_ASCII = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")


def _url_runs(text: str) -> list[tuple[int, int]]:
    """The maximal runs of [a-z0-9.-] (case-insensitive) that contain '.' followed by a letter, in order."""
    runs: list[tuple[int, int]] = []
    last_end = -1
    for m in _URL_DOT_LETTER.finditer(text):
        q = m.start()
        if q < last_end:
            continue
        start = q
        while start > 0:
            c = text[start - 1]
            if c in _URL_ASCII or (c >= "\x80" and _URL_RUN_CHAR.match(c)):
                start -= 1
            else:
                break
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
    text = scan.text
    out: list[_R] = []
    (_, standard, s_std), (_, non_schema, s_non), (_, quoted, s_q), (_, quoted_non, s_qn) = _url_compiled()
    if "://" in text:
        out += [_R("URL", m.start(), m.end(), s_std, "url") for m in standard.finditer(text)]
    if '"' in text or "'" in text:
        out += [_R("URL", m.start(), m.end(), s_q, "url") for m in quoted.finditer(text)]
        out += [_R("URL", m.start(), m.end(), s_qn, "url") for m in quoted_non.finditer(text)]
    pos = 0
    for p, run_end in _url_runs(text):
        if run_end <= pos:
            continue
        p = max(p, pos)
        if run_end - p <= 254:
            # every '.'+TLD of the run is within reach of its start: one try there (and after each match)
            while p < run_end:
                m = non_schema.match(text, p)
                if m is None:
                    break
                out.append(_R("URL", m.start(), m.end(), s_non, "url"))
                pos = p = m.end()  # a match ends inside its run only when its TLD does (then no path follows)
        else:
            pos = _urls_in_long_run(text, p, run_end, non_schema, s_non, out)
        # a match whose path ran past this run continues the scan from its end
    return out


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


def _crypto(scan: _Scan) -> list[_R]:
    text = scan.text
    out = []
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
    for start, _ in scan.digit_runs():
        s = start - 2
        if s < pos or not ("A" <= text[s] <= "Z" and "A" <= text[s + 1] <= "Z"):
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


_SSN_ANY = re.compile(r"[0-9]{3}(?:[0-9]{2}-?|-[0-9]{2}|[- .][0-9]{2}[- .])[0-9]{4}")  # any of the 5, unanchored


def _ssns(scan: _Scan, allow_samples: bool) -> list[_R]:
    text = scan.text
    out = []
    for start, end in scan.digit_runs():
        if end - start < 9 or not _SSN_ANY.search(text, start, end):
            continue
        for rx, score in _SSN:
            for m in _finditer_window(rx, text, start, end):
                if ssn_valid(m.group(), allow_samples=allow_samples):
                    out.append(_R("US_SSN", m.start(), m.end(), score, "ssn"))
    return out


def _cards(scan: _Scan) -> list[_R]:
    text = scan.text
    out = []
    for start, end in scan.digit_runs():
        if end - start < 13:
            continue
        for m in _finditer_window(_CARD, text, start, end):
            if luhn_valid(m.group().replace("-", "").replace(" ", "")):
                out.append(_R("CREDIT_CARD", m.start(), m.end(), 1.0, "card"))
    return out


def _ips(scan: _Scan) -> list[_R]:
    text = scan.text
    out = []
    (_, mapped, s1), (_, embedded, s2), (_, v4, s3), (_, v6, s4), (_, unspecified, s5) = _IPS
    for start, end in scan.digit_runs():
        if end - start < 7 or text.count(".", start, end) < 3:
            continue
        for m in _finditer_window(v4, text, start, end):
            if ip_valid(m.group()):
                out.append(_R("IP_ADDRESS", m.start(), m.end(), s3, "ip"))
    if "::" in text or _six_close_colons(text):  # every IPv6 pattern needs '::' or 6 colons within 30 characters
        for rx, score in ((mapped, s1), (embedded, s2), (v6, s4), (unspecified, s5)):
            for m in rx.finditer(text):
                if ip_valid(m.group()):
                    out.append(_R("IP_ADDRESS", m.start(), m.end(), score, "ip"))
    return out


def _six_close_colons(text: str) -> bool:
    positions: list[int] = []
    i = text.find(":")
    while i >= 0:
        positions.append(i)
        if len(positions) >= 6 and i - positions[-6] <= 30:
            return True
        i = text.find(":", i + 1)
    return False


_SECRET_COMPILED: dict[str, tuple[tuple[re.Pattern[str], float], ...]] = {}


def _secrets(scan: _Scan, recognizer: SecretRecognizer) -> list[_R]:
    haystack = scan.lower if recognizer.fold else scan.text
    found = [i for i in (haystack.find(literal) for literal in recognizer.literals) if i >= 0]
    if not found:
        return []
    # every pattern's match starts with one of its literals: scanning starts at the first one
    pos = min(found) if len(haystack) == len(scan.text) else 0
    compiled = _SECRET_COMPILED.get(recognizer.entity)
    if compiled is None:
        compiled = tuple((re.compile(f"(?:{p.prefix})(?P<v>{p.value})", re.DOTALL | re.MULTILINE), p.score)
                         for p in recognizer.patterns)
        _SECRET_COMPILED[recognizer.entity] = compiled
    out = []
    text = scan.text
    validator = recognizer.validator
    for rx, score in compiled:
        for m in rx.finditer(text, pos):
            start, end = m.span("v")
            if validator is None:
                out.append(_R(recognizer.entity, start, end, score, recognizer.entity))
            elif validator(text[start:end]):
                out.append(_R(recognizer.entity, start, end, 1.0, recognizer.entity))
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
                 "_special", "_fixed", "_mobile")

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
        for pattern, leading, rule, optional in (main_raw[8] or ()) if main_raw else ():
            alternative = (f"(?={leading})" if leading else "") + f"(?:{pattern})"
            if rule and not optional and not _PH_FIRST_GROUP_ONLY_PREFIX.fullmatch(rule):
                required.append(alternative)
            else:
                free.append(alternative)
        self.np_required = re.compile("|".join(required)) if required else None
        self.np_free = re.compile("|".join(free)) if free else None
        self.shortest_own_number: int = shortest

    def is_valid_nsn(self, nsn: str) -> bool:
        """``_number_type_helper(nsn, metadata) != UNKNOWN``."""
        if not _matches_desc(nsn, self.general):
            return False
        for desc in self._special:
            if _matches_desc(nsn, desc):
                return True
        if _matches_desc(nsn, self._fixed):
            return True
        return not self.same_mobile_fixed and _matches_desc(nsn, self._mobile)


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
                region = candidate
                break
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
    for fmt in meta.formats:  # _choose_formatting_pattern_for_number
        if (fmt.leading_digits is None or fmt.leading_digits.match(num.nsn)) and fmt.pattern.fullmatch(num.nsn):
            rule = fmt.national_prefix_formatting_rule
            if not rule or fmt.national_prefix_optional:
                return True
            if _PH_FIRST_GROUP_ONLY_PREFIX.fullmatch(rule):
                return True
            return _strip_national_prefix(_normalize_digits_only(num.raw), meta)[1]
    return True


def _contains_only_valid_x_chars(num: _PhoneNumber, candidate: str) -> bool:
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

    __slots__ = ("text", "regions", "_groups", "_candidates", "_subs", "_verified", "_pre", "_plans")

    def __init__(self, text: str, regions: Sequence[str]) -> None:
        self.text = text
        self.regions = tuple(regions)
        self._groups = _region_groups(self.regions)
        self._plans: dict[tuple[int, int | None], list[_PlanEntry]] = {}
        self._candidates: dict[int, tuple[int, str] | None] = {}
        self._subs: dict[tuple[int, str], tuple[tuple[int, str, frozenset[str]], ...]] = {}
        self._verified: dict[tuple[str, str], bool] = {}
        self._pre: dict[str, _PreParsed] = {}

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
            while True:
                # finditer walks the candidates exactly as the matcher does (each search resumes at the end of
                # the previous one) until a candidate is cut short at a second number ("…/x…")
                for m in _PH_PATTERN.finditer(text, i):
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
                found = self._candidate(start)  # the cut candidate, then go on after it
                if found is None:  # pragma: no cover - a match was found at this very position
                    break
                start, candidate = found
                subs = self._sub_candidates(start, candidate)
                if subs:
                    plan.append((start, candidate, subs))
                i = start + len(candidate)
            self._plans[key] = plan
        return plan

    def _candidate(self, index: int) -> tuple[int, str] | None:
        if index in self._candidates:
            return self._candidates[index]
        text = self.text
        digit = _ANY_DIGIT.search(text, index)
        found = None
        if digit is not None:
            # a match starts at most 10 characters (two lead groups) before its first digit
            m = _PH_PATTERN.search(text, max(index, digit.start() - 10))
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
        tries: list[tuple[int, str]] = []
        if not _has_min_digits(candidate):  # its inner matches have even fewer digits
            self._subs[key] = ()
            return ()
        if not ("/" in candidate and _PH_SLASH_SEPARATED_DATES.search(candidate)) and not (
                " " in candidate and _PH_TIME_STAMPS.search(candidate)
                and _PH_TIME_STAMPS_SUFFIX.match(self.text, offset + len(candidate))):
            tries.append((offset, candidate))
            for inner, needed in _PH_INNER_NEEDS:
                if not needed(candidate):
                    continue  # the pattern cannot match without these characters
                group_match = inner.search(candidate)
                first = True
                while group_match:
                    if first:
                        tries.append((offset, _trim_unwanted_end(candidate[:group_match.start()])))
                        first = False
                    tries.append((offset + group_match.start(1), _trim_unwanted_end(group_match.group(1))))
                    group_match = inner.search(candidate, group_match.start() + 1)
        kept = []
        for sub_offset, sub in tries:
            if not self._plausible(sub, sub_offset):
                continue
            pre = self._pre.get(sub)
            if pre is None:
                parsed = _preparse(sub)
                if parsed is None:
                    continue  # parse raises whatever the region
                pre = self._pre[sub] = parsed
            if pre.plus:
                possible = frozenset(self.regions)
            else:
                digits = pre.digits
                n, first = len(digits), digits[:1]
                allowed: list[str] = []
                for same, group, shortest, idd_first in self._groups:
                    if n < shortest and idd_first is not None and first not in idd_first:
                        continue  # too short for a national number, and no IDD (see _maybe_national)
                    if _maybe_national(digits, same, pre.plain):
                        allowed.extend(group)
                possible = frozenset(allowed)
            if possible:
                kept.append((sub_offset, sub, possible))
        subs = self._subs[key] = tuple(kept)
        return subs

    def _verify(self, candidate: str, region: str) -> bool:
        """``parse`` + ``_verify`` at leniency VALID. A number whose calling code came after a '+' does not depend
        on the region, so that outcome is shared by all regions."""
        verified = self._verified
        ok = verified.get((candidate, "+"))
        if ok is None:
            ok = verified.get((candidate, region))
            if ok is None:
                num = _parse(candidate, region, self._pre[candidate])
                ok = bool(num is not None and _is_valid_number(num)
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

    def may_hold(self, entity: str) -> bool:
        kind, test = _ZONE_TESTS[entity]
        text = self.text
        return any(test(text[a:b]) for a, b in self.windows(kind))

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
    if not scan.digit_runs():
        return []
    matcher = _PhoneMatcher(scan.text, regions)
    spans: dict[tuple[int, int], None] = {}
    for region in regions:
        for span in matcher.find(region):
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
    """Context words for the results of one text. A boost needs one of the entity's context words inside one of
    the 6 keywords ending at the result's token, so nothing is tokenized when no such word occurs before the
    result, and otherwise only back to the first occurrence (or until 6 keywords are found)."""

    __slots__ = ("text", "lower", "_first", "_windows")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self._first: dict[str, int] = {}
        self._windows: dict[int, tuple[int, list[str]]] = {}

    def boosted(self, entity: str, start: int) -> bool:
        words = _CONTEXT.get(entity)
        if not words:
            return False
        first = self._first.get(entity)
        if first is None:
            found = [i for i in (self.lower.find(w) for w in words) if i >= 0]
            first = self._first[entity] = min(found) if found and len(self.lower) == len(self.text) else (
                0 if found else -1)
        if first < 0:
            return False
        return any(w in k for k in self._keywords(start, first) for w in words)

    def _keywords(self, start: int, first: int) -> list[str]:
        """Presidio's context for a result at ``start``: the 6 keywords ending at the token that holds ``start``
        (backwards), plus the first keyword from that token on (forwards: ``context_suffix_count`` is 0, but the
        walk collects one keyword). Tokenized no further back than needed: 80, 160, 320… characters, or to
        ``first``, the first occurrence of a context word (no keyword before it can hold one)."""
        text = self.text
        limit = text.rfind(" ", 0, first) + 1 if first > 0 else 0  # a token boundary at or before ``first``
        cached = self._windows.get(start)
        if cached is not None and cached[0] <= limit:
            return cached[1]
        window = 80
        while True:
            # from a space at least ``window`` characters back (never after the result's own chunk), or ``limit``
            lo = min(max(limit, text.rfind(" ", 0, max(0, start - window)) + 1), text.rfind(" ", 0, start) + 1)
            tokens: list[str] = []  # before the result's token
            forward = None  # the first keyword from the result's token on
            own = False  # whether that is the result's token itself
            for m in _TOKEN.finditer(text, lo):
                token = m.group()
                if m.lastgroup == "ws":
                    if token == " ":
                        continue
                    if token[0] == " ":
                        token = token[1:]
                if m.end() <= start:
                    tokens.append(token)
                    continue
                lemma = token.lower()
                if _is_keyword(lemma):
                    forward = lemma
                    own = m.start() <= start
                    break
            out: list[str] = [] if forward is None else [forward]
            wanted = _CONTEXT_PREFIX_COUNT + (0 if own else 1)  # the result's token counts among the 6
            backward = 0
            for token in reversed(tokens):
                lemma = token.lower()
                if _is_keyword(lemma):
                    out.append(lemma)
                    backward += 1
                    if backward == wanted:
                        break
            if backward == wanted or lo <= limit:
                self._windows[start] = (0 if backward == wanted else lo, out)
                return out
            window *= 2


def _is_keyword(lemma: str) -> bool:
    # NlpArtifacts.set_keywords: not a stop word, not punctuation, not "-PRON-"/"be"; keywords are split on ':',
    # so a lemma containing ':' is not itself in the keyword list and never counts
    if lemma in _STOP_WORDS or lemma == "be" or ":" in lemma:
        return False
    return not all(unicodedata.category(c)[0] == "P" for c in lemma)


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

    def _finds_anything(self, text: str, wanted: frozenset[str]) -> bool:
        if super()._finds_anything(text, wanted):
            return True
        ner_wanted = [e for e in NER_ENTITIES if e in wanted]  # a model's findings are not local: look again
        return bool(self.available and ner_wanted and self._analyzer.analyze(text=text, language="en",
                                                                             entities=ner_wanted))

    def _analyze(self, text: str, wanted: frozenset[str]) -> list[_R]:
        results = super()._analyze(text, wanted)
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


# --- generated data: do not edit by hand -------------------------------------------------------------------------
# Regenerate with ``.venv/bin/python tests/sdk/test_redaction.py --print-data`` (needs presidio-analyzer,
# phonenumbers, tldextract and spaCy); ``test_embedded_data_matches_the_reference_libraries`` fails when stale.
# Sources: Presidio's UrlRecognizer TLD alternation (in order) and iban_patterns (MIT), the ICANN section of the
# public-suffix list snapshot bundled with tldextract (MPL-2.0), spaCy's English stop words (MIT), and the
# numbering-plan metadata of phonenumbers (Apache-2.0): per region (calling code, IDD, national prefix for
# parsing and its transform, general description, number types (premium, toll-free, shared cost, VoIP,
# personal, pager, UAN, voicemail, fixed line, mobile) as (pattern, lengths, local-only lengths), leading digits,
# "same mobile and fixed-line pattern", and for the main regions of the default regions' calling codes the
# number formats (pattern, last leading-digits pattern, national-prefix formatting rule, optional)).

_URL_TLDS = tuple('''
    com edu gov int mil net onl org pro red tel uno xxx academy accountant accountants actor adult africa agency
    airforce apartments app archi army art asia associates attorney auction audio auto autos baby band bar
    bargains beer berlin best bet bid bike bio black blackfriday blog blue boats bond boo boston bot boutique
    build builders business buzz cab cafe cam camera camp capital car cards care careers cars casa cash casino
    catering center ceo cfd charity chat cheap christmas church city claims cleaning click clinic clothing cloud
    club codes coffee college com community company computer condos construction consulting contact contractors
    cooking cool coupons courses credit creditcard cricket cruises cyou dad dance date dating day degree
    delivery democrat dental dentist desi design dev diamonds diet digital direct directory discount doctor dog
    domains download earth eco education email energy engineer engineering enterprises equipment esq estate
    events exchange expert exposed express fail faith family fans farm fashion feedback film finance financial
    fish fishing fit fitness flights florist flowers football forsale foundation fun fund furniture futbol fyi
    gallery game games garden gay gdn gifts gives giving glass global gmbh gold golf graphics gratis green gripe
    group guide guitars guru hair hamburg haus health healthcare help hiphop hockey holdings holiday homes horse
    hospital host hosting house how icu info ink institute insure international investments irish jewelry jetzt
    juegos kaufen kids kitchen kiwi krd kyoto land lat law lawyer lease legal lgbt life lighting limited limo
    link live loan loans lol london love ltd ltda luxury maison management market marketing markets mba media
    melbourne meme memorial men miami mobi moda moe mom money monster mortgage motorcycles mov movie nagoya name
    navy network new news ngo ninja now nyc observer okinawa one ong onl online organic osaka page paris
    partners parts party pet phd photo photography photos pics pictures pink pizza place plumbing plus poker
    porn press pro productions prof promo properties property protection pub quest racing recipes red rehab
    reise reisen rent rentals repair report republican rest restaurant review reviews rip rocks rodeo rsvp run
    saarland sale salon sarl sbs school schule science services sex sexy sh shoes shop shopping show singles
    site skin soccer social software solar solutions soy space spiegel study style sucks supply support surf
    surgery systems tax taxi team tech technology tel theater tips tires today tools top tours town toys trade
    training tube uk university uno vacations ventures vet video villas vin vip vision vlaanderen vodka vote
    voting voyage wales wang watch webcam website wedding wiki wine work works world wtf xyz yoga yokohama you
    zone ac ad ae af ag ai al am an ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bv
    bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi
    fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io
    iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh
    mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl
    pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr st su sv sx sy sz tc td
    tf tg th tj tk tl tm tn to tp tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw
'''.split())

_IBAN_FORMATS = {
    'AL': 'N4 N4 C4 C4 C4 C4', 'AD': 'N4 N4 C4 C4 C4', 'AT': 'N4 N4 N4 N4', 'AZ': 'C4 N4 N4 N4 N4 N4',
    'BH': 'A4 C4 C4 C4 C2', 'BY': 'C4 N4 C4 C4 C4 C4', 'BE': 'N4 N4 N4', 'BA': 'N4 N4 N4 N4',
    'BR': 'N4 N4 N4 N4 N4 N3 A C', 'BG': 'A4 N4 N N C2 C4 C2', 'CR': '0 N3 N4 N4 N4 N2', 'HR': 'N4 N4 N4 N4 N',
    'CY': 'N4 N4 C4 C4 C4 C4', 'CZ': 'N4 N4 N4 N4 N4', 'DK': 'N4 N4 N4 N2', 'DO': 'A4 N4 N4 N4 N4 N4',
    'TL': 'N4 N4 N4 N4 N3', 'EE': 'N4 N4 N4 N4', 'FO': 'N4 N4 N4 N2', 'FI': 'N4 N4 N4 N2',
    'FR': 'N4 N4 N2 C2 C4 C4 C N2', 'GE': 'C2 N2 N4 N4 N4 N2', 'DE': 'N4 N4 N4 N4 N2', 'GI': 'A4 C4 C4 C4 C3',
    'GR': 'N4 N3 C C4 C4 C4 C3', 'GL': 'N4 N4 N4 N2', 'GT': 'C4 C4 C4 C4 C4 C4', 'HU': 'N4 N4 N4 N4 N4 N4',
    'IS': 'N4 N4 N4 N4 N4 N2', 'IE': 'C4 N4 N4 N4 N2', 'IL': 'N4 N4 N4 N4 N3', 'IT': 'A N3 N4 N3 C C3 C C4 C3',
    'JO': 'A4 N4 N4 N4 N4 N4 N2', 'KZ': 'N3 C C4 C4 C4', 'XK': 'N4 N4 N4 N4', 'KW': 'A4 C4 C4 C4 C4 C4 C2',
    'LV': 'A4 C4 C4 C4 C', 'LB': 'N4 C4 C4 C4 C4 C4', 'LI': 'N4 N C3 C4 C4 C', 'LT': 'N4 N4 N4 N4',
    'LU': 'N3 C C4 C4 C4', 'MT': 'A4 N4 N C3 C4 C4 C4 C3', 'MR': 'N4 N4 N4 N4 N4 N3',
    'MU': 'A4 N4 N4 N4 N4 N3 A', 'MD': 'C4 C4 C4 C4 C4', 'MC': 'N4 N4 N2 C2 C4 C4 C N2', 'ME': 'N4 N4 N4 N4 N2',
    'NL': 'A4 N4 N4 N2', 'MK': 'N3 C C4 C4 C N2', 'NO': 'N4 N4 N3', 'PK': 'C4 N4 N4 N4 N4',
    'PS': 'C4 N4 N4 N4 N4 N', 'PL': 'N4 N4 N4 N4 N4 N4', 'PT': 'N4 N4 N4 N4 N', 'QA': 'A4 C4 C4 C4 C4 C',
    'RO': 'A4 C4 C4 C4 C4', 'SM': 'A N3 N4 N3 C C4 C4 C3', 'SA': 'N2 C2 C4 C4 C4 C4', 'RS': 'N4 N4 N4 N4 N2',
    'SK': 'N4 N4 N4 N4 N4', 'SI': 'N4 N4 N4 N3', 'ES': 'N4 N4 N4 N4 N4', 'SE': 'N4 N4 N4 N4 N4',
    'CH': 'N4 N C3 C4 C4 C', 'TN': 'N4 N4 N4 N4 N4', 'TR': 'N4 N C3 C4 C4 C4 C2', 'AE': 'N4 N4 N4 N4 N3',
    'GB': 'A4 N4 N4 N4 N2', 'VA': 'N4 N4 N4 N4 N2', 'VG': 'C4 N4 N4 N4 N4', 'EG': 'N4 N4 N4 N4 N4 N4 N',
    'IQ': 'A4 N4 N4 N4 N3', 'LY': 'N4 N4 N4 N4 N4 N', 'LC': 'A4 C4 C4 C4 C4 C4 C4',
    'SC': 'A4 N4 N4 N4 N4 N4 A3', 'UA': 'N4 N2 C4 C4 C4 C4 C3',
}

_PSL_TLDS = frozenset('''
    aaa aarp abb abbott abbvie abc able abogado abudhabi ac academy accenture accountant accountants aco actor
    ad ads adult ae aeg aero aetna af afl africa ag agakhan agency ai aig airbus airforce airtel akdn al alibaba
    alipay allfinanz allstate ally alsace alstom am amazon americanexpress americanfamily amex amfam amica
    amsterdam analytics android anquan anz ao aol apartments app apple aq aquarelle ar arab aramco archi army
    arpa art arte as asda asia associates at athleta attorney au auction audi audible audio auspost author auto
    autos aw aws ax axa az azure ba baby baidu banamex band bank bar barcelona barclaycard barclays barefoot
    bargains baseball basketball bauhaus bayern bb bbc bbt bbva bcg bcn be beats beauty beer bentley berlin best
    bestbuy bet bf bg bh bharti bi bible bid bike bing bingo bio biz bj black blackfriday blockbuster blog
    bloomberg blue bm bms bmw bn bnpparibas bo boats boehringer bofa bom bond boo book booking bosch bostik
    boston bot boutique box br bradesco bridgestone broadway broker brother brussels bs bt build builders
    business buy buzz bv bw by bz bzh ca cab cafe cal call calvinklein cam camera camp canon capetown capital
    capitalone car caravan cards care career careers cars casa case cash casino cat catering catholic cba cbn
    cbre cc cd center ceo cern cf cfa cfd cg ch chanel channel charity chase chat cheap chintai christmas chrome
    church ci cipriani circle cisco citadel citi citic city cl claims cleaning click clinic clinique clothing
    cloud club clubmed cm cn co coach codes coffee college cologne com commbank community company compare
    computer comsec condos construction consulting contact contractors cooking cool coop corsica country coupon
    coupons courses cpa cr credit creditcard creditunion cricket crown crs cruise cruises cu cuisinella cv cw cx
    cy cymru cyou cz dad dance data date dating datsun day dclk dds de deal dealer deals degree delivery dell
    deloitte delta democrat dental dentist desi design dev dhl diamonds diet digital direct directory discount
    discover dish diy dj dk dm dnp do docs doctor dog domains dot download drive dtv dubai dunlop dupont durban
    dvag dvr dz earth eat ec eco edeka edu education ee eg email emerck energy engineer engineering enterprises
    epson equipment ericsson erni es esq estate et eu eurovision eus events exchange expert exposed express
    extraspace fage fail fairwinds faith family fan fans farm farmers fashion fast fedex feedback ferrari
    ferrero fi fidelity fido film final finance financial fire firestone firmdale fish fishing fit fitness fj
    flickr flights flir florist flowers fly fm fo foo food football ford forex forsale forum foundation fox fr
    free fresenius frl frogans frontier ftr fujitsu fun fund furniture futbol fyi ga gal gallery gallo gallup
    game games gap garden gay gb gbiz gd gdn ge gea gent genting george gf gg ggee gh gi gift gifts gives giving
    gl glass gle global globo gm gmail gmbh gmo gmx gn godaddy gold goldpoint golf goo goodyear goog google gop
    got gov gp gq gr grainger graphics gratis green gripe grocery group gs gt gu gucci guge guide guitars guru
    gw gy hair hamburg hangout haus hbo hdfc hdfcbank health healthcare help helsinki here hermes hiphop
    hisamitsu hitachi hiv hk hkt hm hn hockey holdings holiday homedepot homegoods homes homesense honda horse
    hospital host hosting hot hotels hotmail house how hr hsbc ht hu hughes hyatt hyundai ibm icbc ice icu id ie
    ieee ifm ikano il im imamat imdb immo immobilien in inc industries infiniti info ing ink institute insurance
    insure int international intuit investments io ipiranga iq ir irish is ismaili ist istanbul it itau itv
    jaguar java jcb je jeep jetzt jewelry jio jll jmp jnj jo jobs joburg jot joy jp jpmorgan jprs juegos juniper
    kaufen kddi ke kerryhotels kerryproperties kfh kg ki kia kids kim kindle kitchen kiwi km kn koeln komatsu
    kosher kp kpmg kpn kr krd kred kuokgroup kw ky kyoto kz la lacaixa lamborghini lamer lancaster land
    landrover lanxess lasalle lat latino latrobe law lawyer lb lc lds lease leclerc lefrak legal lego lexus lgbt
    li lidl life lifeinsurance lifestyle lighting like lilly limited limo lincoln link live living lk llc llp
    loan loans locker locus lol london lotte lotto love lpl lplfinancial lr ls lt ltd ltda lu lundbeck luxe
    luxury lv ly ma madrid maif maison makeup man management mango map market marketing markets marriott
    marshalls mattel mba mc mckinsey md me med media meet melbourne meme memorial men menu merck merckmsd mg mh
    miami microsoft mil mini mint mit mitsubishi mk ml mlb mls mma mn mo mobi mobile moda moe moi mom monash
    money monster mormon mortgage moscow moto motorcycles mov movie mp mq mr ms msd mt mtn mtr mu museum music
    mv mw mx my mz na nab nagoya name navy nba nc ne nec net netbank netflix network neustar new news next
    nextdirect nexus nf nfl ng ngo nhk ni nico nike nikon ninja nissan nissay nl no nokia norton now nowruz
    nowtv nr nra nrw ntt nu nyc nz obi observer office okinawa olayan olayangroup ollo om omega one ong onion
    onl online ooo open oracle orange org organic origins osaka otsuka ott ovh pa page panasonic paris pars
    partners parts party pay pccw pe pet pf pfizer ph pharmacy phd philips phone photo photography photos physio
    pics pictet pictures pid pin ping pink pioneer pizza pk pl place play playstation plumbing plus pm pn pnc
    pohl poker politie porn post pr pramerica praxi press prime pro prod productions prof progressive promo
    properties property protection pru prudential ps pt pub pw pwc py qa qpon quebec quest racing radio re read
    realestate realtor realty recipes red redstone redumbrella rehab reise reisen reit reliance ren rent rentals
    repair report republican rest restaurant review reviews rexroth rich richardli ricoh ril rio rip ro rocks
    rodeo rogers room rs rsvp ru rugby ruhr run rw rwe ryukyu sa saarland safe safety sakura sale salon samsclub
    samsung sandvik sandvikcoromant sanofi sap sarl sas save saxo sb sbi sbs sc scb schaeffler schmidt
    scholarships school schule schwarz science scot sd se search seat secure security seek select sener services
    seven sew sex sexy sfr sg sh shangrila sharp shell shia shiksha shoes shop shopping shouji show si silk sina
    singles site sj sk ski skin sky skype sl sling sm smart smile sn sncf so soccer social softbank software
    sohu solar solutions song sony soy spa space sport spot sr srl ss st stada staples star statebank statefarm
    stc stcgroup stockholm storage store stream studio study style su sucks supplies supply support surf surgery
    suzuki sv swatch swiss sx sy sydney systems sz tab taipei talk taobao target tatamotors tatar tattoo tax
    taxi tc tci td tdk team tech technology tel temasek tennis teva tf tg th thd theater theatre tiaa tickets
    tienda tips tires tirol tj tjmaxx tjx tk tkmaxx tl tm tmall tn to today tokyo tools top toray toshiba total
    tours town toyota toys tr trade trading training travel travelers travelersinsurance trust trv tt tube tui
    tunes tushu tv tvs tw tz ua ubank ubs ug uk unicom university uno uol ups us uy uz va vacations vana
    vanguard vc ve vegas ventures verisign vermögensberater vermögensberatung versicherung vet vg vi viajes
    video vig viking villas vin vip virgin visa vision viva vivo vlaanderen vn vodka volvo vote voting voto
    voyage vu wales walmart walter wang wanggou watch watches weather weatherchannel webcam weber website wed
    wedding weibo weir wf whoswho wien wiki williamhill win windows wine winners wme wolterskluwer woodside work
    works world wow ws wtc wtf xbox xerox xihuan xin xxx xyz yachts yahoo yamaxun yandex ye yodobashi yoga
    yokohama you youtube yt yun zappos zara zero zip zm zone zuerich zw ελ ευ бг бел дети ею католик ком мкд мон
    москва онлайн орг рус рф сайт срб укр қаз հայ ישראל קום ابوظبي ارامكو الاردن البحرين الجزائر السعودية
    السعوديه السعودیة السعودیۃ العليان المغرب اليمن امارات ايران ایران بارت بازار بيتك بھارت تونس سودان سوريا
    سورية شبكة عراق عرب عمان فلسطين قطر كاثوليك كوم مصر مليسيا موريتانيا موقع همراه پاكستان پاکستان ڀارت कॉम नेट
    भारत भारतम् भारोत संगठन বাংলা ভারত ভাৰত ਭਾਰਤ ભારત ଭାରତ இந்தியா இலங்கை சிங்கப்பூர் భారత్ ಭಾರತ ഭാരതം ලංකා คอม
    ไทย ລາວ გე みんな アマゾン クラウド グーグル コム ストア セール ファッション ポイント 世界 中信 中国 中國 中文网 亚马逊 企业 佛山 信息 健康 八卦 公司 公益 台湾 台灣 商城 商店 商标
    嘉里 嘉里大酒店 在线 大拿 天主教 娱乐 家電 广东 微博 慈善 我爱你 手机 招聘 政务 政府 新加坡 新闻 时尚 書籍 机构 淡马锡 游戏 澳門 澳门 点看 移动 组织机构 网址 网店 网站 网络 联通 臺灣
    谷歌 购物 通販 集团 電訊盈科 飞利浦 食品 餐厅 香格里拉 香港 닷넷 닷컴 삼성 한국
'''.split())

_PSL_WILDCARD_TLDS = frozenset(['bd', 'ck', 'er', 'fk', 'jm', 'kh', 'mm', 'np', 'pg'])

_STOP_WORDS = frozenset('''
    'd 'll 'm 're 's 've a about above across after afterwards again against all almost alone along already also
    although always am among amongst amount an and another any anyhow anyone anything anyway anywhere are around
    as at back be became because become becomes becoming been before beforehand behind being below beside
    besides between beyond both bottom but by ca call can cannot could did do does doing done down due during
    each eight either eleven else elsewhere empty enough even ever every everyone everything everywhere except
    few fifteen fifty first five for former formerly forty four from front full further get give go had has have
    he hence her here hereafter hereby herein hereupon hers herself him himself his how however hundred i if in
    indeed into is it its itself just keep last latter latterly least less made make many may me meanwhile might
    mine more moreover most mostly move much must my myself n't name namely neither never nevertheless next nine
    no nobody none noone nor not nothing now nowhere n‘t n’t of off often on once one only onto or other others
    otherwise our ours ourselves out over own part per perhaps please put quite rather re really regarding same
    say see seem seemed seeming seems serious several she should show side since six sixty so some somehow
    someone something sometime sometimes somewhere still such take ten than that the their them themselves then
    thence there thereafter thereby therefore therein thereupon these they third this those though three through
    throughout thru thus to together too top toward towards twelve twenty two under unless until up upon us used
    using various very via was we well were what whatever when whence whenever where whereafter whereas whereby
    wherein whereupon wherever whether which while whither who whoever whole whom whose why will with within
    without would yet you your yours yourself yourselves ‘d ‘ll ‘m ‘re ‘s ‘ve ’d ’ll ’m ’re ’s ’ve
'''.split())

_PHONE_CC_REGIONS: dict[int, tuple[str, ...]] = {
    1: ('US',
        'AG',
        'AI',
        'AS',
        'BB',
        'BM',
        'BS',
        'CA',
        'DM',
        'DO',
        'GD',
        'GU',
        'JM',
        'KN',
        'KY',
        'LC',
        'MP',
        'MS',
        'PR',
        'SX',
        'TC',
        'TT',
        'VC',
        'VG',
        'VI'),
    7: ('RU', 'KZ'), 20: ('EG',), 27: ('ZA',), 30: ('GR',), 31: ('NL',), 32: ('BE',), 33: ('FR',), 34: ('ES',),
    36: ('HU',), 39: ('IT', 'VA'), 40: ('RO',), 41: ('CH',), 43: ('AT',), 44: ('GB', 'GG', 'IM', 'JE'),
    45: ('DK',), 46: ('SE',), 47: ('NO', 'SJ'), 48: ('PL',), 49: ('DE',), 51: ('PE',), 52: ('MX',), 53: ('CU',),
    54: ('AR',), 55: ('BR',), 56: ('CL',), 57: ('CO',), 58: ('VE',), 60: ('MY',), 61: ('AU', 'CC', 'CX'),
    62: ('ID',), 63: ('PH',), 64: ('NZ',), 65: ('SG',), 66: ('TH',), 81: ('JP',), 82: ('KR',), 84: ('VN',),
    86: ('CN',), 90: ('TR',), 91: ('IN',), 92: ('PK',), 93: ('AF',), 94: ('LK',), 95: ('MM',), 98: ('IR',),
    211: ('SS',), 212: ('MA', 'EH'), 213: ('DZ',), 216: ('TN',), 218: ('LY',), 220: ('GM',), 221: ('SN',),
    222: ('MR',), 223: ('ML',), 224: ('GN',), 225: ('CI',), 226: ('BF',), 227: ('NE',), 228: ('TG',),
    229: ('BJ',), 230: ('MU',), 231: ('LR',), 232: ('SL',), 233: ('GH',), 234: ('NG',), 235: ('TD',),
    236: ('CF',), 237: ('CM',), 238: ('CV',), 239: ('ST',), 240: ('GQ',), 241: ('GA',), 242: ('CG',),
    243: ('CD',), 244: ('AO',), 245: ('GW',), 246: ('IO',), 247: ('AC',), 248: ('SC',), 249: ('SD',),
    250: ('RW',), 251: ('ET',), 252: ('SO',), 253: ('DJ',), 254: ('KE',), 255: ('TZ',), 256: ('UG',),
    257: ('BI',), 258: ('MZ',), 260: ('ZM',), 261: ('MG',), 262: ('RE', 'YT'), 263: ('ZW',), 264: ('NA',),
    265: ('MW',), 266: ('LS',), 267: ('BW',), 268: ('SZ',), 269: ('KM',), 290: ('SH', 'TA'), 291: ('ER',),
    297: ('AW',), 298: ('FO',), 299: ('GL',), 350: ('GI',), 351: ('PT',), 352: ('LU',), 353: ('IE',),
    354: ('IS',), 355: ('AL',), 356: ('MT',), 357: ('CY',), 358: ('FI', 'AX'), 359: ('BG',), 370: ('LT',),
    371: ('LV',), 372: ('EE',), 373: ('MD',), 374: ('AM',), 375: ('BY',), 376: ('AD',), 377: ('MC',),
    378: ('SM',), 380: ('UA',), 381: ('RS',), 382: ('ME',), 383: ('XK',), 385: ('HR',), 386: ('SI',),
    387: ('BA',), 389: ('MK',), 420: ('CZ',), 421: ('SK',), 423: ('LI',), 500: ('FK',), 501: ('BZ',),
    502: ('GT',), 503: ('SV',), 504: ('HN',), 505: ('NI',), 506: ('CR',), 507: ('PA',), 508: ('PM',),
    509: ('HT',), 590: ('GP', 'BL', 'MF'), 591: ('BO',), 592: ('GY',), 593: ('EC',), 594: ('GF',), 595: ('PY',),
    596: ('MQ',), 597: ('SR',), 598: ('UY',), 599: ('CW', 'BQ'), 670: ('TL',), 672: ('NF',), 673: ('BN',),
    674: ('NR',), 675: ('PG',), 676: ('TO',), 677: ('SB',), 678: ('VU',), 679: ('FJ',), 680: ('PW',),
    681: ('WF',), 682: ('CK',), 683: ('NU',), 685: ('WS',), 686: ('KI',), 687: ('NC',), 688: ('TV',),
    689: ('PF',), 690: ('TK',), 691: ('FM',), 692: ('MH',), 800: ('001',), 808: ('001',), 850: ('KP',),
    852: ('HK',), 853: ('MO',), 855: ('KH',), 856: ('LA',), 870: ('001',), 878: ('001',), 880: ('BD',),
    881: ('001',), 882: ('001',), 883: ('001',), 886: ('TW',), 888: ('001',), 960: ('MV',), 961: ('LB',),
    962: ('JO',), 963: ('SY',), 964: ('IQ',), 965: ('KW',), 966: ('SA',), 967: ('YE',), 968: ('OM',),
    970: ('PS',), 971: ('AE',), 972: ('IL',), 973: ('BH',), 974: ('QA',), 975: ('BT',), 976: ('MN',),
    977: ('NP',), 979: ('001',), 992: ('TJ',), 993: ('TM',), 994: ('AZ',), 995: ('GE',), 996: ('KG',),
    998: ('UZ',),
}

_PHONE_META: dict[str, tuple[Any, ...]] = {
    'US': (1,
           '011',
           '1',
           None,
           ('[2-9]\\d{9}|3\\d{6}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('983[2-57-9]\\d{6}|(?:2(?:0[1-35-9]|1[02-9]|2[03-57-9]|3[1459]|4[08]|5[1-46]|6[0279]|7[02469'
              ']|8[13])|3(?:0[1-57-9]|1[02-9]|2[013-79]|3[0-24679]|4[167]|5[0-3]|6[01349]|8[056])|4(?:0[124-9]'
              '|1[02-579]|2[3-5]|3[0245]|4[023578]|58|6[349]|7[02589]|8[04])|5(?:0[1-57-9]|1[0235-8]|20|3[0149'
              ']|4[01]|5[179]|6[1-47]|7[0-5]|8[0256])|6(?:0[1-35-9]|1[024-9]|2[03689]|3[016]|4[0156]|5[01679]|'
              '6[0-279]|78|8[0-269])|7(?:0[1-46-8]|1[2-9]|2[04-8]|3[0-2478]|4[0378]|5[47]|6[02359]|7[0-59]|8[1'
              '56])|8(?:0[1-68]|1[02-8]|2[0168]|3[0-2589]|4[03578]|5[046-9]|6[02-5]|7[028])|9(?:0[1346-9]|1[02'
              '-9]|2[0589]|3[0146-8]|4[01357-9]|5[12469]|7[0-3589]|8[04-69]))[2-9]\\d{6}'),
             (10,),
             (7,)),
            (('983[2-57-9]\\d{6}|(?:2(?:0[1-35-9]|1[02-9]|2[03-57-9]|3[1459]|4[08]|5[1-46]|6[0279]|7[02469'
              ']|8[13])|3(?:0[1-57-9]|1[02-9]|2[013-79]|3[0-24679]|4[167]|5[0-3]|6[01349]|8[056])|4(?:0[124-9]'
              '|1[02-579]|2[3-5]|3[0245]|4[023578]|58|6[349]|7[02589]|8[04])|5(?:0[1-57-9]|1[0235-8]|20|3[0149'
              ']|4[01]|5[179]|6[1-47]|7[0-5]|8[0256])|6(?:0[1-35-9]|1[024-9]|2[03689]|3[016]|4[0156]|5[01679]|'
              '6[0-279]|78|8[0-269])|7(?:0[1-46-8]|1[2-9]|2[04-8]|3[0-2478]|4[0378]|5[47]|6[02359]|7[0-59]|8[1'
              '56])|8(?:0[1-68]|1[02-8]|2[0168]|3[0-2589]|4[03578]|5[046-9]|6[02-5]|7[028])|9(?:0[1346-9]|1[02'
              '-9]|2[0589]|3[0146-8]|4[01357-9]|5[12469]|7[0-3589]|8[04-69]))[2-9]\\d{6}'),
             (10,),
             (7,))),
           None,
           True,
           (('(\\d{3})(\\d{4})', '310', None, True),
            ('(\\d{3})(\\d{4})', '[24-9]|3(?:[02-9]|1[1-9])', None, False),
            ('(\\d{3})(\\d{3})(\\d{4})', '[2-9]', None, True))),
    'AG': (1,
           '011',
           '([457]\\d{6})$|1',
           '268\\1',
           ('(?:268|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            ('26848[01]\\d{4}', (10,), (7,)),
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            ('26840[69]\\d{4}', (10,), (7,)),
            None,
            None,
            ('268(?:4(?:6[0-38]|84)|56[0-2])\\d{4}', (10,), (7,)),
            ('268(?:464|7(?:1[3-9]|[28]\\d|3[0246]|64|7[0-689]))\\d{4}', (10,), (7,))),
           '268',
           False,
           None),
    'AI': (1,
           '011',
           '([2457]\\d{6})$|1',
           '264\\1',
           ('(?:264|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            ('264724\\d{4}', (10,), (7,)),
            None,
            None,
            ('264(?:292|4(?:6[12]|9[78]))\\d{4}', (10,), (7,)),
            ('264(?:235|4(?:69|7[67])|5(?:3[6-9]|8[1-4])|7(?:29|72))\\d{4}', (10,), (7,))),
           '264',
           False,
           None),
    'AS': (1,
           '011',
           '([267]\\d{6})$|1',
           '684\\1',
           ('(?:[58]\\d\\d|684|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('684(?:274|6(?:22|33|44|55|77|88|9[19]))\\d{4}', (10,), (7,)),
            ('684(?:2(?:48|5[2468]|7[246])|7(?:3[13]|70|82))\\d{4}', (10,), (7,))),
           '684',
           False,
           None),
    'BB': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '246\\1',
           ('(?:246|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('(?:246976|900[2-9]\\d\\d)\\d{4}', (10,), (7,)),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            ('24631\\d{5}', (10,), (7,)),
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            ('246(?:292|367|4(?:1[7-9]|3[01]|4[47-9]|67)|7(?:1[2-9]|2\\d|3[016]|53))\\d{4}', (10,), (7,)),
            None,
            (('246521[0369]\\d{3}|246(?:2(?:2[78]|7[0-4])|4(?:1[024-6]|2\\d|3[2-9])|5(?:20|[34]\\d|54|7[1-3]'
              ')|6(?:2\\d|38)|7[35]7|9(?:1[89]|63))\\d{4}'),
             (10,),
             (7,)),
            (('246(?:(?:2(?:[3568]\\d|4[0-57-9])|3(?:5[2-9]|6[0-6])|4(?:46|5\\d)|69[5-7]|8(?:[2-5]\\d|83))\\d'
              '|52(?:1[147]|20))\\d{3}'),
             (10,),
             (7,))),
           '246',
           False,
           None),
    'BM': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '441\\1',
           ('(?:441|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('441(?:[46]\\d\\d|5(?:4\\d|60|89))\\d{4}', (10,), (7,)),
            ('441(?:[2378]\\d|5[0-39]|9[02])\\d{5}', (10,), (7,))),
           '441',
           False,
           None),
    'BS': (1,
           '011',
           '([3-8]\\d{6})$|1',
           '242\\1',
           ('(?:242|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('242300\\d{4}|8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), (7,)),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            ('242225\\d{4}', (10,), ()),
            None,
            (('242(?:3(?:02|[236][1-9]|4[0-24-9]|5[0-68]|7[347]|8[0-4]|9[2-467])|461|502|6(?:0[1-5]|12|2[013]|'
              '[45]0|7[67]|8[78]|9[89])|7(?:02|88))\\d{4}'),
             (10,),
             (7,)),
            (('242(?:3(?:5[79]|7[56]|95)|4(?:[23][1-9]|4[1-35-9]|5[1-8]|6[2-8]|7\\d|81)|5(?:2[45]|3[35]|44'
              '|5[1-46-9]|65|77)|6[34]6|7(?:27|38)|8(?:0[1-9]|1[02-9]|2\\d|3[0-4]|[89]9))\\d{4}'),
             (10,),
             (7,))),
           '242',
           False,
           None),
    'CA': (1,
           '011',
           '1',
           None,
           ('[2-9]\\d{9}|3\\d{6}', (7, 10), ()),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            ('600[2-9]\\d{6}', (10,), ()),
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|(?:5(?:2[125-9]|3[23]|44|66|77|88)|6(?:22|33))[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            ('310\\d{4}', (7,), ()),
            None,
            (('(?:2(?:04|[23]6|[48]9|5[07]|[67]3)|3(?:06|43|54|6[578]|82)|4(?:03|1[68]|[26]8|3[178]|50|74)|5(?'
              ':06|1[49]|48|79|8[147])|6(?:04|[18]3|39|47|72)|7(?:0[59]|42|53|78|8[02])|8(?:[06]7|19|25|7[39])'
              '|9(?:0[25]|42))[2-9]\\d{6}'),
             (10,),
             (7,)),
            (('(?:2(?:04|[23]6|[48]9|5[07]|[67]3)|3(?:06|43|54|6[578]|82)|4(?:03|1[68]|[26]8|3[178]|50|74)|5(?'
              ':06|1[49]|48|79|8[147])|6(?:04|[18]3|39|47|72)|7(?:0[59]|42|53|78|8[02])|8(?:[06]7|19|25|7[39])'
              '|9(?:0[25]|42))[2-9]\\d{6}'),
             (10,),
             (7,))),
           None,
           True,
           None),
    'DM': (1,
           '011',
           '([2-7]\\d{6})$|1',
           '767\\1',
           ('(?:[58]\\d\\d|767|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('767(?:2(?:55|66)|4(?:2[01]|4[0-25-9])|50[0-4])\\d{4}', (10,), (7,)),
            ('767(?:2(?:[2-4689]5|7[5-7])|31[5-7]|61[1-8]|70[1-6])\\d{4}', (10,), (7,))),
           '767',
           False,
           None),
    'DO': (1,
           '011',
           '1',
           None,
           ('(?:[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('800(?:14|[2-9]\\d)\\d{5}|8[024]9[01]\\d{6}|8(?:33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('8(?:[04]9[2-9]\\d\\d|29(?:2(?:[0-59]\\d|6[04-9]|7[0-27]|8[0237-9])|3(?:[0-35-9]\\d|4[7-9])|[45'
              ']\\d\\d|6(?:[0-27-9]\\d|[3-5][1-9]|6[0135-8])|7(?:0[013-9]|[1-37]\\d|4[1-35689]|5[1-4689]|6[1-'
              '57-9]|8[1-79]|9[1-8])|8(?:0[146-9]|1[0-48]|[248]\\d|3[1-79]|5[01589]|6[013-68]|7[124-8]|9[0'
              '-8])|9(?:[0-24]\\d|3[02-46-9]|5[0-79]|60|7[0169]|8[57-9]|9[02-9])))\\d{4}'),
             (10,),
             (7,)),
            ('8[024]9[2-9]\\d{6}', (10,), (7,))),
           '8001|8[024]9',
           False,
           None),
    'GD': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '473\\1',
           ('(?:473|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('473(?:2(?:3[0-2]|69)|3(?:2[89]|86)|4(?:[06]8|3[5-9]|4[0-4]|5[59]|73|90)|63[68]|7(?:58|84)|800|9'
              '38)\\d{4}'),
             (10,),
             (7,)),
            ('473(?:4(?:0[2-79]|1[04-9]|2[0-5]|49|5[6-8])|5(?:2[01]|3[3-8])|901)\\d{4}', (10,), (7,))),
           '473',
           False,
           None),
    'GU': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '671\\1',
           ('(?:[58]\\d\\d|671|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('671(?:2\\d\\d|3(?:00|3[39]|4[349]|55|6[26])|4(?:00|56|7[1-9]|8[02-9])|5(?:55|6[2-5]|88)|6(?:'
              '3[2-578]|4[24-9]|5[34]|78|8[235-9])|7(?:[0479]7|2[0167]|3[45]|8[7-9])|8(?:[2-57-9]8|6[478])|9(?'
              ':2[29]|6[79]|7[1279]|8[7-9]|9[16-9]))\\d{4}'),
             (10,),
             (7,)),
            (('671(?:2\\d\\d|3(?:00|3[39]|4[349]|55|6[26])|4(?:00|56|7[1-9]|8[02-9])|5(?:55|6[2-5]|88)|6(?:'
              '3[2-578]|4[24-9]|5[34]|78|8[235-9])|7(?:[0479]7|2[0167]|3[45]|8[7-9])|8(?:[2-57-9]8|6[478])|9(?'
              ':2[29]|6[79]|7[1279]|8[7-9]|9[16-9]))\\d{4}'),
             (10,),
             (7,))),
           '671',
           True,
           None),
    'JM': (1,
           '011',
           '1',
           None,
           ('(?:[58]\\d\\d|658|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('8766060\\d{3}|(?:658(?:2(?:[5-8]\\d|9[0-46-9])|[3-9]\\d\\d)|876(?:52[35]|6(?:0[1-3579]|1[0235-'
              '9]|[23]\\d|40|5[06]|6[2-589]|7[0-25-9]|8[04]|9[4-9])|7(?:0[2-689]|[1-6]\\d|8[056]|9[45])|9(?'
              ':0[1-8]|1[02378]|[2-8]\\d|9[2-468])))\\d{4}'),
             (10,),
             (7,)),
            (('(?:6582(?:[0-4]\\d|95)|876(?:2(?:0[1-9]|[13-9]\\d|2[013-9])|[348]\\d\\d|5(?:0[1-9]|[1-9]\\d)|6('
              '?:4[89]|6[67])|7(?:0[07]|7\\d|8[1-47-9]|9[0-36-9])|9(?:[01]9|9[0579])))\\d{4}'),
             (10,),
             (7,))),
           '658|876',
           False,
           None),
    'KN': (1,
           '011',
           '([2-7]\\d{6})$|1',
           '869\\1',
           ('(?:[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('869(?:2(?:29|36)|302|4(?:6[015-9]|70)|56[5-7])\\d{4}', (10,), (7,)),
            ('869(?:48[89]|55[6-8]|66\\d|76[02-7])\\d{4}', (10,), (7,))),
           '869',
           False,
           None),
    'KY': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '345\\1',
           ('(?:345|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('(?:345976|900[2-9]\\d\\d)\\d{4}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('345(?:2(?:22|3[23]|44|66)|333|444|6(?:23|38|40)|7(?:30|4[35-79]|6[6-9]|77)|8(?:00|1[45]|4[89]|8'
              '8)|9(?:14|4[035-9]))\\d{4}'),
             (10,),
             (7,)),
            (('345(?:32[1-9]|4(?:1[2-6]|2[0-4])|5(?:1[67]|2[5-79]|4[6-9]|50|76)|649|82[56]|9(?:1[679]|2[2-9]|3'
              '[06-9]|90))\\d{4}'),
             (10,),
             (7,))),
           '345',
           False,
           None),
    'LC': (1,
           '011',
           '([2-8]\\d{6})$|1',
           '758\\1',
           ('(?:[58]\\d\\d|758|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('758(?:234|4(?:30|5\\d|6[2-9]|8[0-2])|57[0-2]|(?:63|75)8)\\d{4}', (10,), (7,)),
            ('758(?:28[4-7]|384|4(?:6[01]|8[4-9])|5(?:1[89]|20|84)|7(?:1[2-9]|2\\d|3[0-3])|812)\\d{4}',
             (10,),
             (7,))),
           '758',
           False,
           None),
    'MP': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '670\\1',
           ('[58]\\d{9}|(?:67|90)0\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('670(?:2(?:3[3-7]|56|8[4-8])|32[1-38]|4(?:33|8[348])|5(?:32|55|88)|6(?:64|70|82)|78[3589]|8[3-9]'
              '8|989)\\d{4}'),
             (10,),
             (7,)),
            (('670(?:2(?:3[3-7]|56|8[4-8])|32[1-38]|4(?:33|8[348])|5(?:32|55|88)|6(?:64|70|82)|78[3589]|8[3-9]'
              '8|989)\\d{4}'),
             (10,),
             (7,))),
           '670',
           True,
           None),
    'MS': (1,
           '011',
           '([34]\\d{6})$|1',
           '664\\1',
           ('(?:[58]\\d\\d|664|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('6644(?:1[0-3]|91)\\d{4}', (10,), (7,)),
            ('664(?:3(?:49|9[1-6])|49[2-6])\\d{4}', (10,), (7,))),
           '664',
           False,
           None),
    'PR': (1,
           '011',
           '1',
           None,
           ('(?:[589]\\d\\d|787)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('(?:787|939)[2-9]\\d{6}', (10,), (7,)),
            ('(?:787|939)[2-9]\\d{6}', (10,), (7,))),
           '787|939',
           True,
           None),
    'SX': (1,
           '011',
           '(5\\d{6})$|1',
           '721\\1',
           ('7215\\d{6}|(?:[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('7215(?:4[2-8]|8[39]|9[056])\\d{4}', (10,), (7,)),
            ('7215(?:1[02]|2\\d|5[034679]|8[0-24-8])\\d{4}', (10,), (7,))),
           '721',
           False,
           None),
    'TC': (1,
           '011',
           '([2-479]\\d{6})$|1',
           '649\\1',
           ('(?:[58]\\d\\d|649|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            ('649(?:71[01]|966)\\d{4}', (10,), (7,)),
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('649(?:266|712|9(?:4\\d|50))\\d{4}', (10,), (7,)),
            ('649(?:2(?:3[129]|4[1-79])|3\\d\\d|4[34][1-3])\\d{4}', (10,), (7,))),
           '649',
           False,
           None),
    'TT': (1,
           '011',
           '([2-46-8]\\d{6})$|1',
           '868\\1',
           ('(?:[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('868800\\d{4}|8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            ('868619\\d{4}', (10,), (7,)),
            ('868(?:2(?:01|1[5-9]|[23]\\d|4[0-2])|6(?:0[7-9]|1[02-8]|2[1-9]|[3-69]\\d|7[0-79])|82[124])\\d{4}',
             (10,),
             (7,)),
            ('868(?:(?:2[5-9]|3\\d)\\d|4(?:3[0-6]|[6-9]\\d)|6(?:20|78|8\\d)|7(?:0[1-9]|1[02-9]|[2-9]\\d))\\d{4}',
             (10,),
             (7,))),
           '868',
           False,
           None),
    'VC': (1,
           '011',
           '([2-7]\\d{6})$|1',
           '784\\1',
           ('(?:[58]\\d\\d|784|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            ('78451[0-2]\\d{4}', (10,), (7,)),
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('784(?:266|3(?:6[6-9]|7\\d|8[0-6])|4(?:38|5[0-36-8]|8[0-8])|5(?:55|7[0-2]|93)|638|784)\\d{4}',
             (10,),
             (7,)),
            ('784(?:4(?:3[0-5]|5[45]|89|9[0-8])|5(?:2[6-9]|3[0-4])|720)\\d{4}', (10,), (7,))),
           '784',
           False,
           None),
    'VG': (1,
           '011',
           '([2-578]\\d{6})$|1',
           '284\\1',
           ('(?:284|[58]\\d\\d|900)\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            ('284(?:229|4(?:22|9[45])|774|8(?:52|6[459]))\\d{4}', (10,), (7,)),
            ('284(?:245|3(?:0[0-3]|4[0-7]|68|9[34])|4(?:4[0-6]|68|9[69])|5(?:4[0-7]|68|9[69]))\\d{4}',
             (10,),
             (7,))),
           '284',
           False,
           None),
    'VI': (1,
           '011',
           '([2-9]\\d{6})$|1',
           '340\\1',
           ('[58]\\d{9}|(?:34|90)0\\d{7}', (10,), (7,)),
           (('900[2-9]\\d{6}', (10,), ()),
            ('8(?:00|33|44|55|66|77|88)[2-9]\\d{6}', (10,), ()),
            None,
            None,
            (('52(?:3(?:[2-46-9][02-9]\\d|5(?:[02-46-9]\\d|5[0-46-9]))|4(?:[2-478][02-9]\\d|5(?:[034]\\d|2[02'
              '4-9]|5[0-46-9])|6(?:0[1-9]|[2-9]\\d)|9(?:[05-9]\\d|2[0-5]|49)))\\d{4}|52[34][2-9]1[02-9]\\d{4}'
              '|5(?:00|2[125-9]|3[23]|44|66|77|88)[2-9]\\d{6}'),
             (10,),
             ()),
            None,
            None,
            None,
            (('340(?:2(?:0\\d|10|2[06-8]|4[49]|77)|3(?:32|44)|4(?:2[23]|44|7[34]|89)|5(?:1[34]|55)|6(?:2[5'
              '6]|4[23]|77|9[023])|7(?:1[2-57-9]|2[57]|7\\d)|884|998)\\d{4}'),
             (10,),
             (7,)),
            (('340(?:2(?:0\\d|10|2[06-8]|4[49]|77)|3(?:32|44)|4(?:2[23]|44|7[34]|89)|5(?:1[34]|55)|6(?:2[5'
              '6]|4[23]|77|9[023])|7(?:1[2-57-9]|2[57]|7\\d)|884|998)\\d{4}'),
             (10,),
             (7,))),
           '340',
           True,
           None),
    'RU': (7,
           '810',
           '8',
           None,
           ('8\\d{13}|[347-9]\\d{9}', (10, 14), (7,)),
           (('80[39]\\d{7}', (10,), ()),
            ('8(?:0[04]|108\\d{3})\\d{7}', (10, 14), ()),
            None,
            None,
            ('808\\d{7}', (10,), ()),
            None,
            None,
            None,
            (('(?:3(?:0[12]|36|4[1-35-79]|5[1-3]|65|8[1-58]|9[0145])|4(?:01|1[1356]|2[13467]|7[1-5]|8[1-7]|9[1'
              '-689])|8(?:1[1-8]|2[01]|3[13-6]|4[0-8]|5[15-7]|6[0-35-79]|7[1-37-9]))\\d{7}'),
             (10,),
             (7,)),
            (('9(?:[0-24-9]\\d{4}|3(?:0(?:0(?:05|[124579]\\d|3[0-7]|6[0-49]|8[04-9])|[1-9]\\d\\d)|[1-9]\\d{3})'
              ')\\d{4}'),
             (10,),
             ())),
           '[3489]',
           False,
           None),
    'KZ': (7,
           '810',
           '8',
           None,
           ('8\\d{13}|[78]\\d{9}', (10, 14), (5, 6, 7)),
           (('809\\d{7}', (10,), ()),
            ('8(?:00|108\\d{3})\\d{7}', (10, 14), ()),
            None,
            ('751\\d{7}', (10,), ()),
            ('808\\d{7}', (10,), ()),
            None,
            None,
            None,
            (('7(?:1(?:0(?:[23]\\d|4[0-3]|59|63)|1(?:[23]\\d|4[0-79]|59)|2(?:[23]\\d|59)|3(?:2\\d|3[0-79]|4[0'
              '-35-9]|59)|4(?:[24]\\d|3[013-9]|5[1-9]|97)|5(?:2\\d|3[1-9]|4[0-7]|59)|6(?:[2-4]\\d|5[19]|61)|'
              '72\\d|8(?:[27]\\d|3[1-46-9]|4[0-5]|59))|2(?:1(?:[23]\\d|4[46-9]|5[3469])|2(?:2\\d|3[0679]|46|5'
              '[12679])|3(?:[2-4]\\d|5[139])|4(?:2\\d|3[1-35-9]|59)|5(?:[23]\\d|4[0-8]|59|61)|6(?:2\\d|3[1-9]'
              '|4[0-4]|59)|7(?:[2379]\\d|40|5[279])|8(?:[23]\\d|4[0-3]|59)|9(?:2\\d|3[124578]|59)))\\d{5}'),
             (10,),
             (5, 6, 7)),
            ('7(?:0[0-25-8]|47|6[0-4]|7[15-8]|85)\\d{7}', (10,), ())),
           '7',
           False,
           None),
    'EG': (20,
           '00',
           '0',
           None,
           ('[189]\\d{8,9}|[24-6]\\d{8}|[135]\\d{7}', (8, 9, 10), (6, 7)),
           (('900\\d{7}', (10,), ()),
            ('800\\d{7}', (10,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('13[23]\\d{6}|(?:15|57)\\d{6,7}|(?:2\\d|3|4[05-8]|5[05]|6[24-689]|8[2468]|9[235-7])\\d{7}',
             (8, 9),
             (6, 7)),
            ('1[0-25]\\d{8}', (10,), ())),
           None,
           False,
           None),
    'ZA': (27,
           '00',
           '0',
           None,
           ('[1-79]\\d{8}|8\\d{4,9}', (5, 6, 7, 8, 9, 10), ()),
           (('(?:86[2-9]|9[0-2]\\d)\\d{6}', (9,), ()),
            ('80\\d{7}', (9,), ()),
            ('860\\d{6}', (9,), ()),
            ('87(?:08[0-589]|15[0-79]|28[0-4]|31[1-9])\\d{4}|87(?:[02][0-79]|1[0-46-9]|3[02-9]|[4-9]\\d)\\d{5}',
             (9,),
             ()),
            None,
            None,
            ('861\\d{6,7}', (9, 10), ()),
            None,
            ('(?:2(?:0330|4302)|52087)0\\d{3}|(?:1[0-8]|2[1-378]|3[1-69]|4\\d|5[1346-8])\\d{7}', (9,), ()),
            (('(?:1(?:3492[0-25]|4495[0235]|549(?:20|5[01]))|4[34]492[01])\\d{3}|8[1-4]\\d{3,7}|(?:2[27]|47'
              '|54)4950\\d{3}|(?:1(?:049[2-4]|9[12]\\d\\d)|(?:50[0-2]|[67]\\d\\d)\\d\\d|8(?:5\\d{3}|7(?:08[6'
              '7]|158|28[5-9]|310)))\\d{4}|(?:1[6-8]|28|3[2-69]|4[025689]|5[36-8])4920\\d{3}|(?:12|[2-5]1)4'
              '92\\d{4}'),
             (5, 6, 7, 8, 9),
             ())),
           None,
           False,
           None),
    'GR': (30,
           '00',
           None,
           None,
           ('5005000\\d{3}|8\\d{9,11}|(?:[269]\\d|70)\\d{8}', (10, 11, 12), ()),
           (('90[19]\\d{7}', (10,), ()),
            ('800\\d{7,9}', (10, 11, 12), ()),
            ('8(?:0[16]|12|[27]5|50)\\d{7}', (10,), ()),
            None,
            ('70\\d{8}', (10,), ()),
            None,
            ('5005000\\d{3}', (10,), ()),
            None,
            (('2(?:1\\d\\d|2(?:2[1-46-9]|[36][1-8]|4[1-7]|5[1-4]|7[1-5]|[89][1-9])|3(?:1\\d|2[1-57]|[35][1-3'
              ']|4[13]|7[1-7]|8[124-6]|9[1-79])|4(?:1\\d|2[1-8]|3[1-4]|4[13-5]|6[1-578]|9[1-5])|5(?:1\\d|[2'
              '9][1-4]|3[1-5]|4[124]|5[1-6])|6(?:1\\d|[269][1-6]|3[1245]|4[1-7]|5[13-9]|7[14]|8[1-5])|7(?:'
              '1\\d|2[1-5]|3[1-6]|4[1-7]|5[1-57]|6[135]|9[125-7])|8(?:1\\d|2[1-5]|[34][1-4]|9[1-57]))\\d{6}'),
             (10,),
             ()),
            ('68[57-9]\\d{7}|(?:69|94)\\d{8}', (10,), ())),
           None,
           False,
           None),
    'NL': (31,
           '00',
           '0',
           None,
           ('(?:[124-7]\\d\\d|3(?:[02-9]\\d|1[0-8]))\\d{6}|8\\d{6,9}|9\\d{6,10}|1\\d{4,5}',
            (5, 6, 7, 8, 9, 10, 11),
            ()),
           (('90[069]\\d{4,7}', (7, 8, 9, 10), ()),
            ('800\\d{4,7}', (7, 8, 9, 10), ()),
            None,
            ('(?:85|91)\\d{7}', (9,), ()),
            None,
            ('66\\d{7}', (9,), ()),
            (('140(?:1[035]|2[0346]|3[03568]|4[0356]|5[0358]|8[458])|(?:140(?:1[16-8]|2[259]|3[124]|4[17-9]|5['
              '124679]|7)|8[478]\\d{6})\\d'),
             (5, 6, 9),
             ()),
            None,
            (('(?:1(?:[035]\\d|1[13-578]|6[124-8]|7[24]|8[0-467])|2(?:[0346]\\d|2[2-46-9]|5[125]|9[479])|3('
              '?:[03568]\\d|1[3-8]|2[01]|4[1-8])|4(?:[0356]\\d|1[1-368]|7[58]|8[15-8]|9[23579])|5(?:[0358]\\'
              'd|[19][1-9]|2[1-57-9]|4[13-8]|6[126]|7[0-3578])|7\\d\\d)\\d{6}'),
             (9,),
             ()),
            ('(?:6[1-58]|970\\d)\\d{7}', (9, 11), ())),
           None,
           False,
           None),
    'BE': (32,
           '00',
           '0',
           None,
           ('4\\d{8}|[1-9]\\d{7}', (8, 9), ()),
           (('(?:70(?:2[0-57]|3[04-7]|44|6[04-69]|7[0579])|90\\d\\d)\\d{4}', (8,), ()),
            ('800[1-9]\\d{4}', (8,), ()),
            ('7879\\d{4}', (8,), ()),
            None,
            None,
            None,
            ('78(?:0[578]|1[014-8]|2[25]|3[15-8]|48|5[05]|60|7[06-8]|9\\d)\\d{4}', (8,), ()),
            None,
            ('80[2-8]\\d{5}|(?:1[0-69]|[23][2-8]|4[23]|5\\d|6[013-57-9]|71|8[1-79]|9[2-4])\\d{6}', (8,), ()),
            ('4[5-9]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'FR': (33,
           '00',
           '0',
           None,
           ('[1-9]\\d{8}', (9,), ()),
           (('836(?:0[0-36-9]|[1-9]\\d)\\d{4}|8(?:1[2-9]|2[2-47-9]|3[0-57-9]|[569]\\d|8[0-35-9])\\d{6}',
             (9,),
             ()),
            ('80[0-5]\\d{6}', (9,), ()),
            ('8(?:1[01]|2[0156]|4[024]|84)\\d{6}', (9,), ()),
            ('9\\d{8}', (9,), ()),
            None,
            None,
            ('80[6-9]\\d{6}', (9,), ()),
            None,
            ('(?:26[013-9]|59[1-35-9])\\d{6}|(?:[13]\\d|2[0-57-9]|4[1-9]|5[0-8])\\d{7}', (9,), ()),
            ('(?:6(?:[0-24-8]\\d|3[0-8]|9[589])|7[3-9]\\d)\\d{6}', (9,), ())),
           None,
           False,
           (('(\\d{4})', '10', None, False),
            ('(\\d{3})(\\d{3})', '1', None, False),
            ('(\\d{3})(\\d{2})(\\d{2})(\\d{2})', '8', '0 \\1', False),
            ('(\\d)(\\d{2})(\\d{2})(\\d{2})(\\d{2})', '[1-79]', '0\\1', False))),
    'ES': (34,
           '00',
           None,
           None,
           ('400\\d{6}|(?:51|[6-9]\\d)\\d{7}', (9,), ()),
           (('80[367]\\d{6}', (9,), ()),
            ('[89]00\\d{6}', (9,), ()),
            ('90[12]\\d{6}', (9,), ()),
            None,
            ('70\\d{7}', (9,), ()),
            None,
            ('51\\d{7}', (9,), ()),
            None,
            (('96906(?:0[0-8]|1[1-9]|[2-9]\\d)\\d\\d|9(?:69(?:0[0-57-9]|[1-9]\\d)|73(?:[0-8]\\d|9[1-9]))\\'
              'd{4}|(?:400|8(?:[1356]\\d|[28][0-8]|[47][1-9])|9(?:[135]\\d|[268][0-8]|4[1-9]|7[124-9]))\\d{6}'),
             (9,),
             ()),
            ('9(?:6906(?:09|10)|7390\\d\\d)\\d\\d|(?:6\\d|7[1-48])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'HU': (36,
           '00',
           '06',
           None,
           ('[235-7]\\d{8}|[1-9]\\d{7}', (8, 9), (6, 7)),
           (('9[01]\\d{6}', (8,), ()),
            ('(?:[48]0\\d|680[29])\\d{5}', (8, 9), ()),
            None,
            ('21\\d{7}', (9,), ()),
            None,
            None,
            ('38\\d{7}', (9,), ()),
            None,
            ('(?:1\\d|[27][2-9]|3[2-7]|4[24-9]|5[2-79]|6[23689]|8[2-57-9]|9[2-69])\\d{6}', (8,), (6, 7)),
            ('(?:[257]0|3[01])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'IT': (39,
           '00',
           None,
           None,
           ('0\\d{5,11}|1\\d{8,10}|3(?:[0-8]\\d{7,10}|9\\d{7,8})|(?:43|55|70)\\d{8}|8\\d{5}(?:\\d{2,4})?',
            (6, 7, 8, 9, 10, 11, 12),
            ()),
           ((('(?:0878\\d{3}|89(?:2\\d|3[04]|4(?:[0-4]|[5-9]\\d\\d)|5[0-4]))\\d\\d|(?:1(?:44|6[346])|89(?:'
              '38|5[5-9]|9))\\d{6}'),
             (6, 8, 9, 10),
             ()),
            ('80(?:0\\d{3}|3)\\d{3}', (6, 9), ()),
            ('84(?:[08]\\d{3}|[17])\\d{3}', (6, 9), ()),
            ('55\\d{8}', (10,), ()),
            ('1(?:78\\d|99)\\d{6}', (9, 10), ()),
            None,
            None,
            ('3[2-8]\\d{9,10}', (11, 12), ()),
            (('0(?:669[0-79]\\d{1,6}|831\\d{2,8})|0(?:1(?:[0159]\\d|[27][1-5]|31|4[1-4]|6[1356]|8[2-57])|2\\d'
              '\\d|3(?:[0159]\\d|2[1-4]|3[12]|[48][1-6]|6[2-59]|7[1-7])|4(?:[0159]\\d|[23][1-9]|4[245]|6[1-5'
              ']|7[1-4]|81)|5(?:[0159]\\d|2[1-5]|3[2-6]|4[1-79]|6[4-6]|7[1-578]|8[3-8])|6(?:[0-57-9]\\d|6[0'
              '-8])|7(?:[0159]\\d|2[12]|3[1-7]|4[2-46]|6[13569]|7[13-6]|8[1-59])|8(?:[0159]\\d|2[3-578]|3[2'
              '356]|[6-8][1-5])|9(?:[0159]\\d|[238][1-5]|4[12]|6[1-8]|7[1-6]))\\d{2,7}'),
             (6, 7, 8, 9, 10, 11, 12),
             ()),
            ('3[2-9]\\d{7,8}|(?:31|43)\\d{8}', (9, 10), ())),
           None,
           False,
           None),
    'VA': (39,
           '00',
           None,
           None,
           ('0\\d{5,10}|3[0-8]\\d{7,10}|55\\d{8}|8\\d{5}(?:\\d{2,4})?|(?:1\\d|39)\\d{7,8}',
            (6, 7, 8, 9, 10, 11, 12),
            ()),
           ((('(?:0878\\d{3}|89(?:2\\d|3[04]|4(?:[0-4]|[5-9]\\d\\d)|5[0-4]))\\d\\d|(?:1(?:44|6[346])|89(?:'
              '38|5[5-9]|9))\\d{6}'),
             (6, 8, 9, 10),
             ()),
            ('80(?:0\\d{3}|3)\\d{3}', (6, 9), ()),
            ('84(?:[08]\\d{3}|[17])\\d{3}', (6, 9), ()),
            ('55\\d{8}', (10,), ()),
            ('1(?:78\\d|99)\\d{6}', (9, 10), ()),
            None,
            None,
            ('3[2-8]\\d{9,10}', (11, 12), ()),
            ('06698\\d{1,6}', (6, 7, 8, 9, 10, 11), ()),
            ('3[1-9]\\d{8}|3[2-9]\\d{7}', (9, 10), ())),
           '06698',
           False,
           None),
    'RO': (40,
           '00',
           '0',
           None,
           ('(?:[2378]\\d|90)\\d{7}|[23]\\d{5}', (6, 9), ()),
           (('90[0136]\\d{6}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            ('801\\d{6}', (9,), ()),
            None,
            None,
            None,
            ('(?:37\\d|80[578])\\d{6}', (9,), ()),
            None,
            ('[23][13-6]\\d{7}|(?:2(?:19\\d|[3-6]\\d9)|31\\d\\d)\\d\\d', (6, 9), ()),
            ('7020\\d{5}|7(?:0[013-9]|1[0-3]|[2-7]\\d|8[03-8]|9[0-39])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'CH': (41,
           '00',
           '0',
           None,
           ('8\\d{11}|[2-9]\\d{8}', (9, 12), ()),
           (('90[016]\\d{6}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            ('84[0248]\\d{6}', (9,), ()),
            None,
            ('878\\d{6}', (9,), ()),
            ('74[0248]\\d{6}', (9,), ()),
            ('5[18]\\d{7}', (9,), ()),
            ('860\\d{9}', (12,), ()),
            ('(?:2[12467]|3[1-4]|4[134]|5[256]|6[12]|[7-9]1)\\d{7}', (9,), ()),
            ('(?:6[89]|7[235-9])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'AT': (43,
           '00',
           '0',
           None,
           (('1\\d{3,12}|2\\d{6,12}|43(?:(?:0\\d|5[02-9])\\d{3,9}|2\\d{4,5}|[3467]\\d{4}|8\\d{4,6}|9\\d{4,7}'
             ')|5\\d{4,12}|8\\d{7,12}|9\\d{8,12}|(?:[367]\\d|4[0-24-9])\\d{4,11}'),
            (4, 5, 6, 7, 8, 9, 10, 11, 12, 13),
            (3,)),
           (('(?:8[69][2-68]|9(?:0[01]|3[019]))\\d{6,10}', (9, 10, 11, 12, 13), ()),
            ('800\\d{6,10}', (9, 10, 11, 12, 13), ()),
            ('8(?:10|2[018])\\d{6,10}|828\\d{5}', (8, 9, 10, 11, 12, 13), ()),
            ('5(?:0[1-9]|17|[79]\\d)\\d{2,10}|7[28]0\\d{6,10}', (5, 6, 7, 8, 9, 10, 11, 12, 13), ()),
            None,
            None,
            None,
            None,
            (('1(?:11\\d|[2-9]\\d{3,11})|(?:316|463)\\d{3,10}|648[34]\\d{3,9}|(?:51|66|73)2\\d{3,10}|(?:2(?:1['
              '467]|2[13-8]|5[2357]|6[1-46-8]|7[1-8]|8[124-7]|9[1458])|3(?:1[1-578]|3[23568]|4[5-7]|5[1378]|6['
              '1-38]|8[3-68])|4(?:2[1-8]|35|7[1368]|8[2457])|5(?:2[1-8]|3[357]|4[147]|5[12578]|6[37])|6(?:13|2'
              '[1-47]|4[135-7]|5[468])|7(?:2[1-8]|35|4[13478]|5[68]|6[16-8]|7[1-6]|9[45]))\\d{4,10}'),
             (4, 5, 6, 7, 8, 9, 10, 11, 12, 13),
             (3,)),
            ('6(?:485|(?:5[0-3579]|6[013-9]|[7-9]\\d)\\d)\\d{3,9}', (7, 8, 9, 10, 11, 12, 13), ())),
           None,
           False,
           None),
    'GB': (44,
           '00',
           '0|180020',
           None,
           ('[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}', (7, 9, 10), (4, 5, 6, 8)),
           (('(?:8(?:4[2-5]|7[0-3])|9(?:[01]\\d|8[2-49]))\\d{7}|845464\\d', (7, 10), ()),
            ('80[08]\\d{7}|800\\d{6}|8001111', (7, 9, 10), ()),
            None,
            ('56\\d{8}', (10,), ()),
            ('70\\d{8}', (10,), ()),
            ('76(?:464|652)\\d{5}|76(?:0[0-28]|2[356]|34|4[01347]|5[49]|6[0-369]|77|8[14]|9[139])\\d{6}',
             (10,),
             ()),
            ('(?:3[0347]|55)\\d{8}', (10,), ()),
            None,
            (('(?:1(?:1(?:3(?:[0-58]\\d\\d|73[0-5])|4(?:(?:[0-5]\\d|70)\\d|69[7-9])|(?:(?:5[0-26-9]|[78][0-49'
              '])\\d|6(?:[0-4]\\d|5[01]))\\d)|(?:2(?:(?:0[024-9]|2[3-9]|3[3-79]|4[1-689]|[58][02-9]|6[0-47-9'
              ']|7[013-9]|9\\d)\\d|1(?:[0-7]\\d|8[0-3]))|(?:3(?:0\\d|1[0-8]|[25][02-9]|3[02-579]|[468][0-46-9'
              ']|7[1-35-79]|9[2-578])|4(?:0[03-9]|[137]\\d|[28][02-57-9]|4[02-69]|5[0-8]|[69][0-79])|5(?:0'
              '[1-35-9]|[16]\\d|2[024-9]|3[015689]|4[02-9]|5[03-9]|7[0-35-9]|8[0-468]|9[0-57-9])|6(?:0[034'
              '689]|1\\d|2[0-35689]|[38][013-9]|4[1-467]|5[0-69]|6[13-9]|7[0-8]|9[0-24578])|7(?:0[0246-9]|'
              '2\\d|3[0236-8]|4[03-9]|5[0-46-9]|6[013-9]|7[0-35-9]|8[024-9]|9[02-9])|8(?:0[35-9]|2[1-57-9]'
              '|3[02-578]|4[0-578]|5[124-9]|6[2-69]|7\\d|8[02-9]|9[02569])|9(?:0[02-589]|[18]\\d|2[02-689]|'
              '3[1-57-9]|4[2-9]|5[0-579]|6[2-47-9]|7[0-24578]|9[2-57]))\\d)\\d)|2(?:0[013478]|3[0189]|4[017'
              ']|8[0-46-9]|9[0-2])\\d{3})\\d{4}|1(?:2(?:0(?:46[1-4]|87[2-9])|545[1-79]|76(?:2\\d|3[1-8]|6[1-'
              '6])|9(?:7(?:2[0-4]|3[2-5])|8(?:2[2-8]|7[0-47-9]|8[3-5])))|3(?:6(?:38[2-5]|47[23])|8(?:47[04-9]|'
              '64[0157-9]))|4(?:044[1-7]|20(?:2[23]|8\\d)|6(?:0(?:30|5[2-57]|6[1-8]|7[2-8])|140)|8(?:052|8'
              '7[1-3]))|5(?:2(?:4(?:3[2-79]|6\\d)|76\\d)|6(?:26[06-9]|686))|6(?:06(?:4\\d|7[4-79])|295[5-7]|'
              '35[34]\\d|47(?:24|61)|59(?:5[08]|6[67]|74)|9(?:55[0-4]|77[23]))|7(?:26(?:6[13-9]|7[0-7])|(?'
              ':442|688)\\d|50(?:2[0-3]|[3-68]2|76))|8(?:27[56]\\d|37(?:5[2-5]|8[239])|843[2-58])|9(?:0(?:0'
              '(?:6[1-8]|85)|52\\d)|3583|4(?:66[1-8]|9(?:2[01]|81))|63(?:23|3[1-4])|9561))\\d{3}'),
             (9, 10),
             (4, 5, 6, 7, 8)),
            (('7(?:457[0-57-9]|700[01]|911[028])\\d{5}|7(?:[1-3]\\d\\d|4(?:[0-46-9]\\d|5[0-689])|5(?:0[0-8]|['
              '13-9]\\d|2[0-35-9])|7(?:0[1-9]|[1-7]\\d|8[02-9]|9[0-689])|8(?:[014-9]\\d|[23][0-8])|9(?:[024-'
              '9]\\d|1[02-9]|3[0-689]))\\d{6}'),
             (10,),
             ())),
           None,
           False,
           (('(\\d{3})(\\d{4})', '8001111', '0\\1', False),
            ('(\\d{3})(\\d{2})(\\d{2})', '845464', '0\\1', False),
            ('(\\d{3})(\\d{6})', '800', '0\\1', False),
            ('(\\d{5})(\\d{4,5})', '1(?:3873|5(?:242|39[4-6])|(?:697|768)[347]|9467)', '0\\1', False),
            ('(\\d{4})(\\d{5,6})', '1(?:[2-69][02-9]|[78])', '0\\1', False),
            ('(\\d{2})(\\d{4})(\\d{4})', '[25]|7(?:0|6(?:[03-9]|2[356]))', '0\\1', False),
            ('(\\d{4})(\\d{6})', '7', '0\\1', False),
            ('(\\d{3})(\\d{3})(\\d{4})', '[1389]', '0\\1', False))),
    'GG': (44,
           '00',
           '([25-9]\\d{5})$|0|180020',
           '1481\\1',
           ('(?:1481|[357-9]\\d{3})\\d{6}|8\\d{6}(?:\\d{2})?', (7, 9, 10), (6,)),
           (('(?:8(?:4[2-5]|7[0-3])|9(?:[01]\\d|8[0-3]))\\d{7}|845464\\d', (7, 10), ()),
            ('80[08]\\d{7}|800\\d{6}|8001111', (7, 9, 10), ()),
            None,
            ('56\\d{8}', (10,), ()),
            ('70\\d{8}', (10,), ()),
            ('76(?:464|652)\\d{5}|76(?:0[0-28]|2[356]|34|4[01347]|5[49]|6[0-369]|77|8[14]|9[139])\\d{6}',
             (10,),
             ()),
            ('(?:3[0347]|55)\\d{8}', (10,), ()),
            None,
            ('1481[25-9]\\d{5}', (10,), (6,)),
            ('7(?:(?:781|839)\\d|911[17])\\d{5}', (10,), ())),
           None,
           False,
           None),
    'IM': (44,
           '00',
           '([25-8]\\d{5})$|0|180020',
           '1624\\1',
           ('1624\\d{6}|(?:[3578]\\d|90)\\d{8}', (10,), (6,)),
           (('8(?:440[49]06|72299\\d)\\d{3}|(?:8(?:45|70)|90[0167])624\\d{4}', (10,), ()),
            ('808162\\d{4}', (10,), ()),
            None,
            ('56\\d{8}', (10,), ()),
            ('70\\d{8}', (10,), ()),
            None,
            ('3440[49]06\\d{3}|(?:3(?:08162|3\\d{4}|45624|7(?:0624|2299))|55\\d{4})\\d{4}', (10,), ()),
            None,
            ('1624(?:230|[5-8]\\d\\d)\\d{3}', (10,), (6,)),
            ('76245[06]\\d{4}|7(?:4576|[59]24\\d|624[0-4689])\\d{5}', (10,), ())),
           '74576|(?:16|7[56])24',
           False,
           None),
    'JE': (44,
           '00',
           '([0-24-8]\\d{5})$|0|180020',
           '1534\\1',
           ('1534\\d{6}|(?:[3578]\\d|90)\\d{8}', (10,), (6,)),
           ((('(?:8(?:4(?:4(?:4(?:05|42|69)|703)|5(?:041|800))|7(?:0002|1206))|90(?:066[59]|1810|71(?:07|55)))'
              '\\d{4}'),
             (10,),
             ()),
            ('80(?:07(?:35|81)|8901)\\d{4}', (10,), ()),
            None,
            ('56\\d{8}', (10,), ()),
            ('701511\\d{4}', (10,), ()),
            ('76(?:464|652)\\d{5}|76(?:0[0-28]|2[356]|34|4[01347]|5[49]|6[0-369]|77|8[14]|9[139])\\d{6}',
             (10,),
             ()),
            (('(?:3(?:0(?:07(?:35|81)|8901)|3\\d{4}|4(?:4(?:4(?:05|42|69)|703)|5(?:041|800))|7(?:0002|1206'
              '))|55\\d{4})\\d{4}'),
             (10,),
             ()),
            None,
            ('1534[0-24-8]\\d{5}', (10,), (6,)),
            ('7(?:(?:(?:50|82)9|937)\\d|7(?:00[378]|97\\d))\\d{5}', (10,), ())),
           None,
           False,
           None),
    'DK': (45,
           '00',
           None,
           None,
           ('[2-9]\\d{7}', (8,), ()),
           (('90\\d{6}', (8,), ()),
            ('80\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:2(?:[0-59][1-9]|[6-8]\\d)|3(?:[0-3][1-9]|4[13]|5[1-58]|6[1347-9]|8[1-8]|9[1-79])|4(?:[0-'
              '25][1-9]|[34][2-9]|6[13-579]|7[13579]|8[1-47]|9[127])|5(?:[0-36][1-9]|4[146-9]|5[3-57-9]|7[568]'
              '|8[1-358]|9[1-69])|6(?:[0135][1-9]|2[1-68]|4[2-8]|6[1689]|[78]\\d|9[15689])|7(?:[0-69][1-9]'
              '|7[3-9]|8[147])|8(?:[16-9][1-9]|2[1-58])|9(?:[1-47-9][1-9]|6\\d))\\d{5}'),
             (8,),
             ()),
            ('(?:2[6-8]|6[78]|96)\\d{6}|(?:2[0-59]|3[0-689]|[457]\\d|6[0-69]|8[126-9]|9[1-47-9])[1-9]\\d{5}',
             (8,),
             ())),
           None,
           False,
           None),
    'SE': (46,
           '00',
           '0',
           None,
           ('(?:[26]\\d\\d|9)\\d{9}|[1-9]\\d{8}|[1-689]\\d{7}|[1-4689]\\d{6}|2\\d{5}', (6, 7, 8, 9, 10, 12), ()),
           (('649\\d{6}|99[1-59]\\d{4}(?:\\d{3})?|9(?:00|39|44)[1-8]\\d{3,6}', (7, 8, 9, 10), ()),
            ('20\\d{4,7}', (6, 7, 8, 9), ()),
            ('77[0-7]\\d{6}', (9,), ()),
            None,
            ('75[1-8]\\d{6}', (9,), ()),
            ('74[02-9]\\d{6}', (9,), ()),
            ('10[1-8]\\d{6}', (9,), ()),
            ('(?:25[245]|67[3-68])\\d{9}', (12,), ()),
            (('(?:(?:[12][136]|3[356]|4[0246]|6[03]|8\\d)\\d|90[1-9])\\d{4,6}|(?:1(?:2[0-35]|4[0-4]|5[0-25-9'
              ']|7[13-6]|[89]\\d)|2(?:2[0-7]|4[0136-8]|5[0138]|7[018]|8[01]|9[0-57])|3(?:0[0-4]|1\\d|2[0-25'
              ']|4[056]|7[0-2]|8[0-3]|9[023])|4(?:1[013-8]|3[0135]|5[14-79]|7[0-246-9]|8[0156]|9[0-689])|5(?:0'
              '[0-6]|[15][0-5]|2[0-68]|3[0-4]|4\\d|6[03-5]|7[013]|8[0-79]|9[01])|6(?:1[1-3]|2[0-4]|4[02-57'
              ']|5[0-37]|6[0-3]|7[0-2]|8[0247]|9[0-356])|9(?:1[0-68]|2\\d|3[02-5]|4[0-3]|5[0-4]|[68][01]|7'
              '[0135-8]))\\d{5,6}'),
             (7, 8, 9),
             ()),
            ('7[023689]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'NO': (47,
           '00',
           None,
           None,
           ('(?:0|[2-9]\\d{3})\\d{4}', (5, 8), ()),
           (('82[09]\\d{5}', (8,), ()),
            ('80[01]\\d{5}', (8,), ()),
            ('810(?:0[0-6]|[2-8]\\d)\\d{3}', (8,), ()),
            ('85[0-5]\\d{5}', (8,), ()),
            ('880\\d{5}', (8,), ()),
            None,
            ('(?:0[235-9]|81(?:0(?:0[7-9]|1\\d)|5\\d\\d))\\d{3}', (5, 8), ()),
            ('81[23]\\d{5}', (8,), ()),
            ('(?:2[1-4]|3[1-3578]|5[1-35-7]|6[1-46-9]|7[0-8])\\d{6}', (8,), ()),
            ('45(?:[0-24-9]\\d|3[0-57-9])\\d{4}|(?:4[016-8]|9\\d)\\d{6}', (8,), ())),
           '[02-689]|7[0-8]',
           False,
           None),
    'SJ': (47,
           '00',
           None,
           None,
           ('0\\d{4}|(?:[489]\\d|79)\\d{6}', (5, 8), ()),
           (('82[09]\\d{5}', (8,), ()),
            ('80[01]\\d{5}', (8,), ()),
            ('810(?:0[0-6]|[2-8]\\d)\\d{3}', (8,), ()),
            ('85[0-5]\\d{5}', (8,), ()),
            ('880\\d{5}', (8,), ()),
            None,
            ('(?:0[235-9]|81(?:0(?:0[7-9]|1\\d)|5\\d\\d))\\d{3}', (5, 8), ()),
            ('81[23]\\d{5}', (8,), ()),
            ('79\\d{6}', (8,), ()),
            ('45(?:[0-24-9]\\d|3[0-57-9])\\d{4}|(?:4[016-8]|9\\d)\\d{6}', (8,), ())),
           '79',
           False,
           None),
    'PL': (48,
           '00',
           None,
           None,
           ('(?:6|8\\d\\d)\\d{7}|[1-9]\\d{6}(?:\\d{2})?|[26]\\d{5}', (6, 7, 8, 9, 10), ()),
           (('70[01346-8]\\d{6}', (9,), ()),
            ('800\\d{6,7}', (9, 10), ()),
            ('801\\d{6}', (9,), ()),
            ('39\\d{7}', (9,), ()),
            None,
            ('64\\d{4,7}', (6, 7, 8, 9), ()),
            ('804\\d{6}', (9,), ()),
            None,
            (('(?:30|47\\d\\d)\\d{5}|(?:1[2-8]|2[2-69]|3[2-4]|4[1-468]|5[24-689]|6[1-3578]|7[14-7]|8[1-79]|9'
              '[145])(?:[02-9]\\d{6}|1(?:[0-8]\\d{5}|9\\d{3}(?:\\d{2})?))'),
             (7, 9),
             ()),
            ('21(?:1[013-5]|2\\d|3[1-9])\\d{5}|(?:45|5[0137]|6[069]|7[2389]|88)\\d{7}', (9,), ())),
           None,
           False,
           None),
    'DE': (49,
           '00',
           '0',
           None,
           (('[2579]\\d{5,14}|49(?:[34]0|69|8\\d)\\d\\d?|49(?:37|49|60|7[089]|9\\d)\\d{1,3}|49(?:2[024-9]|'
             '3[2-689]|7[1-7])\\d{1,8}|(?:1|[368]\\d|4[0-8])\\d{3,13}|49(?:[015]\\d|2[13]|31|[46][1-8])\\d{1,9'
             '}'),
            (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            (2, 3)),
           (('(?:137[7-9]|900(?:[135]|9\\d))\\d{6}', (10, 11), ()),
            ('800\\d{7,12}', (10, 11, 12, 13, 14, 15), ()),
            ('180\\d{5,11}|13(?:7[1-6]\\d\\d|8)\\d{4}', (7, 8, 9, 10, 11, 12, 13, 14), ()),
            None,
            ('700\\d{8}', (11,), ()),
            ('16(?:4\\d{1,10}|[89]\\d{1,11})', (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14), ()),
            ('18(?:1\\d{5,11}|[2-9]\\d{8})', (8, 9, 10, 11, 12, 13, 14), ()),
            (('1(?:6(?:013|255|399)|7(?:(?:[015]1|[69]3)3|[2-4]55|[78]99))\\d{7,8}|15(?:(?:[03-68]00|113)\\'
              'd|2\\d55|7\\d99|9\\d33)\\d{7}'),
             (12, 13),
             ()),
            (('32\\d{9,11}|49[1-6]\\d{10}|322\\d{6}|49[0-7]\\d{3,9}|(?:[34]0|[68]9)\\d{3,13}|(?:2(?:0[1-689]|['
              '1-3569]\\d|4[0-8]|7[1-7]|8[0-7])|3(?:[3569]\\d|4[0-79]|7[1-7]|8[1-8])|4(?:1[02-9]|[2-48]\\d|5'
              '[0-6]|6[0-8]|7[0-79])|5(?:0[2-8]|[124-6]\\d|[38][0-8]|[79][0-7])|6(?:0[02-9]|[1-358]\\d|[47]'
              '[0-8]|6[1-9])|7(?:0[2-8]|1[1-9]|[27][0-7]|3\\d|[4-6][0-8]|8[0-5]|9[013-7])|8(?:0[2-9]|1[0-7'
              '9]|2\\d|3[0-46-9]|4[0-6]|5[013-9]|6[1-8]|7[0-8]|8[0-24-6])|9(?:0[6-9]|[1-4]\\d|[589][0-7]|6['
              '0-8]|7[0-467]))\\d{3,12}'),
             (5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
             (2, 3, 4)),
            ('1(?:6[023]|7\\d)\\d{7,8}|15(?:[0-25-9]\\d\\d|3(?:10|33)|410)\\d{6}', (10, 11), ())),
           None,
           False,
           (('(\\d{2})(\\d{3,13})', '3[02]|40|[68]9', '0\\1', False),
            ('(\\d{6})', '2277', None, False),
            ('(\\d{3})(\\d{3,12})',
             ('2(?:0[1-389]|12[0-8])|3(?:[35-9][15]|4[015])|906|2(?:[13][14]|2[18])|(?:2[4-9]|4[2-9]|[579][1-9'
              ']|[68][1-8])1'),
             '0\\1',
             False),
            ('(\\d{4})(\\d{2,11})',
             ('[24-6]|3(?:3(?:0[1-467]|2[127-9]|3[124578]|7[1257-9]|8[1256]|9[145])|4(?:2[135]|4[13578]|9[1346'
              '])|5(?:0[14]|2[1-3589]|6[1-4]|7[13468]|8[13568])|6(?:2[1-489]|3[124-6]|6[13]|7[12579]|8[1-356]|'
              '9[135])|7(?:2[1-7]|4[145]|6[1-5]|7[1-4])|8(?:21|3[1468]|6|7[1467]|8[136])|9(?:0[12479]|2[1358]|'
              '4[134679]|6[1-9]|7[136]|8[147]|9[1468]))|70[2-8]|8(?:0[2-9]|[1-8])|90[7-9]|[79][1-9]|3[68]4[134'
              '7]|3(?:47|60)[1356]|3(?:3[46]|46|5[49])[1246]|3[4579]3[1357]'),
             '0\\1',
             False),
            ('(\\d{3})(\\d{4})', '138', '0\\1', False),
            ('(\\d{5})(\\d{2,10})', '3', '0\\1', False),
            ('(\\d{3})(\\d{5,11})', '181', '0\\1', False),
            ('(\\d{3})(\\d)(\\d{4,10})', '1(?:3|80)|9', '0\\1', False),
            ('(\\d{3})(\\d{7,8})', '1[67]', '0\\1', False),
            ('(\\d{3})(\\d{7,12})', '8', '0\\1', False),
            ('(\\d{5})(\\d{6})', '18500', '0\\1', False),
            ('(\\d{3})(\\d{4})(\\d{4})', '7', '0\\1', False),
            ('(\\d{4})(\\d{7})', '18[68]', '0\\1', False),
            ('(\\d{4})(\\d{7})', '15[1279]', '0\\1', False),
            ('(\\d{5})(\\d{6})', '15(?:[0568]|3[13]|41)', '0\\1', False),
            ('(\\d{3})(\\d{8})', '18', '0\\1', False),
            ('(\\d{3})(\\d{2})(\\d{7,8})', '1(?:6[023]|7)', '0\\1', False),
            ('(\\d{4})(\\d{2})(\\d{7})', '15[279]', '0\\1', False),
            ('(\\d{3})(\\d{2})(\\d{8})', '15', '0\\1', False))),
    'PE': (51,
           '00|19(?:1[124]|77|90)00',
           '0',
           None,
           ('(?:[14-8]|9\\d)\\d{7}', (8, 9), (6, 7)),
           (('805\\d{5}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            ('801\\d{5}', (8,), ()),
            None,
            ('80[24]\\d{5}', (8,), ()),
            None,
            None,
            None,
            (('(?:(?:19[02-68]|(?:4[34]|5[14])[0-8]|687)\\d|7(?:173|(?:3[0-8]|55)\\d)|8(?:10[05689]|6(?:0[0'
              '6-9]|1[6-9]|29)|7(?:0[0569]|[56]0)))\\d{4}|(?:1[0-8]|4[12]|5[236]|6[1-7]|7[246]|8[2-4])\\d{6}'),
             (8,),
             (6, 7)),
            ('9\\d{8}', (9,), ())),
           None,
           False,
           None),
    'MX': (52,
           '0[09]',
           None,
           None,
           ('[2-9]\\d{9}', (10,), (7, 8)),
           (('900\\d{7}', (10,), ()),
            ('8(?:00|88)\\d{7}', (10,), ()),
            ('300\\d{7}', (10,), ()),
            None,
            ('500\\d{7}', (10,), ()),
            None,
            None,
            None,
            (('(?:2(?:0[01]|2\\d|3[1-35-8]|4[13-9]|7[1-689]|8[1-578]|9[467])|3(?:1[1-79]|[2458][1-9]|3\\d|7'
              '[1-8]|9[1-5])|4(?:1[1-57-9]|[267][1-9]|3[1-8]|[45]\\d|8[1-35-9]|9[2-689])|5(?:[56]\\d|88|9[1'
              '-79])|6(?:1[2-68]|[2-4][1-9]|5[1-36-9]|6[0-57-9]|7[1-7]|8[67]|9[4-8])|7(?:[1346][1-9]|[27]'
              '\\d|5[13-9]|8[1-69]|9[17])|8(?:1\\d|2[13-689]|3[1-6]|4[124-6]|6[1246-9]|7[0-378]|9[12479])|9'
              '(?:1[346-9]|2[1-4]|3[2-46-8]|5[1348]|[69]\\d|7[12]|8[1-8]))\\d{7}'),
             (10,),
             (7, 8)),
            (('(?:2(?:2\\d|3[1-35-8]|4[13-9]|7[1-689]|8[1-578]|9[467])|3(?:1[1-79]|[2458][1-9]|3\\d|7[1-8]|'
              '9[1-5])|4(?:1[1-57-9]|[267][1-9]|3[1-8]|[45]\\d|8[1-35-9]|9[2-689])|5(?:[56]\\d|88|9[1-79])|'
              '6(?:1[2-68]|[2-4][1-9]|5[1-36-9]|6[0-57-9]|7[1-7]|8[67]|9[4-8])|7(?:[1346][1-9]|[27]\\d|5[1'
              '3-9]|8[1-69]|9[17])|8(?:1\\d|2[13-689]|3[1-6]|4[124-6]|6[1246-9]|7[0-378]|9[12479])|9(?:1[3'
              '46-9]|2[1-4]|3[2-46-8]|5[1348]|[69]\\d|7[12]|8[1-8]))\\d{7}'),
             (10,),
             (7, 8))),
           None,
           False,
           None),
    'CU': (53,
           '119',
           '0',
           None,
           ('(?:[2-7]|8\\d\\d)\\d{7}|[2-47]\\d{6}|[34]\\d{5}', (6, 7, 8, 10), (4, 5)),
           (None,
            ('800\\d{7}', (10,), ()),
            ('807\\d{7}', (10,), ()),
            None,
            None,
            None,
            None,
            None,
            ('(?:3[23]|4[89])\\d{4,6}|(?:31|4[36]|8(?:0[25]|78)\\d)\\d{6}|(?:2[1-4]|4[1257]|7\\d)\\d{5,6}',
             (6, 7, 8, 10),
             (4, 5)),
            ('(?:5\\d|6[2-4])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'AR': (54,
           '00',
           ('0?(?:(11|2(?:2(?:02?|[13]|2[13-79]|4[1-6]|5[2457]|6[124-8]|7[1-4]|8[13-6]|9[1267])|3(?:02?|1[467]'
            '|2[03-6]|3[13-8]|[49][2-6]|5[2-8]|[67])|4(?:7[3-578]|9)|6(?:[0136]|2[24-6]|4[6-8]?|5[15-8])|80|9('
            '?:0[1-3]|[19]|2\\d|3[1-6]|4[02568]?|5[2-4]|6[2-46]|72?|8[23]?))|3(?:3(?:2[79]|6|8[2578])|4(?:'
            '0[0-24-9]|[12]|3[5-8]?|4[24-7]|5[4-68]?|6[02-9]|7[126]|8[2379]?|9[1-36-8])|5(?:1|2[1245]|3[237]?|'
            '4[1-46-9]|6[2-4]|7[1-6]|8[2-5]?)|6[24]|7(?:[069]|1[1568]|2[15]|3[145]|4[13]|5[14-8]|7[2-57]|8[126'
            '])|8(?:[01]|2[15-7]|3[2578]?|4[13-6]|5[4-8]?|6[1-357-9]|7[36-8]?|8[5-8]?|9[124])))15)?'),
           '9\\1',
           ('(?:11|[89]\\d\\d)\\d{8}|[2368]\\d{9}', (10, 11), (6, 7, 8)),
           (('60[04579]\\d{7}', (10,), ()),
            ('800\\d{7,8}', (10, 11), ()),
            None,
            None,
            None,
            None,
            ('810\\d{7}', (10,), ()),
            None,
            (('3(?:7(?:1[15]|81)|8(?:21|4[16]|69|9[12]))[46]\\d{5}|(?:2(?:2(?:2[59]|44|52)|3(?:26|44)|47[3'
              '5]|9(?:[07]2|2[26]|34|46))|3327)[45]\\d{5}|(?:2(?:657|9(?:54|66))|3(?:48[27]|7(?:55|77)|8(?'
              ':65|78)))[2-8]\\d{5}|(?:2(?:284|3(?:02|23)|477|622|920)|3(?:4(?:46|89|92)|541))[2-7]\\d{5}|('
              '?:(?:11[0-8]|670)\\d|2(?:2(?:0[45]|1[2-6]|3[3-6])|3(?:[06]4|7[45])|494|6(?:04|1[2-8]|[36][4'
              '5]|4[3-6])|80[45]|9(?:[17][4-6]|[48][45]|9[3-6]))|3(?:364|4(?:1[2-8]|[25][4-6]|3[3-6]|84)|5(?:1'
              '[2-9]|[38][4-6])|6(?:2[45]|44)|7[069][45]|8(?:0[45]|1[2-7]|3[4-6]|5[3-6]|7[2-6]|8[3-68])))'
              '\\d{6}|(?:2(?:2(?:62|81)|320|9(?:42|83))|3(?:329|4(?:62|7[16])|5(?:43|64)|7(?:18|5[17])))[2'
              '-6]\\d{5}|2(?:2(?:21|4[23]|6[145]|7[1-4]|8[356]|9[267])|3(?:16|3[13-8]|43|5[346-8]|9[3-5])|'
              '6(?:2[46]|4[78]|5[1568])|9(?:03|2[1457-9]|3[1356]|4[08]|[56][23]|82))4\\d{5}|(?:2(?:257|3(?'
              ':24|46|92)|9(?:01|23|64))|3(?:4(?:42|64)|5(?:25|37|4[47]|71)|7(?:35|72)|825))[3-6]\\d{5}|(?'
              ':2(?:2(?:02|2[3467]|4[156]|5[45]|6[6-8]|91)|3(?:1[47]|25|[45][25]|96)|47[48]|625|932)|3(?:38[25'
              '78]|4(?:0[0-24-9]|3[78]|4[457]|58|6[035-9]|72|83|9[136-8])|5(?:2[124]|[368][23]|4[2689]|7[2-6])'
              '|7(?:16|2[15]|3[14]|4[13]|5[468]|7[3-5]|8[26])|8(?:2[67]|3[278]|4[3-5]|5[78]|6[1-378]|[78]7|94)'
              '))[4-6]\\d{5}'),
             (10,),
             (6, 7, 8)),
            (('93(?:7(?:1[15]|81)|8(?:21|4[16]|69|9[12]))[46]\\d{5}|9(?:2(?:2(?:2[59]|44|52)|3(?:26|44)|47'
              '[35]|9(?:[07]2|2[26]|34|46))|3327)[45]\\d{5}|9(?:2(?:657|9(?:54|66))|3(?:48[27]|7(?:55|77)|'
              '8(?:65|78)))[2-8]\\d{5}|9(?:2(?:284|3(?:02|23)|477|622|920)|3(?:4(?:46|89|92)|541))[2-7]\\d{'
              '5}|(?:675\\d|9(?:11[0-8]\\d|2(?:2(?:0[45]|1[2-6]|3[3-6])|3(?:[06]4|7[45])|494|6(?:04|1[2-8]|'
              '[36][45]|4[3-6])|80[45]|9(?:[17][4-6]|[48][45]|9[3-6]))|3(?:364|4(?:1[2-8]|[25][4-6]|3[3-6]|84)'
              '|5(?:1[2-9]|[38][4-6])|6(?:2[45]|44)|7[069][45]|8(?:0[45]|1[2-7]|3[4-6]|5[3-6]|7[2-6]|8[3-68]))'
              '))\\d{6}|9(?:2(?:2(?:62|81)|320|9(?:42|83))|3(?:329|4(?:62|7[16])|5(?:43|64)|7(?:18|5[17]))'
              ')[2-6]\\d{5}|92(?:2(?:21|4[23]|6[145]|7[1-4]|8[356]|9[267])|3(?:16|3[13-8]|43|5[346-8]|9[3-'
              '5])|6(?:2[46]|4[78]|5[1568])|9(?:03|2[1457-9]|3[1356]|4[08]|[56][23]|82))4\\d{5}|9(?:2(?:25'
              '7|3(?:24|46|92)|9(?:01|23|64))|3(?:4(?:42|64)|5(?:25|37|4[47]|71)|7(?:35|72)|825))[3-6]\\d{'
              '5}|9(?:2(?:2(?:02|2[3467]|4[156]|5[45]|6[6-8]|91)|3(?:1[47]|25|[45][25]|96)|47[48]|625|932)|3(?'
              ':38[2578]|4(?:0[0-24-9]|3[78]|4[457]|58|6[035-9]|72|83|9[136-8])|5(?:2[124]|[368][23]|4[2689]|7'
              '[2-6])|7(?:16|2[15]|3[14]|4[13]|5[468]|7[3-5]|8[26])|8(?:2[67]|3[278]|4[3-5]|5[78]|6[1-378]|[78'
              ']7|94)))[4-6]\\d{5}'),
             (10, 11),
             (6, 7, 8))),
           None,
           False,
           None),
    'BR': (55,
           '00(?:1[245]|2[1-35]|31|4[13]|[56]5|99)',
           '(?:0|90)(?:(1[245]|2[1-35]|31|4[13]|[56]5|99)(\\d{10,11}))?',
           '\\2',
           ('[1-467]\\d{9,10}|55[0-46-9]\\d{8}|[34]\\d{7}|55\\d{7,8}|(?:5[0-46-9]|[89]\\d)\\d{7,9}',
            (8, 9, 10, 11),
            ()),
           (('[59]00\\d{6,7}', (9, 10), ()),
            ('800\\d{6,7}', (9, 10), ()),
            ('(?:30[03]\\d{3}|4(?:0(?:0\\d|20)|370|864))\\d{4}|300\\d{5}', (8, 10), ()),
            None,
            None,
            None,
            None,
            None,
            ('(?:[14689][1-9]|2[12478]|3[1-578]|5[13-5]|7[13-579])[2-5]\\d{7}', (10,), (8,)),
            ('(?:[14689][1-9]|2[12478]|3[1-578]|5[13-5]|7[13-579])(?:7|9\\d)\\d{7}', (10, 11), (8, 9))),
           None,
           False,
           (('(\\d{3,6})',
             '1(?:1[25-8]|2[357-9]|3[02-68]|4[12568]|5|6[0-8]|8[015]|9[0-47-9])|321|610',
             None,
             False),
            ('(\\d{4})(\\d{4})', '300|4(?:0(?:0|20)|370|864)', None, False),
            ('(\\d{4})(\\d{4})', '[2357]|4(?:[0-24-9]|3(?:[0-689]|7[1-9]))', None, False),
            ('(\\d{3})(\\d{2,3})(\\d{4})', '(?:[358]|90)0', '0\\1', False),
            ('(\\d{5})(\\d{4})', '9', None, False),
            ('(\\d{2})(\\d{4})(\\d{4})',
             '(?:[14689][1-9]|2[12478]|3[1-578]|5[13-5]|7[13-579])[2-57]',
             '(\\1)',
             False),
            ('(\\d{2})(\\d{5})(\\d{4})', '[16][1-9]|[2-57-9]', '(\\1)', False))),
    'CL': (56,
           '(?:0|1(?:1[0-69]|2[02-5]|5[13-58]|69|7[0167]|8[018]))0',
           None,
           None,
           ('12300\\d{6}|6\\d{9,10}|[2-9]\\d{8}', (9, 10, 11), ()),
           (None,
            ('(?:123|8)00\\d{6}', (9, 11), ()),
            ('600\\d{7,8}', (10, 11), ()),
            ('44\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            (('2(?:1982[0-6]|3314[05-9])\\d{3}|(?:2(?:1(?:160|962)|3(?:(?:[24]\\d|50)\\d|3(?:[0346-9]\\d|1[0-'
              '35-9]|2[1-9]|5[0-24-9])|600)|646[59])|(?:600|80[1-9])\\d\\d|9(?:(?:10[0-2]|7[1-9]\\d)\\d|3(?:['
              '0-57-9]\\d\\d|6(?:0[02-9]|[1-9]\\d))|6(?:[0-8]\\d\\d|9(?:[02-79]\\d|1[05-9]))|9(?:[03-9]\\d\\'
              'd|1(?:[0235-9]\\d|4[0-24-9])|2(?:[0-79]\\d|8[0-46-9]))))\\d{4}|(?:22|3[2-5]|[47][1-35]|5[1-35'
              '78]|6[13-57]|8[1-9]|9[2458])\\d{7}'),
             (9,),
             ()),
            (('2(?:1982[0-6]|3314[05-9])\\d{3}|(?:2(?:1(?:160|962)|3(?:(?:[24]\\d|50)\\d|3(?:[0346-9]\\d|1[0-'
              '35-9]|2[1-9]|5[0-24-9])|600)|646[59])|80[1-8]\\d\\d|9(?:(?:10[0-2]|7[1-9]\\d)\\d|3(?:[0-57-9]\\'
              'd\\d|6(?:0[02-9]|[1-9]\\d))|6(?:[0-8]\\d\\d|9(?:[02-79]\\d|1[05-9]))|9(?:[03-9]\\d\\d|1(?:[0'
              '235-9]\\d|4[0-24-9])|2(?:[0-79]\\d|8[0-46-9]))))\\d{4}|(?:22|3[2-5]|[47][1-35]|5[1-3578]|6[13'
              '-57]|8[1-9]|9[2458])\\d{7}'),
             (9,),
             ())),
           None,
           False,
           None),
    'CO': (57,
           '00(?:4(?:[14]4|56)|[579])',
           '0([3579]|4(?:[14]4|56))?',
           None,
           ('(?:46|60\\d\\d)\\d{6}|(?:1\\d|[39])\\d{9}', (8, 10, 11), (4, 7)),
           (('(?:19(?:0[01]|4[78])|901)\\d{7}', (10, 11), ()),
            ('1800\\d{7}', (11,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('601055(?:[0-4]\\d|50)\\d\\d|6010(?:[0-4]\\d|5[0-4])\\d{4}|(?:46|60(?:[18][1-9]|[24-7][2-9]'
              '))\\d{6}'),
             (8, 10),
             (4, 7)),
            (('333301[0-5]\\d{3}|3333(?:00|2[5-9]|[3-9]\\d)\\d{4}|(?:3(?:24[1-9]|3(?:00|3[0-24-9]))|9408)\\d{'
              '6}|3(?:0[0-5]|1\\d|2[0-3]|5[01]|70)\\d{7}'),
             (10,),
             ())),
           None,
           False,
           None),
    'VE': (58,
           '00',
           '0',
           None,
           ('[68]00\\d{7}|(?:[24]\\d|[59]0)\\d{8}', (10,), (7,)),
           (('90[01]\\d{7}', (10,), ()),
            ('800\\d{7}', (10,), ()),
            None,
            None,
            None,
            None,
            ('501\\d{7}', (10,), (7,)),
            None,
            ('(?:2(?:12|3[457-9]|[467]\\d|[58][1-9]|9[1-6])|[4-6]00)\\d{7}', (10,), (7,)),
            ('4(?:1[24-8]|2[246])\\d{7}', (10,), ())),
           None,
           False,
           None),
    'MY': (60,
           '00',
           '0',
           None,
           ('1\\d{8,9}|(?:3\\d|[4-9])\\d{7}', (8, 9, 10), (6, 7)),
           (('1600\\d{6}', (10,), ()),
            ('1[378]00\\d{6}', (10,), ()),
            None,
            ('15(?:4(?:6[0-4]\\d|8(?:0[125]|[17]\\d|21|3[01]|4[01589]|5[014]|6[02]))|6(?:32[0-6]|78\\d))\\d{4}',
             (10,),
             ()),
            None,
            None,
            None,
            None,
            (('427[01]\\d{4}|(?:3(?:2[0-36-9]|3[0-368]|4[0-278]|5[0-24-8]|6[0-467]|7[1246-9]|8\\d|9[0-57])\\'
              'd|4(?:2[0-689]|[3-79]\\d|8[1-35689])|5(?:2[0-589]|[3468]\\d|5[0-489]|7[1-9]|9[23])|6(?:2[2-9'
              ']|3[1357-9]|[46]\\d|5[0-6]|7[0-35-9]|85|9[015-8])|7(?:[2579]\\d|3[03-68]|4[0-8]|6[5-9]|8[0-3'
              '5-9])|8(?:[24][2-8]|3[2-5]|5[2-7]|6[2-589]|7[2-578]|[89][2-9])|9(?:0[57]|13|[25-7]\\d|[3489'
              '][0-8]))\\d{5}'),
             (8, 9),
             (6, 7)),
            (('1(?:(?:1888[689]|4400|8(?:47|8[27])[0-4])\\d{4}|9\\d{7,8})|1(?:0(?:[23568]\\d|4[0-6]|7[016-9]'
              '|9[0-8])|1(?:[1-5]\\d\\d|6(?:0[5-9]|[1-9]\\d)|7(?:[0-4]\\d|5[0-79]|6[02-4]|8[02-5]))|(?:[26]\\d'
              '|[37][1-9]|4[235-9])\\d|5(?:31|9\\d\\d)|8(?:1[23]|[236]\\d|4[06]|5(?:46|[7-9])|7[016-9]|8[01]|'
              '9[0-8]))\\d{5}'),
             (9, 10),
             ())),
           None,
           False,
           None),
    'AU': (61,
           '001[14-689]|14(?:1[14]|34|4[17]|[56]6|7[47]|88)0011',
           '(183[12])|0',
           None,
           ('1(?:[0-79]\\d{7}(?:\\d(?:\\d{2})?)?|8[0-24-9]\\d{7})|[2-478]\\d{8}|1\\d{4,7}',
            (5, 6, 7, 8, 9, 10, 12),
            ()),
           (('190[0-26]\\d{6}', (10,), ()),
            ('180(?:0\\d{3}|2)\\d{3}', (7, 10), ()),
            ('13(?:00\\d{6}(?:\\d{2})?|45[0-4]\\d{3})|13\\d{4}', (6, 8, 10, 12), ()),
            ('14(?:5(?:1[0458]|[23][458])|71\\d)\\d{4}', (9,), ()),
            None,
            ('163\\d{2,6}', (5, 6, 7, 8, 9), ()),
            None,
            None,
            (('(?:(?:241|349)0\\d\\d|8(?:51(?:0(?:0[03-9]|[12479]\\d|3[2-9]|5[0-8]|6[1-9]|8[0-7])|1(?:[02356'
              '89]\\d|1[0-69]|4[0-589]|7[0-47-9])|2(?:0[0-79]|[18][13579]|2[14-9]|3[0-46-9]|[4-6]\\d|7[89]|'
              '9[0-4])|[34]\\d\\d)|91(?:(?:[0-58]\\d|6[0135-9])\\d|7(?:0[0-24-9]|[1-9]\\d)|9(?:[0-46-9]\\d'
              '|5[0-79]))))\\d{3}|(?:2(?:[0-26-9]\\d|3[0-8]|4[02-9]|5[0135-9])|3(?:[0-3589]\\d|4[0-578]|6[1-'
              '9]|7[0-35-9])|7(?:[013-57-9]\\d|2[0-8])|8(?:55|6[0-8]|[78]\\d|9[02-9]))\\d{6}'),
             (9,),
             (8,)),
            (('4(?:79[01]|83[0-36-9]|9(?:5[0-3]|6[0-4]))\\d{5}|4(?:[0-36]\\d|4[047-9]|[58][0-24-9]|7[02-8]|'
              '9[0-47-9])\\d{6}'),
             (9,),
             ())),
           None,
           False,
           None),
    'CC': (61,
           '001[14-689]|14(?:1[14]|34|4[17]|[56]6|7[47]|88)0011',
           '([59]\\d{7})$|0',
           '8\\1',
           ('1(?:[0-79]\\d{8}(?:\\d{2})?|8[0-24-9]\\d{7})|[148]\\d{8}|1\\d{5,7}', (6, 7, 8, 9, 10, 12), ()),
           (('190[0-26]\\d{6}', (10,), ()),
            ('180(?:0\\d{3}|2)\\d{3}', (7, 10), ()),
            ('13(?:00\\d{6}(?:\\d{2})?|45[0-4]\\d{3})|13\\d{4}', (6, 8, 10, 12), ()),
            ('14(?:5(?:1[0458]|[23][458])|71\\d)\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            (('8(?:51(?:0(?:02|31|60|89)|1(?:18|76)|223)|91(?:0(?:1[0-2]|29)|1(?:[28]2|50|79)|2(?:10|64)|3(?:['
              '06]8|22)|4[29]8|62\\d|70[23]|959))\\d{3}'),
             (9,),
             (8,)),
            (('4(?:79[01]|83[0-36-9]|9(?:5[0-3]|6[0-4]))\\d{5}|4(?:[0-36]\\d|4[047-9]|[58][0-24-9]|7[02-8]|'
              '9[0-47-9])\\d{6}'),
             (9,),
             ())),
           None,
           False,
           None),
    'CX': (61,
           '001[14-689]|14(?:1[14]|34|4[17]|[56]6|7[47]|88)0011',
           '([59]\\d{7})$|0',
           '8\\1',
           ('1(?:[0-79]\\d{8}(?:\\d{2})?|8[0-24-9]\\d{7})|[148]\\d{8}|1\\d{5,7}', (6, 7, 8, 9, 10, 12), ()),
           (('190[0-26]\\d{6}', (10,), ()),
            ('180(?:0\\d{3}|2)\\d{3}', (7, 10), ()),
            ('13(?:00\\d{6}(?:\\d{2})?|45[0-4]\\d{3})|13\\d{4}', (6, 8, 10, 12), ()),
            ('14(?:5(?:1[0458]|[23][458])|71\\d)\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            (('8(?:51(?:0(?:01|30|59|88)|1(?:17|46|75)|2(?:22|35))|91(?:00[6-9]|1(?:[28]1|49|78)|2(?:09|63)|3('
              '?:12|26|75)|4(?:56|97)|64\\d|7(?:0[01]|1[0-2])|958))\\d{3}'),
             (9,),
             (8,)),
            (('4(?:79[01]|83[0-36-9]|9(?:5[0-3]|6[0-4]))\\d{5}|4(?:[0-36]\\d|4[047-9]|[58][0-24-9]|7[02-8]|'
              '9[0-47-9])\\d{6}'),
             (9,),
             ())),
           None,
           False,
           None),
    'ID': (62,
           '00[89]',
           '0',
           None,
           ('00[1-9]\\d{9,14}|(?:[1-36]|8\\d{5})\\d{6}|00\\d{9}|[1-9]\\d{8,10}|[2-9]\\d{7}',
            (7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
            (5, 6)),
           (('809\\d{7}', (10,), ()),
            ('00(?:1803\\d{5,11}|7803\\d{7})|(?:177\\d|800)\\d{5,7}',
             (8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
             ()),
            ('804\\d{7}', (10,), ()),
            None,
            None,
            None,
            ('(?:1500|8071\\d{3})\\d{3}', (7, 10), ()),
            None,
            (('2[124]\\d{7,8}|619\\d{8}|2(?:1(?:14|500)|2\\d{3})\\d{3}|61\\d{5,8}|(?:2(?:[35][1-4]|6[0-8]|7[1-'
              '6]|8\\d|9[1-8])|3(?:1|[25][1-8]|3[1-68]|4[1-3]|6[1-3568]|7[0-469]|8\\d)|4(?:0[1-589]|1[01347'
              '-9]|2[0-36-8]|3[0-24-68]|43|5[1-378]|6[1-5]|7[134]|8[1245])|5(?:1[1-35-9]|2[25-8]|3[124-9]|4[1-'
              '3589]|5[1-46]|6[1-8])|6(?:[25]\\d|3[1-69]|4[1-6])|7(?:02|[125][1-9]|[36]\\d|4[1-8]|7[0-36-9]'
              ')|9(?:0[12]|1[013-8]|2[0-479]|5[125-8]|6[23679]|7[159]|8[01346]))\\d{5,8}'),
             (7, 8, 9, 10, 11),
             (5, 6)),
            ('8[1-35-9]\\d{7,10}', (9, 10, 11, 12), ())),
           None,
           False,
           None),
    'PH': (63,
           '00',
           '0',
           None,
           ('(?:[2-7]|9\\d)\\d{8}|2\\d{5}|(?:1800|8)\\d{7,9}', (6, 8, 9, 10, 11, 12, 13), (4, 5, 7)),
           (None,
            ('1800\\d{7,9}', (11, 12, 13), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:(?:2[3-8]|3[2-68]|4[2-9]|5[2-6]|6[2-58]|7[24578])\\d{3}|88(?:22\\d\\d|42))\\d{4}|(?:2|8[2-8'
              ']\\d\\d)\\d{5}'),
             (6, 8, 9, 10),
             (4, 5, 7)),
            ('(?:8(?:1[37]|9[5-8])|9(?:0[5-9]|1[0-24-9]|[235-7]\\d|4[2-9]|8[135-9]|9[1-9]))\\d{7}', (10,), ())),
           None,
           False,
           None),
    'NZ': (64,
           '0(?:0|161)',
           '0',
           None,
           ('[1289]\\d{9}|50\\d{5}(?:\\d{2,3})?|[27-9]\\d{7,8}|(?:[34]\\d|6[0-35-9])\\d{6}|8\\d{4,6}',
            (5, 6, 7, 8, 9, 10),
            ()),
           (('(?:1[13-57-9]\\d{5}|50(?:0[08]|30|66|77|88))\\d{3}|90\\d{6,8}', (7, 8, 9, 10), ()),
            ('508\\d{6,7}|80\\d{6,8}', (8, 9, 10), ()),
            None,
            None,
            ('70\\d{7}', (9,), ()),
            None,
            ('8(?:1[16-9]|22|3\\d|4[045]|5[459]|6[235-9]|7[0-3579]|90)\\d{2,7}', (5, 6, 7, 8, 9, 10), ()),
            None,
            ('240\\d{5}|(?:3[2-79]|[49][2-9]|6[235-9]|7[2-57-9])\\d{6}', (8,), (7,)),
            ('2(?:[0-27-9]\\d|6)\\d{6,7}|2(?:1\\d|75)\\d{5}', (8, 9, 10), ())),
           None,
           False,
           None),
    'SG': (65,
           '0[0-3]\\d',
           None,
           None,
           ('(?:(?:1\\d|8)\\d\\d|7000)\\d{7}|[3689]\\d{7}', (8, 10, 11), ()),
           (('1900\\d{7}', (11,), ()),
            ('(?:18|8)00\\d{7}', (10, 11), ()),
            None,
            ('(?:3[12]\\d|666)\\d{5}', (8,), ()),
            None,
            None,
            ('7000\\d{7}', (11,), ()),
            None,
            ('662[0-24-9]\\d{4}|6(?:[0-578]\\d|6[013-57-9]|9[0-35-9])\\d{5}', (8,), ()),
            ('80[1-9]\\d{5}|(?:8[1-9]|9[0-8])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'TH': (66,
           '00[1-9]',
           '0',
           None,
           ('(?:001800|[2-57]|[689]\\d)\\d{7}|1\\d{7,9}', (8, 9, 10, 13), ()),
           (('1900\\d{6}', (10,), ()),
            ('(?:001800\\d|1800)\\d{6}', (10, 13), ()),
            None,
            ('6[08]\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            ('(?:1[0689]|2\\d|3[2-9]|4[2-5]|5[2-6]|7[3-7])\\d{6}', (8,), ()),
            ('(?:(?:14|[89]\\d)\\d\\d|6(?:[1-6]\\d\\d|7(?:1[0-8]|2[4-7]|3[1-6])))\\d{5}', (9,), ())),
           None,
           False,
           None),
    'JP': (81,
           '010',
           '(000[2569]\\d{4,6})$|(?:(?:003768)0?)|0',
           '\\1',
           ('00[1-9]\\d{6,14}|[25-9]\\d{9}|(?:00|[1-9]\\d\\d)\\d{6}',
            (8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
            ()),
           (('990\\d{6}', (9,), ()),
            (('00777(?:[01]|5\\d)\\d\\d|(?:00(?:7778|882[1245])|(?:120|800\\d)\\d\\d)\\d{4}|00(?:37|66|78)\\'
              'd{6,13}'),
             (8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
             ()),
            None,
            ('50[1-9]\\d{7}', (10,), ()),
            ('60\\d{7}', (9,), ()),
            ('20\\d{8}', (10,), ()),
            ('570\\d{6}', (9,), ()),
            None,
            (('(?:1(?:1[235-8]|2[3-6]|3[3-9]|4[2-6]|[58][2-8]|6[2-7]|7[2-9]|9[1-9])|(?:2[2-9]|[36][1-9])\\'
              'd|4(?:[2-578]\\d|6[02-8]|9[2-59])|5(?:[2-589]\\d|6[1-9]|7[2-8])|7(?:[25-9]\\d|3[4-9]|4[02-9])'
              '|8(?:[2679]\\d|3[2-9]|4[5-9]|5[1-9]|8[03-9])|9(?:[2-58]\\d|[679][1-9]))\\d{6}'),
             (9,),
             ()),
            ('[6-9]0[1-9]\\d{7}', (10,), ())),
           None,
           False,
           None),
    'KR': (82,
           '00(?:[125689]|3(?:[46]5|91)|7(?:00|27|3|55|6[126]))',
           '0(8(?:[1-46-8]|5\\d\\d))?',
           None,
           (('00[1-9]\\d{8,11}|(?:[12]|5\\d{3})\\d{7}|[13-6]\\d{9}|(?:[1-6]\\d|80)\\d{7}|[3-6]\\d{4,5}|(?:0'
             '0|7)0\\d{8}'),
            (5, 6, 8, 9, 10, 11, 12, 13, 14),
            (3, 4, 7)),
           (('60[2-9]\\d{6}', (9,), ()),
            ('00(?:308\\d{6,7}|798\\d{7,9})|(?:00368|[38]0)\\d{7}', (9, 11, 12, 13, 14), ()),
            None,
            ('70\\d{8}', (10,), ()),
            ('50\\d{8,9}', (10, 11), ()),
            ('15\\d{7,8}', (9, 10), ()),
            ('1(?:5(?:22|33|44|66|77|88|99)|6(?:[07]0|44|6[0168]|88)|8(?:00|33|55|77|99))\\d{4}', (8,), ()),
            None,
            ('(?:2|3[1-3]|[46][1-4]|5[1-5])[1-9]\\d{6,7}|(?:3[1-3]|[46][1-4]|5[1-5])1\\d{2,3}',
             (5, 6, 8, 9, 10),
             (3, 4, 7)),
            ('1(?:05(?:[0-8]\\d|9[0-6])|22[13]\\d)\\d{4,5}|1(?:0[0-46-9]|[16-9]\\d|2[013-9])\\d{6,7}',
             (9, 10),
             ())),
           None,
           False,
           None),
    'VN': (84,
           '00',
           '0',
           None,
           ('[12]\\d{9}|[135-9]\\d{8}|[16]\\d{6,7}|7\\d{6}', (7, 8, 9, 10), ()),
           (('1900\\d{4,6}', (8, 9, 10), ()),
            ('1800\\d{4,6}|12(?:0[13]|28)\\d{4}', (8, 9, 10), ()),
            None,
            ('672\\d{6}', (9,), ()),
            None,
            None,
            ('[17]99\\d{4}|69\\d{5,6}', (7, 8), ()),
            None,
            ('2(?:0[3-9]|1[0-689]|2[0-25-9]|[38][2-9]|4[2-8]|5[124-9]|6[0-39]|7[0-7]|9[0-4679])\\d{7}',
             (10,),
             ()),
            (('121[0-3]\\d{5}|(?:1[46]0|(?:3\\d|7[06-9])\\d|5(?:[1689]\\d|2[238]|59)|8(?:[1-8]\\d|9[6-9])|9(?:'
              '[0-8]\\d|9[013-9]))\\d{6}'),
             (9,),
             ())),
           None,
           False,
           None),
    'CN': (86,
           '00|1(?:[12]\\d|79)\\d\\d00',
           '(1(?:[12]\\d|79)\\d\\d)|0',
           None,
           (('(?:(?:1[03-689]|2\\d)\\d\\d|6)\\d{8}|1\\d{10}|[126]\\d{6}(?:\\d(?:\\d{2})?)?|86\\d{5,6}|(?:[3-5'
             '79]\\d|8[0-57-9])\\d{5,9}'),
            (7, 8, 9, 10, 11, 12),
            (5, 6)),
           (('16[08]\\d{5}', (8,), ()),
            ('(?:(?:10|21)8|8)00\\d{7}', (10, 12), ()),
            (('10(?:10\\d{4}|96\\d{3,4})|400\\d{7}|950\\d{7,8}|(?:2[0-57-9]|3(?:[15]\\d|35|49|7[0-79]|9[1-68])'
              '|4(?:1[125-9]|2[179]|[35][1-9]|6[47-9]|7\\d|8[23])|5(?:[1357]\\d|2[37]|4[36]|6[1-46]|80|9[1-'
              '9])|6(?:3[1-35]|6[0238]|9[12])|7(?:01|[1579]\\d|2[248]|3[014-9]|4[3-6]|6[023689])|8(?:1[236'
              '-8]|2[5-7]|[37]\\d|5[14-9]|8[36-8]|9[1-8])|9(?:0[1-3689]|1[1-79]|[379]\\d|4[13]|5[1-5]))96\\d'
              '{3,4}'),
             (7, 8, 9, 10, 11),
             (5, 6)),
            None,
            None,
            None,
            None,
            None,
            (('(?:10(?:[02-79]\\d\\d|[18](?:0[1-9]|[1-9]\\d))|2(?:[02-57-9]\\d{3}|1(?:[18](?:0[1-9]|[1-9]\\d)|'
              '[2-79]\\d\\d))|9(?:78|94)\\d\\d)\\d{5}|(?:43[35]|754|851)\\d{7,8}|(?:10|2[0-57-9])(?:1(?:00'
              '|23)\\d\\d|95\\d{3,4})|(?:43[35]|754|851)(?:1(?:00\\d|23)\\d|95\\d{3,4})|9(?:78|94)(?:100\\d'
              '\\d|95\\d{3,4})|(?:3(?:11|7[179])|4(?:[15]1|3[12])|5(?:1\\d|2[37]|3[12]|51|7[13-79]|9[15])|7('
              '?:[39]1|5[57]|6[09])|8(?:71|98))(?:[02-8]\\d{7}|1(?:0(?:0\\d\\d(?:\\d{3})?|[1-9]\\d{5})|[1'
              '3-9]\\d{6}|2(?:[0-24-9]\\d{5}|3\\d(?:\\d{4})?))|9(?:[0-46-9]\\d{6}|5\\d{3}(?:\\d(?:\\d{2})?)?'
              '))|(?:3(?:1[02-9]|35|49|5\\d|7[02-6]|9[1-68])|4(?:1[25-9]|2[179]|3[46-9]|5[2-9]|6[47-9]|7\\d'
              '|8[23])|5(?:3[03-9]|4[36]|5[02-9]|6[1-46]|7[028]|80|9[2-46-9])|6(?:3[1-35]|6[0238]|9[12])|7(?:0'
              '1|[17]\\d|2[248]|3[04-9]|4[3-6]|5[0-3689]|6[2368]|9[02-9])|8(?:1[236-8]|2[5-7]|3\\d|5[4-9]|7'
              '[02-9]|8[36-8]|9[1-7])|9(?:0[1-3689]|1[1-79]|3\\d|4[13]|5[1-5]|7[0-79]|9[0-35-9]))(?:[02-8]'
              '\\d{6}|1(?:0(?:0\\d\\d(?:\\d{2})?|[1-9]\\d{4})|[13-9]\\d{5}|2(?:[0-24-9]\\d{4}|3\\d(?:\\d{3})?'
              '))|9(?:[0-46-9]\\d{5}|5\\d{3,5}))'),
             (7, 8, 9, 10, 11),
             (5, 6)),
            ('1(?:610\\d|740[0-5])\\d{6}|1(?:[38]\\d|4[57]|[59][0-35-9]|6[25-7]|7[0-35-8])\\d{8}', (11,), ())),
           None,
           False,
           None),
    'TR': (90,
           '00',
           '0',
           None,
           ('4\\d{6}|8\\d{11,12}|(?:[2-58]\\d\\d|900)\\d{7}', (7, 10, 12, 13), ()),
           (('(?:8[89]8|900)\\d{7}', (10,), ()),
            ('8(?:00\\d{7}(?:\\d{2,3})?|11\\d{7})', (10, 12, 13), ()),
            None,
            ('850\\d{7}', (10,), ()),
            ('592(?:21[12]|461)\\d{4}', (10,), ()),
            ('512\\d{7}', (10,), ()),
            ('444\\d{4}', (7,), ()),
            None,
            (('(?:2(?:1[26]|[28][2468]|[3-5][268]|[67][246])|3(?:[13][28]|[24-6][2468]|[78][02468]|92)|4(?:[16'
              '][246]|[23578][2468]|4[26]))\\d{7}'),
             (10,),
             ()),
            ('5(?:61(?:011|61\\d)|82[2-5]\\d\\d)\\d{4}|5(?:[03-5]\\d|1[06]|24|6[24]|7[245]|9[46])\\d{7}',
             (10,),
             ())),
           None,
           False,
           None),
    'IN': (91,
           '00',
           '0',
           None,
           ('(?:000800|[2-9]\\d\\d)\\d{7}|1\\d{7,12}', (8, 9, 10, 11, 12, 13), (6, 7)),
           (('186[12]\\d{9}', (13,), ()),
            ('000800\\d{7}|180(?:0\\d{4,9}|3\\d{9})', (8, 9, 10, 11, 12, 13), ()),
            ('1860\\d{7}', (11,), ()),
            None,
            None,
            None,
            ('140\\d{7}', (10,), ()),
            None,
            (('(?:2717(?:[2-7]\\d|95)|6828[235-7]\\d)\\d{4}|(?:170[24]|280[13468]|4(?:20[24]|72[2-8])|552[1-'
              '7])\\d{6}|(?:271[0-689]|682[0-79]|782[0-6])[2-7]\\d{5}|(?:2(?:[02][2-79]|90)|3(?:23|80)|683|'
              '79[1-5])\\d{7}|(?:11|33|4[04]|80)[2-7]\\d{7}|(?:342|674|788)(?:[0189][2-7]|[2-7]\\d)\\d{5}|(?:'
              '1(?:2[0-249]|3[0-25]|4[145]|[59][14]|6[014]|7[1257]|8[01346])|2(?:1[257]|3[013]|4[01]|5[0137]|6'
              '[0158]|78|8[1568]|9[14])|3(?:26|4[13]|5[34]|6[01489]|7[02-46]|8[159])|4(?:1[36]|2[1-47]|3[15]|5'
              '[12]|6[0-26-9]|7[014-9]|8[013-57]|9[014-7])|5(?:1[025]|22|[36][25]|4[28]|[578]1|9[15])|6(?:12|['
              '2-47]1|5[17]|6[13]|80)|7(?:12|2[14]|3[134]|4[47]|5[15]|[67]1)|8(?:16|2[014]|3[126]|6[136]|7[078'
              ']|8[34]|91))[2-7]\\d{6}|(?:1(?:2[35-8]|3[346-9]|4[236-9]|[59][0235-9]|6[235-9]|7[34689]|8[2'
              '57-9])|2(?:1[134689]|3[24-8]|4[2-8]|5[25689]|6[2-4679]|7[3-79]|8[2-479]|9[235-9])|3(?:01|1[79]|'
              '2[1245]|4[5-8]|5[125689]|6[235-7]|7[157-9]|8[2-46-8])|4(?:1[14578]|2[5689]|3[2-467]|5[4-7]|6[35'
              ']|73|8[2689]|9[2389])|5(?:[16][146-9]|2[14-8]|3[1346]|4[14-69]|5[46]|7[2-4]|8[2-8]|9[246])|6(?:'
              '1[1358]|2[2457]|3[2-4]|4[235-7]|5[2-689]|6[24578]|7[235689]|8[14-6])|7(?:1[013-9]|2[0235-9]|3[2'
              '679]|4[1-35689]|5[2-46-9]|[67][02-9]|8[013-7]|90)|8(?:1[1357-9]|2[235-8]|3[03-57-9]|4[0-24-9]|5'
              '\\d|6[2457-9]|7[1-6]|8[1256]|9[2-4]))\\d[2-7]\\d{5}'),
             (10,),
             (6, 7, 8)),
            (('(?:6(?:1279|828[01489])|7(?:887[02-9]|9313)|8(?:079[04-9]|(?:84|91)7[02-8]))\\d{5}|(?:160[0'
              '1]|6(?:(?:12|[2-4]1|5[17]|6[13]|80)[0189]|7(?:1[0189]|86))|7(?:1(?:2[0189]|9[0-5])|3(?:2[5-8]|['
              '34][017-9]|9[016-9])|5(?:[15][017-9]|2[04-9]|9[7-9])|6(?:0[0-47]|1[0-257-9]|2[0-4]|3[19]|5[4589'
              '])|70[0289]|88[089])|8(?:0(?:6[67]|7[02-8])|70[017-9]|84[01489]|91[0-289]))\\d{6}|(?:731|8('
              '?:16|2[014]|3[126]|6[136]|7[78]|83))(?:[0189]\\d|7[02-8])\\d{5}|(?:6(?:(?:1[1358]|2[2457]|3['
              '2-4]|4[235-7]|5[2-689]|6[24578])\\d|7(?:[23569]\\d|4[0189]|8[0-57-9])|8(?:[14-6]\\d|2[0-79]))'
              '|7(?:1(?:[013-8]\\d|9[6-9])|3(?:2[0-49]|9[2-5])|5(?:2[1-3]|9[0-6])|6(?:0[5689]|2[5-9]|3[02-'
              '8]|4\\d|5[0-367])|70[13-7]|881))[0189]\\d{5}|(?:6(?:[09]\\d|1[04679]|2[03689]|3[05-9]|4[0489]'
              '|50|6[069]|7[07]|8[7-9])|7(?:[024]\\d|3[05-8]|5[0346-8]|6[6-9]|7[1-9]|8[0-79]|9[06-9])|8(?:'
              '0[01589]|1[0-57-9]|2[235-9]|3[03-57-9]|[45]\\d|6[02457-9]|7[1-69]|8[0-25-9]|9[02-9])|9\\d\\d)'
              '\\d{7}'),
             (10,),
             ())),
           None,
           False,
           (('(\\d{7})', '575', None, False),
            ('(\\d{8})', '5(?:0|2(?:21|3)|3(?:0|3[23])|616|717|8888)', None, True),
            ('(\\d{4})(\\d{4,5})', '1800', None, True),
            ('(\\d{3})(\\d{3})(\\d{4})', '140', None, True),
            ('(\\d{2})(\\d{4})(\\d{4})',
             '11|2[02]|33|4[04]|79(?:[1245]|3(?:[02-9]|1[0-24-9]))|80(?:[2-4]|6[0-589])',
             '0\\1',
             True),
            ('(\\d{3})(\\d{3})(\\d{4})',
             ('1(?:2[0-24]|3[0-25]|4[145]|[59][14]|6[1-9]|7[1257]|8[1-57-9])|2(?:1[257]|3[013]|4[01]|5[0137]|6'
              '[058]|78|8[1568]|9[14])|3(?:26|4[1-3]|5[34]|6[01489]|7[02-46]|8[159])|4(?:1[36]|2[1-47]|3[15]|5'
              '[12]|6[0-26-9]|7[0-24-9]|8[013-57]|9[014-7])|5(?:1[025]|22|[36][25]|4[28]|[578]1|9[15])|6(?:12('
              '?:[2-6]|7[0-8])|74[2-7])|7(?:3171|5[15][2-6]|61[346]|88(?:[2-7]|82))|8(?:70[2-6]|84(?:[2356]|7['
              '19])|91(?:[3-6]|7[19]))|73[134][2-6]|8(?:16|2[014]|3[126]|6[136]|7[78]|83)(?:[2-6]|7[19])|(?:1('
              '?:29|60|8[06])|261|552|6(?:[2-4]1|5[17]|6[13]|7(?:1|4[0189])|80)|7(?:12|88[01]))[2-7]'),
             '0\\1',
             True),
            ('(\\d{4})(\\d{3})(\\d{3})',
             ('1(?:[2-479]|5(?:[0236-9]|5[013-9]))|[2-5]|6(?:2(?:84|95)|355|8(?:28[235-7]|3))|73179|807(?:1|9['
              '1-3])|(?:1552|6(?:(?:1[1358]|2[2457]|3[2-4]|4[235-7]|5[2-689]|6[24578])\\d|7(?:[23569]\\d|8['
              '0-57-9])|8(?:[14-6]\\d|2[0-79]))|7(?:1(?:[013-8]\\d|9[6-9])|3(?:2[0-49]|9[2-57])|5(?:2[1-3]|'
              '9[0-6])|6(?:0[5689]|2[5-9]|3[02-8]|4\\d|5[0-367])|70[13-7]))[2-7]'),
             '0\\1',
             True),
            ('(\\d{5})(\\d{5})', '16|[6-9]', '0\\1', True),
            ('(\\d{4})(\\d{2,4})(\\d{4})', '18[06]0', None, True),
            ('(\\d{3})(\\d{3})(\\d{3})(\\d{4})', '0', None, False),
            ('(\\d{4})(\\d{3})(\\d{3})(\\d{3})', '18', None, True))),
    'PK': (92,
           '00',
           '0',
           None,
           (('122\\d{6}|[24-8]\\d{10,11}|9(?:[013-9]\\d{8,10}|2(?:[01]\\d\\d|2(?:[06-8]\\d|1[01]))\\d{7})|('
             '?:[2-8]\\d{3}|92(?:[0-7]\\d|8[1-9]))\\d{6}|[24-9]\\d{8}|[89]\\d{7}'),
            (8, 9, 10, 11, 12),
            (5, 6, 7)),
           (('900\\d{5}', (8,), ()),
            ('800\\d{5}(?:\\d{3})?', (8, 11), ()),
            None,
            None,
            ('122\\d{6}', (9,), ()),
            None,
            (('(?:2(?:[125]|3[2358]|4[2-4]|9[2-8])|4(?:[0-246-9]|5[3479])|5(?:[1-35-7]|4[2-467])|6(?:0[468]|[1'
              '-8])|7(?:[14]|2[236])|8(?:[16]|2[2-689]|3[23578]|4[3478]|5[2356])|9(?:1|22|3[27-9]|4[2-6]|6[356'
              '9]|9[2-7]))111\\d{6}'),
             (11, 12),
             ()),
            None,
            (('(?:(?:21|42)[2-9]|58[126])\\d{7}|(?:2[25]|4[0146-9]|5[1-35-7]|6[1-8]|7[14]|8[16]|91)[2-9]\\d'
              '{6,7}|(?:2(?:3[2358]|4[2-4]|9[2-8])|45[3479]|54[2-467]|60[468]|72[236]|8(?:2[2-689]|3[23578]|4['
              '3478]|5[2356])|9(?:2[2-8]|3[27-9]|4[2-6]|6[3569]|9[25-8]))[2-9]\\d{5,6}'),
             (9, 10),
             (5, 6, 7, 8)),
            ('3(?:[0-247]\\d|3[0-79]|55|64)\\d{7}', (10,), ())),
           None,
           False,
           None),
    'AF': (93,
           '00',
           '0',
           None,
           ('[2-7]\\d{8}', (9,), (7,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:[25][0-8]|[34][0-4]|6[0-5])[2-9]\\d{6}', (9,), (7,)),
            ('7\\d{8}', (9,), (7,))),
           None,
           False,
           None),
    'LK': (94,
           '00',
           '0',
           None,
           ('[1-9]\\d{8}', (9,), (7,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            ('1973\\d{5}', (9,), ()),
            None,
            (('(?:12[2-9]|602|8[12]\\d|9(?:1\\d|22|9[245]))\\d{6}|(?:11|2[13-7]|3[1-8]|4[157]|5[12457]|6[35-'
              '7])[2-57]\\d{6}'),
             (9,),
             (7,)),
            ('7(?:[0-25-8]\\d|4[0-4])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'MM': (95,
           '00',
           '0',
           None,
           ('1\\d{5,7}|95\\d{6}|(?:[4-7]|9[0-46-9])\\d{6,8}|(?:2|8\\d)\\d{5,8}', (6, 7, 8, 9, 10), (5,)),
           (None,
            ('80080(?:0[1-9]|2\\d)\\d{3}', (10,), ()),
            None,
            ('1333\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            (('(?:1(?:(?:12|[28]\\d|3[56]|7[3-6]|9[0-6])\\d|4(?:2[29]|7[0-2]|83)|6)|2(?:2(?:00|8[34])|4(?:0'
              '\\d|22|7[0-2]|83)|51\\d\\d)|4(?:2(?:2\\d\\d|48[013])|3(?:20\\d|4(?:70|83)|56)|420\\d|5(?:2\\d'
              '|470))|6(?:0(?:[23]|88\\d)|(?:124|[56]2\\d)\\d|2472|3(?:20\\d|470)|4(?:2[04]\\d|472)|7(?:3'
              '\\d\\d|4[67]0|8(?:[01459]\\d|8))))\\d{4}|5(?:2(?:2\\d{5,6}|47[02]\\d{4})|(?:3472|4(?:2(?:1|'
              '86)|470)|522\\d|6(?:20\\d|483)|7(?:20\\d|48[01])|8(?:20\\d|47[02])|9(?:20\\d|470))\\d{4})|7'
              '(?:(?:0470|4(?:25\\d|470)|5(?:202|470|96\\d))\\d{4}|1(?:20\\d{4,5}|4(?:70|83)\\d{4}))|8(?:1(?:2'
              '\\d{5,6}|4(?:10|7[01]\\d)\\d{3})|2(?:2\\d{5,6}|(?:320|490\\d)\\d{3})|(?:3(?:2\\d\\d|470)|4[24'
              '-7]|5(?:(?:2\\d|51)\\d|4(?:[1-35-9]\\d|4[0-57-9]))|6[23])\\d{4})|(?:1[2-6]\\d|4(?:2[24-8]|3[2-7'
              ']|[46][2-6]|5[3-5])|5(?:[27][2-8]|3[2-68]|4[24-8]|5[23]|6[2-4]|8[24-7]|9[2-7])|6(?:[19]20|42[03'
              '-6]|(?:52|7[45])\\d)|7(?:[04][24-8]|[15][2-7]|22|3[2-4])|8(?:1[2-689]|2[2-8]|(?:[35]2|64)\\d'
              '))\\d{4}|25\\d{5,6}|(?:2[2-9]|6(?:1[2356]|[24][2-6]|3[24-6]|5[2-4]|6[2-8]|7[235-7]|8[245]|9['
              '24])|8(?:3[24]|5[245]))\\d{4}'),
             (6, 7, 8, 9),
             (5,)),
            (('(?:17[01]|9(?:2(?:[0-4]|[56]\\d\\d)|(?:3(?:[0-36]|4\\d)|(?:6\\d|8[89]|9[4-8])\\d|7(?:3|40|[5-9]'
              '\\d))\\d|4(?:(?:[0245]\\d|[1379])\\d|88)|5[0-6])\\d)\\d{4}|9[69]1\\d{6}|9(?:[68]\\d|9[089])\\d'
              '{5}'),
             (7, 8, 9, 10),
             ())),
           None,
           False,
           None),
    'IR': (98,
           '00',
           '0',
           None,
           ('[1-9]\\d{9}|(?:[1-8]\\d\\d|9)\\d{3,4}', (4, 5, 6, 7, 10), (8,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            ('96(?:0[12]|2[16-8]|3(?:08|[14]5|[23]|66)|4(?:0|80)|5[01]|6[89]|86|9[19])', (4, 5), ()),
            None,
            (('(?:1[137]|2[13-68]|3[1458]|4[145]|5[1468]|6[16]|7[1467]|8[13467])(?:[03-57]\\d{7}|[16]\\d{3}'
              '(?:\\d{4})?|[289]\\d{3}(?:\\d(?:\\d{3})?)?)|94(?:000[09]|(?:12\\d|30[0-2])\\d|2(?:[02689]0\\'
              'd|121)|4(?:111|40\\d))\\d{4}'),
             (6, 7, 10),
             (4, 5, 8)),
            (('9(?:(?:0[0-5]|[13]\\d|2[0-3])\\d\\d|9(?:[0-46]\\d\\d|5(?:10|5\\d)|8(?:[12]\\d|3[0-2]|88)|9(?'
              ':[0-359]\\d|69|77|8[7-9])))\\d{5}'),
             (10,),
             ())),
           None,
           False,
           None),
    'SS': (211,
           '00',
           '0',
           None,
           ('[19]\\d{8}', (9,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('1[89]\\d{7}', (9,), ()),
            ('(?:12|9[1257-9])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'MA': (212,
           '00',
           '0',
           None,
           ('[5-8]\\d{8}', (9,), ()),
           (('89\\d{7}', (9,), ()),
            ('80[0-7]\\d{6}', (9,), ()),
            None,
            ('(?:592(?:4[0-2]|93)|80[89]\\d\\d)\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            (('5(?:(?:18|4[0679]|5[03])\\d|2(?:[0-25-79]\\d|3[1-578]|4[02-46-8]|8[0235-9])|3(?:[0-47]\\d|5[0'
              '2-9]|6[02-8]|8[014-9]|9[3-9]))\\d{5}'),
             (9,),
             ()),
            ('(?:6(?:[0-79]\\d|8[0-247-9])|7(?:[016-8]\\d|2[0-8]|3[01]|5[0-5]))\\d{6}', (9,), ())),
           '[5-8]',
           False,
           None),
    'EH': (212,
           '00',
           '0',
           None,
           ('[5-8]\\d{8}', (9,), ()),
           (('89\\d{7}', (9,), ()),
            ('80[0-7]\\d{6}', (9,), ()),
            None,
            ('(?:592(?:4[0-2]|93)|80[89]\\d\\d)\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            ('528[89]\\d{5}', (9,), ()),
            ('(?:6(?:[0-79]\\d|8[0-247-9])|7(?:[016-8]\\d|2[0-8]|3[01]|5[0-5]))\\d{6}', (9,), ())),
           None,
           False,
           None),
    'DZ': (213,
           '00',
           '0',
           None,
           ('(?:[1-4]|[5-79]\\d|80)\\d{7}', (8, 9), ()),
           (('80[3-689]1\\d{5}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            ('80[12]1\\d{5}', (9,), ()),
            ('98[23]\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            ('9619\\d{5}|(?:[1-3]\\d|4[013-689])\\d{6}', (8, 9), ()),
            ('5(?:4[0-29]|6[0-4])\\d{6}|(?:55|6\\d|7[7-9])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'TN': (216,
           '00',
           None,
           None,
           ('[2-57-9]\\d{7}', (8,), ()),
           (('88\\d{6}', (8,), ()),
            ('8010\\d{4}', (8,), ()),
            ('8[12]10\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            ('81200\\d{3}|(?:3[0-2]|7\\d)\\d{6}', (8,), ()),
            ('3(?:001|[12]40)\\d{4}|(?:(?:[259]\\d|4[0-8])\\d|3(?:1[1-35]|6[0-4]|91))\\d{5}', (8,), ())),
           None,
           False,
           None),
    'LY': (218,
           '00',
           '0',
           None,
           ('[2-9]\\d{8}', (9,), (7,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:2(?:0[56]|[1-6]\\d|7[124579]|8[124])|3(?:1\\d|2[2356])|4(?:[17]\\d|2[1-357]|5[2-4]|8[124])'
              '|5(?:[1347]\\d|2[1-469]|5[13-5]|8[1-4])|6(?:[1-479]\\d|5[2-57]|8[1-5])|7(?:[13]\\d|2[13-79])|'
              '8(?:[124]\\d|5[124]|84))\\d{6}'),
             (9,),
             (7,)),
            ('9[1-6]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'GM': (220,
           '00',
           None,
           None,
           ('[48]\\d{8}|[2-9]\\d{6}', (7, 9), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:4(?:[23]\\d\\d|4(?:1[024679]|(?:4(?:[237-9]\\d|4[14-9])|8[0-389]\\d)\\d|5(?:5(?:3\\d|4[0'
              '-7])|[67]\\d\\d)))|5(?:5(?:3\\d|4[0-7])|6[67]\\d|7(?:1[04]|2[035]|3[58]|48))|8[0-389]\\d\\d'
              ')\\d{3}|44[6-9]\\d{4}'),
             (7, 9),
             ()),
            (('(?:(?:[23679]\\d|4[015]|8(?:(?:3[35]|6[68]|99)\\d|7(?:[27]\\d|4[015])))\\d|5(?:[0-489]\\d|'
              '56))\\d{4}|8[4-7]\\d{5}'),
             (7, 9),
             ())),
           None,
           False,
           None),
    'SN': (221,
           '00',
           None,
           None,
           ('(?:[378]\\d|93)\\d{7}', (9,), ()),
           (('88[4689]\\d{6}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            ('81[02468]\\d{6}', (9,), ()),
            ('(?:39|93)\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            ('3(?:[026]\\d|3[89])\\d{6}', (9,), ()),
            ('7(?:[015-8]\\d|21|90)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'MR': (222,
           '00',
           None,
           None,
           ('(?:[2-4]\\d\\d|800)\\d{5}', (8,), ()),
           (None,
            ('800\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:25[08]|35\\d|45[1-7])\\d{5}', (8,), ()),
            ('[2-4][0-46-9]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'ML': (223,
           '00',
           None,
           None,
           ('[24-9]\\d{7}', (8,), ()),
           (None,
            ('80\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:07[0-8]|12[67])\\d{4}|(?:2(?:02|1[4-689])|4(?:0[0-4]|4[1-69]))\\d{5}', (8,), ()),
            ('2(?:0(?:01|79)|17\\d)\\d{4}|(?:5[0-3]|[679]\\d|8[2-59])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'GN': (224,
           '00',
           None,
           None,
           ('722\\d{6}|(?:3|6\\d)\\d{7}', (8, 9), ()),
           (None,
            None,
            None,
            ('722\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            ('3(?:0(?:24|3[12]|4[1-35-7]|5[13]|6[189]|[78]1|9[1478])|1\\d\\d)\\d{4}', (8,), ()),
            ('6[0-356]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'CI': (225,
           '00',
           None,
           None,
           ('[02]\\d{9}', (10,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:[15]\\d{3}|7(?:2(?:0[23]|1[2357]|2[245]|3[45]|4[3-5])|3(?:06|1[69]|[2-6]7)))\\d{5}',
             (10,),
             ()),
            ('0[157]\\d{8}', (10,), ())),
           None,
           False,
           None),
    'BF': (226,
           '00',
           None,
           None,
           ('[024-7]\\d{7}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:0(?:49|5[23]|6[5-7]|9[016-9])|4(?:4[569]|5[4-6]|6[5-7]|7[0179])|5(?:[34]\\d|50|6[5-8]))\\d{4}',
             (8,),
             ()),
            ('(?:0[1-7]|4[4-6]|5[0-8]|[67]\\d)\\d{6}', (8,), ())),
           None,
           False,
           None),
    'NE': (227,
           '00',
           None,
           None,
           ('[027-9]\\d{7}', (8,), ()),
           (('09\\d{6}', (8,), ()),
            ('08\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:0(?:20|3[1-8]|4[13-5]|5[14]|6[14578]|7[1-578])|1(?:4[145]|5[14]|6[14-68]|7[169]|88))\\d{4}',
             (8,),
             ()),
            ('(?:23|7[0467]|[89]\\d)\\d{6}', (8,), ())),
           None,
           False,
           None),
    'TG': (228,
           '00',
           None,
           None,
           ('[279]\\d{7}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:2[2-7]|3[23]|4[45]|55|6[67]|77)\\d{5}', (8,), ()),
            ('(?:7[0-389]|9[0-36-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'BJ': (229,
           '00',
           None,
           None,
           ('01\\d{8}', (10,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('012\\d{7}', (10,), ()),
            ('01(?:2[5-9]|[4-69]\\d)\\d{6}', (10,), ())),
           None,
           False,
           None),
    'MU': (230,
           '0(?:0|[24-7]0|3[03])',
           None,
           None,
           ('(?:[57]|8\\d\\d)\\d{7}|[2-468]\\d{6}', (7, 8, 10), ()),
           (('30\\d{5}', (7,), ()),
            ('802\\d{7}|80[0-2]\\d{4}', (7, 10), ()),
            None,
            ('3(?:20|9\\d)\\d{4}', (7,), ()),
            None,
            ('219\\d{4}', (7,), ()),
            None,
            None,
            (('(?:2(?:[0346-8]\\d|1[0-8])|4(?:[013568]\\d|2[0-24-8]|71|90)|54(?:[3-5]\\d|71)|6\\d\\d|8(?:14|3['
              '129]))\\d{4}'),
             (7, 8),
             ()),
            (('5(?:4(?:2[1-389]|7[1-9])|87[15-8])\\d{4}|(?:5(?:2[5-9]|4[3-689]|[57]\\d|8[0-689]|9[0-8])|7(?'
              ':0[0-7]|3[013]))\\d{5}'),
             (8,),
             ())),
           None,
           False,
           None),
    'LR': (231,
           '00',
           '0',
           None,
           ('(?:[2457]\\d|33|88)\\d{7}|(?:2\\d|[4-6])\\d{6}', (7, 8, 9), ()),
           (('332(?:02|[34]\\d)\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2\\d{7}', (8,), ()),
            ('(?:(?:(?:22|33)0|555|7(?:6[01]|7\\d)|88\\d)\\d|4(?:240|[67]))\\d{5}|[56]\\d{6}', (7, 9), ())),
           None,
           False,
           None),
    'SL': (232,
           '00',
           '0',
           None,
           ('(?:[237-9]\\d|66)\\d{6}', (8,), (6,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('22[2-4][2-9]\\d{4}', (8,), (6,)),
            ('(?:25|3[0-5]|66|7\\d|8[08]|9[09])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'GH': (233,
           '00',
           '0',
           None,
           ('[235]\\d{8}|800\\d{5,6}', (8, 9), (7,)),
           (None,
            ('800\\d{5,6}', (8, 9), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('3(?:181[0-5]|285[0-7]|3810)\\d{4}|3(?:0(?:[237-9]\\d|60)|[167](?:2[0-6]|7\\d|80)|2(?:2[0-5]|7'
              '\\d|8[0-4])|3(?:2[0-3]|7\\d|80)|4(?:2[013-9]|3[01]|7\\d|80)|5(?:2[0-7]|7\\d|80)|8(?:2[0-2]|7\\d'
              '|80)|9(?:[28]0|7\\d))\\d{5}'),
             (9,),
             (7,)),
            ('(?:2(?:[0346-9]\\d|5[67])|5(?:[03-7]\\d|9[1-9]))\\d{6}', (9,), ())),
           None,
           False,
           None),
    'NG': (234,
           '009',
           '0',
           None,
           ('(?:20|9\\d)\\d{8}|[78]\\d{9,13}', (10, 11, 12, 13, 14), (6, 7)),
           (None,
            ('800\\d{7,11}', (10, 11, 12, 13, 14), ()),
            None,
            None,
            None,
            None,
            ('700\\d{7,11}', (10, 11, 12, 13, 14), ()),
            None,
            ('20(?:[1259]\\d|3[013-9]|4[1-8]|6[024-689]|7[1-79]|8[2-9])\\d{6}', (10,), (6, 7)),
            (('(?:702[0-24-9]|819[01])\\d{6}|(?:7(?:0[13-9]|[12]\\d)|8(?:0[1-9]|1[0-8])|9(?:0[1-9]|1[0-6]))'
              '\\d{7}'),
             (10,),
             ())),
           None,
           False,
           None),
    'TD': (235,
           '00|16',
           None,
           None,
           ('(?:22|[3689]\\d|77)\\d{6}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('22(?:[37-9]0|5[0-5]|6[89])\\d{4}', (8,), ()),
            ('(?:3[01]|[69]\\d|77|8[5-7])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'CF': (236,
           '00',
           None,
           None,
           ('8776\\d{4}|(?:[27]\\d|61)\\d{6}', (8,), ()),
           (('8776\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2[12]|61)\\d{6}', (8,), ()),
            ('7[02-7]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'CM': (237,
           '00',
           None,
           None,
           ('[26]\\d{8}|88\\d{6,7}', (8, 9), ()),
           (None,
            ('88\\d{6,7}', (8, 9), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:22|33)\\d{6}', (9,), ()),
            ('(?:24[23]|6(?:[25-9]\\d|4[0-2]))\\d{6}', (9,), ())),
           None,
           False,
           None),
    'CV': (238,
           '0',
           None,
           None,
           ('(?:[2-59]\\d\\d|800)\\d{4}', (7,), ()),
           (None,
            ('800\\d{4}', (7,), ()),
            None,
            ('(?:3[3-5]|4[356])\\d{5}', (7,), ()),
            None,
            None,
            None,
            None,
            ('2(?:2[1-7]|3[0-8]|4[12]|5[1256]|6\\d|7[1-3]|8[1-5])\\d{4}', (7,), ()),
            ('(?:36|5[1-37-9]|9\\d)\\d{5}', (7,), ())),
           None,
           False,
           None),
    'ST': (239,
           '00',
           None,
           None,
           ('(?:22|9\\d)\\d{5}', (7,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('22\\d{5}', (7,), ()),
            ('900[5-9]\\d{3}|9(?:0[1-9]|[89]\\d)\\d{4}', (7,), ())),
           None,
           False,
           None),
    'GQ': (240,
           '00',
           None,
           None,
           ('222\\d{6}|(?:3\\d|55|[89]0)\\d{7}', (9,), ()),
           (('90\\d[1-9]\\d{5}', (9,), ()),
            ('80\\d[1-9]\\d{5}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('33[0-24-9]\\d[46]\\d{4}|3(?:33|5\\d)\\d[7-9]\\d{4}', (9,), ()),
            ('(?:222|55\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'GA': (241,
           '00',
           '0(11\\d{6}|60\\d{6}|61\\d{6}|6[256]\\d{6}|7[467]\\d{6})',
           '\\1',
           ('(?:[067]\\d|11)\\d{6}|[2-7]\\d{6}', (7, 8), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('[01]1\\d{6}', (8,), ()),
            ('(?:(?:0[2-7]|7[467])\\d|6(?:0[0-4]|10|[256]\\d))\\d{5}|[2-7]\\d{6}', (7, 8), ())),
           None,
           False,
           None),
    'CG': (242,
           '00',
           None,
           None,
           ('222\\d{6}|(?:0\\d|80)\\d{7}', (9,), ()),
           (('80[0-2]\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('222[1-589]\\d{5}', (9,), ()),
            ('026(?:1[0-5]|6[6-9])\\d{4}|0(?:[14-6]\\d\\d|2(?:40|5[5-8]|6[07-9]))\\d{5}', (9,), ())),
           None,
           False,
           None),
    'CD': (243,
           '00',
           '0',
           None,
           ('(?:(?:[189]|5\\d)\\d|2)\\d{7}|[1-68]\\d{6}', (7, 8, 9, 10), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:(?:12|573)\\d\\d|276)\\d{5}|[1-6]\\d{6}', (7, 8, 9, 10), ()),
            ('88\\d{5}|(?:8[0-79]|9[016-9])\\d{7}', (7, 9), ())),
           None,
           False,
           None),
    'AO': (244,
           '00',
           None,
           None,
           ('[29]\\d{8}', (9,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2\\d(?:[0134][25-9]|[25-9]\\d)\\d{5}', (9,), ()),
            ('9[1-79]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'GW': (245,
           '00',
           None,
           None,
           ('[49]\\d{8}|4\\d{6}', (7, 9), ()),
           (None,
            None,
            None,
            ('40\\d{5}', (7,), ()),
            None,
            None,
            None,
            None,
            ('443\\d{6}', (9,), ()),
            ('9(?:5\\d|6[569]|77)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'IO': (246,
           '00',
           None,
           None,
           ('3\\d{6}', (7,), ()),
           (None, None, None, None, None, None, None, None, ('37\\d{5}', (7,), ()), ('38\\d{5}', (7,), ())),
           None,
           False,
           None),
    'AC': (247,
           '00',
           None,
           None,
           ('(?:[01589]\\d|[2-467])\\d{4}', (5, 6), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            ('(?:0[1-9]|[1589]\\d)\\d{4}', (6,), ()),
            None,
            ('6\\d{4}', (5,), ()),
            ('[2-47]\\d{4}', (5,), ())),
           None,
           False,
           None),
    'SC': (248,
           '010|0[0-2]',
           None,
           None,
           ('(?:[2489]\\d|64)\\d{5}', (7,), ()),
           (('85\\d{5}', (7,), ()),
            ('800[08]\\d{3}', (7,), ()),
            None,
            ('971\\d{4}|(?:64|95)\\d{5}', (7,), ()),
            None,
            None,
            None,
            None,
            ('4[2-46]\\d{5}', (7,), ()),
            ('2[125-8]\\d{5}', (7,), ())),
           None,
           False,
           None),
    'SD': (249,
           '00',
           '0',
           None,
           ('[19]\\d{8}', (9,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('1(?:5\\d|8[35-7])\\d{6}', (9,), ()),
            ('(?:1[0-2]|9[0-3569])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'RW': (250,
           '00',
           '0',
           None,
           ('(?:06|[27]\\d\\d|[89]00)\\d{6}', (8, 9), ()),
           (('900\\d{6}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:06|2[23568]\\d)\\d{6}', (8, 9), ()),
            ('7[237-9]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'ET': (251,
           '00',
           '0',
           None,
           ('(?:11|[2-57-9]\\d)\\d{7}', (9,), (7,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:11(?:[124]\\d\\d|3(?:[0-79]\\d|8[0-7])|5(?:[02-9]\\d|1[0-57-9])|6(?:[02-79]\\d|1[0-57-9]|8[0'
              '-8]))|2(?:2(?:11[1-9]|22[0-7]|33\\d|44[1467]|66[1-68])|5(?:11[124-6]|33[2-8]|44[1467]|55[14'
              ']|66[1-3679]|77[124-79]|880))|3(?:3(?:11[0-46-8]|(?:22|55)[0-6]|33[0134689]|44[04]|66[01467])|4'
              '(?:44[0-8]|55[0-69]|66[0-3]|77[1-5]))|4(?:6(?:119|22[0-24-7]|33[1-5]|44[13-69]|55[14-689]|660|8'
              '8[1-4])|7(?:(?:11|22)[1-9]|33[13-7]|44[13-6]|55[1-689]))|5(?:7(?:227|55[05]|(?:66|77)[14-8])|8('
              '?:11[149]|22[013-79]|33[0-68]|44[013-8]|550|66[1-5]|77\\d)))\\d{4}'),
             (9,),
             (7,)),
            ('(?:7(?:[03]\\d|1[0-8]|2[1-35-79]|77|86|99)|(?:8[01]|9\\d)\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'SO': (252,
           '00',
           '0',
           None,
           ('[346-9]\\d{8}|[12679]\\d{7}|[1-5]\\d{6}|[1348]\\d{5}', (6, 7, 8, 9), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:1\\d|2[0-79]|3[0-46-8]|4[0-7]|5[57-9])\\d{5}|(?:[134]\\d|8[125])\\d{4}', (6, 7), ()),
            (('(?:(?:15|(?:3[59]|4[89]|6\\d|7[0-35-9]|8[08])\\d|9(?:0\\d|[2-9]))\\d|2(?:4\\d|8))\\d{5}|(?:'
              '[67]\\d\\d|904)\\d{5}'),
             (7, 8, 9),
             ())),
           None,
           False,
           None),
    'DJ': (253,
           '00',
           None,
           None,
           ('(?:2\\d|77)\\d{6}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:1[2-5]|7[45])\\d{5}', (8,), ()),
            ('77\\d{6}', (8,), ())),
           None,
           False,
           None),
    'KE': (254,
           '000',
           '0',
           None,
           ('(?:[17]\\d\\d|900)\\d{6}|(?:2|80)0\\d{6,7}|[4-6]\\d{6,8}', (7, 8, 9, 10), ()),
           (('900[02-9]\\d{5}', (9,), ()),
            ('800[02-8]\\d{5,6}', (9, 10), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:4[245]|5[1-79]|6[01457-9])\\d{5,7}|(?:4[136]|5[08]|62)\\d{7}|(?:[24]0|66)\\d{6,7}',
             (7, 8, 9),
             ()),
            ('(?:1(?:0[0-8]|[18]\\d|2[014]|3[05-9]|4[0-6])|7\\d\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'TZ': (255,
           '00[056]',
           '0',
           None,
           ('(?:[25-8]\\d|41|90)\\d{7}', (9,), ()),
           (('90\\d{7}', (9,), ()),
            ('80[08]\\d{6}', (9,), ()),
            ('8(?:40|6[01])\\d{6}', (9,), ()),
            ('41\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            ('2[2-8]\\d{7}', (9,), ()),
            ('(?:6[0-35-9]|7\\d)\\d{7}', (9,), ())),
           None,
           False,
           None),
    'UG': (256,
           '00[057]',
           '0',
           None,
           ('800\\d{6}|(?:[29]0|[347]\\d)\\d{7}', (9,), (5, 6, 7)),
           (('90[1-3]\\d{6}', (9,), ()),
            ('800[1-3]\\d{5}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('20(?:(?:24[09]|30[67])\\d|6(?:00[0-2]|30[0-4]))\\d{3}|(?:20(?:[017]\\d|2[5-9]|3[1-4]|5[0-4]|6'
              '[15-9])|[34]\\d{3})\\d{5}'),
             (9,),
             (5, 6, 7)),
            ('7(?:28|34)0\\d{5}|7(?:[014-8]\\d|2[01467]|3[0-267]|9[0-589])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'BI': (257,
           '00',
           None,
           None,
           ('(?:[267]\\d|31)\\d{6}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:22|31)\\d{6}', (8,), ()),
            ('(?:29|6[1-9]|7[125-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'MZ': (258,
           '00',
           None,
           None,
           ('(?:2|8\\d)\\d{7}', (8, 9), ()),
           (None,
            ('800\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:[1346]\\d|5[0-2]|[78][12]|93)\\d{5}', (8,), ()),
            ('8[2-9]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'ZM': (260,
           '00',
           '0',
           None,
           ('800\\d{6}|(?:21|[579]\\d|63)\\d{7}', (9,), (6,)),
           (None,
            ('800\\d{6}', (9,), ()),
            None,
            ('63\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            ('21[1-8]\\d{6}', (9,), (6,)),
            ('(?:[59][5-8]|7[5-9])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'MG': (261,
           '00',
           '([24-9]\\d{6})$|0',
           '20\\1',
           ('[23]\\d{8}', (9,), (7,)),
           (None,
            None,
            None,
            ('22\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            ('2072[29]\\d{4}|20(?:2\\d|4[47]|5[3467]|6[279]|7[356]|8[268]|9[2457])\\d{5}', (9,), (7,)),
            ('3[2-9]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'RE': (262,
           '00',
           '0',
           None,
           ('709\\d{6}|(?:26|[689]\\d)\\d{7}', (9,), ()),
           (('89[1-37-9]\\d{6}', (9,), ()),
            ('80\\d{7}', (9,), ()),
            ('8(?:1[019]|2[0156]|84|90)\\d{6}', (9,), ()),
            ('9(?:399[0-3]|479[0-6]|76(?:2[278]|3[0-37]))\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            ('2631[0-6]\\d{4}|26(?:2\\d|30|88)\\d{5}', (9,), ()),
            (('(?:69(?:2\\d\\d|3(?:[06][0-6]|1[0-3]|2[0-2]|3[0-39]|4\\d|5[0-5]|7[0-37]|8[0-8]|9[0-479]))|709'
              '2[0-3])\\d{4}'),
             (9,),
             ())),
           None,
           False,
           None),
    'YT': (262,
           '00',
           '0',
           None,
           ('(?:639\\d|7093)\\d{5}|(?:26|80|9\\d)\\d{7}', (9,), ()),
           (None,
            ('80\\d{7}', (9,), ()),
            None,
            ('9(?:(?:39|47)8[01]|769\\d)\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            ('26(?:89\\d|9(?:0[0-467]|15|5[0-4]|6\\d|[78]0))\\d{4}', (9,), ()),
            ('(?:639(?:0[0-79]|1[019]|[267]\\d|3[09]|40|5[05-9]|9[04-79])|7093[5-7])\\d{4}', (9,), ())),
           None,
           False,
           None),
    'ZW': (263,
           '00',
           '0',
           None,
           ('8\\d{6}(?:\\d{3})?|[235-8]\\d{8}', (7, 9, 10), (6,)),
           (None,
            ('80(?:[01]\\d|20|8[0-8])\\d{3}', (7,), ()),
            None,
            ('86(?:1[12]|22|30|44|55|77|8[368])\\d{6}', (10,), ()),
            None,
            None,
            None,
            None,
            (('(?:2(?:02[014]|(?:42|9\\d)\\d|[56]20|72[03])|3(?:123|92\\d)|5(?:42\\d|525)|6(?:[16-8]21|52[013'
              '])|8(?:[1349]28|523))\\d{5}'),
             (9,),
             (6, 7)),
            ('7(?:[1278]\\d|3[1-9]|51|9[01])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'NA': (264,
           '00',
           '0',
           None,
           ('[68]\\d{7,8}', (8, 9), ()),
           (('8701\\d{5}', (9,), ()),
            ('80\\d{7}', (9,), ()),
            None,
            ('8(?:3\\d\\d|86)\\d{5}', (8, 9), ()),
            None,
            None,
            None,
            None,
            (('64426\\d{3}|6(?:1(?:2[2-7]|3[01378]|4[0-4])|254|32[0237]|4(?:27|41|5[25])|52[236-8]|626|7(?'
              ':2[2-4]|30))\\d{4,5}|6(?:1(?:(?:0\\d|2[0189]|3[24-69]|4[5-9])\\d|17|69|7[014])|2(?:17|5[0-36-'
              '8]|69|70)|3(?:17|2[14-689]|34|6[289]|7[01]|81)|4(?:17|2[0-2]|4[06]|5[0137]|69|7[01])|5(?:17|2[0'
              '459]|69|7[01])|6(?:17|25|38|42|69|7[01])|7(?:17|2[569]|3[13]|6[89]|7[01]))\\d{4}'),
             (8, 9),
             ()),
            ('(?:60|8[1245])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'MW': (265,
           '00',
           '0',
           None,
           ('(?:[1289]\\d|31|77)\\d{7}|1\\d{6}', (7, 9), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('1[2-9]\\d{5}', (7,), ()),
            ('111\\d{6}|(?:2[12]|31|77|[89][89])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'LS': (266,
           '00',
           None,
           None,
           ('(?:[256]\\d\\d|800)\\d{5}', (8,), ()),
           (None,
            ('800[1256]\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2\\d{7}', (8,), ()),
            ('[56]\\d{7}', (8,), ())),
           None,
           False,
           None),
    'BW': (267,
           '00',
           None,
           None,
           ('90\\d{5}|(?:0800|[2-6]|(?:7|800)\\d)\\d{6}', (7, 8, 10), ()),
           (('90\\d{5}', (7,), ()),
            ('(?:0800|800\\d)\\d{6}', (10,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:2(?:1[01]|31|[469]\\d|5[0-2]|7[5-7]|89)|3(?:[15-79]\\d|2[1-5]|45|8[0-5])|4(?:[38]0|42|51|'
              '[679]\\d)|5(?:[056][01]|1[23]|2[034]|[347-9]\\d)|6(?:0[01]|[258]\\d|[34]0|6[03]))\\d{4}'),
             (7,),
             ()),
            ('7(?:[1-8]\\d{3}|9(?:(?:[03]\\d|2[0-7])\\d|1(?:0[13-9]|1[0-35-9]|2\\d|3[0-8])))\\d{3}', (8,), ())),
           None,
           False,
           None),
    'SZ': (268,
           '00',
           None,
           None,
           ('0800\\d{4}|(?:[237]\\d|900)\\d{6}', (8, 9), ()),
           (('900\\d{6}', (9,), ()),
            ('0800\\d{4}', (8,), ()),
            None,
            ('70\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            ('[23][2-5]\\d{6}', (8,), ()),
            ('7[5-9]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'KM': (269,
           '00',
           None,
           None,
           ('[3478]\\d{6}', (7,), (4,)),
           (('8\\d{6}', (7,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('7[4-7]\\d{5}', (7,), (4,)),
            ('[34]\\d{6}', (7,), ())),
           None,
           False,
           None),
    'SH': (290,
           '00',
           None,
           None,
           ('(?:[2569]\\d|8)\\d{3}', (4, 5), ()),
           (None,
            None,
            None,
            ('262\\d\\d', (5,), ()),
            None,
            None,
            None,
            None,
            ('2(?:[0-57-9]\\d|6[4-9])\\d\\d', (4, 5), ()),
            ('[569]\\d{4}', (5,), ())),
           '[2569]',
           False,
           None),
    'TA': (290,
           '00',
           None,
           None,
           ('8\\d{3}', (4,), ()),
           (None, None, None, None, None, None, None, None, ('8\\d{3}', (4,), ()), None),
           '8',
           False,
           None),
    'ER': (291,
           '00',
           '0',
           None,
           ('[178]\\d{6}', (7,), (6,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:1(?:1[12568]|[24]0|55|6[146])|8\\d\\d)\\d{4}', (7,), (6,)),
            ('(?:17[1-3]|7\\d\\d)\\d{4}', (7,), ())),
           None,
           False,
           None),
    'AW': (297,
           '00',
           None,
           None,
           ('(?:[25-79]\\d\\d|800)\\d{4}', (7,), ()),
           (('900\\d{4}', (7,), ()),
            ('800\\d{4}', (7,), ()),
            None,
            ('(?:28\\d|501)\\d{4}', (7,), ()),
            None,
            None,
            None,
            None,
            ('5(?:2\\d|8[1-9])\\d{4}', (7,), ()),
            ('(?:290|5[69]\\d|6(?:[03]0|22|4[0-2]|[69]\\d)|7(?:[34]\\d|7[07])|9(?:6[45]|9[4-8]))\\d{4}',
             (7,),
             ())),
           None,
           False,
           None),
    'FO': (298,
           '00',
           '(10(?:01|[12]0|88))',
           None,
           ('[2-9]\\d{5}', (6,), ()),
           (('90(?:[13-5][15-7]|2[125-7]|9\\d)\\d\\d', (6,), ()),
            ('80[257-9]\\d{3}', (6,), ()),
            None,
            ('6[0-36]\\d{4}', (6,), ()),
            None,
            None,
            None,
            None,
            ('(?:20|[34]\\d|8[19])\\d{4}', (6,), ()),
            ('(?:[27][1-9]|5\\d|9[16])\\d{4}', (6,), ())),
           None,
           False,
           None),
    'GL': (299,
           '00',
           None,
           None,
           ('(?:19|[2-689]\\d|70)\\d{4}', (6,), ()),
           (None,
            ('80\\d{4}', (6,), ()),
            None,
            ('3[89]\\d{4}', (6,), ()),
            None,
            None,
            None,
            None,
            ('(?:19|3[1-7]|[68][1-9]|70|9\\d)\\d{4}', (6,), ()),
            ('[245]\\d{5}', (6,), ())),
           None,
           False,
           None),
    'GI': (350,
           '00',
           None,
           None,
           ('(?:[25]\\d|60)\\d{6}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2190[0-2]\\d{3}|2(?:0(?:[02]\\d|3[01])|16[24-9]|2[2-5]\\d)\\d{4}', (8,), ()),
            ('5251[0-4]\\d{3}|(?:5(?:[146-8]\\d\\d|250)|60(?:1[01]|6\\d))\\d{4}', (8,), ())),
           None,
           False,
           None),
    'PT': (351,
           '00',
           None,
           None,
           ('1693\\d{5}|(?:[26-9]\\d|30)\\d{7}', (9,), ()),
           (('(?:6(?:0[178]|4[68])\\d|76(?:0[1-57]|1[2-47]|2[1-37]))\\d{5}', (9,), ()),
            ('80[02]\\d{6}', (9,), ()),
            ('80(?:8\\d|9[1579])\\d{5}', (9,), ()),
            ('30\\d{7}', (9,), ()),
            ('884[0-4689]\\d{5}', (9,), ()),
            ('6(?:222\\d|89(?:00|88|99))\\d{4}', (9,), ()),
            ('70(?:38[01]|596|(?:7\\d|8[17])\\d)\\d{4}', (9,), ()),
            ('600\\d{6}|6[06]92(?:0\\d|3[349]|49)\\d{3}', (9,), ()),
            ('2(?:[12]\\d|3[1-689]|4[1-59]|[57][1-9]|6[1-35689]|8[1-69]|9[1256])\\d{6}', (9,), ()),
            (('6(?:[06]92(?:30|9\\d)|[35]92(?:[049]\\d|3[034]))\\d{3}|(?:(?:16|6[0356])93|9(?:[1-36]\\d\\d|480'
              '))\\d{5}'),
             (9,),
             ())),
           None,
           False,
           None),
    'LU': (352,
           '00',
           '(15(?:0[06]|1[12]|[35]5|4[04]|6[26]|77|88|99)\\d)',
           None,
           ('35[013-9]\\d{4,8}|6\\d{8}|35\\d{2,4}|(?:[2457-9]\\d|3[0-46-9])\\d{2,9}',
            (4, 5, 6, 7, 8, 9, 10, 11),
            ()),
           (('90[015]\\d{5}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            ('801\\d{5}', (8,), ()),
            ('20(?:1\\d{5}|[2-689]\\d{1,7})', (4, 5, 6, 7, 8, 9, 10), ()),
            None,
            None,
            None,
            None,
            ('(?:35[013-9]|80[2-9]|90[89])\\d{1,8}|(?:2[2-9]|3[0-46-9]|[457]\\d|8[13-9]|9[2-579])\\d{2,9}',
             (4, 5, 6, 7, 8, 9, 10, 11),
             ()),
            ('6(?:[26][18]|5[1568]|7[189]|81|9[128])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'IE': (353,
           '00',
           '0',
           None,
           ('(?:1\\d|[2569])\\d{6,8}|4\\d{6,9}|7\\d{8}|8\\d{8,9}', (7, 8, 9, 10), (5, 6)),
           (('15(?:1[2-8]|[2-8]0|9[089])\\d{6}', (10,), ()),
            ('1800\\d{6}', (10,), ()),
            ('18[59]0\\d{6}', (10,), ()),
            ('76\\d{7}', (9,), ()),
            ('700\\d{6}', (9,), ()),
            None,
            ('818\\d{6}', (9,), ()),
            ('88210[1-9]\\d{4}|8(?:[35-79]5\\d\\d|8(?:[013-9]\\d\\d|2(?:[01][1-9]|[2-9]\\d)))\\d{5}', (10,), ()),
            (('(?:1\\d|21)\\d{6,7}|(?:2[24-9]|4(?:0[24]|5\\d|7)|5(?:0[45]|1\\d|8)|6(?:1\\d|[237-9])|9(?:1'
              '\\d|[35-9]))\\d{5}|(?:23|4(?:[1-469]|8\\d)|5[23679]|6[4-6]|7[14]|9[04])\\d{7}'),
             (7, 8, 9, 10),
             (5, 6)),
            ('8(?:22|[35-9]\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'IS': (354,
           '00|1(?:0(?:01|[12]0)|100)',
           None,
           None,
           ('(?:38\\d|[4-9])\\d{6}', (7, 9), ()),
           (('90(?:0\\d|1[5-79]|2[015-79]|3[135-79]|4[125-7]|5[25-79]|7[1-37]|8[0-35-7])\\d{3}', (7,), ()),
            ('80[0-8]\\d{4}', (7,), ()),
            None,
            ('49[0-24-79]\\d{4}', (7,), ()),
            None,
            None,
            ('809\\d{4}', (7,), ()),
            ('(?:689|8(?:7[18]|80)|95[48])\\d{4}', (7,), ()),
            (('(?:4(?:1[0-24-69]|2[0-7]|[37][0-8]|4[0-24589]|5[0-68]|6\\d|8[0-36-8])|5(?:05|[156]\\d|2[0257'
              '8]|3[0-579]|4[03-7]|7[0-2578]|8[0-35-9]|9[013-689])|872)\\d{4}'),
             (7,),
             ()),
            (('(?:38[589]\\d\\d|6(?:1[1-8]|2[0-6]|3[026-9]|4[014679]|5[0159]|6[0-69]|70|8[06-8]|9\\d)|7(?:5['
              '057]|[6-9]\\d)|8(?:2[0-59]|[3-69]\\d|8[238]))\\d{4}'),
             (7, 9),
             ())),
           None,
           False,
           None),
    'AL': (355,
           '00',
           '0',
           None,
           ('(?:700\\d\\d|900)\\d{3}|8\\d{5,7}|(?:[2-5]|6\\d)\\d{7}', (6, 7, 8, 9), (5,)),
           (('900[1-9]\\d\\d', (6,), ()),
            ('800\\d{4}', (7,), ()),
            ('808[1-9]\\d\\d', (6,), ()),
            None,
            ('700[2-9]\\d{4}', (8,), ()),
            None,
            None,
            None,
            (('4505[0-2]\\d{3}|(?:[2358][16-9]\\d[2-9]|4410)\\d{4}|(?:[2358][2-5][2-9]|4(?:[2-57-9][2-9]|6\\d'
              '))\\d{5}'),
             (8,),
             (5, 6, 7)),
            ('6(?:[78][2-9]|9\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'MT': (356,
           '00',
           None,
           None,
           ('3550\\d{4}|(?:[2579]\\d\\d|800)\\d{5}', (8,), ()),
           (('5(?:0(?:0(?:37|43)|(?:6\\d|70|9[0168])\\d)|[12]\\d0[1-5])\\d{3}', (8,), ()),
            ('800(?:02|[3467]\\d)\\d{3}', (8,), ()),
            None,
            ('3550\\d{4}', (8,), ()),
            None,
            ('7117\\d{4}', (8,), ()),
            ('501\\d{5}', (8,), ()),
            None,
            ('20(?:3[1-4]|6[059])\\d{4}|2(?:0[19]|[1-357]\\d|60)\\d{5}', (8,), ()),
            ('(?:7(?:210|[79]\\d\\d)|9(?:[29]\\d\\d|69[67]|8(?:1[1-3]|89|97)))\\d{4}', (8,), ())),
           None,
           False,
           None),
    'CY': (357,
           '00',
           None,
           None,
           ('(?:[279]\\d|[58]0)\\d{6}', (8,), ()),
           (('90[09]\\d{5}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            ('80[1-9]\\d{5}', (8,), ()),
            None,
            ('700\\d{5}', (8,), ()),
            None,
            ('(?:50|77)\\d{6}', (8,), ()),
            None,
            ('2[2-6]\\d{6}', (8,), ()),
            ('9(?:10|[4-79]\\d)\\d{5}', (8,), ())),
           None,
           False,
           None),
    'FI': (358,
           '00|99(?:[01469]|5(?:[14]1|3[23]|5[59]|77|88|9[09]))',
           '0',
           None,
           ('[1-35689]\\d{4}|7\\d{10,11}|(?:[124-7]\\d|3[0-46-9])\\d{8}|[1-9]\\d{5,8}',
            (5, 6, 7, 8, 9, 10, 11, 12),
            ()),
           (('[67]00\\d{5,6}', (8, 9), ()),
            ('800\\d{4,6}', (7, 8, 9), ()),
            None,
            None,
            None,
            None,
            (('20\\d{4,8}|60[12]\\d{5,6}|7(?:099\\d{4,5}|5[03-9]\\d{3,7})|20[2-59]\\d\\d|(?:606|7(?:0[78]|'
              '1|3\\d))\\d{7}|(?:10|29|3[09]|70[1-5]\\d)\\d{4,8}'),
             (5, 6, 7, 8, 9, 10, 11, 12),
             ()),
            None,
            ('1[3-7][1-8]\\d{3,6}|(?:19[1-8]|[23568][1-8]\\d|9(?:00|[1-8]\\d))\\d{2,6}', (5, 6, 7, 8, 9), ()),
            ('(?:4[0-8]|50)\\d{4,8}', (6, 7, 8, 9, 10), ())),
           '1[03-79]|[2-9]',
           False,
           None),
    'AX': (358,
           '00|99(?:[01469]|5(?:[14]1|3[23]|5[59]|77|88|9[09]))',
           '0',
           None,
           ('2\\d{4,9}|35\\d{4,5}|(?:60\\d\\d|800)\\d{4,6}|7\\d{5,11}|(?:[14]\\d|3[0-46-9]|50)\\d{4,8}',
            (5, 6, 7, 8, 9, 10, 11, 12),
            ()),
           (('[67]00\\d{5,6}', (8, 9), ()),
            ('800\\d{4,6}', (7, 8, 9), ()),
            None,
            None,
            None,
            None,
            (('20\\d{4,8}|60[12]\\d{5,6}|7(?:099\\d{4,5}|5[03-9]\\d{3,7})|20[2-59]\\d\\d|(?:606|7(?:0[78]|'
              '1|3\\d))\\d{7}|(?:10|29|3[09]|70[1-5]\\d)\\d{4,8}'),
             (5, 6, 7, 8, 9, 10, 11, 12),
             ()),
            None,
            ('18[1-8]\\d{3,6}', (6, 7, 8, 9), ()),
            ('(?:4[0-8]|50)\\d{4,8}', (6, 7, 8, 9, 10), ())),
           '18',
           False,
           None),
    'BG': (359,
           '00',
           '0',
           None,
           ('00800\\d{7}|[2-7]\\d{6,7}|[89]\\d{6,8}|2\\d{5}', (6, 7, 8, 9, 12), (4, 5)),
           (('90\\d{6}', (8,), ()),
            ('(?:00800\\d\\d|800)\\d{5}', (8, 12), ()),
            ('700\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            ('2\\d{5,7}|(?:43[1-6]|70[1-9])\\d{4,5}|(?:[36]\\d|4[124-7]|[57][1-9]|8[1-6]|9[1-7])\\d{5,6}',
             (6, 7, 8),
             (4, 5)),
            ('(?:43[07-9]|99[69]\\d)\\d{5}|(?:8[7-9]|98)\\d{7}', (8, 9), ())),
           None,
           False,
           None),
    'LT': (370,
           '00',
           '[08]',
           None,
           ('(?:[3469]\\d|52|[78]0)\\d{6}', (8,), ()),
           (('9(?:0[0239]|10)\\d{5}', (8,), ()),
            ('80[02]\\d{5}', (8,), ()),
            ('808\\d{5}', (8,), ()),
            ('[89]01\\d{5}', (8,), ()),
            ('70[05]\\d{5}', (8,), ()),
            None,
            ('70[67]\\d{5}', (8,), ()),
            None,
            ('(?:3[1478]|4[124-6]|52)\\d{6}', (8,), ()),
            ('6\\d{7}', (8,), ())),
           None,
           False,
           None),
    'LV': (371,
           '00',
           None,
           None,
           ('(?:[268]\\d|78|90)\\d{6}', (8,), ()),
           (('90\\d{6}', (8,), ()),
            ('80\\d{6}', (8,), ()),
            ('81\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            ('6\\d{7}', (8,), ()),
            ('2333[0-8]\\d{3}|2(?:[0-24-9]\\d\\d|3(?:0[07]|[14-9]\\d|2[02-9]|3[0-24-9]))\\d{4}', (8,), ())),
           None,
           False,
           None),
    'EE': (372,
           '00',
           None,
           None,
           ('8\\d{9}|[4578]\\d{7}|(?:[3-8]\\d|90)\\d{5}', (7, 8, 10), ()),
           (('(?:40\\d\\d|900)\\d{4}', (7, 8), ()),
            ('800(?:(?:0\\d\\d|1)\\d|[2-9])\\d{3}', (7, 8, 10), ()),
            None,
            None,
            ('70[0-2]\\d{5}', (8,), ()),
            None,
            None,
            None,
            ('(?:3[23589]|4[3-8]|6\\d|7[1-9]|88)\\d{5}', (7,), ()),
            (('(?:5\\d{5}|8(?:1(?:0(?:0(?:00|[178]\\d)|[3-9]\\d\\d)|(?:1(?:0[2-6]|1\\d)|[2-79]\\d\\d)\\d)|2('
              '?:0(?:0(?:00|4\\d)|[1-7]\\d\\d)|(?:(?:[124-69]\\d|3[5-9])\\d|7(?:[0-79]\\d|8[013-9])|8(?:[2'
              '-6]\\d|7[01]))\\d)|[349]\\d{4}))\\d\\d|5(?:(?:[02]\\d|5[0-478])\\d|1(?:[0-8]\\d|95)|6(?:4[0-4'
              ']|5[1-589]))\\d{3}'),
             (7, 8),
             ())),
           None,
           False,
           None),
    'MD': (373,
           '00',
           '0',
           None,
           ('(?:[235-7]\\d|[89]0)\\d{6}', (8,), ()),
           (('90[056]\\d{5}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            ('808\\d{5}', (8,), ()),
            ('3[08]\\d{6}', (8,), ()),
            None,
            None,
            ('803\\d{5}', (8,), ()),
            None,
            ('(?:(?:2[1-9]|3[1-79])\\d|5(?:33|5[257]))\\d{5}', (8,), ()),
            ('562\\d{5}|(?:6\\d|7[16-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'AM': (374,
           '00',
           '0',
           None,
           ('(?:[1-489]\\d|55|60|77)\\d{6}', (8,), (5, 6)),
           (('90[016]\\d{5}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            ('80[1-4]\\d{5}', (8,), ()),
            ('60(?:2[78]|3[5-9]|4[02-9]|5[0-46-9]|[6-8]\\d|9[0-2])\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            ('(?:(?:1[0-25]|47)\\d|2(?:2[2-46]|3[1-8]|4[2-69]|5[2-7]|6[1-9]|8[1-7])|3[12]2)\\d{5}',
             (8,),
             (5, 6)),
            ('(?:33|4[1349]|55|77|88|9[13-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'BY': (375,
           '810',
           '0|80?',
           None,
           (('(?:[12]\\d|33|44|902)\\d{7}|8(?:0[0-79]\\d{5,7}|[1-7]\\d{9})|8(?:1[0-489]|[5-79]\\d)\\d{7}|8'
             '[1-79]\\d{6,7}|8[0-79]\\d{5}|8\\d{5}'),
            (6, 7, 8, 9, 10, 11),
            (5,)),
           (('(?:810|902)\\d{7}', (10,), ()),
            ('800\\d{3,7}|8(?:0[13]|20\\d)\\d{7}', (6, 7, 8, 9, 10, 11), ()),
            None,
            ('249\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            (('(?:1(?:5(?:1[1-5]|[24]\\d|6[2-4]|9[1-7])|6(?:[235]\\d|4[1-7])|7\\d\\d)|2(?:1(?:[246]\\d|3[0-35-'
              '9]|5[1-9])|2(?:[235]\\d|4[0-8])|3(?:[26]\\d|3[02-79]|4[024-7]|5[03-7])))\\d{5}'),
             (9,),
             (5, 6, 7)),
            ('(?:2(?:5[5-79]|9[1-9])|(?:33|44)\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'AD': (376,
           '00',
           None,
           None,
           ('(?:1|6\\d)\\d{7}|[135-9]\\d{5}', (6, 8, 9), ()),
           (('[19]\\d{5}', (6,), ()),
            ('180[02]\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('[78]\\d{5}', (6,), ()),
            ('690\\d{6}|[356]\\d{5}', (6, 9), ())),
           None,
           False,
           None),
    'MC': (377,
           '00',
           '0',
           None,
           ('(?:[3489]|[67]\\d)\\d{7}', (8, 9), ()),
           (None,
            ('(?:800|90\\d)\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:870|9[2-47-9]\\d)\\d{5}', (8,), ()),
            ('4(?:[46]\\d|5[1-9])\\d{5}|(?:3|[67]\\d)\\d{7}', (8, 9), ())),
           None,
           False,
           None),
    'SM': (378,
           '00',
           '([89]\\d{5})$',
           '0549\\1',
           ('(?:0549|[5-7]\\d)\\d{6}', (8, 10), (6,)),
           (('7[178]\\d{6}', (8,), ()),
            None,
            None,
            ('5[158]\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            ('0549(?:8[0157-9]|9\\d)\\d{4}', (10,), (6,)),
            ('6[16]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'UA': (380,
           '00',
           '0',
           None,
           ('[89]\\d{9}|[3-9]\\d{8}', (9, 10), (5, 6, 7)),
           (('900[239]\\d{5,6}', (9, 10), ()),
            ('800[1-8]\\d{5,6}', (9, 10), ()),
            None,
            ('89[1-579]\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            ('(?:3[1-8]|4[13-8]|5[1-7]|6[12459])\\d{7}', (9,), (5, 6, 7)),
            ('790\\d{6}|(?:39|50|6[36-8]|7[1-357]|9[1-9])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'RS': (381,
           '00',
           '0',
           None,
           (('38[02-9]\\d{6,9}|6\\d{7,9}|90\\d{4,8}|38\\d{5,6}|(?:7\\d\\d|800)\\d{3,9}|(?:[12]\\d|3[0-79])\\d'
             '{5,10}'),
            (6, 7, 8, 9, 10, 11, 12),
            (4, 5)),
           (('(?:78\\d|90[0169])\\d{3,7}', (6, 7, 8, 9, 10), ()),
            ('800\\d{3,9}', (6, 7, 8, 9, 10, 11, 12), ()),
            None,
            None,
            None,
            None,
            ('7[06]\\d{4,10}', (6, 7, 8, 9, 10, 11, 12), ()),
            None,
            ('(?:11[1-9]\\d|(?:2[389]|39)(?:0[2-9]|[2-9]\\d))\\d{3,8}|(?:1[02-9]|2[0-24-7]|3[0-8])[2-9]\\d{4,9}',
             (7, 8, 9, 10, 11, 12),
             (4, 5, 6)),
            ('6(?:[0-689]|7\\d)\\d{6,7}', (8, 9, 10), ())),
           None,
           False,
           None),
    'ME': (382,
           '00',
           '0',
           None,
           ('(?:20|[3-79]\\d)\\d{6}|80\\d{6,7}', (8, 9), (6,)),
           (('9(?:4[1568]|5[178])\\d{5}', (8,), ()),
            ('80(?:[0-2578]|9\\d)\\d{5}', (8, 9), ()),
            None,
            ('78[1-49]\\d{5}', (8,), ()),
            None,
            None,
            ('77[1-9]\\d{5}', (8,), ()),
            None,
            ('(?:20[2-8]|3(?:[0-2][2-7]|3[24-7])|4(?:0[2-467]|1[2467])|5(?:0[2467]|1[24-7]|2[2-467]))\\d{5}',
             (8,),
             (6,)),
            ('6(?:[07-9]\\d|3[024]|6[0-25])\\d{5}', (8,), ())),
           None,
           False,
           None),
    'XK': (383,
           '00',
           '0',
           None,
           ('2\\d{7,8}|3\\d{7,11}|(?:4\\d\\d|[89]00)\\d{5}', (8, 9, 10, 11, 12), ()),
           (('900\\d{5}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('38\\d{6,10}|(?:2[89]|39)(?:0\\d{5,6}|[1-9]\\d{5})', (8, 9, 10, 11, 12), ()),
            ('4[3-9]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'HR': (385,
           '00',
           '0',
           None,
           ('[2-69]\\d{8}|80\\d{5,7}|[1-79]\\d{7}|6\\d{6}', (7, 8, 9), (6,)),
           (('6[01459]\\d{6}|6[01]\\d{5}', (7, 8), ()),
            ('80\\d{5,7}', (7, 8, 9), ()),
            None,
            None,
            ('7[45]\\d{6}', (8,), ()),
            None,
            ('62\\d{6,7}|72\\d{6}', (8, 9), ()),
            None,
            ('1\\d{7}|(?:2[0-3]|3[1-5]|4[02-47-9]|5[1-3])\\d{6,7}', (8, 9), (6, 7)),
            ('9(?:(?:0[1-9]|[12589]\\d)\\d\\d|7(?:[0679]\\d\\d|5(?:[01]\\d|44|55|77|9[5-79])))\\d{4}|98\\d{6}',
             (8, 9),
             ())),
           None,
           False,
           None),
    'SI': (386,
           '00|10(?:22|66|88|99)',
           '0',
           None,
           ('[1-7]\\d{7}|8\\d{4,7}|90\\d{4,6}', (5, 6, 7, 8), ()),
           (('89[1-3]\\d{2,5}|90\\d{4,6}', (5, 6, 7, 8), ()),
            ('80\\d{4,6}', (6, 7, 8), ()),
            None,
            ('(?:59\\d\\d|8(?:1(?:[67]\\d|8[0-589])|2(?:0\\d|2[0-37-9]|8[0-2489])|3[389]\\d))\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            ('(?:[1-357][2-8]|4[24-8])\\d{6}', (8,), (7,)),
            ('65(?:[178]\\d|5[56]|6[01])\\d{4}|(?:[37][01]|4[013]|51|6[489])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'BA': (387,
           '00',
           '0',
           None,
           ('6\\d{8}|(?:[35689]\\d|49|70)\\d{6}', (8, 9), (6,)),
           (('9[0246]\\d{6}', (8,), ()),
            ('8[08]\\d{6}', (8,), ()),
            ('8[12]\\d{6}', (8,), ()),
            None,
            None,
            None,
            ('703[235]0\\d{3}|70(?:2[0-5]|3[0146]|[56]0)\\d{4}', (8,), ()),
            None,
            (('(?:3(?:[05-79][2-9]|1[4579]|[23][24-9]|4[2-4689]|8[2457-9])|49[2-579]|5(?:0[2-49]|[13][2-9]|[26'
              '8][2-4679]|4[4689]|5[2-79]|7[2-69]|9[2-4689]))\\d{5}'),
             (8,),
             (6,)),
            ('6040\\d{5}|6(?:03|[1-356]|44|7\\d)\\d{6}', (8, 9), ())),
           None,
           False,
           None),
    'MK': (389,
           '00',
           '0',
           None,
           ('[2-578]\\d{7}', (8,), (6, 7)),
           (('5\\d{7}', (8,), ()),
            ('800\\d{5}', (8,), ()),
            ('8(?:0[1-9]|[1-9]\\d)\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            (('(?:(?:2(?:62|77)0|3444)\\d|4[56]440)\\d{3}|(?:34|4[357])700\\d{3}|(?:2(?:[0-3]\\d|5[0-578]|6[0'
              '1]|82)|3(?:1[3-68]|[23][2-68]|4[23568])|4(?:[23][2-68]|4[3-68]|5[2568]|6[25-8]|7[24-68]|8[4-68]'
              '))\\d{5}'),
             (8,),
             (6, 7)),
            (('7(?:3555|(?:474|9[019]7)7)\\d{3}|7(?:[0-25-8]\\d\\d|3(?:[1-478]\\d|6[01])|4(?:2\\d|60|7[01578])'
              '|9(?:[2-4]\\d|5[01]|7[015]))\\d{4}'),
             (8,),
             ())),
           None,
           False,
           None),
    'CZ': (420,
           '00',
           None,
           None,
           ('(?:[2-578]\\d|60)\\d{7}|9\\d{8,11}', (9, 10, 11, 12), ()),
           (('9(?:0[05689]|76)\\d{6}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            ('8[134]\\d{7}', (9,), ()),
            ('9[17]0\\d{6}', (9,), ()),
            ('70[01]\\d{6}', (9,), ()),
            None,
            ('9(?:5\\d|7[2-4])\\d{6}', (9,), ()),
            ('9(?:3\\d{9}|6\\d{7,10})', (9, 10, 11, 12), ()),
            ('(?:2\\d|3[1257-9]|4[16-9]|5[13-9])\\d{7}', (9,), ()),
            ('7060\\d{5}|(?:60[1-8]|7(?:0[2-5]|19|[2379]\\d))\\d{6}', (9,), ())),
           None,
           False,
           None),
    'SK': (421,
           '00',
           '0',
           None,
           ('[2-689]\\d{8}|[2-59]\\d{6}|[2-5]\\d{5}', (6, 7, 9), ()),
           (('9(?:00|[78]\\d)\\d{6}', (9,), ()),
            ('800\\d{6}', (9,), ()),
            ('8[5-9]\\d{7}', (9,), ()),
            ('6(?:02|5[0-4]|9[0-6])\\d{6}', (9,), ()),
            None,
            ('9090\\d{3}', (7,), ()),
            ('96\\d{7}', (9,), ()),
            None,
            (('(?:2(?:16|[2-9]\\d{3})|(?:(?:[3-5][1-8]\\d|819)\\d|601[1-5])\\d)\\d{4}|(?:2|[3-5][1-8])1[6'
              '7]\\d{3}|[3-5][1-8]16\\d\\d'),
             (6, 7, 9),
             ()),
            ('909[1-9]\\d{5}|9(?:0[1-8]|1[0-24-9]|4[03-57-9]|5\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'LI': (423,
           '00',
           '(1001)|0',
           None,
           ('[68]\\d{8}|(?:[2378]\\d|90)\\d{5}', (7, 9), ()),
           (('90(?:02[258]|1(?:23|3[14])|66[136])\\d\\d', (7,), ()),
            ('8002[28]\\d\\d|80(?:05\\d|9)\\d{4}', (7, 9), ()),
            None,
            None,
            None,
            None,
            ('870(?:28|87)\\d\\d', (7,), ()),
            ('697(?:42|56|[78]\\d)\\d{4}', (9,), ()),
            ('(?:2(?:01|1[27]|2[024]|3\\d|6[02-578]|9[06])|3(?:[24]0|33|7[0135-7]|8[048]|9[0269]))\\d{4}',
             (7,),
             ()),
            ('(?:6(?:(?:4[5-9]|5\\d)\\d|6(?:[024-68]\\d|1[01]|3[7-9]|7[02]))\\d|7(?:[37-9]\\d|42|56))\\d{4}',
             (7, 9),
             ())),
           None,
           False,
           None),
    'FK': (500,
           '00',
           None,
           None,
           ('[2-7]\\d{4}', (5,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('[2-47]\\d{4}', (5,), ()),
            ('[56]\\d{4}', (5,), ())),
           None,
           False,
           None),
    'BZ': (501,
           '00',
           None,
           None,
           ('(?:0800\\d|[2-8])\\d{6}', (7, 11), ()),
           (None,
            ('0800\\d{7}', (11,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2(?:[02]\\d|36|[68]0)|[3-58](?:[02]\\d|[68]0)|7(?:[02]\\d|32|[68]0))\\d{4}', (7,), ()),
            ('6[0-35-7]\\d{5}', (7,), ())),
           None,
           False,
           None),
    'GT': (502,
           '00',
           None,
           None,
           ('80\\d{6}|(?:1\\d{3}|[2-7])\\d{7}', (8, 11), ()),
           (('19\\d{9}', (11,), ()),
            ('18[01]\\d{8}', (11,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('[267][2-9]\\d{6}', (8,), ()),
            ('(?:[3-5]\\d\\d|80[0-4])\\d{5}', (8,), ())),
           None,
           False,
           None),
    'SV': (503,
           '00',
           None,
           None,
           ('[25-7]\\d{7}|(?:80\\d|900)\\d{4}(?:\\d{4})?', (7, 8, 11), ()),
           (('900\\d{4}(?:\\d{4})?', (7, 11), ()),
            ('800\\d{8}|80[01]\\d{4}', (7, 11), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:79(?:0[0347-9]|[1-9]\\d)|89(?:0[024589]|[1-9]\\d))\\d{3}|2(?:[1-69]\\d|[78][0-8])\\d{5}',
             (8,),
             ()),
            ('[5-7]\\d{7}', (8,), ())),
           None,
           False,
           None),
    'HN': (504,
           '00',
           None,
           None,
           ('8\\d{10}|[237-9]\\d{7}', (8, 11), ()),
           (None,
            ('8002\\d{7}', (11,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('2(?:2(?:0[0-59]|1[1-9]|[23]\\d|4[02-8]|5[57]|6[2458]|7[0135689]|8[01346-9]|9[0-2])|4(?:0[57'
              '8]|2[3-59]|3[13-9]|4[0-68]|5[1-3589]|80)|5(?:0[2357-9]|1[1-6]|4[03-58]|5\\d|6[014-69]|7[04]'
              '|80)|6(?:[056]\\d|17|2[067]|3[047]|4[0-378]|[78][0-8]|9[01])|7(?:0[5-79]|2[01]|6[46-9]|7[02'
              '-9]|8[034]|91)|8(?:79|8[0-357-9]|9[1-57-9]))\\d{4}'),
             (8,),
             ()),
            ('[37-9]\\d{7}', (8,), ())),
           None,
           False,
           None),
    'NI': (505,
           '00',
           None,
           None,
           ('(?:1800|[25-8]\\d{3})\\d{4}', (8,), ()),
           (None,
            ('1800\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2\\d{7}', (8,), ()),
            ('(?:5(?:5[0-7]|[78]\\d)|6(?:20|3[035]|4[045]|5[05]|77|8[1-9]|9[059])|(?:7[5-8]|8\\d)\\d)\\d{5}',
             (8,),
             ())),
           None,
           False,
           None),
    'CR': (506,
           '00',
           '(19(?:0[0-2468]|1[09]|20|66|77|99))',
           None,
           ('(?:8\\d|90)\\d{8}|(?:[24-8]\\d{3}|3005)\\d{4}', (8, 10), ()),
           (('90[059]\\d{7}', (10,), ()),
            ('800\\d{7}', (10,), ()),
            None,
            ('(?:2(?:00[0-3]|10[0-6])|4\\d{3}|5100)\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            ('2(?:010|1(?:0[7-9]|[1-9]\\d)|[24-7]\\d\\d)\\d{4}', (8,), ()),
            ('(?:3005\\d|6500[01])\\d{3}|(?:5[07]|6[0-4]|7[0-3]|8[3-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'PA': (507,
           '00',
           None,
           None,
           ('(?:00800|8\\d{3})\\d{6}|[68]\\d{7}|[1-57-9]\\d{6}', (7, 8, 10, 11), ()),
           (('(?:8(?:22|55|60|7[78]|86)|9(?:00|81))\\d{4}', (7,), ()),
            ('800\\d{4,5}|(?:00800|800\\d)\\d{6}', (7, 8, 10, 11), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:1(?:0\\d|1[0479]|2[37]|3[0137]|4[147]|5[05]|6[058]|7[0167]|8[2358]|9[1389])|2(?:[0235-79'
              ']\\d|1[0-7]|4[013-9]|8[02-9])|3(?:[0147-9]\\d|[25][0-5]|33|6[068])|4(?:00|3[0-579]|4\\d|7[0-5'
              '7-9])|5(?:[01]\\d|2[0-7]|[56]0|79)|7(?:0[09]|2[0-26-8]|3[03]|4[04]|5[05-9]|6[0156]|7[0-24-9'
              ']|8[4-9]|90)|8(?:09|2[89]|3\\d|4[0-24-689]|5[014]|8[02])|9(?:0[5-9]|1[0-35-8]|2[036-9]|3[35'
              '-79]|40|5[0457-9]|6[05-9]|7[04-9]|8[235-8]|9\\d))\\d{4}'),
             (7,),
             ()),
            ('(?:1[16]1|21[89]|6\\d{3}|8(?:1[01]|7[23]))\\d{4}', (7, 8), ())),
           None,
           False,
           None),
    'PM': (508,
           '00',
           '0',
           None,
           ('[78]\\d{8}|[2-9]\\d{5}', (6, 9), ()),
           (('8[129]\\d{7}', (9,), ()),
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('80[6-9]\\d{6}|(?:[236-9]\\d|4[1-35-9]|5[0-47-9])\\d{4}', (6, 9), ()),
            ('708(?:4[0-5]|5[0-6])\\d{4}|(?:[236-9]\\d|4[02-489]|5[02-9])\\d{4}', (6, 9), ())),
           None,
           False,
           None),
    'HT': (509,
           '00',
           None,
           None,
           ('[2-589]\\d{7}', (8,), ()),
           (None,
            ('8\\d{7}', (8,), ()),
            None,
            ('9(?:[67][0-4]|8[0-3589]|9\\d)\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            ('2(?:2\\d|5[1-5]|81|9[149])\\d{5}', (8,), ()),
            ('(?:[34]\\d|5[568])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'GP': (590,
           '00',
           '0',
           None,
           ('7090\\d{5}|(?:[56]9|[89]\\d)\\d{7}', (9,), ()),
           (('8[129]\\d{7}', (9,), ()),
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('9(?:(?:39[5-7]|76[018])\\d|475[0-6])\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            (('(?:59(?:0(?:0[1-68]|[14][0-24-9]|2[0-68]|3[1-9]|5[3-579]|[68][0-689]|7[08]|9\\d)|87\\d)|80[6'
              '-9]\\d\\d)\\d{4}'),
             (9,),
             ()),
            ('(?:69(?:0\\d\\d|1(?:2[2-9]|3[0-5]))|7090[0-4])\\d{4}', (9,), ())),
           None,
           False,
           None),
    'BL': (590,
           '00',
           '0',
           None,
           ('7090\\d{5}|(?:[56]9|[89]\\d)\\d{7}', (9,), ()),
           (('8[129]\\d{7}', (9,), ()),
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('9(?:(?:39[5-7]|76[018])\\d|475[0-6])\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            ('(?:59(?:0(?:2[7-9]|3[3-7]|5[12]|87)|87\\d)|80[6-9]\\d\\d)\\d{4}', (9,), ()),
            ('(?:69(?:0\\d\\d|1(?:2[2-9]|3[0-5]))|7090[0-4])\\d{4}', (9,), ())),
           None,
           False,
           None),
    'MF': (590,
           '00',
           '0',
           None,
           ('7090\\d{5}|(?:[56]9|[89]\\d)\\d{7}', (9,), ()),
           (('8[129]\\d{7}', (9,), ()),
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('9(?:(?:39[5-7]|76[018])\\d|475[0-6])\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            ('(?:59(?:0(?:0[079]|[14]3|[27][79]|3[03-7]|5[0-268]|87)|87\\d)|80[6-9]\\d\\d)\\d{4}', (9,), ()),
            ('(?:69(?:0\\d\\d|1(?:2[2-9]|3[0-5]))|7090[0-4])\\d{4}', (9,), ())),
           None,
           False,
           None),
    'BO': (591,
           '00(?:1\\d)?',
           '0(1\\d)?',
           None,
           ('(?:[2-7]\\d\\d|8001)\\d{5}', (8, 9), (7,)),
           (None,
            ('8001[07]\\d{4}', (9,), ()),
            None,
            ('50\\d{6}', (8,), (7,)),
            None,
            None,
            None,
            None,
            (('(?:2(?:2\\d\\d|5(?:11|[258]\\d|9[67])|6(?:12|2\\d|9[34])|8(?:2[34]|39|62))|3(?:3\\d\\d|4(?:'
              '6\\d|8[24])|8(?:25|42|5[257]|86|9[25])|9(?:[27]\\d|3[2-4]|4[248]|5[24]|6[2-6]))|4(?:4\\d\\d|6('
              '?:11|[24689]\\d|72)))\\d{4}'),
             (8,),
             (7,)),
            ('(?:57|[67]\\d)\\d{6}', (8,), ())),
           None,
           False,
           None),
    'GY': (592,
           '001',
           None,
           None,
           ('(?:[2-8]\\d{3}|9008)\\d{3}', (7,), ()),
           (('9008\\d{3}', (7,), ()),
            ('(?:289|8(?:00|6[28]|88|99))\\d{4}', (7,), ()),
            None,
            ('515\\d{4}', (7,), ()),
            None,
            None,
            None,
            None,
            (('(?:2(?:1[6-9]|2[0-35-9]|3[1-4]|5[3-9]|6\\d|7[0-79])|3(?:2[25-9]|3\\d)|4(?:4[0-24]|5[56])|5(?'
              ':0[0-6]|16)|77[1-57])\\d{4}'),
             (7,),
             ()),
            ('(?:51[01]|6\\d\\d|7(?:[0-6]\\d|70|8[0167]))\\d{4}', (7,), ())),
           None,
           False,
           None),
    'EC': (593,
           '00',
           '0',
           None,
           ('1\\d{9,10}|(?:[2-7]|9\\d)\\d{7}', (8, 9, 10, 11), (7,)),
           (None,
            ('1800\\d{7}|1[78]00\\d{6}', (10, 11), ()),
            None,
            ('[2-7]890\\d{4}', (8,), ()),
            None,
            None,
            None,
            None,
            ('[2-7][2-7]\\d{6}', (8,), (7,)),
            ('964[0-2]\\d{5}|9(?:3[0-29]|[57][89]|6[0-36-9]|[89]\\d)\\d{6}', (9,), ())),
           None,
           False,
           None),
    'GF': (594,
           '00',
           '0',
           None,
           ('(?:694\\d|7093)\\d{5}|(?:59|[89]\\d)\\d{7}', (9,), ()),
           (('8[129]\\d{7}', (9,), ()),
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('9(?:(?:396|76\\d)\\d|476[0-6])\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            ('(?:59(?:4(?:[02-49]\\d|1[0-5]|5[6-9]|6[0-3]|80)|88\\d)|80[6-9]\\d\\d)\\d{4}', (9,), ()),
            ('(?:694(?:[0-249]\\d|3[0-8])|7093[0-3])\\d{4}', (9,), ())),
           None,
           False,
           None),
    'PY': (595,
           '00',
           '0',
           None,
           ('[36-8]\\d{5,8}|4\\d{6,8}|59\\d{6}|9\\d{5,10}|(?:2\\d|5[0-8])\\d{6,7}', (6, 7, 8, 9, 10, 11), (5,)),
           (None,
            ('9800\\d{5,7}', (9, 10, 11), ()),
            None,
            ('8700[0-4]\\d{4}', (9,), ()),
            None,
            None,
            ('[245]0\\d{6,7}|[36-9]0\\d{4,7}', (6, 7, 8, 9), ()),
            None,
            (('(?:3[289]|4[246-8]|61|7[1-3]|8[1-36])\\d{5,7}|(?:2(?:[14-68]\\d|2[4-68]|7[15]|9[1-5])|3(?:18'
              '|3[167]|4[2357]|51|[67]\\d)|4(?:1\\d|3[12]|5[13]|9[1-47])|5(?:[1-4]\\d|5[02-4])|6(?:3[1-3]|44'
              '|7[1-8])|7(?:4[0-4]|5\\d|6[1-578]|75|8[0-8])|858)\\d{5,6}'),
             (7, 8, 9),
             (5, 6)),
            ('9881\\d{5}|9(?:51|6[129]|7[1-6]|8[1-7]|9[1-5])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'MQ': (596,
           '00',
           '0',
           None,
           ('7091\\d{5}|(?:[56]9|[89]\\d)\\d{7}', (9,), ()),
           (('8[129]\\d{7}', (9,), ()),
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('9(?:397[0-3]|477[0-5]|76(?:6\\d|7[0-367]))\\d{4}', (9,), ()),
            None,
            None,
            None,
            None,
            (('(?:59(?:6(?:[03-7]\\d|1[05]|2[7-9]|8[0-39]|9[04-9])|89\\d)|80[6-9]\\d\\d|9(?:477[6-9]|767[4589'
              ']))\\d{4}'),
             (9,),
             ()),
            ('(?:69[67]\\d\\d|7091[0-3])\\d{4}', (9,), ())),
           None,
           False,
           None),
    'SR': (597,
           '00',
           None,
           None,
           ('(?:[2-5]|[6-9]\\d)\\d{5}', (6, 7), ()),
           (('90\\d{5}', (7,), ()),
            ('80\\d{5}', (7,), ()),
            None,
            ('(?:56|91\\d)\\d{4}', (6, 7), ()),
            None,
            None,
            None,
            None,
            ('(?:2[1-3]|3[0-7]|4\\d|5[2-578])\\d{4}', (6,), ()),
            ('(?:6[08]|7[1-79]|8[1-9])\\d{5}', (7,), ())),
           None,
           False,
           None),
    'UY': (598,
           '0(?:0|1[3-9]\\d)',
           '0',
           None,
           ('0004\\d{2,9}|[1249]\\d{7}|2\\d{3,4}|(?:[49]\\d|80)\\d{5}', (4, 5, 6, 7, 8, 9, 10, 11, 12, 13), ()),
           (('90[0-8]\\d{4}', (7,), ()),
            ('0004\\d{2,9}|(?:405|80[05])\\d{4}', (6, 7, 8, 9, 10, 11, 12, 13), ()),
            None,
            None,
            None,
            None,
            ('21\\d{2,3}', (4, 5), ()),
            None,
            ('(?:1(?:770|9(?:20|[89]7))|(?:2\\d|4[2-7])\\d\\d)\\d{4}', (8,), (7,)),
            ('9[1-9]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'CW': (599,
           '00',
           None,
           None,
           ('(?:[34]1|60|(?:7|9\\d)\\d)\\d{5}', (7, 8), ()),
           (None,
            None,
            ('60[0-2]\\d{4}', (7,), ()),
            None,
            None,
            ('955\\d{5}', (8,), ()),
            None,
            None,
            (('9(?:4(?:3[0-5]|4[14]|6\\d)|50\\d|7(?:2[014]|3[02-9]|4[4-9]|6[357]|77|8[7-9])|8(?:3[39]|[46]\\'
              'd|7[01]|8[57-9]))\\d{4}'),
             (7, 8),
             ()),
            ('953[01]\\d{4}|9(?:5[12467]|6[5-9])\\d{5}', (7, 8), ())),
           '[69]',
           False,
           None),
    'BQ': (599,
           '00',
           None,
           None,
           ('(?:[34]1|7\\d)\\d{5}', (7,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:318[023]|41(?:6[023]|70)|7(?:1[578]|2[05]|50)\\d)\\d{3}', (7,), ()),
            ('(?:31(?:8[14-8]|9[14578])|416[14-9]|7(?:0[01]|7[07]|8\\d|9[056])\\d)\\d{3}', (7,), ())),
           '[347]',
           False,
           None),
    'TL': (670,
           '00',
           None,
           None,
           ('7\\d{7}|(?:[2-47]\\d|[89]0)\\d{5}', (7, 8), ()),
           (('90\\d{5}', (7,), ()),
            ('80\\d{5}', (7,), ()),
            None,
            None,
            ('70\\d{5}', (7,), ()),
            None,
            None,
            None,
            ('(?:2[1-5]|3[1-9]|4[1-4])\\d{5}', (7,), ()),
            ('7[2-8]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'NF': (672,
           '00',
           '([0-258]\\d{4})$',
           '3\\1',
           ('[13]\\d{5}', (6,), (5,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:1(?:06|17|28|39)|3[0-2]\\d)\\d{3}', (6,), (5,)),
            ('(?:14|3[58])\\d{4}', (6,), (5,))),
           None,
           False,
           None),
    'BN': (673,
           '00',
           None,
           None,
           ('[2-578]\\d{6}', (7,), ()),
           (None,
            None,
            None,
            ('5[34]\\d{5}', (7,), ()),
            None,
            None,
            None,
            None,
            ('22[0-7]\\d{4}|(?:2[013-9]|[34]\\d|5[0-25-9])\\d{5}', (7,), ()),
            ('(?:22[89]|[78]\\d\\d)\\d{4}', (7,), ())),
           None,
           False,
           None),
    'NR': (674,
           '00',
           None,
           None,
           ('(?:222|444|(?:55|8\\d)\\d|666|777|999)\\d{4}', (7,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('444\\d{4}', (7,), ()),
            ('(?:222|55[3-9]|666|777|8\\d\\d|999)\\d{4}', (7,), ())),
           None,
           False,
           None),
    'PG': (675,
           '00|140[1-3]',
           None,
           None,
           ('(?:180|[78]\\d{3})\\d{4}|(?:[2-589]\\d|64)\\d{5}', (7, 8), ()),
           (None,
            ('180\\d{4}', (7,), ()),
            None,
            ('2(?:0[0-7]|7[568])\\d{4}', (7,), ()),
            None,
            ('27[01]\\d{4}', (7,), ()),
            None,
            None,
            ('(?:(?:3[0-2]|4[257]|5[34]|9[78])\\d|64[1-9]|85[02-46-9])\\d{4}', (7,), ()),
            ('(?:7\\d|8[1-58])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'TO': (676,
           '00',
           None,
           None,
           ('(?:0800|(?:[5-8]\\d\\d|999)\\d)\\d{3}|[2-8]\\d{4}', (5, 7), ()),
           (None,
            ('0800\\d{3}', (7,), ()),
            None,
            ('55[0-37-9]\\d{4}', (7,), ()),
            None,
            None,
            None,
            None,
            ('(?:2\\d|3[0-8]|4[0-4]|50|6[09]|7[0-24-69]|8[05])\\d{3}', (5,), ()),
            ('(?:5(?:4[0-5]|5[4-6])|6(?:[09]\\d|3[02]|8[15-9])|(?:7\\d|8[46-9])\\d|999)\\d{4}', (7,), ())),
           None,
           False,
           None),
    'SB': (677,
           '0[01]',
           None,
           None,
           ('[6-9]\\d{6}|[1-6]\\d{4}', (5, 7), ()),
           (None,
            ('1[38]\\d{3}', (5,), ()),
            None,
            ('5[12]\\d{3}', (5,), ()),
            None,
            None,
            None,
            None,
            ('(?:1[4-79]|[23]\\d|4[0-2]|5[03]|6[0-37])\\d{3}', (5,), ()),
            ('(?:48|99[0-8]\\d)\\d{3}|(?:6[89]|7[1-9]|8[4-9]|9[0-8])\\d{5}', (5, 7), ())),
           None,
           False,
           None),
    'VU': (678,
           '00',
           None,
           None,
           ('[57-9]\\d{6}|(?:[238]\\d|48)\\d{3}', (5, 7), ()),
           (None,
            ('81[18]\\d\\d', (5,), ()),
            None,
            ('9(?:0[1-9]|1[01])\\d{4}', (7,), ()),
            None,
            None,
            ('(?:3[03]|900\\d)\\d{3}', (5, 7), ()),
            None,
            ('(?:38[0-8]|48[4-9])\\d\\d|(?:2[02-9]|3[4-7]|88)\\d{3}', (5,), ()),
            ('(?:[58]\\d|7[0-7])\\d{5}', (7,), ())),
           None,
           False,
           None),
    'FJ': (679,
           '0(?:0|52)',
           None,
           None,
           ('45\\d{5}|(?:0800\\d|[235-9])\\d{6}', (7, 11), ()),
           (None,
            ('0800\\d{7}', (11,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('603\\d{4}|(?:3[0-6]|6[25-7]|8[58])\\d{5}', (7,), ()),
            ('(?:[279]\\d|45|5[01568]|8[034679])\\d{5}', (7,), ())),
           None,
           False,
           None),
    'PW': (680,
           '01[12]',
           None,
           None,
           ('(?:[24-8]\\d\\d|345|900)\\d{4}', (7,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2(?:55|77)|345|488|5(?:35|44|87)|6(?:22|54|79)|7(?:33|47)|8(?:24|55|76)|900)\\d{4}', (7,), ()),
            ('(?:(?:46|83)[0-5]|(?:6[2-4689]|78)0)\\d{4}|(?:45|77|88)\\d{5}', (7,), ())),
           None,
           False,
           None),
    'WF': (681,
           '00',
           None,
           None,
           ('(?:40|72|8\\d{4})\\d{4}|[89]\\d{5}', (6, 9), ()),
           (None,
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('9[23]\\d{4}', (6,), ()),
            None,
            None,
            None,
            ('[48]0\\d{4}', (6,), ()),
            ('72\\d{4}', (6,), ()),
            ('(?:72|8[23])\\d{4}', (6,), ())),
           None,
           False,
           None),
    'CK': (682,
           '00',
           None,
           None,
           ('[2-578]\\d{4}', (5,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2\\d|3[13-7]|4[1-5])\\d{3}', (5,), ()),
            ('[578]\\d{4}', (5,), ())),
           None,
           False,
           None),
    'NU': (683,
           '00',
           None,
           None,
           ('(?:[4-7]|888\\d)\\d{3}', (4, 7), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('[47]\\d{3}', (4,), ()),
            ('(?:[56]|888[1-9])\\d{3}', (4, 7), ())),
           None,
           False,
           None),
    'WS': (685,
           '0',
           None,
           None,
           ('(?:[2-6]|8\\d{5})\\d{4}|[78]\\d{6}|[68]\\d{5}', (5, 6, 7, 10), ()),
           (None,
            ('800\\d{3}', (6,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('6[1-9]\\d{3}|(?:[2-5]|60)\\d{4}', (5, 6), ()),
            ('(?:7[1-35-8]|8(?:[3-7]|9\\d{3}))\\d{5}', (7, 10), ())),
           None,
           False,
           None),
    'KI': (686,
           '00',
           '0',
           None,
           ('(?:[37]\\d|6[0-79])\\d{6}|(?:[2-48]\\d|50)\\d{3}', (5, 8), ()),
           (None,
            None,
            None,
            ('30(?:0[01]\\d\\d|12(?:11|20))\\d\\d', (8,), ()),
            None,
            None,
            None,
            None,
            (('(?:[24]\\d|3[1-9]|50|65(?:02[12]|12[56]|22[89]|[3-5]00)|7(?:27\\d\\d|3100|5(?:02[12]|12[56]|2'
              '2[89]|[34](?:00|81)|500))|8[0-5])\\d{3}'),
             (5, 8),
             ()),
            (('(?:6200[01]|7(?:310[1-9]|5(?:02[03-9]|12[0-47-9]|22[0-7]|[34](?:0[1-9]|8[02-9])|50[1-9])))'
              '\\d{3}|(?:63\\d\\d|7(?:(?:[0146-9]\\d|2[0-689])\\d|3(?:[02-9]\\d|1[1-9])|5(?:[0-2][013-9]|['
              '34][1-79]|5[1-9]|[6-9]\\d)))\\d{4}'),
             (8,),
             ())),
           None,
           False,
           None),
    'NC': (687,
           '00',
           None,
           None,
           ('(?:050|[2-57-9]\\d\\d)\\d{3}', (6,), ()),
           (('36\\d{4}', (6,), ()),
            ('050\\d{3}', (6,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2[03-9]|3[0-5]|4[1-7]|88)\\d{4}', (6,), ()),
            ('(?:[579]\\d|8[0-79])\\d{4}', (6,), ())),
           None,
           False,
           None),
    'TV': (688,
           '00',
           None,
           None,
           ('(?:2|7\\d\\d|90)\\d{4}', (5, 6, 7), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('2[02-9]\\d{3}', (5,), ()),
            ('(?:7[01]\\d|90)\\d{4}', (6, 7), ())),
           None,
           False,
           None),
    'PF': (689,
           '00',
           None,
           None,
           ('4\\d{5}(?:\\d{2})?|8\\d{7,8}', (6, 8, 9), ()),
           (None,
            ('80[0-5]\\d{6}', (9,), ()),
            None,
            ('499\\d{5}', (8,), ()),
            None,
            None,
            ('44\\d{4}', (6,), ()),
            None,
            ('4(?:0[4-689]|9[4-68])\\d{5}', (8,), ()),
            ('8[7-9]\\d{6}', (8,), ())),
           None,
           False,
           None),
    'TK': (690,
           '00',
           None,
           None,
           ('[2-47]\\d{3,6}', (4, 5, 6, 7), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2[2-4]|[34]\\d)\\d{2,5}', (4, 5, 6, 7), ()),
            ('7[2-4]\\d{2,5}', (4, 5, 6, 7), ())),
           None,
           False,
           None),
    'FM': (691,
           '00',
           None,
           None,
           ('(?:[39]\\d\\d|820)\\d{4}', (7,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('31(?:00[67]|208|309)\\d\\d|(?:3(?:[2357]0[1-9]|602|804|905)|(?:820|9[2-6]\\d)\\d)\\d{3}',
             (7,),
             ()),
            ('31(?:00[67]|208|309)\\d\\d|(?:3(?:[2357]0[1-9]|602|804|905)|(?:820|9[2-7]\\d)\\d)\\d{3}',
             (7,),
             ())),
           None,
           False,
           None),
    'MH': (692,
           '011',
           '1',
           None,
           ('329\\d{4}|(?:[256]\\d|45)\\d{5}', (7,), ()),
           (None,
            None,
            None,
            ('635\\d{4}', (7,), ()),
            None,
            None,
            None,
            None,
            ('(?:247|528|625)\\d{4}', (7,), ()),
            ('(?:(?:23|54)5|329|45[35-8])\\d{4}', (7,), ())),
           None,
           False,
           None),
    '001/800': (800,
                None,
                None,
                None,
                ('(?:00|[1-9]\\d)\\d{6}', (8,), ()),
                (None, ('(?:00|[1-9]\\d)\\d{6}', (8,), ()), None, None, None, None, None, None, None, None),
                None,
                True,
                None),
    '001/808': (808,
                None,
                None,
                None,
                ('[1-9]\\d{7}', (8,), ()),
                (None, None, ('[1-9]\\d{7}', (8,), ()), None, None, None, None, None, None, None),
                None,
                True,
                None),
    'KP': (850,
           '00|99',
           '0',
           None,
           ('85\\d{6}|(?:19\\d|[2-7])\\d{7}', (8, 10), (6, 7)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:(?:195|2)\\d|3[19]|4[159]|5[37]|6[17]|7[39]|85)\\d{6}', (8, 10), (6, 7)),
            ('19[1-3]\\d{7}', (10,), ())),
           None,
           False,
           None),
    'HK': (852,
           '00(?:30|5[09]|[126-9]?)',
           None,
           None,
           ('8[0-46-9]\\d{6,7}|9\\d{4,7}|(?:[2-7]|9\\d{3})\\d{7}', (5, 6, 7, 8, 9, 11), ()),
           (('900(?:[0-24-9]\\d{7}|3\\d{1,4})', (5, 6, 7, 8, 11), ()),
            ('800\\d{6}', (9,), ()),
            None,
            None,
            ('8(?:1[0-4679]\\d|2(?:[0-36]\\d|7[0-4])|3(?:[034]\\d|2[09]|70))\\d{4}', (8,), ()),
            (('7(?:1(?:0[08]|1[0-3679]|3[013]|69|9[0136])|2(?:[02389]\\d|1[18]|7[27-9])|3(?:[0-38]\\d|7[0-3'
              '69]|9[2357-9])|47\\d|5(?:[178]\\d|5[0-5])|6(?:0[0-7]|2[236-9]|[35]\\d)|7(?:[27]\\d|8[7-9])|8(?'
              ':[23689]\\d|7[1-9])|9(?:[025]\\d|6[0-246-8]|7[0-36-9]|8[238]))\\d{4}'),
             (8,),
             ()),
            ('30(?:0[1-9]|[15-7]\\d|2[047]|89)\\d{4}', (8,), ()),
            None,
            (('(?:2(?:[13-9]\\d|2[013-9])\\d|3(?:(?:[1569][0-24-9]|4[0-246-9]|7[0-24-69])\\d|8(?:4[0-8]|[579'
              ']\\d|6[0-5]))|58(?:0[1-9]|1[2-9]))\\d{4}'),
             (8,),
             ()),
            (('(?:4(?:0(?:6[0-3]|9[3-6])|24[3-6]|44[0-35-9]|6(?:4[0-57-9]|6[0-6])|7(?:4[0-48]|6[0-5]))|5(?:25['
              '3-7]|35[4-8]|73[0-6]|95[0-8])|6(?:26[013-8]|(?:66|78)[0-5])|7(?:0(?:7[1-8]|8[0-8])|10[1-4])|84('
              '?:4[0-2]|8[0-35-9])|9(?:29[013-9]|39[014-9]|59[0-467]|899))\\d{4}|(?:4(?:4[0-35-9]|6[0-357-'
              '9]|7[0-35])|5(?:[1-59][0-46-9]|6[0-4689]|7[0-246-9])|6(?:0[1-9]|[13-59]\\d|[268][0-57-9]|7['
              '0-79])|70[1-59]|84[0-39]|9(?:0[1-9]|1[02-9]|[2358][0-8]|[467]\\d))\\d{5}'),
             (8,),
             ())),
           None,
           False,
           None),
    'MO': (853,
           '00',
           None,
           None,
           ('0800\\d{3}|(?:28|[68]\\d)\\d{6}', (7, 8), ()),
           (None,
            ('0800\\d{3}', (7,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:28[2-9]|8(?:11|[2-57-9]\\d))\\d{5}', (8,), ()),
            (('6800[0-79]\\d{3}|6(?:[235]\\d\\d|6(?:0[0-5]|[1-9]\\d)|8(?:0[1-9]|[14-8]\\d|2[5-9]|[39][0-4'
              ']))\\d{4}'),
             (8,),
             ())),
           None,
           False,
           None),
    'KH': (855,
           '00[14-9]',
           '0',
           None,
           ('1\\d{9}|[1-9]\\d{7,8}', (8, 9, 10), (6, 7)),
           (('1900(?:1\\d|2[09])\\d{4}', (10,), ()),
            ('1800(?:1\\d|2[019])\\d{4}', (10,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('23(?:4(?:[2-4]|[56]\\d)|[568]\\d\\d)\\d{4}|23[236-9]\\d{5}|(?:2[4-6]|3[2-6]|4[2-4]|[5-7][2-5])('
              '?:(?:[237-9]|4[56]|5\\d)\\d{5}|6\\d{5,6})'),
             (8, 9),
             (6, 7)),
            (('(?:(?:1[28]|3[18]|9[67])\\d|6[016-9]|7(?:[07-9]|[16]\\d)|8(?:[013-79]|8\\d))\\d{6}|(?:1\\d|9[0-'
              '57-9])\\d{6}|(?:2[3-6]|3[2-6]|4[2-4]|[5-7][2-5])48\\d{5}'),
             (8, 9),
             ())),
           None,
           False,
           None),
    'LA': (856,
           '00',
           '0',
           None,
           ('(?:2\\d|3)\\d{8}|(?:[235-8]\\d|41)\\d{6}', (8, 9, 10), (6,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2[13]|[35-7][14]|41|8[1468])\\d{6}', (8,), (6,)),
            ('208[78]\\d{6}|(?:20[23579]|30)\\d{7}', (9, 10), ())),
           None,
           False,
           None),
    '001/870': (870,
                None,
                None,
                None,
                ('7\\d{11}|[235-7]\\d{8}', (9, 12), ()),
                (None,
                 None,
                 None,
                 ('2\\d{8}', (9,), ()),
                 None,
                 None,
                 None,
                 None,
                 None,
                 ('(?:[356]|774[45])\\d{8}|7[6-8]\\d{7}', (9, 12), ())),
                None,
                False,
                None),
    '001/878': (878,
                None,
                None,
                None,
                ('10\\d{10}', (12,), ()),
                (None, None, None, ('10\\d{10}', (12,), ()), None, None, None, None, None, None),
                None,
                True,
                None),
    'BD': (880,
           '00',
           '0',
           None,
           ('[1-469]\\d{9}|8[0-79]\\d{7,8}|[2-79]\\d{8}|[2-9]\\d{7}|[3-9]\\d{6}|[57-9]\\d{5}',
            (6, 7, 8, 9, 10),
            ()),
           (None,
            ('80[03]\\d{7}', (10,), ()),
            None,
            ('96(?:0[1-69]|1[0-479]|2[278]|3[13-9]|4[0-47-9]|54|6[69]|7[78]|88)\\d{6}', (10,), ()),
            None,
            None,
            None,
            None,
            (('(?:4(?:31\\d\\d|423)|5222)\\d{3}(?:\\d{2})?|8332[6-9]\\d\\d|(?:3(?:03[56]|224)|4(?:22[25]|6'
              '53))\\d{3,4}|(?:3(?:42[47]|529|823)|4(?:027|525|65(?:28|8))|562|6257|7(?:1(?:5[3-5]|6[12]|7'
              '[156]|89)|22[589]56|32|42675|52(?:[25689](?:56|8)|[347]8)|71(?:6[1267]|75|89)|92374)|82(?:2[59]'
              '|32)56|9(?:03[23]56|23(?:256|373)|31|5(?:1|2[4589]56)))\\d{3}|(?:3(?:02[348]|22[35]|324|422'
              ')|4(?:22[67]|32[236-9]|6(?:2[46]|5[57])|953)|5526|6(?:024|6655)|81)\\d{4,5}|(?:2(?:7(?:1[0-'
              '267]|2[0-289]|3[0-29]|4[01]|5[1-3]|6[013]|7[0178]|91)|8(?:0[125]|1[1-6]|2[0157-9]|3[1-69]|41|6['
              '1-35]|7[1-5]|8[1-8]|9[0-6])|9(?:0[0-2]|1[0-4]|2[568]|3[3-6]|5[5-7]|6[0136-9]|7[0-7]|8[014-9]))|'
              '3(?:0(?:2[025-79]|3[2-4])|181|22[12]|32[2356]|824)|4(?:02[09]|22[348]|32[045]|523|6(?:27|54))|6'
              '66(?:22|53)|7(?:22[57-9]|42[56]|82[35])8|8(?:0[124-9]|2(?:181|2[02-4679]8)|4[12]|[5-7]2)|9(?:[0'
              '4]2|2(?:2|328)|81))\\d{4}|(?:2(?:[23]\\d|[45])\\d\\d|3(?:1(?:2[5-7]|[5-7])|425|822)|4(?:033|1\\'
              'd|[257]1|332|4(?:2[246]|5[25])|6(?:2[35]|56|62)|8(?:23|54)|92[2-5])|5(?:02[03489]|22[457]|32[35'
              '-79]|42[46]|6(?:[18]|53)|724|826)|6(?:023|2(?:2[2-5]|5[3-5]|8)|32[3478]|42[34]|52[47]|6(?:[18]|'
              '6(?:2[34]|5[24]))|[78]2[2-5]|92[2-6])|7(?:02|21\\d|[3-589]1|6[12]|72[24])|8(?:217|3[12]|[5-'
              '7]1)|9[24]1)\\d{5}|(?:(?:3[2-8]|5[2-57-9]|6[03-589])1|4[4689][18])\\d{5}|[59]1\\d{5}'),
             (6, 7, 8, 9, 10),
             ()),
            ('(?:1[13-9]|64)\\d{8}|(?:3[78]|44|66)[02-9]\\d{7}', (10,), ())),
           None,
           False,
           None),
    '001/881': (881,
                None,
                None,
                None,
                ('6\\d{9}|[0-36-9]\\d{8}', (9, 10), ()),
                (None, None, None, None, None, None, None, None, None, ('6\\d{9}|[0-36-9]\\d{8}', (9, 10), ())),
                None,
                False,
                None),
    '001/882': (882,
                None,
                None,
                None,
                ('[13]\\d{6}(?:\\d{2,5})?|[19]\\d{7}|(?:[25]\\d\\d|4)\\d{7}(?:\\d{2})?',
                 (7, 8, 9, 10, 11, 12),
                 ()),
                (None,
                 None,
                 None,
                 (('1(?:3(?:0[0347]|[13][0139]|2[035]|4[013568]|6[0459]|7[06]|8[15-8]|9[0689])\\d{4}|6\\d{5'
                   ',10})|(?:345\\d|9[89])\\d{6}|(?:10|2(?:3|85\\d)|3(?:[15]|[69]\\d\\d)|4[15-8]|51)\\d{8}'),
                  (7, 8, 9, 10, 11, 12),
                  ()),
                 None,
                 None,
                 None,
                 ('348[57]\\d{7}', (11,), ()),
                 None,
                 ('342\\d{4}|(?:337|49)\\d{6}|(?:3(?:2|47|7\\d{3})|5(?:0\\d{3}|2[0-2]))\\d{7}',
                  (7, 8, 9, 10, 12),
                  ())),
                None,
                False,
                None),
    '001/883': (883,
                None,
                None,
                None,
                ('(?:[1-4]\\d|51)\\d{6,10}', (8, 9, 10, 11, 12), ()),
                (None,
                 None,
                 None,
                 (('(?:2(?:00\\d\\d|10)|(?:370[1-9]|51\\d0)\\d)\\d{7}|51(?:00\\d{5}|[24-9]0\\d{4,7})|(?:1[0'
                   '-79]|2[24-689]|3[02-689]|4[0-4])0\\d{5,9}'),
                  (8, 9, 10, 11, 12),
                  ()),
                 None,
                 None,
                 None,
                 None,
                 None,
                 None),
                None,
                True,
                None),
    'TW': (886,
           '0(?:0[25-79]|19)',
           '0',
           None,
           ('[2-689]\\d{8}|7\\d{9,10}|[2-8]\\d{7}|2\\d{6}', (7, 8, 9, 10, 11), ()),
           (('20(?:[013-9]\\d\\d|2)\\d{4}', (7, 9), ()),
            ('80[0-79]\\d{6}|800\\d{5}', (8, 9), ()),
            None,
            ('7010(?:[0-2679]\\d|3[0-7]|8[0-5])\\d{5}|70\\d{8}', (10, 11), ()),
            ('99\\d{7}', (9,), ()),
            None,
            ('50[0-46-9]\\d{6}', (9,), ()),
            None,
            (('(?:2[2-8]\\d|370|55[01]|7[1-9])\\d{6}|4(?:(?:0(?:0[1-9]|[2-48]\\d)|1[023]\\d)\\d{4,5}|(?:['
              '239]\\d\\d|4(?:0[56]|12|49))\\d{5})|6(?:[01]\\d{7}|4(?:0[56]|12|24|4[09])\\d{4,5})|8(?:(?:2(?:3'
              '\\d|4[0-269]|[578]0|66)|36[24-9]|90\\d\\d)\\d{4}|4(?:0[56]|12|24|4[09])\\d{4,5})|(?:2(?:2('
              '?:0\\d\\d|4(?:0[68]|[249]0|3[0-467]|5[0-25-9]|6[0235689]))|(?:3(?:[09]\\d|1[0-4])|(?:4\\d|5[0-'
              '49]|6[0-29]|7[0-5])\\d)\\d)|(?:(?:3[2-9]|5[2-8]|6[0-35-79]|8[7-9])\\d\\d|4(?:2(?:[089]\\d|7[1-9'
              '])|(?:3[0-4]|[78]\\d|9[01])\\d))\\d)\\d{3}'),
             (8, 9),
             ()),
            ('(?:40001[0-2]|9[0-8]\\d{4})\\d{3}', (9,), ())),
           None,
           False,
           None),
    '001/888': (888,
                None,
                None,
                None,
                ('\\d{11}', (11,), ()),
                (None, None, None, None, None, None, ('\\d{11}', (11,), ()), None, None, None),
                None,
                True,
                None),
    'MV': (960,
           '0(?:0|19)',
           None,
           None,
           ('(?:800|9[0-57-9]\\d)\\d{7}|[34679]\\d{6}', (7, 10), ()),
           (('900\\d{7}', (10,), ()),
            ('800\\d{7}', (10,), ()),
            None,
            None,
            None,
            None,
            ('4(?:0[01]|50)\\d{4}', (7,), ()),
            None,
            ('(?:3(?:0[0-4]|3[0-59])|6(?:[58][024689]|6[024-68]|7[02468]))\\d{4}', (7,), ()),
            ('(?:46[46]|[79]\\d\\d)\\d{4}', (7,), ())),
           None,
           False,
           None),
    'LB': (961,
           '00',
           '0',
           None,
           ('[27-9]\\d{7}|[13-9]\\d{6}', (7, 8), ()),
           (('9[01]\\d{6}', (8,), ()),
            None,
            ('80\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            ('7(?:62|8[0-6]|9[04-9])\\d{4}|(?:[14-69]\\d|2(?:[14-69]\\d|[78][1-9])|7[2-57]|8[02-9])\\d{5}',
             (7, 8),
             ()),
            ('(?:(?:3|81)\\d|7(?:[01]\\d|6[013-9]|8[7-9]|9[0-4]))\\d{5}', (7, 8), ())),
           None,
           False,
           None),
    'JO': (962,
           '00',
           '0',
           None,
           ('(?:(?:[2689]|7\\d)\\d|32|427|53)\\d{6}', (8, 9), ()),
           (('9\\d{7}', (8,), ()),
            ('80\\d{6}', (8,), ()),
            ('85\\d{6}', (8,), ()),
            None,
            ('70\\d{7}', (9,), ()),
            ('74(?:66|77)\\d{5}', (9,), ()),
            ('8(?:10|8\\d)\\d{5}', (8,), ()),
            None,
            (('87(?:000|90[01])\\d{3}|(?:2(?:6(?:2[0-35-9]|3[0-578]|4[24-7]|5[0-24-8]|[6-8][023]|9[0-3])|7'
              '(?:0[1-79]|10|2[014-7]|3[0-689]|4[019]|5[0-3578]))|32(?:0[1-69]|1[1-35-7]|2[024-7]|3\\d|4[0'
              '-3]|[5-7][023])|53(?:0[0-3]|[13][023]|2[0-59]|49|5[0-35-9]|6[15]|7[45]|8[1-6]|9[0-36-9])|6(?:2('
              '?:[05]0|22)|3(?:00|33)|4(?:0[0-25]|1[2-7]|2[0569]|[38][07-9]|4[025689]|6[0-589]|7\\d|9[0-2]'
              ')|5(?:[01][056]|2[034]|3[0-57-9]|4[178]|5[0-69]|6[0-35-9]|7[1-379]|8[0-68]|9[0239]))|87(?:20|7['
              '078]|99))\\d{4}'),
             (8,),
             ()),
            ('(?:427|7(?:11|[29]\\d|[78][0-25-9]))\\d{6}', (9,), ())),
           None,
           False,
           None),
    'SY': (963,
           '00',
           '0',
           None,
           ('[1-359]\\d{8}|[1-5]\\d{7}', (8, 9), (6, 7)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:1(?:[1478]\\d|[2356])|21\\d|3(?:[13]\\d|4)|4[134]|5[1-3])\\d{6}|2[1-5]\\d{6}', (8, 9), (6, 7)),
            ('(?:50|9[03-689])\\d{7}', (9,), ())),
           None,
           False,
           None),
    'IQ': (964,
           '00',
           '0',
           None,
           ('(?:1|7\\d\\d)\\d{7}|[2-6]\\d{7,8}', (8, 9, 10), (6, 7)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('1\\d{7}|(?:2[13-5]|3[02367]|4[023]|5[03]|6[026])\\d{6,7}', (8, 9), (6, 7)),
            ('7[3-9]\\d{8}', (10,), ())),
           None,
           False,
           None),
    'KW': (965,
           '00',
           None,
           None,
           ('18\\d{5}|(?:[2569]\\d|41)\\d{6}', (7, 8), ()),
           (None,
            ('18\\d{5}', (7,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2(?:[23]\\d\\d|4(?:[1-35-9]\\d|44)|5(?:0[034]|[2-46]\\d|5[1-3]|7[1-7]))\\d{4}', (8,), ()),
            (('(?:41\\d\\d|5(?:(?:[05]\\d|1[0-7]|6[56])\\d|2(?:22|5[25])|7(?:55|77)|88[58]|999)|6(?:(?:0[0346'
              '79]|5[015-9]|6\\d)\\d|1(?:00|11|6[16])|2[26]2|3[36]3|4[46]4|7(?:0[013-9]|[67]\\d)|8[68]8|9(?:'
              '[069]\\d|3[039]))|9(?:(?:[04679]\\d|8[057-9])\\d|1(?:00|1[01]|99)|2(?:00|2\\d)|3(?:00|3[03])|5'
              '(?:00|5\\d)))\\d{4}'),
             (8,),
             ())),
           None,
           False,
           None),
    'SA': (966,
           '00',
           '0',
           None,
           ('(?:[15]\\d|800|92)\\d{7}', (9, 10), (7,)),
           (('925\\d{6}', (9,), ()),
            ('800\\d{7}', (10,), ()),
            ('920\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            ('1(?:1\\d|2[24-8]|3[35-8]|4[3-68]|6[2-5]|7[235-7])\\d{6}', (9,), (7,)),
            ('579[0-8]\\d{5}|5(?:[013-689]\\d|7[0-8])\\d{6}', (9,), ())),
           None,
           False,
           None),
    'YE': (967,
           '00',
           '0',
           None,
           ('(?:1|7\\d)\\d{7}|[1-7]\\d{6}', (7, 8, 9), (6,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('78[0-7]\\d{4}|17\\d{6}|(?:[12][2-68]|3[2358]|4[2-58]|5[2-6]|6[3-58]|7[24-6])\\d{5}', (7, 8), (6,)),
            ('7[01378]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'OM': (968,
           '00',
           None,
           None,
           ('(?:1505|[279]\\d{3}|500)\\d{4}|800\\d{5,6}', (7, 8, 9), ()),
           (('900\\d{5}', (8,), ()),
            ('8007\\d{4,5}|(?:500|800[05])\\d{4}', (7, 8, 9), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            ('2[1-6]\\d{6}', (8,), ()),
            ('(?:1505|90[1-9]\\d)\\d{4}|(?:7[124-9]|9[1-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'PS': (970,
           '00',
           '0',
           None,
           ('[2489]2\\d{6}|(?:1\\d|5)\\d{8}', (8, 9, 10), (7,)),
           (None,
            ('1800\\d{6}', (10,), ()),
            ('1700\\d{6}', (10,), ()),
            None,
            None,
            None,
            None,
            None,
            ('(?:22[2-47-9]|42[45]|82[014-68]|92[3569])\\d{5}', (8,), (7,)),
            ('5[69]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'AE': (971,
           '00',
           '0',
           None,
           ('(?:[4-7]\\d|9[0-689])\\d{7}|800\\d{2,9}|[2-4679]\\d{7}', (5, 6, 7, 8, 9, 10, 11, 12), ()),
           (('900[02]\\d{5}', (9,), ()),
            ('400\\d{6}|800\\d{2,9}', (5, 6, 7, 8, 9, 10, 11, 12), ()),
            ('700[05]\\d{5}', (9,), ()),
            None,
            None,
            None,
            ('600[25]\\d{5}', (9,), ()),
            None,
            ('[2-4679][2-8]\\d{6}', (8,), (7,)),
            ('5[02-68]\\d{7}', (9,), ())),
           None,
           False,
           None),
    'IL': (972,
           '0(?:0|1(?:05|[2-9]))',
           '0',
           None,
           ('1\\d{6}(?:\\d{3,5})?|[57]\\d{8}|[1-489]\\d{7}', (7, 8, 9, 10, 11, 12), ()),
           (('1212\\d{4}|1(?:200|9(?:0[0-2]|19|9\\d))\\d{6}', (8, 10), ()),
            ('1(?:255|80[019]\\d{3})\\d{3}', (7, 10), ()),
            ('1700\\d{6}', (10,), ()),
            (('7(?:280[01]|38(?:[05]\\d|8[0-358])|8(?:33|55|77|81)\\d)\\d{4}|7(?:18|2[23]|3[237]|47|6[258]|7'
              '\\d|82|9[2-9])\\d{6}'),
             (9,),
             ()),
            None,
            None,
            ('1599\\d{6}', (10,), ()),
            ('151\\d{8,9}', (11, 12), ()),
            ('153\\d{8,9}|29[1-9]\\d{5}|(?:2[0-8]|[3489]\\d)\\d{6}', (8, 11, 12), (7,)),
            (('55(?:4(?:0[0-4]|10|6[015-9])|57[0-289]|8[06][0-2])\\d{4}|5(?:(?:[0-2][02-9]|[36]\\d|[49][2-9'
              ']|8[3-7])\\d|5(?:01|2\\d|3[0-3]|4[3-5]|5[0-25689]|6[6-8]|7[0-267]|8[7-9]|9[1-9]))\\d{5}'),
             (9,),
             ())),
           None,
           False,
           (('(\\d{4})(\\d{3})', '125', None, False),
            ('(\\d{4})(\\d{2})(\\d{2})', '121', None, False),
            ('(\\d)(\\d{3})(\\d{4})', '[2-489]', '0\\1', False),
            ('(\\d{2})(\\d{3})(\\d{4})', '[57]', '0\\1', False),
            ('(\\d{4})(\\d{3})(\\d{3})', '12', None, False),
            ('(\\d{4})(\\d{6})', '159', None, False),
            ('(\\d)(\\d{3})(\\d{3})(\\d{3})', '1[7-9]', None, False),
            ('(\\d{3})(\\d{1,2})(\\d{3})(\\d{4})', '15', None, False))),
    'BH': (973,
           '00',
           None,
           None,
           ('[136-9]\\d{7}', (8,), ()),
           (('(?:87|9[0-8])\\d{6}', (8,), ()),
            ('8[02369]\\d{6}', (8,), ()),
            ('84\\d{6}', (8,), ()),
            None,
            None,
            None,
            None,
            None,
            (('(?:1(?:3[1356]|6[0156]|7\\d)\\d|6(?:1[16]\\d|500|6(?:0\\d|3[12]|44|55|7[7-9]|88)|9[69][69])|7('
              '?:[07]\\d\\d|1(?:11|78)))\\d{4}'),
             (8,),
             ()),
            ('(?:3(?:[0-79]\\d|8[0-57-9])\\d|6(?:3(?:00|33|6[16])|441|6(?:3[03-9]|[69]\\d|7[0-689])))\\d{4}',
             (8,),
             ())),
           None,
           False,
           None),
    'QA': (974,
           '00',
           None,
           None,
           ('800\\d{4}|(?:2|800)\\d{6}|(?:0080|[3-7])\\d{7}', (7, 8, 9, 11), ()),
           (None,
            ('800\\d{4}|(?:0080[01]|800)\\d{6}', (7, 9, 11), ()),
            None,
            None,
            None,
            ('2[136]\\d{5}', (7,), ()),
            None,
            None,
            ('4(?:(?:[014]\\d\\d|999)\\d|2022)\\d{3}', (8,), ()),
            ('[35-7]\\d{7}', (8,), ())),
           None,
           False,
           None),
    'BT': (975,
           '00',
           None,
           None,
           ('[178]\\d{7}|[2-8]\\d{6}', (7, 8), (6,)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:2[3-6]|[34][5-7]|5[236]|6[2-46]|7[246]|8[2-4])\\d{5}', (7,), (6,)),
            ('(?:1[67]|[78]7)\\d{6}', (8,), ())),
           None,
           False,
           None),
    'MN': (976,
           '001',
           '0',
           None,
           ('[12]\\d{7,9}|[5-9]\\d{7}', (8, 9, 10), (4, 5, 6)),
           (None,
            None,
            None,
            ('712[0-79]\\d{4}|7(?:1[013-9]|[5-79]\\d)\\d{5}', (8,), ()),
            None,
            None,
            None,
            None,
            (('[12](?:2[1-3]|(?:3[2-8]|4[2-68]|5[1-4689])\\d)\\d{5,6}|7(?:0(?:[0-5]\\d|7[078]|80)|128)\\d{4}|'
              '[12]27\\d{6}|(?:11|2[16]|5[368])\\d{6}'),
             (8, 9, 10),
             (4, 5, 6)),
            ('(?:87[01]|92[0139])\\d{5}|(?:5[05]|6[069]|7[28]|8[0135689]|9[013-9])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'NP': (977,
           '00',
           '0',
           None,
           ('(?:1\\d|9)\\d{9}|[1-9]\\d{7}', (8, 10, 11), (6, 7)),
           (None,
            ('1(?:66001|800\\d\\d)\\d{5}', (11,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:1[0-6]\\d|99[02-6])\\d{5}|(?:2[13-79]|3[135-8]|4[146-9]|5[135-7]|6[13-9]|7[15-9]|8[1-46-9'
              ']|9[1-7])[2-6]\\d{5}'),
             (8,),
             (6, 7)),
            ('9(?:00|6[0-3]|7[0-24-6]|8[0-24-68])\\d{7}', (10,), ())),
           None,
           False,
           None),
    '001/979': (979,
                None,
                None,
                None,
                ('[1359]\\d{8}', (9,), (8,)),
                (('[1359]\\d{8}', (9,), (8,)), None, None, None, None, None, None, None, None, None),
                None,
                True,
                None),
    'TJ': (992,
           '810',
           None,
           None,
           ('(?:[0-57-9]\\d|66)\\d{7}', (9,), (3, 5, 6, 7)),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            ('(?:3(?:1[3-5]|2[245]|3[12]|4[24-7]|5[25]|72)|4(?:46|74|87))\\d{6}', (9,), (3, 5, 6, 7)),
            (('(?:33[03-9]|4(?:1[18]|4[02-479])|81[1-9])\\d{6}|(?:[09]\\d|1[0-27-9]|2[0-27]|3[08]|40|5[05]|'
              '66|7[0157-9]|8[07-9])\\d{7}'),
             (9,),
             ())),
           None,
           False,
           None),
    'TM': (993,
           '810',
           '8',
           None,
           ('[1-7]\\d{7}', (8,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:1(?:2\\d|3[1-9])|2(?:22|4[0-35-8])|3(?:22|4[03-9])|4(?:22|3[128]|4\\d|6[15])|5(?:22|5[7-9'
              ']|6[014-689]))\\d{5}'),
             (8,),
             ()),
            ('(?:6\\d|7[12])\\d{6}', (8,), ())),
           None,
           False,
           None),
    'AZ': (994,
           '00',
           '0',
           None,
           ('365\\d{6}|(?:[124579]\\d|60|88)\\d{7}', (9,), (7,)),
           (('900200\\d{3}', (9,), ()),
            ('88\\d{7}', (9,), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:2[12]428|3655[02])\\d{4}|(?:2(?:22[0-79]|63[0-28])|3654)\\d{5}|(?:(?:1[28]|46)\\d|2(?:[014'
              '-6]2|[23]3))\\d{6}'),
             (9,),
             (7,)),
            ('36554\\d{4}|(?:[16]0|4[04]|5[015]|7[07]|99)\\d{7}', (9,), ())),
           None,
           False,
           None),
    'GE': (995,
           '00',
           '0',
           None,
           ('(?:[3-57]\\d\\d|800)\\d{6}', (9,), (6, 7)),
           (None,
            ('800\\d{6}', (9,), ()),
            None,
            ('70[67]\\d{6}', (9,), ()),
            None,
            None,
            None,
            None,
            ('(?:3(?:[256]\\d|4[124-9]|7[0-4])|4(?:1\\d|2[2-7]|3[1-79]|4[2-8]|7[239]|9[1-7]))\\d{6}',
             (9,),
             (6, 7)),
            (('5(?:(?:(?:0555|1(?:[17]77|555))[5-9]|757(?:7[7-9]|8[01]))\\d|22252[0-4])\\d\\d|5(?:0(?:0(?:1['
              '09]|70)|505)|1(?:0[01]0|1(?:07|33|51))|2(?:0[02]0|2[25]2)|3(?:0[03]0|3[35]3)|4(?:0[04]0|411)|52'
              '22|9000)[0-4]\\d{3}|(?:5(?:0(?:0(?:0\\d|1[12]|2[02]|3[0-6]|4[04]|5[05]|77|88|9[09])|(?:[14]\\'
              'd|77)\\d|22[02]|888)|1(?:1(?:[03][01]|[124]\\d|5[02-6]|7[0-6])|4\\d\\d)|2(?:228|555)|3555|4(?:'
              '4(?:[02-9]\\d|14)|555)|5(?:[0157-9]\\d\\d|200|333|4(?:44|55))|6[89]\\d\\d|7(?:(?:[0147-9]\\'
              'd|22)\\d|5(?:00|[57]5))|8(?:0(?:[018]\\d|2[0-4])|5(?:55|8[89])|8(?:55|88))|9(?:090|[1-35-9]\\'
              'd\\d))|790\\d\\d)\\d{4}'),
             (9,),
             ())),
           None,
           False,
           None),
    'KG': (996,
           '00',
           '0',
           None,
           ('8\\d{9}|[235-9]\\d{8}', (9, 10), (5, 6)),
           (None,
            ('800\\d{6,7}', (9, 10), ()),
            None,
            None,
            None,
            None,
            None,
            None,
            (('312(?:5[0-79]\\d|9(?:[0-689]\\d|7[0-24-9]))\\d{3}|(?:3(?:1(?:2[0-46-8]|3[1-9]|47|[56]\\d)|2(?:'
              '22|3[0-479]|6[0-7])|4(?:22|5[6-9]|6\\d)|5(?:22|3[4-7]|59|6\\d)|6(?:22|5[35-7]|6\\d)|7(?:22|3['
              '468]|4[1-9]|59|[67]\\d)|9(?:22|4[1-8]|6\\d))|6(?:09|12|2[2-4])\\d)\\d{5}'),
             (9,),
             (5, 6)),
            (('312(?:58\\d|973)\\d{3}|(?:2(?:0[0-35]|2\\d)|5[0-24-7]\\d|600|7(?:[07]\\d|55)|88[08]|9(?:12|9[05'
              '-9]))\\d{6}'),
             (9,),
             ())),
           None,
           False,
           None),
    'UZ': (998,
           '00',
           None,
           None,
           ('(?:20|33|[5-9]\\d)\\d{7}', (9,), ()),
           (None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            (('(?:55\\d\\d|6(?:1(?:22|3[124]|4[1-4]|5[1-3578]|64)|2(?:22|3[0-57-9]|41)|5(?:22|3[3-7]|5[024-'
              '8])|[69]\\d\\d|7(?:[23]\\d|7[69]))|7(?:[168]\\d\\d|2(?:22|3[13-57-9]|4[1-3579]|5[14])|3(?:'
              '2\\d|3[1578]|4[1-35-7]|5[1-57]|61)|4(?:2\\d|3[1-579]|7[1-79])|5(?:22|5[1-9]|6[1457])|9(?:22|'
              '5[1-9])))\\d{5}'),
             (9,),
             ()),
            (('(?:(?:[25]0|33|8[078]|9[0-57-9])\\d{3}|6(?:1(?:2(?:2[01]|98)|35[0-4]|50\\d|61[23]|7(?:[01][0'
              '17]|4\\d|55|9[5-9]))|2(?:(?:11|7\\d)\\d|2(?:[12]1|9[01379])|5(?:[126]\\d|3[0-4]))|5(?:19[01]|2'
              '(?:27|9[26])|(?:30|59|7\\d)\\d)|6(?:2(?:1[5-9]|2[0367]|38|41|52|60)|(?:3[79]|9[0-3])\\d|4(?:5'
              '6|83)|7(?:[07]\\d|1[017]|3[07]|4[047]|5[057]|67|8[0178]|9[79]))|7(?:2(?:24|3[237]|4[5-9]|7['
              '15-8])|5(?:7[12]|8[0589])|7(?:0\\d|[39][07])|9(?:0\\d|7[079])))|7(?:[07]\\d{3}|2(?:2(?:2[79]|'
              '95)|3(?:2[5-9]|6[0-6])|57\\d|7(?:0\\d|1[17]|2[27]|3[37]|44|5[057]|66|88))|3(?:2(?:1[0-6]|21|'
              '3[469]|7[159])|(?:33|9[4-6])\\d|5(?:0[0-4]|5[579]|9\\d)|7(?:[0-3579]\\d|4[0467]|6[67]|8[078])'
              ')|4(?:2(?:29|5[0257]|6[0-7]|7[1-57])|5(?:1[0-4]|8\\d|9[5-9])|7(?:0\\d|1[024589]|2[0-27]|3[01'
              '37]|[46][07]|5[01]|7[5-9]|9[079])|9(?:7[015-9]|[89]\\d))|5(?:112|2(?:0\\d|2[29]|[49]4)|3[156'
              '8]\\d|52[6-9]|7(?:0[01578]|1[017]|[23]7|4[047]|[5-7]\\d|8[78]|9[079]))|9(?:22[128]|3(?:2[0-4'
              ']|7\\d)|57[02569]|7(?:2[05-9]|3[37]|4\\d|60|7[2579]|87|9[07]))))\\d{4}'),
             (9,),
             ())),
           None,
           False,
           None),
}


# --- wiring that needs the data above ----------------------------------------------------------------------------
_PHONE_MIN_DIGITS = _phone_min_digits()

DEFAULT_REDACTOR = Redactor()
"""Shared instance: every entity, Presidio's default score threshold (0), context words on."""
