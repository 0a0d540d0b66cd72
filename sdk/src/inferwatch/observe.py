"""``@inferwatch.observe``: record any function as a span; nested calls form one trace.

Works with or without parentheses, on sync and async functions, generators and async generators (the span
covers the whole iteration). The function's result and exceptions pass through untouched; an exception is only
recorded (``error.type``, span status) and re-raised as it was. Before ``init()`` the wrapper calls straight
through.

Generators: the span is current while the generator's own code runs (each step), so the calls it makes are its
children, and never in the consumer's code between steps (a generator resumes in its consumer's context: a span
made current across a ``yield`` would parent the consumer's calls too, and could not be detached where it was
attached). Values sent in (``send``/``asend``), exceptions thrown in (``throw``/``athrow``), ``close``/``aclose``
and the return value reach the generator as they would without the decorator. A generator closed before its end
(``break``, ``close()``, collected part-read) ends its span as a success: stopping early is the consumer's choice,
not the function's failure.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Generator, TypeVar, overload

from opentelemetry import context as otel_context
from opentelemetry import trace

from . import client
from . import semconv as sc
from ._guard import guard

F = TypeVar("F", bound=Callable[..., Any])


def _start(name: str, attributes: dict[str, Any], make_current: bool = True) -> tuple[Any, Any]:
    """(span, context token) or (None, None) when inactive or on an SDK failure. Without ``make_current`` the
    token is the span's context instead (a generator attaches it for each step)."""
    pipeline = client.get_pipeline()
    if pipeline is None:
        return None, None
    with guard("observe.start"):
        span = pipeline.span(name, trace.SpanKind.INTERNAL)  # the SDK's light span (telemetry.spans.LightSpan)
        if attributes:
            span.set_attributes(attributes)
        context = trace.set_span_in_context(span)
        return span, otel_context.attach(context) if make_current else context
    return None, None


def _finish(span: Any, token: Any, error: BaseException | None) -> None:
    if span is None:
        return
    with guard("observe.end"):
        if token is not None:
            otel_context.detach(token)
        if error is not None and not isinstance(error, GeneratorExit):
            span.set_attribute(sc.ERROR_TYPE, type(error).__qualname__)
            span.set_status(trace.Status(trace.StatusCode.ERROR, type(error).__qualname__))
        span.end()


def _enter(context: Any) -> Any:
    """Make ``context`` current for one step of a generator; the token, or None (no span, or an SDK failure)."""
    if context is None:
        return None
    with guard("observe.step"):
        return otel_context.attach(context)
    return None


def _leave(token: Any, context: Any) -> Any:
    """Undo :func:`_enter`; the context the step left current (a span the generator made current itself, with a
    ``with`` around a ``yield``, stays current for its next steps), or ``context`` as it was."""
    if token is None:
        return context
    with guard("observe.step"):
        context = otel_context.get_current()
        otel_context.detach(token)
    return context


def _loop_closes_generators() -> bool:
    """The running event loop is closing every async generator (``shutdown_asyncgens``, as ``asyncio.run`` ends):
    the function's own generator is one of them, closed by the loop at the same time, and closing it from the
    decorator too made one of the two closes fail ("aclose(): asynchronous generator is already running", logged
    by the loop). Read from the loop's own flag, where it has one (asyncio's and uvloop's loops)."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return getattr(loop, "_asyncgens_shutdown_called", False) is True


class _Steps:
    """A generator's steps, each run with the span's context current (or the context its previous step left).
    ``yield from`` delegates ``send``, ``throw`` and ``close`` to it as to the generator itself (PEP 380), and
    hands on its return value."""

    __slots__ = ("context", "generator")

    def __init__(self, generator: Generator[Any, Any, Any], context: Any) -> None:
        self.generator, self.context = generator, context

    def __iter__(self) -> _Steps:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        return self._step(self.generator.send, value)

    def throw(self, kind: Any, value: Any = None, traceback: Any = None) -> Any:
        """The arguments as the app gave them (``yield from`` hands on only those given): the exception, or the
        older (type, value, traceback) form."""
        given = 3 if traceback is not None else 2 if value is not None else 1
        return self._step(self.generator.throw, *(kind, value, traceback)[:given])

    def close(self) -> None:
        self._step(self.generator.close)

    def _step(self, act: Any, *args: Any) -> Any:
        token = _enter(self.context)
        try:
            return act(*args)
        finally:
            self.context = _leave(token, self.context)


@overload
def observe(func: F) -> F: ...
@overload
def observe(*, name: str | None = None, operation: str | None = None) -> Callable[[F], F]: ...


def observe(func: Any = None, *, name: str | None = None, operation: str | None = None) -> Any:
    """Decorate a function so each call is a span named ``name`` (default: the function's qualified name).

    ``operation`` sets ``gen_ai.operation.name`` (e.g. ``"retrieval"``, ``"execute_tool"``) so the collector
    can show the step's role in the trace.
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        span_name = name or fn.__qualname__
        attributes = {sc.GEN_AI_OPERATION_NAME: operation} if operation else {}

        if inspect.isasyncgenfunction(fn):
            # Delegates by hand (an async generator has no ``yield from``): each step of the function's generator
            # runs with the span's context current; values sent and exceptions thrown in are handed on to it, and
            # ``aclose`` closes it.
            @functools.wraps(fn)
            async def async_gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                span, context = _start(span_name, attributes, make_current=False)
                error = None
                try:
                    generator = fn(*args, **kwargs)
                    sent: Any = None
                    thrown: BaseException | None = None
                    while True:
                        token = _enter(context)
                        try:
                            item = await (generator.asend(sent) if thrown is None else generator.athrow(thrown))
                        except StopAsyncIteration:
                            return
                        finally:
                            thrown = None
                            context = _leave(token, context)
                        try:
                            sent = yield item
                        except GeneratorExit:
                            if not generator.ag_running and not _loop_closes_generators():
                                token = _enter(context)
                                try:
                                    await generator.aclose()
                                finally:
                                    _leave(token, context)
                            raise
                        except BaseException as exc:  # thrown in by the consumer: the generator's to handle
                            thrown, sent = exc, None
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    _finish(span, None, error)
            return async_gen_wrapper

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                span, token = _start(span_name, attributes)
                error = None
                try:
                    return await fn(*args, **kwargs)
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    _finish(span, token, error)
            return async_wrapper

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                span, context = _start(span_name, attributes, make_current=False)
                error = None
                try:
                    generator = fn(*args, **kwargs)
                    return (yield from generator if context is None else _Steps(generator, context))
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    _finish(span, None, error)
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            span, token = _start(span_name, attributes)
            error = None
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                error = exc
                raise
            finally:
                _finish(span, token, error)
        return wrapper

    if func is not None and callable(func):
        return decorate(func)
    return decorate
