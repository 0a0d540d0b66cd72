"""The checks a pattern's match must pass to be a finding: Presidio's ``validate_result``/``invalidate_result``
of each recognizer (Luhn, SSN ranges, base58check/bech32, IBAN mod-97 and country formats, ``ipaddress``, e-mail
domains against the public-suffix list) and the JWT header check."""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import json
import re

from ._data import _IBAN_FORMATS, _PSL_TLDS, _PSL_WILDCARD_TLDS


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


def ip_valid(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return True


def email_domain_valid(text: str, *, reserved: bool = False) -> bool:
    """Presidio's EmailRecognizer.validate_result: ``tldextract.extract(text).fqdn != ""`` with the bundled
    public-suffix snapshot (ICANN section), reduced to the TLD (see "Known differences" in
    :mod:`inferwatch.redaction`). ``reserved``: also accept the reserved and internal TLDs of
    :data:`RESERVED_TLDS`."""
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


def jwt_header_valid(token: str) -> bool:
    """The first part of ``token`` is base64url of a JSON object with an ``alg`` member (a real JWT header)."""
    head = token.split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return isinstance(header, dict) and "alg" in header
