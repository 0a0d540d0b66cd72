"""What the OpenAI and Anthropic integrations share: stream proxies and event taps, call-through checks, tool-call
rules, provider names.

Stream proxies
--------------
A streamed provider call returns a stream object that the app iterates later, maybe elsewhere. The integration
hands back a :class:`StreamProxy` (or :class:`AsyncStreamProxy`) instead: it forwards everything to the real
stream (iteration, ``with``, ``close``/``aclose``, attribute reads and writes such as ``.response``) and reports
``isinstance(proxy, openai.Stream)`` as the real stream would (``__class__`` is the wrapped class). Each item the
app receives is shown to an *observer* (the provider's accumulator) after it was taken from the real stream, so
the app gets the very same objects, unchanged and in order.

The observer's call ends exactly once, with what was seen so far, when the first of these happens:

* the stream is exhausted (``StopIteration`` / ``StopAsyncIteration``);
* an exception comes out of the stream: it is recorded as the call's error and re-raised unchanged;
* the app closes it (``close()``, ``aclose()``, leaving ``with``): an early close is not an error;
* the proxy is garbage-collected unfinished (its ``__del__``; not at interpreter exit).

An observer that raises is counted (``inferwatch.stats()["internal_errors"]``) and stops observing; the stream
goes on untouched.

Event taps
----------
Where the provider's own stream can be left to the app, an :class:`EventTap` stands in for its event decoder: the
real decoder reads the response's bytes through a generator that keeps each chunk and the clock of its arrival,
and the provider's subclass reads the events from them (:mod:`._sse`) in the export thread when the
call is recorded (OpenAI Chat Completions streams with capture off; see the class).

Patching
--------
:func:`patch_classes` (``instrument_*``) and :class:`ClientWraps` (``wrap_*``) install wrappers made by a
provider's factory and register how to undo them (``integrations.register_undo``). Undoing restores the original
attribute when ours is still the one installed; if something else was patched on top of ours meanwhile, ours is
switched off instead (it calls straight through), so their patch keeps working.

Call-through checks
-------------------
:func:`inactive` is the first thing every patched function asks: no pipeline (before ``init()``), a raw or
streaming *response* wrapper (``with_raw_response`` / ``with_streaming_response``: not recorded, see the
provider modules), or a call made from inside another recorded call of ours (``wrap_*`` on a client whose class
is also instrumented) means "call straight through".

Tool-call failure rules (one rule for every provider)
-----------------------------------------------------
A tool call in a response counts as at most one failure, when

* its arguments are not a JSON object: unparseable JSON, or JSON that is not an object (empty arguments mean
  "no arguments" and are fine; free-form *custom* tools are not checked), or
* its name is not among the request's tools (when the request's ``tools`` is not a list or tuple we cannot look
  at it without consuming it, so names are not checked; a request without tools offers none).

A tool result sent back in the request counts as one failure when the provider's error flag is set (Anthropic
``tool_result.is_error``) or when its content is a JSON object with an ``"error"`` member that is not null,
false or empty (``{"error": "timeout"}`` counts, ``{"error": null, "temp": 21}`` does not). Only the results that
answer the latest assistant turn are looked at (the messages after the last assistant message), so a failure is
counted once, on the call that sees it first, and not again on every later call that carries the history.
"""

from __future__ import annotations

import _thread
import itertools
import json
import os
import sys
import threading
import time
import types
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from .. import _guard, client
from . import register_undo, uninstrument

RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"  # set by both SDKs' with_raw_response / with_streaming_response

# Per thread: is a recorded provider call of ours running on this thread right now (see :func:`inactive`)? The
# set holds the ids (``get_ident()``) of the threads that are inside one.
#
# A set of thread ids rather than a ContextVar: the flag is only ever set around synchronous code (the provider's
# own function; for an async client, the making of its coroutine), where no other asyncio task can run, so the
# two mean the same here. But a ContextVar's set and reset on every call make a new hash-trie mapping and a
# token, code the provider's client never runs, and void the read cache of every other ContextVar on the thread
# (the tags, OpenTelemetry's current context), so each call's first reads of those miss it. Counted with
# callgrind on cold caches (``bench/sdk_instructions.py --cold``): the context functions took about 50 of the
# 370 cache misses of preparing a call. Nor a ``threading.local``: each read or write of one finds the thread's
# own dict through the type's module state, about 17 cache misses per call on cold caches (2026-12-03, seventh
# session); ``get_ident()`` and a set lookup touch next to nothing.
#
# gevent and eventlet: a sync call gives way to other greenlets during its network I/O, so the flag must be
# greenlet-local. It is when the app monkey-patches before importing inferwatch (as both libraries ask:
# ``get_ident`` is then theirs, a greenlet's id); patched later, a call another greenlet makes while one is in
# flight on the same thread would pass unrecorded. A forked child has only the thread that forked: the set keeps
# that one's mark alone.
_inside: set[int] = set()
get_ident = _thread.get_ident


