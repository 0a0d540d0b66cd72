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
Streams: TTFT is marked at the first chunk carrying content (text, refusal, tool-call or reasoning delta; not the
role-only first chunk), and the call ends when the stream is exhausted, closed or garbage-collected; an exception
from the stream is recorded and re-raised as is. A Chat Completions stream with capture off (the default) comes
back as the client's own ``openai.Stream``, its event decoder tapped (:class:`_ChatEvents`): the bytes its response
delivers are kept on the way, and read into events in the export thread. Any other stream (capture on, where the
text is taken before the call ends; the Responses API; a call sampled out; a stream object not made by openai's
client) comes back as a proxy (``inferwatch.integrations._streams``) whose observer reads each chunk as the app
receives it.

Mapping: operation ``chat`` (both APIs); provider ``openai`` (``azure.ai.openai`` for Azure clients); finish
reason: Chat Completions' own (first choice); Responses: ``stop`` or ``tool_calls`` when completed, the
``incomplete_details.reason`` (``max_output_tokens``, ``content_filter``) when incomplete, error status with the
response's error code when ``failed``. Refusals: ``message.refusal`` / a ``refusal`` content part (their text
counts as response length, so a refusal is not also "empty"). Tool calls: function and custom tool calls (not
built-in tools such as web search); failures by the rules in ``_streams``.

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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Callable

from .. import _guard, budget
from .. import client as iw_client
from ..llm_call import ProviderCall
from . import DidNotEnable, uninstrument
from . import _sse as sse
from . import _streams as st
from ._streams import _inside, get_ident

_mark_inside, _unmark_inside = _inside.add, _inside.discard  # bound once: see "names bound once" in _streams

log = logging.getLogger("inferwatch")

PATCH_NAME = "openai"
_WHERE = "openai"
_STREAM_WHERE = f"{_WHERE}.stream"  # made once: every streamed call names it

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

_wraps = st.ClientWraps(PATCH_NAME)
_providers = st.ProviderNames("openai", (("Azure", "azure.ai.openai"),))
# openai's Stream and AsyncStream, once instrumented (_targets): the code of each one's own generator
_tappable: dict[type, Any] = {}


def _targets() -> list[tuple[type, str, str, bool]]:
    """(class, method, api, is_async) present in the installed openai; DidNotEnable when there are none."""
    classes = st.load_classes((module, cls) for module, cls, _, _, _ in _TARGETS)
    found = [(classes[(module, name)], method, api, is_async) for module, name, method, api, is_async in _TARGETS
             if (module, name) in classes and callable(classes[(module, name)].__dict__.get(method))]
    if not found:
        raise DidNotEnable("openai is not installed (or too old: chat.completions not found)")
    global _tappable
    _tappable = _stream_classes()
    return found


def _stream_classes() -> dict[type, Any]:
    """openai's ``Stream`` and ``AsyncStream`` where :class:`_ChatEvents` can tap them, each with the code of its
    own generator (``__stream__``): their ``_iter_events`` reads the events through ``self._decoder.iter_bytes``
    (``aiter_bytes``) and their generator closes the response itself, as openai's releases since 1.x do. Another
    shape (an older or newer client) gets the stream proxy instead. Checked only by the names the code uses,
    not by its structure: that the generator closes the response in a ``finally`` (the call's end, with its
    error: :class:`_streams.EventTap`), and that the stream reads only ``iter_bytes``/``aiter_bytes`` of its
    decoder; the tests hold the pinned openai to both."""
    classes = st.load_classes([("openai", "Stream"), ("openai", "AsyncStream")])
    return {cls: cls.__stream__.__code__ for (_, name), cls in classes.items() if _reads_decoder(
        cls, "aiter_bytes" if name == "AsyncStream" else "iter_bytes",
        "aclose" if name == "AsyncStream" else "close")}


def _reads_decoder(cls: type, method: str, close: str = "close") -> bool:
    def names(function: str) -> set[str]:
        code = getattr(getattr(cls, function, None), "__code__", None)
        return set(code.co_names) if code is not None else set()

    return {"_decoder", method} <= names("_iter_events") and close in names("__stream__")


