"""OpenAI Chat Completions: what a completion, its chunks and its tapped byte stream record.

* a completion (not streamed) is reduced to plain facts (:func:`_chat_facts`) on the app's thread and recorded
  from them in the export thread, so nothing of the response object is kept until then;
* a stream through the proxy (capture on, a call sampled out, a stream class the tap does not fit) is read chunk
  by chunk as the app receives it (:class:`_ChatStream`);
* a stream with capture off is tapped (:class:`_ChatEvents`): the app gets the client's own ``openai.Stream``,
  the bytes its response delivers are kept on the way and read into events in the export thread.

TTFT is marked at the first chunk carrying content (text, refusal, tool-call or reasoning delta; not the
role-only first chunk). Finish reason: the first choice's. Refusals: ``message.refusal`` (its text counts as
response length, so a refusal is not also "empty"). Tool calls: function and custom tool calls; failures by the
rules in ``_tool_calls``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _guard
from . import _sse as sse
from ._patching import load_classes
from ._readers import get
from ._streams import EventTap, MethodType
from ._tool_calls import error_payload, tool_call_failed

if TYPE_CHECKING:
    from ..llm_call import ProviderCall as _Recorder  # openai._Recorder, a ProviderCall with api, capture, tools

STREAM_WHERE = "openai.stream"  # internal errors of a stream's recording are counted under this name


def _usage(usage: Any) -> dict[str, Any]:
    """Chat ``CompletionUsage`` or Responses ``ResponseUsage`` (a model, or its JSON as a dict) in the OTel
    convention."""
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
            facts.append((get(getattr(tool_call, "custom", None), "name"), None, False))
    if legacy is not None:
        facts.append((getattr(legacy, "name", None), getattr(legacy, "arguments", None), True))
    return facts


def _chat_tool_errors(messages: Any) -> int:
    """Tool results reported as errors after the last assistant message (rule in ``_tool_calls``)."""
    if not messages:
        return 0
    count = 0
    for message in reversed(messages):
        role = message.get("role") if type(message) is dict else get(message, "role")  # dicts: no call
        if role == "assistant":
            break
        if role in ("tool", "function") and error_payload(get(message, "content")):
            count += 1
    return count


# --- streams ---------------------------------------------------------------------------------------------------
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
        """One chunk as the app receives it. openai's models are read through their ``__dict__`` (an attribute
        read on a pydantic model goes through its slow ``__getattr__`` hook); anything else of the same shape (a
        missing field, an object without ``__dict__``) is read with defaults, per chunk or per choice, and then
        goes through the same code."""
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
            _guard.record_internal_error(STREAM_WHERE, exc)

    def record(self) -> None:
        usage = self.usage
        if usage is not None:
            self.rec.call.usage(**_usage(usage))
        failures = 0
        if self.tool_calls:
            offered = self.rec.offered()
            failures = sum(tool_call_failed(name, "".join(pieces), offered)
                           for name, pieces in self.tool_calls.values())
        self.rec.respond(self.parts, self.chars, self.finish_reason, self.model, self.response_id,
                         self.refusal, len(self.tool_calls), failures)


class _ChatEvents(EventTap):
    """A Chat Completions stream's tap (see :class:`_streams.EventTap`; installed by ``openai._tap``): the app
    iterates the client's own ``openai.Stream``; the chunks of bytes kept on the way are read into events
    (:mod:`._sse`) and those by a :class:`_ChatStream` in the export thread (:meth:`later`), or every
    :data:`_streams.FOLD_AT` chunks on the app's thread."""

    __slots__ = ("reader", "rec", "totals")
    where = STREAM_WHERE

    def ended(self, error: BaseException | None) -> None:
        # The response id is read with the events, in the export thread (feedback by that id asked before then
        # finds it through _Recorder._pending_response_id).
        try:
            if error is not None:
                error = _as_client_error(error)
        finally:
            self.rec.end(error, MethodType(_later, self))  # self.later; recorded whatever failed above

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
            _guard.record_internal_error(STREAM_WHERE, exc)


# the export callback, bound once (see "names bound once" in _streams)
_later = _ChatEvents.later


_ID_START = b'data: {"id":"'  # how OpenAI's streams begin


def _leading_id(chunk: bytes) -> str | None:
    """The ``id`` of the first event's JSON when the first chunk begins exactly as OpenAI's streams do
    (``data: {"id":"chatcmpl-...``), found without parsing anything; None otherwise (other spacing, an escape
    in the id, the id cut by the chunk's end). For feedback by a response id asked before the export thread has
    read the stream's events (``openai._Recorder._pending_response_id``, on the feedback sender's thread): what it
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


def _stream_classes() -> dict[type, Any]:
    """openai's ``Stream`` and ``AsyncStream`` where :class:`_ChatEvents` can tap them, each with the code of its
    own generator (``__stream__``): their ``_iter_events`` reads the events through ``self._decoder.iter_bytes``
    (``aiter_bytes``) and their generator closes the response itself, as openai's releases since 1.x do. Another
    shape gets the stream proxy instead. Checked by the names the code uses only: that the generator closes the
    response in a ``finally`` and that the stream reads only ``iter_bytes``/``aiter_bytes`` of its decoder are
    held to the pinned openai by the tests."""
    classes = load_classes([("openai", "Stream"), ("openai", "AsyncStream")])
    return {cls: cls.__stream__.__code__ for (_, name), cls in classes.items() if _reads_decoder(
        cls, "aiter_bytes" if name == "AsyncStream" else "iter_bytes",
        "aclose" if name == "AsyncStream" else "close")}


def _reads_decoder(cls: type, method: str, close: str = "close") -> bool:
    def names(function: str) -> set[str]:
        code = getattr(getattr(cls, function, None), "__code__", None)
        return set(code.co_names) if code is not None else set()

    return {"_decoder", method} <= names("_iter_events") and close in names("__stream__")

