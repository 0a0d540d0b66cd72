"""Following a streamed provider call: stream proxies and event taps.

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
and the provider's subclass reads the events from them (:mod:`._sse`) in the export thread when the call is
recorded (OpenAI Chat Completions streams with capture off).
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Protocol

from .. import _guard


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
        item instead of two ``__next__`` frames (the proxy's and the stream's)."""
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
        # taken once per loop, not per chunk: an attribute read on the proxy goes through its slow __getattr__
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
# The path every recorded call takes reaches functions and methods through module-level names bound at import
# (here, in the provider modules and in llm_call) rather than ``Class.method(...)``, ``getattr(obj, "name")``,
# a classmethod read from its class, or a class called with a Python ``__init__``. Why: CPython does not
# specialise those lookups, and the provider client's own work keeps emptying the type-attribute cache they go
# through. A method bound this way must not be overridden in a subclass (a test checks); fault-injection tests
# patch the bound names.
new_object = object.__new__  # an instance without calling its class: no lookup of the class's __init__
MethodType = types.MethodType  # a bound method made without looking the function up on the instance's class
_class_closes: dict[tuple[type, str], Any] = {}  # (response class, "close"/"aclose") -> its function, or None
CLASS_CLOSES_LIMIT = 64  # response classes remembered: classes made on the fly are asked each time, not kept


def can_hook(response: Any, is_async: bool) -> bool:
    """The response's ``close`` (``aclose``) is its class's: nothing of anyone else's would be replaced.

    Asked without reading the response's ``__dict__`` (reading it would materialise a dict the client then reads
    more slowly). The class's function is remembered per class and asked again when the response's differs (a
    new class, a close replaced on the class since, or a response with a close of its own). One answer differs
    from asking the class each time: a response holding, as a close of its own, the class's function from before
    the class's was replaced is taken as unhooked."""
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
    ``_decoder``): the app gets the stream itself, untouched; the real decoder reads the response's bytes through
    the tap, which keeps each chunk with the clock of its arrival, and the subclass reads the events from them
    (:meth:`read`, :mod:`._sse`) in the export thread. Why bytes: the app's thread then does one generator step,
    append and clock per network chunk, and never parses an event.

    Contract:

    * recorded is what the provider sent, as far as it arrived (a stream closed part-read records the chunks
      that had arrived); a content event's time to first token is the clock of the chunk that completed it;
    * the call ends (:meth:`ended`, once) when the stream's HTTP response is closed: its ``close``/``aclose`` is
      hooked on the response object and unhooked as the call ends; or when the tap is collected unread;
    * a close by the stream's own generator with an exception on its way out of it ends the call with that
      exception; ``GeneratorExit``, an exception the app is handling around its reading, and the app's own
      exception leaving ``with`` end it as a success; a close from inside the response's own byte iterator (the
      HTTP library's) does not end it: the stream's close that follows does;
    * a response with a ``close``/``aclose`` of its own is not tapped (:func:`can_hook`);
    * at most :data:`FOLD_AT` chunks are kept; past that they are read on the app's thread. The stream is read
      and closed from one thread at a time;
    * what waits for the export holds nothing the garbage collector tracks (chunks and clocks in one flat list;
      response and decoder let go at the end), so an ended stream adds no collector passes on the app's
      thread."""

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
    # The common case (a sync close, no exception on its way, not from inside the byte iterator) is decided in
    # the close itself; anything else goes to :meth:`_judge`.
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
    # A Python generator per chunk rather than C iterators (zip, filterfalse): it runs in the interpreter loop the
    # client keeps hot, and measured cheaper per call.
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
