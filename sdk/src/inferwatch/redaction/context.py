"""Context words: Presidio's ``LemmaContextAwareEnhancer`` over spaCy tokens whose lemma is the lower-case text.

A finding whose entity has one of its context words among the keywords just before it (or in the first keyword
from its own token on) gains 0.35, to at least 0.4 and at most 1.0."""

from __future__ import annotations

import re
import unicodedata

from ._data import _STOP_WORDS
from .findings import _R
from .rules import SECRET_RECOGNIZERS

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
    **{r.entity: r.context for r in SECRET_RECOGNIZERS},
}

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
