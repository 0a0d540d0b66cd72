"""Where the SDK's added µs on a streamed OpenAI call go: variants of the SDK, each against the bare client.

A diagnostic beside ``bench/sdk_overhead.py`` (same client, transport and stand-in collector; see its docstring).
Each variant replaces one piece of the streaming path *in this process only*, so the differences between the
variants' figures are what those pieces cost:

* ``full``: the SDK as shipped: the client's own stream, its event decoder tapped (each chunk of bytes and its
  clock kept on the app's thread, read in the export thread; the call ends at the response's hooked close);
* ``tap, minimal``: the least a tap can do: one object standing in for the decoder (keeping chunk and clock) and
  the response's close hooked to end the call; no check that the close can be hooked, no error attribution,
  no fold, nothing read at the end (what the shipped tap's safety and bookkeeping cost on top of it);
* ``tap, close not checked``: the shipped tap without :func:`_streams.can_hook`'s question;
* ``tap, events not read``: the shipped tap, but the export thread does not read the kept chunks (the call's span
  is exported without its response): what that work in the export thread does to the app's thread;
* ``proxy``: the stream proxy instead, its observer reading every chunk object as the app receives it (the path
  of capture on, the Responses API and Anthropic; the shipped path for chat streams before the tap);
* ``proxy, observe no-op``: the proxy's observer is called for every chunk and does nothing;
* ``no stream recording``: neither; the call ends when ``create()`` returns (what a non-streamed call costs).

Every step times one call of each variant and one bare call, in an order drawn per step; a variant's difference
is against that step's bare call, so drift on a shared machine falls on all of them alike (timing them in blocks
of pairs, as this bench did before the twelfth session, let drift between blocks reorder the variants). An A/A
row times a second bare call per step. Prints the median added µs per call with its 95 % CI; never asserts.

    python bench/sdk_stream_breakdown.py                 # 4,500 steps, about 2 minutes
    python bench/sdk_stream_breakdown.py --steps 1500 --seed 2
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import types
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sdk_overhead as bench  # noqa: E402  (puts sdk/src on the path too)

import inferwatch  # noqa: E402
from inferwatch.integrations import _openai_chat  # noqa: E402
from inferwatch.integrations import openai as iw_openai  # noqa: E402

_ORIGINAL = {"observe": iw_openai._ChatStream.observe, "complete": iw_openai._Recorder.complete}


def _noop(self: Any, chunk: Any) -> None:
    pass


def _no_proxy(self: Any, result: Any) -> Any:
    self.end()
    return result


class _MinimalTap:
    """Stands in for the stream's decoder, keeps each chunk and its clock, and ends the call at the response's
    close: nothing else (``tap, minimal``)."""

    __slots__ = ("decoder", "kept", "rec", "response")

    def iter_bytes(self, iterator: Any) -> Any:
        return self.decoder.iter_bytes(self._keep(iterator))

    def _keep(self, iterator: Any) -> Any:
        kept, clock = self.kept, time.time_ns
        for chunk in iterator:
            kept.append(chunk)
            kept.append(clock())
            yield chunk

    def close(self) -> Any:
        response = self.response
        try:
            return type(response).close(response)
        finally:
            del response.close
            self.response = None
            self.rec.end(None)


def _minimal_tap(stream: Any, rec: Any) -> bool:
    tap = object.__new__(_MinimalTap)
    tap.decoder, tap.kept, tap.rec, tap.response = stream._decoder, [], rec, stream.response
    stream.response.close = types.MethodType(_MinimalTap.close, tap)
    stream._decoder = tap
    return True


_PROXY = {"proxy": True}  # marks the variants that turn the tap off (no stream class to tap)
VARIANTS: dict[str, dict[str, Any]] = {
    "full": {},
    "tap, minimal": {"tap": _minimal_tap},
    "tap, close not checked": {"can_hook": lambda response, is_async: True},
    "tap, events not read": {"later": lambda tap: None},
    "proxy": _PROXY,
    "proxy, observe no-op": {**_PROXY, "observe": _noop},
    "no stream recording": {"complete": _no_proxy},
}
_TAPPABLE = iw_openai._stream_classes()
_ORIGINAL = {"observe": iw_openai._ChatStream.observe, "complete": iw_openai._Recorder.complete,
             "tap": iw_openai._tap, "can_hook": iw_openai._can_hook, "later": _openai_chat._later}


def _apply(variant: dict[str, Any]) -> None:
    iw_openai._tappable = frozenset() if variant.get("proxy") else _TAPPABLE
    iw_openai._ChatStream.observe = variant.get("observe", _ORIGINAL["observe"])  # type: ignore[method-assign]
    iw_openai._Recorder.complete = variant.get("complete", _ORIGINAL["complete"])  # type: ignore[method-assign]
    iw_openai._tap = variant.get("tap", _ORIGINAL["tap"])
    iw_openai._can_hook = variant.get("can_hook", _ORIGINAL["can_hook"])
    _openai_chat._later = variant.get("later", _ORIGINAL["later"])


def steps(client: Any, toggle: Any, count: int, seed: int) -> dict[str, list[float]]:
    """``count`` steps; per variant (and "A/A control"), its calls' µs minus the same step's bare call."""
    clock, draw = time.perf_counter_ns, random.Random(seed)
    arms: list[str | None] = [*VARIANTS, None, "A/A control"]  # None: the bare call the others are held against
    diffs: dict[str, list[float]] = {name: [] for name in arms if name is not None}
    for _ in range(count):
        draw.shuffle(arms)
        took: dict[str | None, int] = {}
        for arm in arms:
            bare = arm is None or arm == "A/A control"
            toggle.set(not bare)
            _apply({} if bare else VARIANTS[arm])  # type: ignore[index]
            start = clock()
            bench.call_stream(client)
            took[arm] = clock() - start
        for name in diffs:
            diffs[name].append((took[name] - took[None]) / 1000)
    _apply({})
    return diffs


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=4500, help="steps (each times every variant and a bare call)")
    ap.add_argument("--seed", type=int, default=0, help="of the drawn orders")
    args = ap.parse_args(argv)
    collector = bench.Collector(5.0)
    try:
        bench.start_sdk(collector)
        client = inferwatch.wrap_openai(bench.make_client())
        toggle = bench.Toggle(client)
        steps(client, toggle, 200, args.seed + 1)  # warm every arm
        diffs = steps(client, toggle, args.steps, args.seed)
        errors = sum(inferwatch.stats()["internal_errors"].values())
    finally:
        _apply({})
        inferwatch.shutdown()
        collector.stop()
    print(f"streamed call (11 chunks), added per call vs the bare client of the same step, {args.steps} steps:")
    for name, values in diffs.items():
        print(f"  {name:34s} {bench._ci(bench.median_ci(values))}")
    print(f"  SDK internal errors: {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
