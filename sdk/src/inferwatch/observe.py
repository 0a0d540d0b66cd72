"""``@inferwatch.observe``: record any function as a span; nested calls form one trace.

Works with or without parentheses, on sync and async functions, generators and async generators (the span
covers the whole iteration). The function's result and exceptions pass through untouched; an exception is only
recorded (``error.type``, span status) and re-raised as it was. Before ``init()`` the wrapper calls straight
through.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar, overload

from opentelemetry import context as otel_context
from opentelemetry import trace

from . import client
from . import semconv as sc
from ._guard import guard

F = TypeVar("F", bound=Callable[..., Any])


def _start(name: str, attributes: dict[str, Any], make_current: bool = True) -> tuple[Any, Any]:
    """(span, context token) or (None, None) when inactive or on an SDK failure.

    Generators do not make their span current: they resume in their consumer's context, where detaching a
    token attached elsewhere fails. Their span still measures the whole iteration.
    """
    pipeline = client.get_pipeline()
    if pipeline is None:
        return None, None
    with guard("observe.start"):
        span = pipeline.span(name, trace.SpanKind.INTERNAL)  # the SDK's light span (telemetry.LightSpan)
        if attributes:
            span.set_attributes(attributes)
        token = otel_context.attach(trace.set_span_in_context(span)) if make_current else None
        return span, token
    return None, None


def _finish(span: Any, token: Any, error: BaseException | None) -> None:
    if span is None:
        return
    with guard("observe.end"):
        if token is not None:
            otel_context.detach(token)
        if error is not None:
            span.set_attribute(sc.ERROR_TYPE, type(error).__qualname__)
            span.set_status(trace.Status(trace.StatusCode.ERROR, type(error).__qualname__))
        span.end()


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
            @functools.wraps(fn)
            async def async_gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                span, token = _start(span_name, attributes, make_current=False)
                error = None
                try:
                    async for item in fn(*args, **kwargs):
                        yield item
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    _finish(span, token, error)
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
                span, token = _start(span_name, attributes, make_current=False)
                error = None
                try:
                    return (yield from fn(*args, **kwargs))
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    _finish(span, token, error)
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
