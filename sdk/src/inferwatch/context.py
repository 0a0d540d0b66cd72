"""Tags and experiment assignment, carried by contextvars (architecture §4 rule 6: no magic keyword arguments).

``with inferwatch.tags(feature="search", user_id=uid):`` applies to every call made inside, including calls in
tasks and threads started with a copied context, and it leaves provider helpers such as ``.stream()`` alone.
User ids are HMAC-SHA256 hashed the moment they enter: the raw id is never stored, so it cannot leak into a span.

Experiment assignment is deterministic and sticky: ``sha256("<user_id>:<experiment>")`` read as a number in
[0, 1) falls into one variant's slice of the cumulative weights, so the same user always gets the same variant,
in every process, with no state.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Iterator, Mapping

from . import semconv as sc

_EMPTY: Mapping[str, str] = MappingProxyType({})
_current: ContextVar[Mapping[str, str]] = ContextVar("inferwatch_tags", default=_EMPTY)
_raw_user: ContextVar[str | None] = ContextVar("inferwatch_user_id", default=None)  # only for assignment

_hash_key: bytes = secrets.token_bytes(32)  # replaced by init(user_hash_key=...)

# tag name -> span attribute
TAG_ATTRIBUTES = {
    "feature": sc.FEATURE,
    "prompt_template": sc.PROMPT_TEMPLATE,
    "template_version": sc.PROMPT_VERSION,
    "experiment": sc.EXPERIMENT,
    "variant": sc.VARIANT,
    "user_hash": sc.USER_HASH,
}


def set_hash_key(key: str | bytes | None) -> None:
    """Use the deployment's key (so hashes are joinable across processes); ``None`` keeps a random one."""
    global _hash_key
    if key:
        _hash_key = key.encode() if isinstance(key, str) else key


def hash_user_id(user_id: str) -> str:
    """Hex HMAC-SHA256 of a user id with the deployment key."""
    return hmac.new(_hash_key, str(user_id).encode(), hashlib.sha256).hexdigest()


def current_tags() -> Mapping[str, str]:
    """Tags in effect here (tag name -> value; the user appears only as ``user_hash``)."""
    return _current.get()


@contextmanager
def tags(*, feature: str | None = None, user_id: str | None = None, prompt_template: str | None = None,
         template_version: str | None = None) -> Iterator[None]:
    """Tag every LLM call made inside the block; nested blocks add to or override outer ones."""
    merged = dict(_current.get())
    for name, value in (("feature", feature), ("prompt_template", prompt_template),
                        ("template_version", template_version)):
        if value is not None:
            merged[name] = str(value)
    user_token = None
    if user_id is not None:
        merged["user_hash"] = hash_user_id(user_id)
        user_token = _raw_user.set(str(user_id))
    token = _current.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _current.reset(token)
        if user_token is not None:
            _raw_user.reset(user_token)


def bucket(user_id: str, experiment: str) -> float:
    """The user's fixed position in [0, 1) for this experiment."""
    digest = hashlib.sha256(f"{user_id}:{experiment}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign(user_id: str, experiment: str, variants: Mapping[str, float]) -> str:
    """The variant of ``user_id``: its bucket against the cumulative normalised weights (in the given order)."""
    if not variants:
        raise ValueError("an experiment needs at least one variant")
    total = float(sum(variants.values()))
    if total <= 0 or any(w < 0 for w in variants.values()):
        raise ValueError("variant weights must be non-negative and not all zero")
    point = bucket(user_id, experiment) * total
    cumulative = 0.0
    name = ""
    for name, weight in variants.items():
        cumulative += weight
        if point < cumulative:
            return name
    return name  # rounding at the very top of the range


@contextmanager
def experiment(name: str, variants: Mapping[str, float], *, user_id: str | None = None) -> Iterator[str]:
    """Assign the current user (``user_id`` or the one from :func:`tags`) and tag calls inside with the variant.

    Yields the variant name so the app can act on it::

        with inferwatch.tags(user_id=uid), inferwatch.experiment("prompt-v3", {"A": 0.5, "B": 0.5}) as v:
            prompt = PROMPTS[v]
    """
    uid = user_id if user_id is not None else _raw_user.get()
    if uid is None:
        raise ValueError(f"experiment {name!r} needs a user: pass user_id= or enter inferwatch.tags(user_id=...)")
    variant = assign(str(uid), name, variants)
    merged = dict(_current.get())
    merged["experiment"], merged["variant"] = name, variant
    if user_id is not None:
        merged["user_hash"] = hash_user_id(user_id)
    token = _current.set(MappingProxyType(merged))
    try:
        yield variant
    finally:
        _current.reset(token)


def tag_attributes() -> dict[str, str]:
    """Current tags as span attributes."""
    return {TAG_ATTRIBUTES[k]: v for k, v in _current.get().items()}
