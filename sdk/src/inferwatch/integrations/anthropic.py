"""Anthropic integration: :func:`wrap_anthropic` for one client, :func:`instrument_anthropic` for every client.

Usage::

    import anthropic, inferwatch
    inferwatch.init()
    client = inferwatch.wrap_anthropic(anthropic.Anthropic())   # this client (sync or async), or:
    inferwatch.instrument_anthropic()                           # every Anthropic/AsyncAnthropic client

Recorded (sync and async clients alike), one call (``llm_call.ProviderCall``) per request:

* ``messages.create`` (streamed or not) and ``messages.parse``;
* ``messages.stream(...)``: the helper builds its request itself (not through ``create``), so its stream manager
  is given a recording request instead: entering the manager starts the call, and the helper's
  ``MessageStream`` reads the raw events through a recording proxy, so iteration, ``text_stream``,
  ``get_final_message()``, ``get_final_text()``, ``until_done()`` and ``close()`` all work as before. This reaches
  one private attribute of the manager (``__api_request``); if a future ``anthropic`` renames it, the helper is
  passed through unrecorded (counted as an internal error) rather than broken.

Mapping: operation ``chat``; provider ``anthropic`` (``aws.bedrock`` / ``gcp.vertex_ai`` for those clients).
Tokens: Anthropic reports cache reads and writes on top of ``input_tokens``; they are added in (OTel: input
includes them), with ``cache_read``/``cache_creation`` kept apart, and the 1-hour share of the cache writes
(``usage.cache_creation.ephemeral_1h_input_tokens``; in a stream from ``message_start`` unless ``message_delta``
repeats it) as ``inferwatch.usage.cache_creation_1h.input_tokens``; thinking tokens
(``usage.output_tokens_details.thinking_tokens``) become reasoning tokens (inside output, as Anthropic counts
them). Finish reason: the stop reason as reported (``max_tokens`` -> truncated; ``refusal`` -> refusal).
Response length: text blocks only (thinking blocks are reasoning, not the answer; they still mark the first token
of a stream). Tool calls: ``tool_use`` blocks (server tools are not counted); failures by the rules in
``_tool_calls`` (a non-streamed ``input`` that is not an object, e.g. the raw text of unparseable JSON, counts;
streamed ``input_json_delta`` pieces are joined and parsed at the end).

A stream's usage arrives in ``message_delta``; a stream that ends without it keeps the input tokens of
``message_start`` and is flagged ``usage_missing`` (no output count). Not recorded: ``with_raw_response`` /
``with_streaming_response``, ``messages.count_tokens``, batches, the ``beta`` namespace.

Budget guard (``inferwatch.budget_guard``): checked before each recorded request; ``BudgetExceeded`` is raised
before the provider is called (async ``create``: by the returned awaitable; ``messages.stream()``: by that call),
or a downgrade rewrites the request's ``model``.

Both entry points are inert until ``init()``, idempotent, safe to combine and undone by
:func:`uninstrument_anthropic` and by ``inferwatch.shutdown()``. ``wrap_anthropic`` patches the client's
``messages`` resource instance and returns the same client object (``with_options()`` copies are not wrapped).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from .. import _guard, budget
from ..llm_call import ProviderCall
from ..metrics import normalise_anthropic_usage
from . import DidNotEnable, uninstrument
from ._patching import (ClientWraps, Factory, ProviderNames, Switch, capture_on, enter_call, exit_call, inactive,
                        load_classes, mark, patch_classes, raising, resource_at)
from ._readers import as_sequence, get
from ._streams import AsyncStreamProxy, StreamProxy
from ._tool_calls import error_payload, offered_tool_names, tool_call_failed

log = logging.getLogger("inferwatch")

PATCH_NAME = "anthropic"
_WHERE = "anthropic"
_MODULE = "anthropic.resources.messages"

# (class, method, kind, is_async): the patch table
_TARGETS: tuple[tuple[str, str, str, bool], ...] = (
    ("Messages", "create", "create", False),
    ("Messages", "parse", "create", False),
    ("Messages", "stream", "stream", False),
    ("AsyncMessages", "create", "create", True),
    ("AsyncMessages", "parse", "create", True),
    ("AsyncMessages", "stream", "stream", True),
)

_wraps = ClientWraps(PATCH_NAME)
_providers = ProviderNames("anthropic", (("Bedrock", "aws.bedrock"), ("Vertex", "gcp.vertex_ai")))


def _targets() -> list[tuple[type, str, str, bool]]:
    classes = load_classes((_MODULE, name) for name in ("Messages", "AsyncMessages"))
    found = [(classes[(_MODULE, name)], method, kind, is_async) for name, method, kind, is_async in _TARGETS
             if (_MODULE, name) in classes and callable(classes[(_MODULE, name)].__dict__.get(method))]
    if not found:
        raise DidNotEnable("anthropic is not installed (or too old: messages not found)")
    return found


def instrument_anthropic() -> bool:
    """Record every Anthropic client's calls (see the module docstring). True when installed now; False when it
    already was, or when anthropic is not installed (logged)."""
    try:
        targets = _targets()
    except DidNotEnable as exc:
        log.warning("inferwatch: Anthropic integration not enabled: %s", exc)
        return False
    return patch_classes(PATCH_NAME, [(cls, method, _factory(kind, is_async))
                                      for cls, method, kind, is_async in targets])


def wrap_anthropic(client: Any) -> Any:
    """Record this client's calls (sync or async client); returns the same client object, instrumented in place.

    Idempotent. Never raises: an object that is not an Anthropic client is returned unchanged."""
    with _guard.guard("anthropic.wrap"):
        resource = resource_at(client, "messages")
        if resource is not None:
            _wraps.wrap(client, [(resource, method, _factory(kind, is_async))
                                 for cls, method, kind, is_async in _targets() if isinstance(resource, cls)])
    return client


def uninstrument_anthropic() -> bool:
    """Undo :func:`instrument_anthropic` and every :func:`wrap_anthropic`; True when something was installed."""
    wrapped = _wraps.undo_all()
    return uninstrument(PATCH_NAME) or wrapped


# --- the wrappers ----------------------------------------------------------------------------------------------
def _factory(kind: str, is_async: bool) -> Factory:
    def make(original: Callable[..., Any], switch: Switch) -> Callable[..., Any]:
        if kind == "stream":  # sync in both clients: it returns a manager; the request runs when it is entered
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                if not switch.enabled or inactive(kwargs):
                    return original(self, *args, **kwargs)
                downgraded = budget.enforce_request(kwargs)  # BudgetExceeded: raised by .stream() itself
                token = enter_call()
                try:
                    manager = original(self, *args, **kwargs)
                finally:
                    exit_call(token)
                with _guard.guard(f"{_WHERE}.prepare"):
                    _record_manager(manager, self, kwargs, is_async, downgraded)
                return manager
        elif is_async:
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
                return _record_async(coroutine, self, kwargs, kwargs.get("stream") is True, downgraded)
        else:
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                if not switch.enabled or inactive(kwargs):
                    return original(self, *args, **kwargs)
                downgraded = budget.enforce_request(kwargs)  # BudgetExceeded: before the provider is called
                rec = _Recorder.prepare(self, kwargs, streamed=kwargs.get("stream") is True, is_async=False,
                                        downgraded_from=downgraded)
                token = enter_call()
                try:
                    result = original(self, *args, **kwargs)
                except BaseException as exc:
                    if rec is not None:
                        rec.end(exc)
                    raise
                finally:
                    exit_call(token)
                return result if rec is None else rec.complete(result)
        return mark(wrapper, original)
    return make


async def _record_async(awaitable: Any, resource: Any, kwargs: dict[str, Any], streamed: bool,
                        downgraded: str = "") -> Any:
    rec = _Recorder.prepare(resource, kwargs, streamed=streamed, is_async=True,  # timing starts with the request
                            downgraded_from=downgraded)
    try:
        result = await awaitable
    except BaseException as exc:
        if rec is not None:
            rec.end(exc)
        raise
    return result if rec is None else rec.complete(result)


def _record_manager(manager: Any, resource: Any, kwargs: dict[str, Any], is_async: bool, downgraded: str) -> None:
    """Give a ``MessageStreamManager`` a recording request (see the module docstring)."""
    attr = next((name for name in vars(manager) if name.endswith("__api_request")), None)
    if attr is None:
        raise AttributeError(f"{type(manager).__name__} has no __api_request: anthropic changed its stream helper")
    request = vars(manager)[attr]
    if is_async:
        setattr(manager, attr, _record_async(request, resource, kwargs, True, downgraded))
        return

    def recording_request() -> Any:
        rec = _Recorder.prepare(resource, kwargs, streamed=True, is_async=False, downgraded_from=downgraded)
        try:
            raw = request()
        except BaseException as exc:
            if rec is not None:
                rec.end(exc)
            raise
        return raw if rec is None else rec.complete(raw)

    setattr(manager, attr, recording_request)


def _usage(usage: Any, fallback: Any = None) -> dict[str, Any]:
    """Usage in the OTel convention; ``fallback`` (``message_start``'s usage) fills what a delta leaves None."""
    def pick(name: str) -> Any:
        value = getattr(usage, name, None)
        return getattr(fallback, name, None) if value is None and fallback is not None else value

    breakdown = get(usage, "cache_creation")  # by TTL; a stream's message_delta usually leaves it out
    if breakdown is None and fallback is not None:
        breakdown = get(fallback, "cache_creation")
    normalised = normalise_anthropic_usage(pick("input_tokens"), getattr(usage, "output_tokens", None),
                                           pick("cache_read_input_tokens"), pick("cache_creation_input_tokens"),
                                           _count(get(breakdown, "ephemeral_5m_input_tokens")),
                                           _count(get(breakdown, "ephemeral_1h_input_tokens")))
    thinking = getattr(getattr(usage, "output_tokens_details", None), "thinking_tokens", None)
    if thinking:
        normalised["reasoning_tokens"] = thinking
    return normalised


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class _Recorder(ProviderCall):
    """One request: prepared before the call, completed with its message (or stream proxy), or failed."""

    __slots__ = ("capture", "is_async", "tools")

    @classmethod
    def prepare(cls, resource: Any, kwargs: dict[str, Any], *, streamed: bool, is_async: bool,
                downgraded_from: str = "") -> _Recorder | None:
        try:
            model = kwargs.get("model")
            rec = cls(model if isinstance(model, str) else "", _providers.of(resource), streamed,
                      downgraded_from)
            rec.is_async = is_async
            capture = rec.capture = capture_on()
            rec.tools = kwargs.get("tools")
            messages = as_sequence(kwargs.get("messages"))
            rec.failures = _tool_result_errors(messages)
            if capture and messages is not None:
                shown = list(messages)
                system = kwargs.get("system")
                if system:
                    shown.insert(0, {"role": "system", "content": system if isinstance(system, str)
                                     else list(as_sequence(system) or ())})
                rec.call.content(input=shown)
            return rec
        except Exception as exc:  # noqa: BLE001 - never break the host
            _guard.record_internal_error(f"{_WHERE}.prepare", exc)
            return None

    def offered(self) -> frozenset[str] | None:
        return offered_tool_names(self.tools)

    def complete(self, result: Any) -> Any:
        """The app's result: the same object, or a recording proxy around a stream."""
        try:
            if self.streamed:
                if self.is_async and hasattr(result, "__anext__"):
                    return AsyncStreamProxy(result, _MessageStream(self), f"{_WHERE}.stream")
                if not self.is_async and hasattr(result, "__next__"):
                    return StreamProxy(result, _MessageStream(self), f"{_WHERE}.stream")
            self.apply_message(result)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error(f"{_WHERE}.record", exc)
        self.end()
        return result

    def respond(self, parts: list[str] | None, chars: int, stop_reason: Any, model: Any, message_id: Any,
                tool_calls: int, failures: int) -> None:
        text = "".join(parts) if parts is not None else None
        self.call.response(text=text, chars=None if text is not None else chars,
                           finish_reason=stop_reason if isinstance(stop_reason, str) else None,
                           response_model=model if isinstance(model, str) else None,
                           response_id=message_id if isinstance(message_id, str) else None,
                           refusal=stop_reason == "refusal", tool_calls=tool_calls)
        if failures:
            self.call.tool_call_failed(failures)

    def apply_message(self, message: Any) -> None:
        usage = getattr(message, "usage", None)
        if usage is not None:
            self.call.usage(**_usage(usage))
        parts: list[str] | None = [] if self.capture else None
        chars = calls = failures = 0
        offered: Any = _UNSET
        for block in getattr(message, "content", None) or ():
            kind = getattr(block, "type", None)
            if kind == "text":
                text = getattr(block, "text", None)
                if isinstance(text, str):
                    chars += len(text)
                    if parts is not None:
                        parts.append(text)
            elif kind == "tool_use":
                calls += 1
                if offered is _UNSET:
                    offered = self.offered()
                failures += tool_call_failed(getattr(block, "name", None), getattr(block, "input", None),
                                             offered)
        self.respond(parts, chars, getattr(message, "stop_reason", None), getattr(message, "model", None),
                     getattr(message, "id", None), calls, failures)


_UNSET = object()


def _tool_result_errors(messages: Any) -> int:
    """``tool_result`` blocks reporting an error, after the last assistant message (rule in ``_tool_calls``)."""
    if not messages:
        return 0
    count = 0
    for message in reversed(messages):
        if get(message, "role") == "assistant":
            break
        content = as_sequence(get(message, "content"))
        for block in content or ():
            if get(block, "type") == "tool_result" and (
                    get(block, "is_error") is True or error_payload(get(block, "content"))):
                count += 1
    return count


class _MessageStream:
    """Accumulates raw Messages stream events: text length, tool_use blocks, stop reason, usage."""

    __slots__ = ("blocks", "chars", "delta_usage", "message_id", "model", "parts", "rec", "seen_first",
                 "start_usage", "stop_reason")

    def __init__(self, rec: _Recorder) -> None:
        self.rec = rec
        self.seen_first = False
        self.chars = 0
        self.parts: list[str] | None = [] if rec.capture else None
        self.blocks: dict[Any, list[Any]] = {}  # tool_use block index -> [name, [json pieces], start input]
        self.stop_reason: Any = None
        self.start_usage: Any = None
        self.delta_usage: Any = None
        self.model: Any = None
        self.message_id: Any = None

    def _first(self) -> None:
        if not self.seen_first:
            self.seen_first = True
            self.rec.first_token()

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "content_block_delta":
            delta = event.delta
            delta_type = getattr(delta, "type", None)
            if delta_type == "text_delta":
                text = delta.text
                if text:
                    self._first()
                    self.chars += len(text)
                    if self.parts is not None:
                        self.parts.append(text)
            elif delta_type == "input_json_delta":
                piece = delta.partial_json
                if piece:
                    self._first()
                    block = self.blocks.get(event.index)
                    if block is not None:
                        block[1].append(piece)
            elif delta_type == "thinking_delta":
                if delta.thinking:
                    self._first()
        elif kind == "content_block_start":
            block = event.content_block
            block_type = getattr(block, "type", None)
            if block_type == "tool_use":
                self._first()
                self.blocks[event.index] = [getattr(block, "name", None), [], getattr(block, "input", None)]
            elif block_type == "text":
                text = getattr(block, "text", None)
                if text:
                    self._first()
                    self.chars += len(text)
                    if self.parts is not None:
                        self.parts.append(text)
            elif block_type == "server_tool_use":
                self._first()
        elif kind == "message_delta":
            reason = getattr(event.delta, "stop_reason", None)
            if reason:
                self.stop_reason = reason
            usage = getattr(event, "usage", None)
            if usage is not None:
                self.delta_usage = usage
        elif kind == "message_start":
            message = event.message
            self.model = getattr(message, "model", None)
            self.message_id = getattr(message, "id", None)
            self.start_usage = getattr(message, "usage", None)

    def finish(self, error: BaseException | None) -> None:
        try:
            if self.delta_usage is not None:
                self.rec.call.usage(**_usage(self.delta_usage, self.start_usage))
            elif self.start_usage is not None:  # input known, output never reported: usage_missing
                normalised = _usage(self.start_usage)
                normalised["output_tokens"] = None
                self.rec.call.usage(**normalised)
            failures = 0
            if self.blocks:
                offered = self.rec.offered()
                failures = sum(tool_call_failed(name, "".join(pieces) if pieces else start, offered)
                               for name, pieces, start in self.blocks.values())
            self.rec.respond(self.parts, self.chars, self.stop_reason, self.model, self.message_id,
                             len(self.blocks), failures)
        finally:
            self.rec.end(error)
