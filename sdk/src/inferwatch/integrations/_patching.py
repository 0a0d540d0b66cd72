"""Installing a provider's wrappers, undoing them, and what every wrapper asks before it records.

Patching: :func:`patch_classes` (``instrument_*``) and :class:`ClientWraps` (``wrap_*``) install wrappers made by a
provider's :data:`Factory` and register how to undo them (``integrations.register_undo``). Undoing restores the
original attribute when ours is still the one installed; if something else was patched on top of ours meanwhile,
ours is switched off instead (its :class:`Switch`: it calls straight through), so their patch keeps working.

Call-through checks: :func:`inactive` is the first thing every wrapper asks. No pipeline (before ``init()``), a
raw or streaming *response* wrapper (``with_raw_response`` / ``with_streaming_response``: not recorded), or a call
made from inside another recorded call of ours (``wrap_*`` on a client whose class is also instrumented) means
"call straight through".
"""

from __future__ import annotations

import _thread
import importlib
import itertools
import os
import threading
import types
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import client
from . import register_undo, uninstrument

RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"  # set by both SDKs' with_raw_response / with_streaming_response

# The ids (``get_ident()``) of the threads inside a recorded provider call right now (see :func:`inactive`).
# A set of thread ids rather than a ContextVar or a ``threading.local``: the flag is only set around synchronous
# code, where no other task can run, and a ContextVar's set/reset (or a thread-local's lookup) costs the hot path
# far more than a set lookup. With gevent or eventlet ``get_ident`` is the greenlet's id when the app
# monkey-patches before importing inferwatch, as both libraries ask.
_inside: set[int] = set()
get_ident = _thread.get_ident


def _only_this_thread() -> None:
    """In a forked child: the other threads' marks go (their ids are reused for new threads); a fork made inside
    a recorded call keeps the forking thread's."""
    this = get_ident()
    inside = this in _inside
    _inside.clear()
    if inside:
        _inside.add(this)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_only_this_thread)


def inactive(kwargs: Mapping[str, Any]) -> bool:
    """True when a patched function must call straight through (see the module docstring)."""
    if client._pipeline is None or get_ident() in _inside:  # client.get_pipeline(), read directly (every call)
        return True
    headers = kwargs.get("extra_headers")
    if headers:
        try:
            return RAW_RESPONSE_HEADER in headers
        except Exception:  # noqa: BLE001 - an odd headers object is the provider's business, not ours
            return False
    return False


def enter_call() -> bool:
    """Mark "inside a recorded provider call" (nested patched functions then call straight through); returns
    what :func:`exit_call` restores."""
    ident = get_ident()
    was = ident in _inside
    _inside.add(ident)
    return was


def exit_call(was: bool) -> None:
    if not was:
        _inside.discard(get_ident())


async def raising(exc: BaseException) -> Any:
    """An awaitable that raises ``exc`` when awaited (an async call refused before it was made)."""
    raise exc


def capture_on() -> bool:
    options = client.get_options()
    return options is not None and options.capture != "off"


# --- installing and undoing ------------------------------------------------------------------------------------
class Switch:
    """Turns one installed wrapper into a plain call-through (undone while something else is patched on top)."""

    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = True


Factory = Callable[[Callable[..., Any], Switch], Callable[..., Any]]  # (original, switch) -> wrapper


def original_of(fn: Any) -> Any:
    """The provider's own function behind one of our wrappers (so wrapping twice never records twice)."""
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__inferwatch_original__", fn)


def mark(wrapper: Callable[..., Any], original: Callable[..., Any]) -> Callable[..., Any]:
    """Give a wrapper the original's name and docs, and the marks :func:`original_of` reads."""
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, attr, getattr(original, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper.__inferwatch_original__ = original  # type: ignore[attr-defined]
    return wrapper


def patch_classes(name: str, targets: Iterable[tuple[type, str, Factory]]) -> bool:
    """Replace ``cls.method`` by ``factory(original, switch)`` for each target; False when ``name`` already is."""
    installed: list[tuple[type, str, Any, Any, Switch]] = []

    def undo() -> None:
        for cls, method, original, wrapper, switch in reversed(installed):
            switch.enabled = False
            if cls.__dict__.get(method) is wrapper:
                setattr(cls, method, original)
        installed.clear()

    if not register_undo(name, undo):
        return False
    for cls, method, factory in targets:
        original = cls.__dict__[method]
        switch = Switch()
        wrapper = factory(original_of(original), switch)
        setattr(cls, method, wrapper)
        installed.append((cls, method, original, wrapper, switch))
    return True


class ClientWraps:
    """The ``wrap_*`` patches of one provider: instance attributes on a client's resource objects."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._names: set[str] = set()
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    def wrap(self, client_obj: Any, targets: Iterable[tuple[Any, str, Factory]]) -> None:
        """Bind ``factory(original, switch)`` as ``resource.method`` unless one of ours already is."""
        patched: list[tuple[Any, str, Any, Switch]] = []
        for resource, method, factory in targets:
            if method in vars(resource):  # ours already, or the app's own (a test double): never clobbered
                continue
            class_fn = getattr(type(resource), method, None)
            if class_fn is None:
                continue
            switch = Switch()
            bound = types.MethodType(factory(original_of(class_fn), switch), resource)
            setattr(resource, method, bound)
            patched.append((weakref.ref(resource), method, bound, switch))
        if not patched:
            return
        with self._lock:
            name = f"{self._prefix}.client.{next(self._counter)}"
            self._names.add(name)
        names = self._names

        def undo() -> None:
            names.discard(name)
            for ref, method, bound, switch in patched:
                switch.enabled = False
                resource = ref()
                if resource is not None and vars(resource).get(method) is bound:
                    delattr(resource, method)

        register_undo(name, undo)
        weakref.finalize(client_obj, uninstrument, name).atexit = False  # drop the entry with the client

    def undo_all(self) -> bool:
        with self._lock:
            names = list(self._names)
        return any([uninstrument(name) for name in names])


def resource_at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def load_classes(table: Iterable[tuple[str, str]]) -> dict[tuple[str, str], type]:
    """``{(module, class): class}`` for the importable ones."""
    found: dict[tuple[str, str], type] = {}
    for module_name, class_name in table:
        try:
            cls = getattr(importlib.import_module(module_name), class_name, None)
        except ImportError:
            cls = None
        if isinstance(cls, type):
            found[(module_name, class_name)] = cls
    return found


class ProviderNames:
    """A provider's name for a client, from its class name (``AzureOpenAI`` -> ``azure.ai.openai``), remembered
    per class so that the hot path reads a dict instead of searching the name. Bounded, for client classes made
    on the fly."""

    __slots__ = ("default", "known", "markers")
    LIMIT = 64

    def __init__(self, default: str, markers: tuple[tuple[str, str], ...]) -> None:
        self.default = default
        self.markers = markers  # (text in the class name, provider name), first match wins
        self.known: dict[type, str] = {}

    def of(self, resource: Any) -> str:
        """The name for the client a resource (``client.chat.completions``, ``client.messages``) belongs to."""
        owner = type(getattr(resource, "_client", None))
        return self.known.get(owner) or self.learn(owner)

    def learn(self, owner: type) -> str:
        name = next((provider for text, provider in self.markers if text in owner.__name__), self.default)
        if len(self.known) < self.LIMIT:
            self.known[owner] = name
        return name