def _only_this_thread() -> None:
    """In a forked child: the other threads' marks go (glibc reuses their ids for new threads); a fork made
    inside a recorded call keeps the forking thread's."""
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


# --- patching --------------------------------------------------------------------------------------------------
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
    import importlib

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
    per class: the name search is code the provider's client never runs, so on cold caches it costs more than the
    dict read that replaces it. Bounded, for client classes made on the fly."""

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


# --- small readers that accept dicts (request params) and objects (SDK models) alike -------------------------
def get(obj: Any, key: str, default: Any = None) -> Any:
    kind = type(obj)
    if kind is dict:  # request params, parsed JSON
        return obj.get(key, default)
    mapping = _is_mapping.get(kind)
    if mapping is None:
        mapping = _is_a_mapping(obj, kind)
    return obj.get(key, default) if mapping else getattr(obj, key, default)


# type -> is it a Mapping? ``isinstance(obj, Mapping)`` asks the ABC machinery every time (its caches of weak
# references: about 450 machine instructions and, on cold caches, a dozen cache misses per call, 7 calls for an
# OpenAI usage object on the caller's thread); a provider's models are a handful of types. Not cached: objects
# whose ``__class__`` is not their type (proxies, which ``isinstance`` sees through), and types past the limit
# (made on the fly; the dict keeps those it holds alive). A type registered as a Mapping after it was cached
# keeps its first answer.
_is_mapping: dict[type, bool] = {}
_IS_MAPPING_LIMIT = 1024


def _is_a_mapping(obj: Any, kind: type) -> bool:
    mapping = isinstance(obj, Mapping)
    if len(_is_mapping) < _IS_MAPPING_LIMIT and getattr(obj, "__class__", None) is kind:
        _is_mapping[kind] = mapping
    return mapping


def as_sequence(value: Any) -> list[Any] | tuple[Any, ...] | None:
    """The value if it is a list or tuple (safe to read twice); None for anything else (e.g. a generator)."""
    return value if isinstance(value, (list, tuple)) else None


# --- tool-call rules --------------------------------------------------------------------------------------------
def offered_tool_names(*tool_lists: Any) -> frozenset[str] | None:
    """Names of the tools a request offered; None when one of the lists cannot be read without consuming it."""
    names: set[str] = set()
    for tools in tool_lists:
        if not tools:  # absent, None, or the SDKs' omit / NOT_GIVEN sentinels (falsy)
            continue
        seq = as_sequence(tools)
        if seq is None:
            return None
        for tool in seq:
            name = get(tool, "name")
            if not name:
                name = get(get(tool, "function"), "name") or get(get(tool, "custom"), "name")
            if isinstance(name, str) and name:
                names.add(name)
    return frozenset(names)


def bad_arguments(arguments: Any) -> bool:
    """True when tool-call arguments are not a JSON object (a dict is; empty text means no arguments)."""
    if isinstance(arguments, Mapping):
        return False
    if not isinstance(arguments, str):
        return True
    text = arguments.strip()
    if not text:
        return False
    try:
        return not isinstance(json.loads(text), dict)
    except ValueError:
        return True


def tool_call_failed(name: Any, arguments: Any, offered: frozenset[str] | None, *,
                     check_json: bool = True) -> bool:
    if check_json and bad_arguments(arguments):
        return True
    return offered is not None and name not in offered


def error_payload(content: Any) -> bool:
    """True when a tool result's content is a JSON object with a non-empty ``"error"`` member."""
    if not isinstance(content, str):
        seq = as_sequence(content)
        if seq is None:
            return False
        content = "".join(t for t in (get(part, "text") for part in seq) if isinstance(t, str))
    text = content.lstrip()
    if not text.startswith("{") or '"error"' not in text:
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("error") not in (None, False, "", {}, [])


