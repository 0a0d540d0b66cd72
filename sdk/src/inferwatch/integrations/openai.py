"""OpenAI integration: :func:`wrap_openai` for one client, :func:`instrument_openai` for every client.

Usage::

    import inferwatch, openai
    inferwatch.init()
    client = inferwatch.wrap_openai(openai.OpenAI())      # this client (sync or async), or:
    inferwatch.instrument_openai()                        # every OpenAI/AsyncOpenAI client, present and future

Recorded (sync and async clients alike), one call (``llm_call.ProviderCall``) per request:

* ``chat.completions.create`` (streamed or not) and ``chat.completions.parse``;
* ``chat.completions.stream(...)``: the helper calls ``create(stream=True)`` on the same resource, so the request
  is recorded once, by ``create``, and the helper receives the recording stream (tapped, or the proxy; its
  events, ``get_final_completion()`` and ``close()`` work as before);
* ``responses.create`` (streamed or not) and ``responses.stream(input=..., model=...)`` (through ``create`` too).

What is read, never changed: the request's keyword arguments (model, stream, messages/input, tools). Nothing is
added to the request: ``stream_options.include_usage`` is *not* injected (it would add a chunk with empty
``choices`` that the app did not ask for), so a stream without it ends ``usage_missing``, as it must.
Streams: the call ends when the stream is exhausted, closed or garbage-collected; an exception from the stream is
recorded and re-raised as is. A Chat Completions stream with capture off (the default) comes back as the client's
own ``openai.Stream``, its event decoder tapped; any other stream (capture on, the Responses API, a call sampled
out, a stream object not made by openai's client) comes back as a proxy (``_streams``).

Mapping: operation ``chat`` (both APIs); provider ``openai`` (``azure.ai.openai`` for Azure clients); finish
reason, refusals and tool calls as :mod:`._openai_chat` and :mod:`._openai_responses` read them.

Budget guard (``inferwatch.budget_guard``): checked before each recorded request; ``BudgetExceeded`` is raised
before the provider is called (async: by the returned awaitable), or a downgrade rewrites the request's ``model``.

Not recorded (passed straight through): ``with_raw_response`` / ``with_streaming_response`` (the app reads the raw
HTTP response itself), ``responses.stream(response_id=...)`` (resumes through ``retrieve``), ``responses.parse``,
the legacy ``completions``, embeddings, the Assistants/Realtime APIs.

``wrap_openai`` patches the client's resource *instances* (``client.chat.completions``, ``client.responses``) and
returns the same client object; clients derived later with ``with_options()`` / ``copy()`` are new objects: wrap
them too, or use ``instrument_openai``. ``instrument_openai`` patches the resource *classes*. Both are inert until
``init()``, idempotent, safe to combine (a request is never recorded twice) and undone by
:func:`uninstrument_openai` and by ``inferwatch.shutdown()``.

This module holds the patch table, the wrappers and the recorder of one request (:class:`_Recorder`); reading
the responses is in :mod:`._openai_chat` and :mod:`._openai_responses`.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from .. import _guard, budget
from .. import client as iw_client
from ..llm_call import ProviderCall
from . import DidNotEnable, uninstrument
from ._openai_chat import (STREAM_WHERE, _ChatEvents, _chat_facts, _chat_tool_errors, _ChatStream, _leading_id,
                           _stream_classes)
from ._openai_responses import _apply_response, _responses_tool_errors, _ResponsesStream
from ._patching import (ClientWraps, Factory, ProviderNames, Switch, _inside, enter_call, exit_call, get_ident,
                        inactive, load_classes, mark, patch_classes, raising, resource_at)
from ._readers import as_sequence
from ._streams import AsyncStreamProxy, EventTap, StreamProxy, can_hook, new_object
from ._tool_calls import offered_tool_names, tool_call_failed

_mark_inside, _unmark_inside = _inside.add, _inside.discard  # bound once: see "names bound once" in _streams

log = logging.getLogger("inferwatch")

PATCH_NAME = "openai"
_WHERE = "openai"

# (module, class, method, api, is_async): the patch table
_TARGETS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("openai.resources.chat.completions", "Completions", "create", "chat", False),
    ("openai.resources.chat.completions", "Completions", "parse", "chat", False),
    ("openai.resources.chat.completions", "AsyncCompletions", "create", "chat", True),
    ("openai.resources.chat.completions", "AsyncCompletions", "parse", "chat", True),
    ("openai.resources.responses", "Responses", "create", "responses", False),
    ("openai.resources.responses", "AsyncResponses", "create", "responses", True),
)
# where those resources live on a client: attribute path -> methods
_CLIENT_PATHS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("chat.completions", ("create", "parse")),
    ("responses", ("create",)),
)

_wraps = ClientWraps(PATCH_NAME)
_providers = ProviderNames("openai", (("Azure", "azure.ai.openai"),))
# openai's Stream and AsyncStream, once instrumented (_targets): the code of each one's own generator
_tappable: dict[type, Any] = {}


def _targets() -> list[tuple[type, str, str, bool]]:
    """(class, method, api, is_async) present in the installed openai; DidNotEnable when there are none."""
    classes = load_classes((module, cls) for module, cls, _, _, _ in _TARGETS)
    found = [(classes[(module, name)], method, api, is_async) for module, name, method, api, is_async in _TARGETS
             if (module, name) in classes and callable(classes[(module, name)].__dict__.get(method))]
    if not found:
        raise DidNotEnable("openai is not installed (or too old: chat.completions not found)")
    global _tappable
    _tappable = _stream_classes()
    return found


def instrument_openai() -> bool:
    """Record every OpenAI client's calls (see the module docstring). True when installed now; False when it
    already was, or when openai is not installed (logged)."""
    try:
        targets = _targets()
    except DidNotEnable as exc:
        log.warning("inferwatch: OpenAI integration not enabled: %s", exc)
        return False
    return patch_classes(PATCH_NAME, [(cls, method, _factory(api, is_async))
                                      for cls, method, api, is_async in targets])


def wrap_openai(client: Any) -> Any:
    """Record this client's calls (sync or async client); returns the same client object, instrumented in place.

    Idempotent. Never raises: an object that is not an OpenAI client is returned unchanged."""
    with _guard.guard("openai.wrap"):
        by_class = {(cls, method): (api, is_async) for cls, method, api, is_async in _targets()}
        targets = []
        for path, methods in _CLIENT_PATHS:
            resource = resource_at(client, path)
            for method in methods:
                spec = next((v for (cls, m), v in by_class.items() if m == method and isinstance(resource, cls)),
                            None)
                if resource is not None and spec is not None:
                    targets.append((resource, method, _factory(*spec)))
        _wraps.wrap(client, targets)
    return client


def uninstrument_openai() -> bool:
    """Undo :func:`instrument_openai` and every :func:`wrap_openai`; True when something was installed."""
    wrapped = _wraps.undo_all()
    return uninstrument(PATCH_NAME) or wrapped


# --- the wrappers ----------------------------------------------------------------------------------------------
def _factory(api: str, is_async: bool) -> Factory:
    def make(original: Callable[..., Any], switch: Switch) -> Callable[..., Any]:
        if is_async:
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                if not switch.enabled or inactive(kwargs):
                    return original(self, *args, **kwargs)
                try:
                    downgraded = budget.enforce_request(kwargs)
                except budget.BudgetExceeded as exc:
                    return raising(exc)  # raised when awaited, as the provider's own errors are
                token = enter_call()
                try:
                    coroutine = original(self, *args, **kwargs)  # argument errors still raise here, as before
                finally:
                    exit_call(token)
                return _record_async(coroutine, self, api, kwargs, downgraded)
        else:
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                # inactive(kwargs), its common answer inlined: no pipeline, or inside a recorded call
                thread = get_ident()
                if not switch.enabled or iw_client._pipeline is None or thread in _inside or (
                        "extra_headers" in kwargs and inactive(kwargs)):
                    return original(self, *args, **kwargs)
                # BudgetExceeded: before the provider is called (no guard installed: nothing to ask)
                downgraded = "" if budget._active is None else budget.enforce_request(kwargs)
                rec = _prepare(self, api, kwargs, is_async=False, downgraded_from=downgraded)
                _mark_inside(thread)  # enter_call(), inlined as the rest of this hot path (it was not inside)
                try:
                    result = original(self, *args, **kwargs)
                except BaseException as exc:
                    if rec is not None:
                        rec.end(exc)
                    raise
                finally:
                    _unmark_inside(thread)
                return result if rec is None else rec.complete(result)
        return mark(wrapper, original)
    return make


async def _record_async(coroutine: Any, resource: Any, api: str, kwargs: dict[str, Any], downgraded: str) -> Any:
    rec = _prepare(resource, api, kwargs, is_async=True, downgraded_from=downgraded)  # timing starts now
    try:
        result = await coroutine
    except BaseException as exc:
        if rec is not None:
            rec.end(exc)
        raise
    return result if rec is None else rec.complete(result)


class _Recorder(ProviderCall):
    """One request: prepared before the call, completed with its result (or stream proxy), or failed."""

    __slots__ = ("api", "capture", "functions", "is_async", "result", "tools")

    @classmethod
    def prepare(cls, resource: Any, api: str, kwargs: dict[str, Any], *, is_async: bool,
                downgraded_from: str = "") -> _Recorder | None:
        try:
            model = kwargs.get("model")
            try:  # _providers.of(resource), inlined
                owner = type(resource._client)
            except AttributeError:
                owner = type(None)
            provider = _providers.known.get(owner) or _providers.learn(owner)
            rec = _new_object(cls)  # cls(...) without looking up __init__: ProviderCall's, called next
            _init_call(rec, model if isinstance(model, str) else "", provider, kwargs.get("stream") is True,
                       downgraded_from)
            rec.api = api
            rec.is_async = is_async
            options = iw_client._options  # _patching.capture_on(), inlined (every call runs this)
            capture = rec.capture = options is not None and options.capture != "off"
            rec.tools = kwargs.get("tools")
            rec.functions = kwargs.get("functions")
            rec.result = None
            if api == "chat":
                messages = kwargs.get("messages")
                if not isinstance(messages, (list, tuple)):  # as_sequence(), inlined
                    messages = None
                elif messages:
                    rec.count_tool_errors_later(_chat_tool_errors, messages)
                if capture and messages is not None:
                    rec.call.content(input=list(messages))
            else:
                items = kwargs.get("input")
                sequence = as_sequence(items)
                if sequence:
                    rec.count_tool_errors_later(_responses_tool_errors, sequence)
                if capture:
                    instructions = kwargs.get("instructions")
                    shown = [{"role": "user", "content": items}] if isinstance(items, str) else list(
                        as_sequence(items) or ())
                    if isinstance(instructions, str) and instructions:
                        shown.insert(0, {"role": "system", "content": instructions})
                    rec.call.content(input=shown)
            return rec
        except Exception as exc:  # noqa: BLE001 - never break the host
            _guard.record_internal_error(f"{_WHERE}.prepare", exc)
            return None

    def offered(self) -> frozenset[str] | None:
        return offered_tool_names(self.tools, self.functions)

    def complete(self, result: Any) -> Any:
        """The app's result: the same object, or a recording proxy around a stream.

        A Chat Completion is reduced here to a few plain facts (:func:`_chat_facts`: no reference to the
        response is kept, which would keep its objects alive for the garbage collector until export) and
        recorded from them in the export thread (:meth:`apply`); with capture on, or a Responses API response,
        everything is recorded here."""
        try:
            if self.streamed:
                # the client's own stream, its bytes read in the export thread (_ChatEvents), where nothing
                # must be read before the call ends: capture off, a span to record (sampled in)
                if (type(result) in _tappable and self.api == "chat" and not self.capture
                        and self._span_id is not None and _tap(result, self)):
                    return result
                if self.is_async and hasattr(result, "__anext__"):
                    observer = _ChatStream(self) if self.api == "chat" else _ResponsesStream(self)
                    return AsyncStreamProxy(result, observer, STREAM_WHERE)
                if not self.is_async and hasattr(result, "__next__"):
                    observer = _ChatStream(self) if self.api == "chat" else _ResponsesStream(self)
                    return StreamProxy(result, observer, STREAM_WHERE)
            if self.api != "chat":
                _apply_response(self, result)
            elif self.capture:
                self.apply_chat_completion(result)
            else:
                self.result = _chat_facts(result, False)  # its response id remembered by apply()
                self.end(None, self.apply)
                return result
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(f"{_WHERE}.record", exc)
        self.end()
        return result

    def apply(self) -> None:
        """Record the facts :meth:`complete` kept (export thread); guarded. The response id is remembered here,
        first, not on the app's thread (feedback by that id asked before then finds it through
        :meth:`_pending_response_id`)."""
        try:
            facts = self.result
            if isinstance(facts[6], str):
                self.remember_response_id(facts[6])
            self.record_chat(facts)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(f"{_WHERE}.record", exc)
        finally:
            self.result = None

    def _pending_response_id(self) -> str | None:
        """The response id of an ended call the export thread has not recorded yet: in the facts kept of a Chat
        Completion, or at the start of a tapped stream's first chunk (:func:`_leading_id`). Read from the feedback
        sender's thread while the export thread may be recording the call: each attribute is read once."""
        facts = self.result
        if facts is not None:
            return facts[6] if isinstance(facts[6], str) else None
        tap = getattr(self._later, "__self__", None)
        if type(tap) is _ChatEvents:
            totals = tap.totals  # a long stream folded on the app's thread: its first chunks are read already
            if totals is not None:
                return totals.response_id if isinstance(totals.response_id, str) else None
            kept = tap.kept
            return _leading_id(kept[0]) if kept else None
        return None

    # --- results ---
    def respond(self, parts: list[str] | None, chars: int, finish: Any, model: Any, response_id: Any,
                refusal: bool, tool_calls: int, failures: int) -> None:
        call = self.call
        text = "".join(parts) if parts is not None else None
        call.response(text=text, chars=None if text is not None else chars,
                      finish_reason=finish if isinstance(finish, str) else None,
                      response_model=model if isinstance(model, str) else None,
                      response_id=response_id if isinstance(response_id, str) else None,
                      refusal=refusal, tool_calls=tool_calls)
        if failures:
            call.tool_call_failed(failures)

    def apply_chat_completion(self, completion: Any) -> None:
        self.record_chat(_chat_facts(completion, self.capture))

    def record_chat(self, facts: tuple[Any, ...]) -> None:
        """Record what :func:`_chat_facts` took from a completion (tool calls are checked here)."""
        usage, parts, chars, refusal, finish, model, response_id, tools = facts
        if usage is not None:
            self.call.usage(**usage)
        failures = 0
        if tools:
            offered = self.offered()
            failures = sum(tool_call_failed(name, arguments, offered, check_json=check)
                           for name, arguments, check in tools)
        self.respond(parts, chars, finish, model, response_id, refusal, len(tools), failures)


def _tap(stream: Any, rec: _Recorder) -> bool:
    """Put a :class:`_ChatEvents` tap in ``stream``'s decoder; False (nothing changed) when it has no decoder or
    response, or a response whose close cannot be hooked (:func:`_streams.can_hook`). The stream's attributes are
    read as attributes, never through its ``__dict__``, which would make one for it."""
    try:
        decoder, response = stream._decoder, stream.response
    except AttributeError:
        return False
    if decoder is None or response is None or not _can_hook(response, rec.is_async):
        return False
    tap = _new_object(_ChatEvents)  # _ChatEvents(...) without looking up __init__: EventTap's, called next
    _init_tap(tap, decoder, response, _tappable.get(type(stream)), rec.is_async)
    tap.rec = rec
    tap.reader = tap.totals = None
    stream._decoder = tap
    return True


# The hot path's functions and methods, bound once (see "names bound once" in _streams)
_prepare = _Recorder.prepare
_can_hook = can_hook
_new_object = new_object
_init_call = ProviderCall.__init__
_init_tap = EventTap.__init__