def instrument_openai() -> bool:
    """Record every OpenAI client's calls (see the module docstring). True when installed now; False when it
    already was, or when openai is not installed (logged)."""
    try:
        targets = _targets()
    except DidNotEnable as exc:
        log.warning("inferwatch: OpenAI integration not enabled: %s", exc)
        return False
    return st.patch_classes(PATCH_NAME, [(cls, method, _factory(api, is_async))
                                         for cls, method, api, is_async in targets])


def wrap_openai(client: Any) -> Any:
    """Record this client's calls (sync or async client); returns the same client object, instrumented in place.

    Idempotent. Never raises: an object that is not an OpenAI client is returned unchanged."""
    with _guard.guard("openai.wrap"):
        by_class = {(cls, method): (api, is_async) for cls, method, api, is_async in _targets()}
        targets = []
        for path, methods in _CLIENT_PATHS:
            resource = st.resource_at(client, path)
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
def _factory(api: str, is_async: bool) -> st.Factory:
    def make(original: Callable[..., Any], switch: st.Switch) -> Callable[..., Any]:
        if is_async:
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                if not switch.enabled or st.inactive(kwargs):
                    return original(self, *args, **kwargs)
                try:
                    downgraded = budget.enforce_request(kwargs)
                except budget.BudgetExceeded as exc:
                    return st.raising(exc)  # raised when awaited, as the provider's own errors are
                token = st.enter_call()
                try:
                    coroutine = original(self, *args, **kwargs)  # argument errors still raise here, as before
                finally:
                    st.exit_call(token)
                return _record_async(coroutine, self, api, kwargs, downgraded)
        else:
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                # st.inactive(kwargs), its common answer inlined: no pipeline, or inside a recorded call
                thread = get_ident()
                if not switch.enabled or iw_client._pipeline is None or thread in _inside or (
                        "extra_headers" in kwargs and st.inactive(kwargs)):
                    return original(self, *args, **kwargs)
                # BudgetExceeded: before the provider is called (no guard installed: nothing to ask)
                downgraded = "" if budget._active is None else budget.enforce_request(kwargs)
                rec = _prepare(self, api, kwargs, is_async=False, downgraded_from=downgraded)
                _mark_inside(thread)  # st.enter_call(), inlined as the rest of this hot path (it was not inside)
                try:
                    result = original(self, *args, **kwargs)
                except BaseException as exc:
                    if rec is not None:
                        rec.end(exc)
                    raise
                finally:
                    _unmark_inside(thread)
                return result if rec is None else rec.complete(result)
        return st.mark(wrapper, original)
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