# --- stream proxies ----------------------------------------------------------------------------------------------
class Observer(Protocol):
    def observe(self, item: Any) -> None:
        """See one item the app received (fast: this runs on the app's thread for every chunk)."""

    def finish(self, error: BaseException | None) -> None:
        """Record what was seen and end the call (called once)."""


class _Finish:
    """A proxy's recording state: ends the observer's call once, and holds the observer's bound ``observe`` until
    an observer fault drops it (``None``). Holds no reference to the proxy, whose ``__del__`` may call it."""

    __slots__ = ("done", "observe", "observer", "where")

    def __init__(self, observer: Observer, where: str) -> None:
        self.observer = observer
        self.observe: Callable[[Any], None] | None = observer.observe
        self.where = where
        self.done = False

    def __call__(self, error: BaseException | None = None) -> None:
        if self.done:
            return
        self.done = True
        try:
            self.observer.finish(error)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(self.where, exc)


_OWN = frozenset({"__wrapped__", "_iw_finish", "_iw_next"})
_finalizing = sys.is_finalizing


class _ProxyBase:
    __slots__ = ("__wrapped__", "__weakref__", "_iw_finish", "_iw_next")  # the observer is in _iw_finish

    def __init__(self, wrapped: Any, observer: Observer, where: str) -> None:
        object.__setattr__(self, "__wrapped__", wrapped)
        object.__setattr__(self, "_iw_next", None)
        object.__setattr__(self, "_iw_finish", _Finish(observer, where))

    def __del__(self) -> None:
        """Collected unfinished (the app dropped the stream): end the call with what was seen (once; not at
        interpreter exit). A ``__del__`` rather than a ``weakref.finalize``: this is made for every stream."""
        try:
            finish = object.__getattribute__(self, "_iw_finish")
        except AttributeError:  # made without __init__ (e.g. by copy): nothing to end
            return
        if not finish.done and not _finalizing():
            finish(None)  # _Finish never raises

    # --- transparency ---
    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(proxy, openai.Stream) stays true
        return type(self.__wrapped__)

    def __getattr__(self, name: str) -> Any:
        if name in _OWN:  # a slot not set (an object made without __init__, e.g. by copy): no recursion
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.__wrapped__, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.__wrapped__, name)

    def __dir__(self) -> list[str]:
        return dir(self.__wrapped__)

    def __repr__(self) -> str:
        return repr(self.__wrapped__)

    # --- recording ---
    def _iw_end(self, error: BaseException | None) -> None:
        self._iw_finish(error)

    def _iw_observe(self, item: Any) -> None:
        """Show one item to the observer (``next()`` and ``__anext__``; the ``for`` loops call the bound
        ``observe`` themselves, with the same guard); an observer that raises is dropped (recorded as an internal
        error) and the stream goes on untouched."""
        observe = self._iw_finish.observe
        if observe is None:
            return
        try:
            observe(item)
        except Exception as exc:  # noqa: BLE001 - stop observing, never disturb the app's stream
            self._iw_drop(exc)

    def _iw_drop(self, exc: Exception) -> None:
        """The observer raised: record it and observe no more (in every loop over this stream)."""
        finish = self._iw_finish
        finish.observe = None
        _guard.record_internal_error(finish.where, exc)


