"""JSON documents are redacted value by value: keys and structure stay, so the result is a JSON document with
exactly the same keys.

Why: captured content is mostly JSON (message lists, OpenInference's flattened messages rebuilt into objects,
tool arguments). Read as prose, a key such as ``message.contents.0.message_content.text`` holds the "URL"
``contents.0.me``, and its placeholder broke both the key and the document. Here only string values and numbers
are handed to the redactor (a number whose text holds a finding becomes the redacted string); ``true``,
``false`` and ``null`` stay. The redactor first reads the document whole, and keeps that result when every key
and the structure came through (:func:`same_keys`), as they do unless a finding reached into a key. :meth:`.redactor.Redactor.redact` calls this only for a text that starts with
``{`` or ``[`` (after whitespace), so other text pays one character test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

#: Redacts one leaf's text; the second argument is the key the value sits under (None at the top or in a list
#: at the top), so key-value secrets (``"password": "..."``) are still found.
RedactLeaf = Callable[[str, "str | None"], str]

_DOCUMENT_START = re.compile(r"\s*[\[{]")


def looks_like_document(text: str) -> bool:
    """Whether ``text`` starts with ``{`` or ``[`` after whitespace (the cheap test before parsing)."""
    first = text[:1]
    if first == "{" or first == "[":
        return True
    return first.isspace() and _DOCUMENT_START.match(text) is not None


def parse_document(text: str) -> dict[str, Any] | list[Any] | None:
    """The JSON object or array ``text`` holds, or None when it is not one (prose, invalid or cut-off JSON, a
    number too long for ``int``, nesting deeper than the parser's recursion limit)."""
    if not looks_like_document(text):
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, (dict, list)) else None


def redact_values(value: Any, redact_leaf: RedactLeaf, key: str | None = None) -> tuple[Any, bool]:
    """``value`` with every string and number replaced by ``redact_leaf(text, key)``, and whether anything
    changed. Containers are copied only where something changed; a list's items get the key of the list.
    May raise RecursionError on very deep documents (the caller falls back to the text)."""
    kind = type(value)
    if kind is str:
        redacted = redact_leaf(value, key)
        return (redacted, True) if redacted != value else (value, False)
    if kind is dict:
        out: dict[str, Any] = {}
        changed = False
        for k, v in value.items():
            new, c = redact_values(v, redact_leaf, k)
            out[k] = new
            changed = changed or c
        return (out, True) if changed else (value, False)
    if kind is list:
        items = []
        changed = False
        for v in value:
            new, c = redact_values(v, redact_leaf, key)
            items.append(new)
            changed = changed or c
        return (items, True) if changed else (value, False)
    if kind is int or kind is float:
        text = json.dumps(value)  # as the document wrote it (up to float formatting): 4111111111111111
        redacted = redact_leaf(text, key)
        return (redacted, True) if redacted != text else (value, False)
    return value, False  # true, false, null


def same_keys(before: Any, after: Any) -> bool:
    """Whether ``after`` is a document with the keys and structure of ``before`` (values may differ, and a number
    may have become a string)."""
    if type(before) is dict:
        return (type(after) is dict and list(before) == list(after)
                and all(same_keys(v, after[k]) for k, v in before.items()))
    if type(before) is list:
        return type(after) is list and len(before) == len(after) and all(map(same_keys, before, after))
    return type(after) not in (dict, list)


def dump_document(document: Any) -> str:
    """Compact JSON of a redacted document. Characters beyond ASCII stay as they are, except when the document
    holds a lone surrogate (it was written as an escape, and only an escape keeps the text encodable as UTF-8)."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(document, separators=(",", ":"))
    return text