def _usage(usage: Any) -> dict[str, Any]:
    """Chat ``CompletionUsage`` or Responses ``ResponseUsage`` (a model, or its JSON as a dict) in the OTel
    convention."""
    get = st.get
    prompt = get(usage, "prompt_tokens")
    if prompt is not None:
        completion = get(usage, "completion_tokens")
        prompt_details = get(usage, "prompt_tokens_details")
        completion_details = get(usage, "completion_tokens_details")
    else:
        prompt = get(usage, "input_tokens")
        completion = get(usage, "output_tokens")
        prompt_details = get(usage, "input_tokens_details")
        completion_details = get(usage, "output_tokens_details")
    # normalise_openai_usage(), inlined: OpenAI's counts are already in the OTel convention (cached tokens and
    # cache writes inside prompt tokens, reasoning inside completion tokens)
    return {"input_tokens": prompt, "output_tokens": completion,
            "cache_read_tokens": get(prompt_details, "cached_tokens") or 0,
            "cache_write_tokens": get(prompt_details, "cache_write_tokens") or 0,
            "reasoning_tokens": get(completion_details, "reasoning_tokens") or 0}


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
            options = iw_client._options  # st.capture_on(), inlined (every call runs this)
            capture = rec.capture = options is not None and options.capture != "off"
            rec.tools = kwargs.get("tools")
            rec.functions = kwargs.get("functions")
            rec.result = None
            if api == "chat":
                messages = kwargs.get("messages")
                if not isinstance(messages, (list, tuple)):  # st.as_sequence
                    messages = None
                elif messages:
                    rec.count_tool_errors_later(_chat_tool_errors, messages)
                if capture and messages is not None:
                    rec.call.content(input=list(messages))
            else:
                items = kwargs.get("input")
                sequence = st.as_sequence(items)
                if sequence:
                    rec.count_tool_errors_later(_responses_tool_errors, sequence)
                if capture:
                    instructions = kwargs.get("instructions")
                    shown = [{"role": "user", "content": items}] if isinstance(items, str) else list(
                        st.as_sequence(items) or ())
                    if isinstance(instructions, str) and instructions:
                        shown.insert(0, {"role": "system", "content": instructions})
                    rec.call.content(input=shown)
            return rec
        except Exception as exc:  # noqa: BLE001 - never break the host
            _guard.record_internal_error(f"{_WHERE}.prepare", exc)
            return None

    def offered(self) -> frozenset[str] | None:
        return st.offered_tool_names(self.tools, self.functions)

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
                    return st.AsyncStreamProxy(result, observer, _STREAM_WHERE)
                if not self.is_async and hasattr(result, "__next__"):
                    observer = _ChatStream(self) if self.api == "chat" else _ResponsesStream(self)
                    return st.StreamProxy(result, observer, _STREAM_WHERE)
            if self.api != "chat":
                self.apply_response(result)
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
            failures = sum(st.tool_call_failed(name, arguments, offered, check_json=check)
                           for name, arguments, check in tools)
        self.respond(parts, chars, finish, model, response_id, refusal, len(tools), failures)

    def apply_response(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.call.usage(**_usage(usage))
        parts: list[str] | None = [] if self.capture else None
        chars = calls = failures = 0
        refusal = False
        offered: Any = _UNSET
        for item in getattr(response, "output", None) or ():
            kind = getattr(item, "type", None)
            if kind == "message":
                for part in getattr(item, "content", None) or ():
                    part_type = getattr(part, "type", None)
                    text = getattr(part, "text", None) if part_type == "output_text" else (
                        getattr(part, "refusal", None) if part_type == "refusal" else None)
                    if isinstance(text, str) and text:
                        chars += len(text)
                        refusal = refusal or part_type == "refusal"
                        if parts is not None:
                            parts.append(text)
            elif kind in ("function_call", "custom_tool_call"):
                calls += 1
                if offered is _UNSET:
                    offered = self.offered()
                failures += st.tool_call_failed(getattr(item, "name", None), getattr(item, "arguments", None),
                                                offered, check_json=kind == "function_call")
        status = getattr(response, "status", None)
        finish: Any = status
        if status == "completed":
            finish = "tool_calls" if calls else "stop"
        elif status == "incomplete":
            finish = getattr(getattr(response, "incomplete_details", None), "reason", None) or "incomplete"
        elif status == "failed":
            m = self.call.metrics
            m.status = "error"
            m.error_type = str(getattr(getattr(response, "error", None), "code", None) or "response.failed")
        self.respond(parts, chars, finish, getattr(response, "model", None), getattr(response, "id", None),
                     refusal, calls, failures)


def _chat_facts(completion: Any, capture: bool) -> tuple[Any, ...]:
    """(usage as :func:`_usage` gives it, text parts (capture on), chars, refusal, finish reason, model, id,
    tool calls as (name, arguments, check_json)) of a Chat Completion: what recording it needs, without the
    response itself (a dict of ints, strs and tuples of them: nothing the garbage collector has to track)."""
    parts: list[str] | None = [] if capture else None
    chars = 0
    refusal = False
    finish = None
    tools: list[tuple[Any, Any, bool]] | tuple[()] = ()
    for choice in getattr(completion, "choices", None) or ():
        if finish is None:
            finish = getattr(choice, "finish_reason", None)
        message = getattr(choice, "message", None)
        for text, is_refusal in ((getattr(message, "content", None), False),
                                 (getattr(message, "refusal", None), True)):
            if isinstance(text, str) and text:
                chars += len(text)
                refusal = refusal or is_refusal
                if parts is not None:
                    parts.append(text)
        tool_calls = getattr(message, "tool_calls", None)
        legacy = getattr(message, "function_call", None)
        if tool_calls or legacy is not None:
            tools = [*tools, *_tool_facts(tool_calls, legacy)]
    usage = getattr(completion, "usage", None)
    return (None if usage is None else _usage(usage), parts, chars, refusal, finish,
            getattr(completion, "model", None), getattr(completion, "id", None), tools)


def _tool_facts(tool_calls: Any, legacy: Any) -> list[tuple[Any, Any, bool]]:
    """(name, arguments, check_json) of a message's tool calls and its legacy ``function_call``."""
    facts = []
    for tool_call in tool_calls or ():
        function = getattr(tool_call, "function", None)
        if function is not None:
            facts.append((getattr(function, "name", None), getattr(function, "arguments", None), True))
        else:
            facts.append((st.get(getattr(tool_call, "custom", None), "name"), None, False))
    if legacy is not None:
        facts.append((getattr(legacy, "name", None), getattr(legacy, "arguments", None), True))
    return facts


_UNSET = object()


def _chat_tool_errors(messages: Any) -> int:
    """Tool results reported as errors after the last assistant message (rule in ``_streams``)."""
    if not messages:
        return 0
    count = 0
    for message in reversed(messages):
        role = message.get("role") if type(message) is dict else st.get(message, "role")  # dicts: no call
        if role == "assistant":
            break
        if role in ("tool", "function") and st.error_payload(st.get(message, "content")):
            count += 1
    return count


def _responses_tool_errors(items: Any) -> int:
    if not items:
        return 0
    count = 0
    for item in reversed(items):
        kind = st.get(item, "type")
        if st.get(item, "role") == "assistant" or kind in ("function_call", "custom_tool_call"):
            break
        if kind in ("function_call_output", "custom_tool_call_output") and st.error_payload(
                st.get(item, "output")):
            count += 1
    return count


# --- stream observers ------------------------------------------------------------------------------------------
class _ChatStream:
    """Accumulates ``ChatCompletionChunk``s: content/refusal length, tool calls, finish reason, usage.

    Each chunk is reduced to these totals as the app receives it (keeping the chunks for later would keep their
    objects alive for the garbage collector, which costs the app more than reading them now); the rest (usage,
    the tool-call checks, the response facts) is recorded in the export thread when the call ends
    (:meth:`later`), or at once with capture on, where the text must be taken before the call ends."""

    __slots__ = ("chars", "error_type", "finish_reason", "model", "parts", "rec", "refusal", "response_id",
                 "seen_first", "stopped", "tool_calls", "usage")

    def __init__(self, rec: _Recorder) -> None:
        self.rec = rec
        self.seen_first = False
        self.chars = 0
        self.parts: list[str] | None = [] if rec.capture else None
        self.refusal = False
        self.finish_reason: Any = None
        self.usage: Any = None
        self.model: Any = None
        self.response_id: Any = None
        self.tool_calls: dict[tuple[Any, Any], list[Any]] = {}  # (choice, index) -> [name, [argument pieces]]
        self.error_type = ""  # an event the client raised on (tapped streams: read after the call ended)
        self.stopped = False  # tapped streams: past the event where the client's stream stopped

    def _first(self, at_ns: int | None = None) -> None:
        self.seen_first = True
        self.rec.first_token(at_ns)

    def observe(self, chunk: Any) -> None:
        """One chunk as the app receives it. openai's models are read through their ``__dict__``: an attribute
        read on a pydantic model goes through its ``__getattr__`` hook, which the interpreter cannot specialise
        (about 400 machine instructions each, 8 reads per chunk). Counted with callgrind over the bench's
        11-chunk stream: 61k instructions per stream read attribute by attribute, 46k this way (bench/README.md;
        ``bench/sdk_instructions.py`` counts the whole call). Anything else of the same shape (a missing field,
        an object without ``__dict__``) is read with defaults, per chunk or per choice, before anything of it is
        counted, and then goes through the same code."""
        try:
            fields = chunk.__dict__
            usage = fields["usage"]
            choices = fields["choices"]
        except Exception:  # noqa: BLE001 - not one of openai's chunk models: read it with defaults
            usage = getattr(chunk, "usage", None)
            choices = getattr(chunk, "choices", None)
        if self.model is None:  # until a chunk names it (the first one, from openai): read once per stream
            self.model = getattr(chunk, "model", None)
            self.response_id = getattr(chunk, "id", None)
        if usage is not None:
            self.usage = usage
        for choice in choices or ():
            try:
                fields = choice.__dict__
                delta = fields["delta"].__dict__
                content = delta["content"]
                other = delta["tool_calls"] or delta["refusal"] or delta["function_call"] is not None
                reason = fields["finish_reason"]
            except Exception:  # noqa: BLE001 - e.g. no delta: the same fields, read with defaults
                delta = getattr(choice, "delta", None)
                content = getattr(delta, "content", None)
                other = delta is not None and (getattr(delta, "tool_calls", None) or getattr(
                    delta, "refusal", None) or getattr(delta, "function_call", None) is not None)
                reason = getattr(choice, "finish_reason", None)
                fields = {"index": getattr(choice, "index", None), "delta": delta}  # as read below
            if content:  # self._text(content), inlined: most chunks are one piece of text
                if not self.seen_first:
                    self._first()
                self.chars += len(content)
                if self.parts is not None:
                    self.parts.append(content)
            if other:
                self._other(fields["index"], fields["delta"])
            if reason and (self.finish_reason is None or fields["index"] == 0):
                self.finish_reason = reason

    def _text(self, text: str) -> None:
        if not self.seen_first:
            self._first()
        self.chars += len(text)
        if self.parts is not None:
            self.parts.append(text)

    def _other(self, choice: Any, delta: Any) -> None:
        """A delta with a refusal or tool-call pieces (after its text, as the text was counted first)."""
        refusal = getattr(delta, "refusal", None)
        if refusal:
            self.refusal = True
            self._text(refusal)
        tool_calls = getattr(delta, "tool_calls", None)
        legacy = getattr(delta, "function_call", None)
        if tool_calls or legacy is not None:
            if not self.seen_first:
                self._first()
            for tc in tool_calls or ():
                function = tc.function
                self._tool_piece((choice, tc.index), getattr(function, "name", None),
                                 getattr(function, "arguments", None))
            if legacy is not None:
                self._tool_piece((choice, "function_call"), legacy.name, legacy.arguments)

    def _tool_piece(self, key: tuple[Any, Any], name: Any, arguments: Any) -> None:
        entry = self.tool_calls.get(key)
        if entry is None:
            entry = self.tool_calls[key] = [None, []]
        if name:
            entry[0] = name
        if arguments:
            entry[1].append(arguments)

    def take(self, events: Sequence[sse.Event]) -> None:
        """Events read from a tap's chunks (:class:`_ChatEvents`), in order: each ``data`` parsed as the client
        parses it, each chunk read as :meth:`observe` reads the client's chunk objects, its clock (when the chunk
        that completed it arrived) the time to first token when it is the first with content. The reading stops
        where the client's stream stopped: at ``[DONE]``, or at an event the client raised on (an ``error``
        member, JSON it could not parse), which is the call's error."""
        for at, _, data in events:
            if self.stopped:
                return
            if data.startswith("[DONE]"):
                self.stopped = True
                return
            try:
                chunk = json.loads(data)
            except ValueError:
                self.error_type = "JSONDecodeError"
                self.stopped = True
                return
            if type(chunk) is not dict:  # not a chunk the reading below knows
                continue
            if chunk.get("error"):
                self.error_type = "APIError"
                self.stopped = True
                return
            self.observe_data(chunk, at)

    def observe_data(self, chunk: dict[str, Any], at: int) -> None:
        """One chunk as parsed JSON (a tapped stream's, in the export thread): :meth:`observe`'s reading."""
        get = st.get
        if self.model is None:
            self.model = chunk.get("model")
            self.response_id = chunk.get("id")
        usage = chunk.get("usage")
        if usage is not None:
            self.usage = usage
        for choice in chunk.get("choices") or ():
            index = get(choice, "index")
            delta = get(choice, "delta")
            content = get(delta, "content")
            if content:
                if not self.seen_first:
                    self._first(at)
                self.chars += len(content)
            refusal = get(delta, "refusal")
            if refusal:
                self.refusal = True
                if not self.seen_first:
                    self._first(at)
                self.chars += len(refusal)
            tool_calls = get(delta, "tool_calls")
            legacy = get(delta, "function_call")
            if tool_calls or legacy is not None:
                if not self.seen_first:
                    self._first(at)
                for tc in tool_calls or ():
                    function = get(tc, "function")
                    self._tool_piece((index, get(tc, "index")), get(function, "name"), get(function, "arguments"))
                if legacy is not None:
                    self._tool_piece((index, "function_call"), get(legacy, "name"), get(legacy, "arguments"))
            reason = get(choice, "finish_reason")
            if reason and (self.finish_reason is None or index == 0):
                self.finish_reason = reason

    def finish(self, error: BaseException | None) -> None:
        if self.parts is not None:  # capture on: the text is taken now
            try:
                self.record()
            finally:
                self.rec.end(error)
            return
        if isinstance(self.response_id, str):  # for feedback by id before the span is out
            self.rec.response_id = self.response_id
        self.rec.end(error, self.later)

    def later(self) -> None:
        """:meth:`record`, guarded: run by the export thread."""
        try:
            self.record()
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(_STREAM_WHERE, exc)

    def record(self) -> None:
        usage = self.usage
        if usage is not None:
            self.rec.call.usage(**_usage(usage))
        failures = 0
        if self.tool_calls:
            offered = self.rec.offered()
            failures = sum(st.tool_call_failed(name, "".join(pieces), offered)
                           for name, pieces in self.tool_calls.values())
        self.rec.respond(self.parts, self.chars, self.finish_reason, self.model, self.response_id,
                         self.refusal, len(self.tool_calls), failures)


class _ChatEvents(st.EventTap):
    """A Chat Completions stream's tap (see :class:`_streams.EventTap`): the app iterates the client's own
    ``openai.Stream``; the chunks of bytes kept on the way are read into events (:mod:`._sse`) and those by a
    :class:`_ChatStream` in the export thread (:meth:`later`), or every :data:`_streams.FOLD_AT` chunks on the
    app's thread."""

    __slots__ = ("reader", "rec", "totals")
    where = _STREAM_WHERE

    @classmethod
    def tap(cls, stream: Any, rec: _Recorder) -> bool:
        """Put a tap in ``stream``'s decoder; False (nothing changed) when it has no decoder or response, or a
        response whose close cannot be hooked (:func:`_streams.can_hook`). The stream's attributes are read as
        attributes, never through its ``__dict__``, which would make one for it."""
        try:
            decoder, response = stream._decoder, stream.response
        except AttributeError:
            return False
        if decoder is None or response is None or not _can_hook(response, rec.is_async):
            return False
        tap = _new_object(cls)  # cls(...) without looking up __init__: EventTap's, called next
        _init_tap(tap, decoder, response, _tappable.get(type(stream)), rec.is_async)
        tap.rec = rec
        tap.reader = tap.totals = None
        stream._decoder = tap
        return True

    def ended(self, error: BaseException | None) -> None:
        # The response id is read with the events, in the export thread (feedback by that id asked before then
        # finds it through _Recorder._pending_response_id).
        try:
            if error is not None:
                error = _as_client_error(error)
        finally:
            self.rec.end(error, _MethodType(_later, self))  # self.later; recorded whatever failed above

    def read(self, kept: Sequence[Any]) -> None:
        totals = self.totals
        if totals is None:
            totals = self.totals = _ChatStream(self.rec)
            self.reader = sse.EventReader()
        events: list[sse.Event] = []
        pairs = iter(kept)
        try:
            for chunk, clock in zip(pairs, pairs):  # chunk, clock, chunk, clock...
                self.reader.feed(chunk, clock, events)
        except UnicodeDecodeError:  # the client's decoder raised there too, and its stream ended
            totals.take(events)
            if not totals.stopped:
                totals.error_type, totals.stopped = "UnicodeDecodeError", True
            return
        totals.take(events)

    def later(self) -> None:
        """Read what is left and record the stream (export thread); guarded."""
        try:
            self.read(self.kept[:self.count])
            totals, rec = self.totals, self.rec
            if isinstance(totals.response_id, str):  # first: a failure below leaves it remembered
                rec.remember_response_id(totals.response_id)
            totals.record()
            if totals.error_type:
                rec.error_found(totals.error_type)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(_STREAM_WHERE, exc)


# The hot path's functions and methods, bound once (see "names bound once" in _streams)
_prepare = _Recorder.prepare
_tap = _ChatEvents.tap
_can_hook = st.can_hook
_new_object = st.new_object
_init_call = ProviderCall.__init__
_init_tap = st.EventTap.__init__
_MethodType = st.MethodType
_later = _ChatEvents.later


_ID_START = b'data: {"id":"'  # how OpenAI's streams begin


def _leading_id(chunk: bytes) -> str | None:
    """The ``id`` of the first event's JSON when the first chunk begins exactly as OpenAI's streams do
    (``data: {"id":"chatcmpl-...``), found without parsing anything; None otherwise (other spacing, an escape
    in the id, the id cut by the chunk's end). For feedback by a response id asked before the export thread has
    read the stream's events (:meth:`_Recorder._pending_response_id`, on the feedback sender's thread): what it
    cannot find here is linked only if the export thread has remembered it by the time the sender looks again."""
    if not chunk.startswith(_ID_START):
        return None
    start = len(_ID_START)
    end = chunk.find(b'"', start, start + 256)
    value = chunk[start:end] if end > start else b""
    if not value or b"\\" in value:
        return None
    try:
        return value.decode("ascii")
    except UnicodeDecodeError:
        return None


def _as_client_error(error: BaseException) -> BaseException:
    """The error as the app sees it: openai's ``Stream`` turns the transport's timeouts and request errors into
    ``APITimeoutError`` / ``APIConnectionError`` (its ``_iter_events``), and the tap sees them so turned. An
    error that reaches the tap as the HTTP library raised it (a client that does not turn them) is named the
    same way: by openai's exception tuples, or, where this openai has none, by the HTTP library's class names."""
    import openai  # noqa: PLC0415 - loaded: its stream is what raised

    if not isinstance(error, Exception) or isinstance(error, openai.OpenAIError):
        return error
    request = getattr(error, "_request", None)
    try:
        from openai._httpx2 import request_exceptions, timeout_exceptions  # noqa: PLC0415

        timeout, failed = isinstance(error, timeout_exceptions()), isinstance(error, request_exceptions())
    except (ImportError, AttributeError):  # another openai release: httpx's own base classes, by name
        httpx_family = type(error).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore")
        names = {cls.__name__ for cls in type(error).__mro__} if httpx_family else set()
        timeout, failed = "TimeoutException" in names, "RequestError" in names
    if timeout:
        return openai.APITimeoutError(request=request)
    return openai.APIConnectionError(request=request) if failed else error


_FIRST_TOKEN_EVENTS = frozenset({
    "response.function_call_arguments.delta", "response.custom_tool_call_input.delta",
    "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
})
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class _ResponsesStream:
    """Accumulates Responses stream events; the final ``response.completed``/``incomplete``/``failed`` event's
    response is authoritative, the deltas serve streams that end early."""

    __slots__ = ("chars", "final", "items", "model", "parts", "rec", "refusal", "response_id", "seen_first")

    def __init__(self, rec: _Recorder) -> None:
        self.rec = rec
        self.seen_first = False
        self.chars = 0
        self.parts: list[str] | None = [] if rec.capture else None
        self.refusal = False
        self.final: Any = None
        self.items: list[Any] = []  # finished function/custom tool-call items
        self.model: Any = None
        self.response_id: Any = None

    def _first(self) -> None:
        if not self.seen_first:
            self.seen_first = True
            self.rec.first_token()

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            delta = event.delta
            if delta:
                self._first()
                self.chars += len(delta)
                if kind == "response.refusal.delta":
                    self.refusal = True
                if self.parts is not None:
                    self.parts.append(delta)
        elif kind in _FIRST_TOKEN_EVENTS:
            self._first()
        elif kind == "response.output_item.added":
            if getattr(event.item, "type", None) in ("function_call", "custom_tool_call"):
                self._first()
        elif kind == "response.output_item.done":
            if getattr(event.item, "type", None) in ("function_call", "custom_tool_call"):
                self.items.append(event.item)
        elif kind in _FINAL_EVENTS:
            self.final = event.response
        elif kind == "response.created":
            response = getattr(event, "response", None)
            self.model = getattr(response, "model", None)
            self.response_id = getattr(response, "id", None)

    def finish(self, error: BaseException | None) -> None:
        try:
            if self.final is not None:
                self.rec.apply_response(self.final)
                return
            offered = self.rec.offered() if self.items else None
            failures = sum(st.tool_call_failed(getattr(item, "name", None), getattr(item, "arguments", None),
                                               offered, check_json=getattr(item, "type", None) == "function_call")
                           for item in self.items)
            self.rec.respond(self.parts, self.chars, None, self.model, self.response_id, self.refusal,
                             len(self.items), failures)
        finally:
            self.rec.end(error)