class StreamProxy(_ProxyBase):
    """Stands in for a provider's sync stream; see the module docstring."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        """A generator over the real stream's own iterator (what a ``for`` loop over the bare stream runs), or
        the proxy itself once ``next()`` was called on it. Why: a ``for`` loop then resumes one generator per
        item instead of calling the proxy's ``__next__`` and the stream's ``__next__`` (two Python frames per
        chunk, run with cold caches between the client's own work on each chunk)."""
        if self._iw_next is not None or not hasattr(self.__wrapped__, "__iter__"):
            return self
        return self._iw_items()

    def _iw_items(self) -> Iterator[Any]:
        """:meth:`__next__` as a generator: the same items, the same ends (exhausted, error), the same observer.
        A ``for`` loop over the real iterator (no ``StopIteration`` raised at the end, as in the bare loop). A
        generator closed early (a ``break``, then collected: ``GeneratorExit``) is not an error: the proxy's
        close or collection ends the call then, as for ``__next__``."""
        iterator = iter(self.__wrapped__)
        object.__setattr__(self, "_iw_next", iterator.__next__)  # a later next(proxy) goes on from here
        # taken once per loop, not per chunk: every attribute read on the proxy goes through its __getattr__
        # hook (the type's slow path): 139.7 against 125.2 µs per 11-chunk streamed call in a same-process A/B
        # (bench/README.md, the sdk_overhead section)
        finish = self._iw_finish
        observe = finish.observe
        try:
            for item in iterator:
                if observe is not None:
                    try:
                        observe(item)
                    except Exception as exc:  # noqa: BLE001 - _iw_observe's guard
                        self._iw_drop(exc)
                        observe = None
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            finish(exc)
            raise
        finish(None)

    def __next__(self) -> Any:
        step = self._iw_next
        if step is None:
            wrapped = self.__wrapped__
            step = getattr(wrapped, "__next__", None) or iter(wrapped).__next__
            object.__setattr__(self, "_iw_next", step)
        try:
            item = step()
        except StopIteration:
            self._iw_end(None)
            raise
        except BaseException as exc:
            self._iw_end(exc)
            raise
        self._iw_observe(item)
        return item

    def __enter__(self) -> StreamProxy:
        self.__wrapped__.__enter__()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        try:
            return self.__wrapped__.__exit__(exc_type, exc, tb)
        finally:
            self._iw_end(None)

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._iw_end(None)


class AsyncStreamProxy(_ProxyBase):
    """Stands in for a provider's async stream; see the module docstring."""

    __slots__ = ()

    def __aiter__(self) -> AsyncIterator[Any]:
        """An async generator over the real stream's own async iterator, or the proxy itself once ``__anext__``
        was called on it: :meth:`StreamProxy.__iter__`'s reasons and rules, for ``async for``."""
        if self._iw_next is not None or not hasattr(self.__wrapped__, "__aiter__"):
            return self
        return self._iw_aitems()

    async def _iw_aitems(self) -> AsyncIterator[Any]:
        """:meth:`__anext__` as an async generator (see :meth:`StreamProxy._iw_items`): the same items, the same
        ends, the same observer; a generator closed early (``GeneratorExit``) is not an error."""
        iterator = aiter(self.__wrapped__)
        object.__setattr__(self, "_iw_next", iterator.__anext__)  # a later __anext__ goes on from here
        finish = self._iw_finish  # taken once per loop: see _iw_items
        observe = finish.observe
        try:
            async for item in iterator:
                if observe is not None:
                    try:
                        observe(item)
                    except Exception as exc:  # noqa: BLE001 - _iw_observe's guard
                        self._iw_drop(exc)
                        observe = None
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            finish(exc)
            raise
        finish(None)

    async def __anext__(self) -> Any:
        step = self._iw_next
        if step is None:
            wrapped = self.__wrapped__
            step = getattr(wrapped, "__anext__", None) or aiter(wrapped).__anext__
            object.__setattr__(self, "_iw_next", step)
        try:
            item = await step()
        except StopAsyncIteration:
            self._iw_end(None)
            raise
        except BaseException as exc:
            self._iw_end(exc)
            raise
        self._iw_observe(item)
        return item

    async def __aenter__(self) -> AsyncStreamProxy:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        try:
            return await self.__wrapped__.__aexit__(exc_type, exc, tb)
        finally:
            self._iw_end(None)

    async def close(self) -> Any:
        try:
            return await self.__wrapped__.close()
        finally:
            self._iw_end(None)

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._iw_end(None)


# --- event taps --------------------------------------------------------------------------------------------------
_time_ns = time.time_ns
_exception = getattr(sys, "exception", None) or (lambda: sys.exc_info()[1])  # sys.exception: Python 3.11+
FOLD_AT = 1024  # chunks kept per tapped stream before they are read on the app's thread (a bound on memory)


def _called_inside(generator: Any, frame: types.FrameType | None) -> bool:
    """``frame`` (the code asking) runs inside ``generator`` (or async generator): its frame is one of the callers,
    up to a few levels. Asked through the frames rather than ``gi_running``/``ag_running``: an async generator
    reads as running while it awaits, also when that await is in another task (the event loop closing an
    abandoned stream's generators one task each)."""
    target = getattr(generator, "gi_frame", None) or getattr(generator, "ag_frame", None)
    if target is None:
        return False
    for _ in range(_CALLER_DEPTH):
        if frame is None:
            return False
        if frame is target:
            return True
        frame = frame.f_back
    return False


_CALLER_DEPTH = 8  # httpx2 closes the response from iter_raw's finally, one level inside its iter_bytes


# --- names bound once, for the hot path ------------------------------------------------------------------------
# The path every recorded call takes reaches functions and methods through names bound at import (here, in the
# provider modules and in llm_call) rather than ``Class.method(...)``, ``getattr(obj, "name")`` or
# ``obj.method`` taken without a call. Why: such a lookup (a class's attribute, read through the metaclass first;
# a classmethod or staticmethod read from its class; ``getattr``/``setattr``; a class called with a Python
# ``__init__``, which looks that up; some method reads that stayed unspecialised in a real process, adaptive
# ``dis`` showed) is one CPython 3.11 does not specialise, so it goes through the interpreter's type-attribute
# cache, and the provider client's own work keeps emptying that cache: the bare client's streamed call walks
# class MROs about 1,500 times (callgrind: ``find_name_in_mro``; every field read of a pydantic model is such a
# lookup). Each lookup of ours then may walk the MRO on cold caches, about 1,000 machine instructions for a class
# attribute; whether it does depends on the process (the cache's slots follow the classes' version tags, numbered
# in the order classes are first looked up in, and the names' addresses). Counted on the real client's streamed
# call (``bench/sdk_instructions.py --client real --gc-off``, and the SDK-on call alone in five processes, hash
# seeds 0-4), the bound names took 8,000-22,000 instructions off it, 7-31 % of what the SDK adds (bench/README.md,
# tenth session); each of those comparisons is one draw, as ``--shifts`` later showed: the same code's added
# figure moved by 8,200 instructions across four draws, the wrapper alone's by 14,700 across three (eleventh
# session). Fault-injection tests patch the bound names.
new_object = object.__new__  # an instance without calling its class: no lookup of the class's __init__
MethodType = types.MethodType  # a bound method made without looking the function up on the instance's class
_class_closes: dict[tuple[type, str], Any] = {}  # (response class, "close"/"aclose") -> its function, or None
CLASS_CLOSES_LIMIT = 64  # response classes remembered: classes made on the fly are asked each time, not kept


def can_hook(response: Any, is_async: bool) -> bool:
    """The response's ``close`` (``aclose``) is its class's: nothing of anyone else's would be replaced. Asked
    without reading the response's ``__dict__``, which would turn its attributes into a dict of their own for
    the rest of its life (slower to read for the client, a counted difference). The class's function is
    remembered per class (asked again when the response's is another: a class not seen yet, one whose function
    was replaced since, or a response with a close of its own). One answer differs from asking the class each
    time: a response holding, as a close of its own, the class's function from before the class's was replaced
    is taken as unhooked (its close is then the class's new one after the call)."""
    name = "aclose" if is_async else "close"
    key = (type(response), name)
    found = getattr(getattr(response, name, None), "__func__", None)
    own = _class_closes.get(key, False)
    if own is not found:
        own = getattr(key[0], name, None)
        if len(_class_closes) < CLASS_CLOSES_LIMIT:
            _class_closes[key] = own
    return own is not None and found is own


class EventTap:
    """Stands in for the server-sent-event decoder of a Stainless-made client's stream (``openai.Stream``'s
    ``_decoder``): the stream itself is handed to the app untouched, and the real decoder reads the response's
    bytes through the tap, which keeps each chunk with the clock of its arrival. The subclass reads the events
    from them (:mod:`._sse`) in the export thread (:meth:`read`) when the call is recorded.

    Why the bytes and not the events: on the app's thread the SDK then runs once per chunk the network delivered
    (a generator step, an append and a clock), however many events the chunk holds, and never reads an event.
    Timed on bench/sdk_overhead.py's 11-event stream (one chunk), paired against the same calls with the SDK's
    stream handling left out, in one process: the per-event tap this replaces cost 35-50 µs per call above that
    floor, this one about 24 (bench/README.md, eighth session). The first content event's time to first token is
    the clock of the chunk that completed it.

    What is recorded is what the provider sent, as far as it was received: a stream the app closes part-read
    records the events of the chunks that had arrived, also those the client had not handed to the app yet.

    The call ends (:meth:`ended`, once) when the stream's HTTP response is closed (its ``close``/``aclose``,
    hooked on the response object; the hook is removed as the call ends): the client does that in a ``finally``
    of its stream's generator when the stream is exhausted, raises or is closed, and the app by ``close()`` or
    leaving ``with``. A close made by the stream's own generator while an exception is on its way out of that
    generator (a transport error, as openai's stream has turned it into its own type; an error event; a chunk it
    could not parse or decode) ends the call with that exception; ``GeneratorExit`` (the stream closed or
    collected part-read), an exception the app is handling around its reading (a retry in an ``except`` block)
    and the app's own exception leaving ``with`` end it as a success. A close made from inside the response's
    own byte iterator is the HTTP library's (httpx2 closes the response in a ``finally`` as a read fails or
    ends): the stream's close follows it, and that one ends the call. Also when the tap is collected with the
    stream never read. Until the call ends the response and the tap refer to each other, which only the garbage
    collector frees for a stream dropped unread. A response that already has a ``close``/``aclose`` of its own
    (an instance attribute) is not tapped (:meth:`can_hook`).

    Memory: at most :data:`FOLD_AT` chunks are kept; a longer stream has them read (:meth:`read`) on the app's
    thread then, and goes on. The stream is assumed to be read and closed from one thread at a time (a close
    from another thread in the middle of a fold could have a chunk read twice or not at all).

    Garbage: what waits for the export thread is kept small and free of objects the garbage collector tracks.
    The chunks and their clocks are one flat list (``[chunk, clock, chunk, clock, ...]``: bytes and ints, no
    tuple per chunk), and the response and the client's decoder are let go as the call ends (the decoder once
    the stream's reading began). A tracked object kept until the export brings the collector's next pass
    closer, and that pass runs on whichever thread allocates next, usually the app's: with the ended response
    kept (its request, headers and stream objects), bench/sdk_overhead.py's streamed calls ran 2.6 times as many
    collector passes as the bare client's, about 1.3 times with it let go (bench/README.md, ninth session)."""

    __slots__ = ("closer", "count", "decoder", "done", "hooked", "kept", "response", "source")
    where = "stream.tap"  # internal errors are counted under this name (subclasses: their provider's)

    def __init__(self, decoder: Any, response: Any, closer: types.CodeType | None, is_async: bool) -> None:
        """``closer``: the code of the stream's own generator (openai's ``Stream.__stream__``), whose close of the
        response, with an exception on its way out, ends the call with that exception."""
        self.done = True  # until hooked: a tap half made is never ended by __del__
        self.decoder = decoder
        self.kept: list[Any] = []  # chunk, clock, chunk, clock...: in order of arrival
        self.count = 0  # len(kept) when the call ended: the part read for it
        self.source: Any = None  # the response's byte iterator, once the decoder reads it
        self.closer = closer
        self.response = response
        self.hooked = "aclose" if is_async else "close"
        setattr(response, self.hooked, MethodType(_aclose_hook if is_async else _close_hook, self))
        self.done = False

    @staticmethod
    def can_hook(response: Any, is_async: bool) -> bool:
        """See :func:`can_hook`."""
        return can_hook(response, is_async)

    def ended(self, error: BaseException | None) -> None:
        """The stream ended (once): record it."""
        raise NotImplementedError

    def read(self, kept: Sequence[Any]) -> None:
        """Take in these chunks (kept ones, in order, each chunk followed by its clock), in the export thread or
        on a :data:`FOLD_AT` fold."""
        raise NotImplementedError

    def _end(self, error: BaseException | None) -> None:
        if self.done:
            return
        self.done = True
        self.count = len(self.kept) & ~1  # whole pairs (a close from another thread between the two appends)
        if self.source is not None:  # reading began: the decoder lives on in the client's generators, if needed
            self.decoder = None
        self.source = None
        response, self.response = self.response, None  # neither is kept until the export (see the class)
        try:
            try:
                delattr(response, self.hooked)  # the response's own close from now on, and no cycle left
            except AttributeError:  # removed by someone else meanwhile
                pass
            self.ended(error)
        except Exception as exc:  # noqa: BLE001 - never disturb the app's stream
            _guard.record_internal_error(self.where, exc)

    def _fold(self) -> None:
        """Read the kept chunks now and forget them (a long stream: bounded memory); guarded. The list is
        emptied in place: the generator keeping chunks appends to it."""
        chunks = self.kept[:]
        del self.kept[:]
        try:
            self.read(chunks)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(self.where, exc)

    # --- the response's close, hooked ---
    # The common case, a sync stream's close with no exception on its way and not from inside the response's byte
    # iterator, costs two questions asked in the close itself; anything else goes to :meth:`_judge`.
    def _judge(self) -> tuple[bool, BaseException | None]:
        """(whether this close ends the call, with which error), asked as the close begins (see the class). The
        caller's frame tells the stream's own generator with an exception on its way out of it (the call's error),
        the HTTP library inside the response's byte iterator (the stream's close follows: it ends the call) and
        anyone else (the app: a success, whatever exception it may be handling). Why the caller's code and not a
        reference to the stream's generator: that would keep the generator alive as long as the response is, and
        a stream the app drops part-read (keeping its response) would then never be closed."""
        if self.done:
            return False, None
        try:
            caller = sys._getframe(2)  # this <- close / aclose <- the caller
            error = _exception()
            if error is not None and caller.f_code is self.closer:
                trace = error.__traceback__  # on its way out of this frame, not one the app is handling around it
                if trace is not None and trace.tb_frame is caller:
                    return True, None if isinstance(error, GeneratorExit) else error
            return not _called_inside(self.source, caller), None
        except Exception as exc:  # noqa: BLE001 - a close called from C code (no Python caller): a plain end
            _guard.record_internal_error(self.where, exc)
            return True, None

    # A hook called after the call ended (a reference to it taken before) finds no response: the response was
    # closed by the close that ended the call, so there is nothing left to do.
    def close(self) -> Any:
        response = self.response
        if response is None:
            return None
        if _exception() is None and not getattr(self.source, "gi_running", False):
            ends, error = not self.done, None
        else:
            ends, error = self._judge()
        try:
            return type(response).close(response)
        finally:
            if ends:
                self._end(error)

    async def aclose(self) -> Any:
        response = self.response
        if response is None:
            return None
        ends, error = self._judge()  # before the first await: the awaiter's frame is still the caller
        try:
            return await type(response).aclose(response)
        finally:
            if ends:
                self._end(error)

    # --- the decoder ---
    # A Python generator per chunk, not iterators of C code (zip with a clock, filterfalse with the list's append):
    # fewer instructions, but timed against the same calls without any keeping, one process, the C iterators
    # added about 20 µs per call on bench/sdk_overhead.py's stream and this generator none that the bench could
    # resolve: their constructors and generic argument parsing are C code the app's thread runs nowhere else,
    # cold in the caches at every call, where the generator runs in the interpreter loop the client keeps hot
    # (bench/README.md, eighth session).
    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[Any]:
        """The real decoder's ``iter_bytes``, reading ``iterator``'s chunks through :meth:`_keep`. The decoder is
        taken before ``source`` is set (the end lets it go once reading began); after the end (the app closed the
        stream before reading it) ``source`` stays unset: it would keep the response alive until the export."""
        decoder = self.decoder
        if not self.done:
            self.source = iterator
        return decoder.iter_bytes(self._keep(iterator))

    def _keep(self, iterator: Iterator[bytes]) -> Iterator[bytes]:
        kept, clock, fold_at = self.kept, _time_ns, 2 * FOLD_AT
        for chunk in iterator:
            kept.append(chunk)
            kept.append(clock())
            if len(kept) >= fold_at and not self.done:  # after the end (an app reading on): kept, never read
                self._fold()
            yield chunk

    def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        """:meth:`iter_bytes` for the async decoder."""
        decoder = self.decoder
        if not self.done:
            self.source = iterator
        return decoder.aiter_bytes(self._akeep(iterator))

    async def _akeep(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        kept, clock, fold_at = self.kept, _time_ns, 2 * FOLD_AT
        async for chunk in iterator:
            kept.append(chunk)
            kept.append(clock())
            if len(kept) >= fold_at and not self.done:
                self._fold()
            yield chunk

    def __del__(self) -> None:
        """Collected unfinished: a stream the app dropped without reading (not at interpreter exit)."""
        try:
            if not getattr(self, "done", True) and not _finalizing():
                self._end(None)
        except Exception as exc:  # noqa: BLE001 - never raise from a finalizer
            _guard.record_internal_error(self.where, exc)


# the hooks EventTap.__init__ binds to a tap (names bound once, above): subclasses do not override these two
_close_hook, _aclose_hook = EventTap.close, EventTap.aclose
