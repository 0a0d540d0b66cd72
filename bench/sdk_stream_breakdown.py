"""Where the SDK's added µs on a streamed OpenAI call go: variants of the SDK, each paired against the bare client.

A diagnostic beside ``bench/sdk_overhead.py`` (same client, transport, stand-in collector and pairing; see its
docstring). Each variant replaces one piece of the streaming path *in this process only*, so the differences
between the variants' figures are what those pieces cost:

* ``full``: the SDK as shipped: the client's own stream, its event decoder tapped (each event's data and clock
  kept on the app's thread, read in the export thread);
* ``proxy``: the stream proxy instead, its observer reading every chunk object as the app receives it (the path
  of capture on, the Responses API and Anthropic; the shipped path for chat streams before the tap);
* ``proxy, observe reads content only``: the proxy's observer reads ``choices[0].delta.content`` and adds its
  length, nothing else (the least any observer must do to count the response's characters);
* ``proxy, observe no-op``: the proxy's observer is called for every chunk and does nothing;
* ``no stream recording``: neither; the call ends when ``create()`` returns (what a non-streamed call costs).

Variants run in interleaved rounds, each round starting at the next variant, so that drift on a shared machine
and the position within a round spread over all of them. Prints the median added µs per call with its 95 % CI;
never asserts.

    python bench/sdk_stream_breakdown.py                 # 1,500 pairs x 3 rounds per variant, ~4 minutes
    python bench/sdk_stream_breakdown.py --pairs 500 --rounds 2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sdk_overhead as bench  # noqa: E402  (puts sdk/src on the path too)

import inferwatch  # noqa: E402
from inferwatch.integrations import openai as iw_openai  # noqa: E402

_ORIGINAL = {"observe": iw_openai._ChatStream.observe, "complete": iw_openai._Recorder.complete}


def _content_only(self: Any, chunk: Any) -> None:
    choices = chunk.choices
    if choices:
        content = choices[0].delta.content
        if content:
            self.chars += len(content)


def _noop(self: Any, chunk: Any) -> None:
    pass


def _no_proxy(self: Any, result: Any) -> Any:
    self.end()
    return result


_PROXY = {"proxy": True}  # marks the variants that turn the tap off (no stream class to tap)
VARIANTS: dict[str, dict[str, Any]] = {
    "full": {},
    "proxy": _PROXY,
    "proxy, observe reads content only": {**_PROXY, "observe": _content_only},
    "proxy, observe no-op": {**_PROXY, "observe": _noop},
    "no stream recording": {"complete": _no_proxy},
}
_TAPPABLE = iw_openai._stream_classes()


def _apply(variant: dict[str, Any]) -> None:
    iw_openai._tappable = frozenset() if variant.get("proxy") else _TAPPABLE
    iw_openai._ChatStream.observe = variant.get("observe", _ORIGINAL["observe"])  # type: ignore[method-assign]
    iw_openai._Recorder.complete = variant.get("complete", _ORIGINAL["complete"])  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=1500, help="pairs per variant per round")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    collector = bench.Collector(5.0)
    try:
        bench.start_sdk(collector)
        client = inferwatch.wrap_openai(bench.make_client())
        toggle = bench.Toggle(client)
        bench.paired(bench.call_stream, client, toggle, 300)  # warm both arms
        diffs: dict[str, list[float]] = {name: [] for name in VARIANTS}
        aa: list[float] = []
        order = list(VARIANTS.items())
        for round_ in range(args.rounds):
            # each round starts at a different variant: the position in a round moved a figure by up to 9 µs
            for name, variant in order[round_ % len(order):] + order[:round_ % len(order)]:
                _apply(variant)
                diffs[name] += bench.paired(bench.call_stream, client, toggle, args.pairs)
            _apply({})
            aa += bench.paired(bench.call_stream, client, toggle, max(args.pairs // 3, 100), a_on=False, b_on=False)
            print(f"  round {round_ + 1}/{args.rounds} done", flush=True)
        errors = sum(inferwatch.stats()["internal_errors"].values())
    finally:
        _apply({})
        inferwatch.shutdown()
        collector.stop()
    print(f"streamed call (11 chunks), added per call vs the bare client, {args.pairs * args.rounds} pairs each:")
    for name, values in diffs.items():
        print(f"  {name:34s} {bench._ci(bench.median_ci(values))}")
    print(f"  {'A/A control':34s} {bench._ci(bench.median_ci(aa))}")
    print(f"  SDK internal errors: {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
