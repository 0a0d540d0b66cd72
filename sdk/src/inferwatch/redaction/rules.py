"""The default rules: entity names, the policy string, the secret recognizers and Presidio's PII patterns.

The PII patterns and scores are those of presidio-analyzer 2.2.366's predefined recognizers
(``tests/sdk/test_redaction.py`` compares them); :mod:`.recognizers` applies them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._data import _URL_TLDS
from .validators import jwt_header_valid

POLICY = "inferwatch-redact/4"
"""Name/version of the default rules (stored with every prompt log row); bumped whenever a rule changes."""

PII_ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS", "PHONE_NUMBER", "US_SSN", "CREDIT_CARD", "IP_ADDRESS", "IBAN_CODE", "URL", "CRYPTO",
)  # fmt: skip
SECRET_ENTITIES: frozenset[str] = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_KEY", "GITHUB_TOKEN", "SLACK_TOKEN",
    "GOOGLE_API_KEY", "STRIPE_API_KEY", "HUGGINGFACE_TOKEN", "JWT", "BEARER_TOKEN", "PASSWORD",
    "INFERWATCH_API_KEY", "PRIVATE_KEY",
})  # fmt: skip
NER_ENTITIES: tuple[str, ...] = ("PERSON", "LOCATION")
DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR")  # PhoneRecognizer's


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


_KEYCH = r"[A-Za-z0-9_-]"
_AWS_SECRET = r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
# a PEM/PGP private key, BEGIN to END (its newlines, or escaped "\\n"s, inside; the search for END stops at the
# next BEGIN, so many BEGINs cost linear time); with no END line (cut off): the lines after BEGIN that are base64
# of 16+ characters or the headers of encrypted and PGP keys
_PEM_LABEL = r"[A-Z0-9 ]{0,24}PRIVATE KEY(?: BLOCK)?-----"
_PEM_BREAK = r"(?:\s|\\[nrt])+"
_PEM = (rf"-----BEGIN {_PEM_LABEL}(?:(?:(?!-----(?:BEGIN|END) )[\s\S]){{0,16384}}-----END {_PEM_LABEL}|(?:{_PEM_BREAK}"
        rf"(?:[A-Za-z0-9+/=]{{16,}}|(?:Proc-Type|DEK-Info|Version|Comment|Hash): [^\r\n\\\"]{{1,256}}))+)")
# the password of a URI's user info (scheme://user:password@host): up to the last '@' before the host (a
# password written with a raw '@'); '/', '?', '#' and whitespace end the authority
_URI_USER = r"[^\s/?#@:\"'<>]{0,256}"
_URI_PASSWORD = r"(?!<[A-Z_]+>@)(?:[^\s/?#@\"'\\]|@(?=[^\s/?#\"'\\]{0,256}@)){1,256}(?=@[^\s@])"
SECRET_RECOGNIZERS: tuple[SecretRecognizer, ...] = (
    # each value starts with its literal prefix (so ``re`` can skip ahead to it) and checks the character before
    # the prefix with a lookbehind placed after it
    SecretRecognizer("ANTHROPIC_API_KEY", (
        SecretPattern("anthropic", rf"sk-ant-(?<!{_KEYCH}sk-ant-){_KEYCH}{{20,}}", 1.0),), ("sk-ant-",)),
    SecretRecognizer("OPENAI_API_KEY", (
        SecretPattern("openai", rf"sk-(?<!{_KEYCH}sk-)(?!ant-|lf-)(?:proj-|svcacct-|admin-)?{_KEYCH}{{20,}}", 0.95),),
        ("sk-",)),
    # inferwatch's own keys: iwk_<key id>_<secret>, and the secret re-spelt for Langfuse clients (sk-lf-<secret>;
    # the public half pk-lf-<key id> is the key id, public like the listing of keys, and stays)
    SecretRecognizer("INFERWATCH_API_KEY", (
        SecretPattern("inferwatch", rf"iwk_(?<!{_KEYCH}iwk_)[A-Za-z0-9]{{6,32}}_{_KEYCH}{{16,}}", 1.0),
        SecretPattern("inferwatch_langfuse", rf"sk-lf-(?<!{_KEYCH}sk-lf-){_KEYCH}{{20,}}", 1.0)),
        ("iwk_", "sk-lf-")),
    SecretRecognizer("AWS_ACCESS_KEY_ID", (
        SecretPattern("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)(?<!\w....)[A-Z2-7]{16}\b", 0.95),),
        ("AKIA", "ASIA", "ABIA", "ACCA")),
    # a 40-character value is ambiguous alone (git SHAs, base64): it counts after a key name (aws_secret_access_key,
    # AWS_SECRET_KEY, "SecretAccessKey", secret_key, "Secret access key") or right after an access key id; next
    # to an id it must hold an upper- and a lower-case letter (a SHA-1 in hex holds one case only)
    SecretRecognizer("AWS_SECRET_KEY", (
        SecretPattern("aws_secret_access_key", _AWS_SECRET, 0.9, prefix=(
            r"(?i:aws[_.-]?secret(?:[_.-]?access)?(?:[_.-]?key)?|secret[_. -]?(?:access[_. -]?)?key)"
            r"(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?")),
        SecretPattern("aws_key_pair", rf"(?=[0-9/+a-z]{{0,39}}[A-Z])(?=[0-9/+A-Z]{{0,39}}[a-z]){_AWS_SECRET}", 0.8,
                      prefix=r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?:\\?[\"']|\\[tn]|[\s,:;|=])+")),
        ("aws", "secret", "akia", "asia", "abia", "acca"), fold=True),
    SecretRecognizer("PRIVATE_KEY", (SecretPattern("pem_private_key", _PEM, 1.0),), ("-----BEGIN ",)),
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
                      prefix=r"(?i:pass(?:word|wd)|pwd|secret)(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"),
        SecretPattern("uri_password", _URI_PASSWORD, 0.9, prefix=rf"://(?<=[A-Za-z0-9]://){_URI_USER}:")),
        ("pass", "pwd", "secret", "://"), fold=True),
)  # fmt: skip

ENTITIES: tuple[str, ...] = PII_ENTITIES + tuple(r.entity for r in SECRET_RECOGNIZERS)
ALL_ENTITIES: frozenset[str] = frozenset(ENTITIES)
PLACEHOLDERS: dict[str, str] = {entity: f"<{entity}>" for entity in (*ENTITIES, *NER_ENTITIES)}


# --- Presidio's PII patterns ------------------------------------------------------------------------------------
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
