"""The recognizers: Presidio's patterns (:mod:`.rules`) applied to a text only where they can match, which
gives what ``finditer`` over the whole text gives.

Where a match can start comes from the text's :class:`.scan._Scan` (digit runs, IBAN starts, long alphanumeric
runs, phone zones) or from cheap tests: ``str.find`` of a secret's literals, '@' (e-mail), '.' followed by a
letter (URLs), '::' or six close colons (IPv6). Each pattern is then anchored there (secrets at their literals,
quoted URLs at their quotes). The results are raw: context words score them later (:mod:`.context`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ._data import _URL_TLDS
from .findings import _R
from .phones.matcher import _PhoneMatcher
from .rules import (
    _CREDIT_CARD_RX,
    _CRYPTO_RX,
    _EMAIL_RX,
    _F,
    _IBAN_RX,
    _IP_PATTERNS,
    _SSN_PATTERNS,
    SECRET_RECOGNIZERS,
    SecretRecognizer,
    _url_patterns,
)
from .scan import _MASK_ALNUM, _Scan
from .validators import crypto_valid, email_domain_valid, iban_valid, ip_valid, luhn_valid, ssn_valid


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
                elif not strict and "/" in text[m.start():at]:
                    # a path before the address ("GET /users/jane@example.com"): Presidio's check reads
                    # "users/jane@example.com" as a URL and drops it; the address after the last '/' is checked
                    after = _EMAIL.match(text, text.rfind("/", m.start(), at) + 1)
                    if after is not None and email_domain_valid(after.group(), reserved=True):
                        out.append(_R("EMAIL_ADDRESS", after.start(), after.end(), 1.0, "email"))
                        m = after
                pos = m.end()
                break
        else:
            pos = at + 1


_EMAIL_DOMAIN = re.compile(r"\w+(?:-+\w+)*(?:\.\w+(?:-+\w+)*)+\b", _F)


# URL: Presidio's four patterns. "Non schema URL" has no anchor at all (at every character it tries a run of
# [a-z0-9.-] and backtracks through ~670 TLD alternatives), so it is only tried at the start of runs that contain
# '.' followed by a letter: a match starts inside such a run, and a run shorter than 254 characters that has no
# match at its start has none further in (every match from later in the run is reachable from its start).
# By default (not ``strict``) a match without scheme that has a label of one or two digits after its first is no
# URL: it is a dotted path with an index ("messages.0.name"; "contents.0.me" in "contents.0.message_content",
# the key of a flattened attribute), while hosts keep theirs ("mail.163.com").
_URL_PATTERNS: tuple[tuple[str, re.Pattern[str], float], ...] = ()
_URL_DOT_LETTER = re.compile(r"\.[a-z]", _F)
_URL_RUN_END = re.compile(r"[a-z0-9.\-]*", _F)
_INDEX_LABEL = re.compile(r"\.\d{1,2}\.")


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


def _dotted_index(host: str) -> bool:
    """Whether a URL without scheme is a dotted path with an index: a label of one or two digits after the first
    ("items.0.name"; hosts such as "mail.163.com" keep theirs)."""
    path = host.find("/")
    return _INDEX_LABEL.search(host, 0, len(host) if path < 0 else path) is not None


def _urls(scan: _Scan, strict: bool = True) -> list[_R]:
    """Presidio's four URL patterns (without scheme: no dotted index unless ``strict``). Each match holds a host, a
    run of [a-z0-9.-] with '.' and a TLD, so there is none without such a run (``_url_runs``); a quoted match
    starts at the quote right before a run (or before "http(s)://" right before one), so it is tried only there.
    A match dropped as a dotted index still moves the scan past it, as ``finditer`` would."""
    text = scan.text
    runs = _url_runs(text)
    if not runs:
        return []
    out: list[_R] = []
    (_, standard, s_std), (_, non_schema, s_non), (_, quoted, s_q), (_, quoted_non, s_qn) = _url_compiled()
    if _literal("://").search(text) is not None:
        out += [_R("URL", m.start(), m.end(), s_std, "url") for m in standard.finditer(text)]
    if '"' in text or "'" in text:
        schema_quotes = sorted(q for p, _ in runs for q in (p - 9, p - 8) if q >= 0 and text[q] in "\"'"
                               and text.startswith("://", p - 3))
        out += [_R("URL", m.start(), m.end(), s_q, "url") for m in _matches_at(quoted, text, schema_quotes)]
        plain_quotes = [p - 1 for p, _ in runs if p > 0 and text[p - 1] in "\"'"]
        out += [_R("URL", m.start(), m.end(), s_qn, "url") for m in _matches_at(quoted_non, text, plain_quotes)
                if strict or not _dotted_index(m.group(1))]
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
                if strict or not _dotted_index(m.group()):
                    out.append(_R("URL", m.start(), m.end(), s_non, "url"))
                pos = p = m.end()  # a match ends inside its run only when its TLD does (then no path follows)
        else:
            pos = _urls_in_long_run(text, p, run_end, non_schema, s_non, out, strict)
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
                      out: list[_R], strict: bool = True) -> int:
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
        if strict or not _dotted_index(m.group()):
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
    if _literal("::").search(text) is None and not _six_close_colons(text):
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
    return text.count(":") >= 6 and _CLOSE_COLONS.search(text) is not None


_CLOSE_COLONS = re.compile(":(?:[^:]{0,4}:){5}")  # 6 colons, at most 4 other characters between neighbours


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
    starts: list[int] = []
    if recognizer.fold:
        haystack = scan.folded
        if haystack is None:  # lower-casing moved characters: scan the text itself
            scan.secret_hits.add(recognizer.entity)
            return _secret_results(scan.text, recognizer, None)
        for literal in recognizer.literals:
            search = _literal(literal).search
            m = search(haystack)
            while m is not None:
                starts.append(m.start())
                m = search(haystack, m.start() + 1)
    else:
        hits = scan.literal_starts()  # (all the case-sensitive literals at once)
        for literal in recognizer.literals:
            starts += hits.get(literal, ())
    if not starts:
        return []
    scan.secret_hits.add(recognizer.entity)
    starts.sort()
    return _secret_results(scan.text, recognizer, starts)


_LITERAL_RX: dict[str, re.Pattern[str]] = {}


def _literal(literal: str) -> re.Pattern[str]:
    """A pattern of ``literal`` alone: its ``search`` finds what ``str.find`` finds, faster for the 2-6 character
    literals here on CPython 3.11 (most texts hold none, so the scan is most of the cost; see bench/README)."""
    rx = _LITERAL_RX.get(literal)
    if rx is None:
        rx = _LITERAL_RX[literal] = re.compile(re.escape(literal))
    return rx


def _common_substring(literals: Sequence[str]) -> str:
    """The longest substring all of ``literals`` hold ('' if none)."""
    first = min(literals, key=len)
    for size in range(len(first), 0, -1):
        for k in range(len(first) - size + 1):
            part = first[k:k + size]
            if all(part in literal for literal in literals):
                return part
    return ""


_AWS_VALUE_CHARS = bytes(ord("a") if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "/+") else ord(" ")
                         for c in range(256))
_AWS_VALUE_RUN = b" " + b"a" * 40 + b" "


def _aws_secret_possible(scan: _Scan) -> bool:
    """Whether the text holds what every AWS secret key match ends with: exactly 40 characters of
    ``[A-Za-z0-9/+]`` with none of them on either side (``rules._AWS_SECRET``). One ``translate`` and one ``find``
    over the UTF-8 bytes (a character beyond ASCII becomes bytes outside the class, as it is outside it), where
    the recognizer's six case-insensitive literals cost a ``find`` each."""
    marked = scan.text.encode("utf-8", "surrogatepass").translate(_AWS_VALUE_CHARS)
    return _AWS_VALUE_RUN in b" " + marked + b" "


#: entity -> a necessary condition for any match, cheaper than the recognizer's literals (see Redactor._raw)
_SECRET_PRECHECKS = {"AWS_SECRET_KEY": _aws_secret_possible}

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
