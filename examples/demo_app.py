"""The demo app: a small "support assistant" instrumented with the inferwatch SDK, calling the real ``openai`` and
``anthropic`` client libraries against the local mock LLM server (``examples/mock_llm.py``).

It is what ``make demo`` (``inferwatch-server up --demo-traffic``) runs, and what an app engineer's code looks
like after adding inferwatch: ``inferwatch.init()``, wrapped clients, ``tags``/``experiment`` for attribution,
``@inferwatch.observe`` for the retrieval step, ``inferwatch.feedback`` for thumbs, and an application-side
answer cache recorded with ``call.cache_hit()``. Traffic is a mix of features, models (OpenAI and Anthropic,
streamed and not), users in an A/B experiment, and the usual trouble: refusals, truncations, tool calls (some
with bad JSON), empty answers and provider errors, at rates set below. Nothing leaves the machine.

Run by hand (a collector must be running)::

    python -m examples.demo_app --collector http://127.0.0.1:4318 --key iwk_... [--rate 2] [--duration 60]

Without ``--mock-url`` it starts its own mock LLM server on a free port (realistic latency).
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai

import inferwatch

if not __package__:  # run as a file (python examples/demo_app.py): import the examples package from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.mock_llm import MockLLMServer  # noqa: E402

# feature -> (provider, model, prompt template, share of traffic)
FEATURES: tuple[tuple[str, str, str, str, float], ...] = (
    ("answer", "openai", "gpt-4o-mini", "answer-v3", 0.40),
    ("summarize", "anthropic", "claude-haiku-4-5", "summary-v1", 0.20),
    ("triage", "openai", "gpt-4.1-nano", "triage-v2", 0.15),
    ("agent", "openai", "gpt-4o", "agent-v1", 0.15),
    ("draft", "anthropic", "claude-opus-4-5", "draft-v2", 0.10),
)
# trouble markers the mock understands, and how often each is asked for
TROUBLE: tuple[tuple[str, float], ...] = (
    ("[refuse]", 0.03), ("[truncate]", 0.03), ("[empty]", 0.01), ("[error:429]", 0.01), ("[error:500]", 0.005),
)
EXPERIMENT = ("answer-prompt", {"control": 0.5, "concise": 0.5})
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "description": "Find an order",
                                           "parameters": {"type": "object",
                                                          "properties": {"order_id": {"type": "string"}},
                                                          "required": ["order_id"]}}}]


@dataclass
class Clients:
    openai: Any
    anthropic: Any


@inferwatch.observe(name="retrieve_docs")
def retrieve_docs(question: str, rng: random.Random) -> list[str]:
    """The retrieval step before inference: recorded as its own span in the same trace."""
    time.sleep(rng.uniform(0.005, 0.03))
    return [f"doc-{rng.randrange(1000)}" for _ in range(3)]


def _question(rng: random.Random, feature: str) -> str:
    marker = " ".join(m for m, p in TROUBLE if rng.random() < p)
    if feature == "agent" and rng.random() < 0.1:
        marker += " [tool:bad-json]"
    elif feature == "agent" and rng.random() < 0.05:
        marker += " [tool:unknown]"
    length = rng.choice((" [tokens:40]", " [tokens:120]", " [tokens:300]", ""))
    # contact details in some questions: capture is "redacted", so they never reach the database in clear
    contact = " Reach me at jane.doe@example.com." if rng.random() < 0.1 else ""
    return f"Customer question #{rng.randrange(10_000)} about their order.{contact} {marker}{length}".strip()


def one_call(clients: Clients, rng: random.Random, answer_cache: dict[str, str], counts: Counter) -> None:
    """One user interaction: tags, experiment, retrieval, an LLM call (maybe cached), sometimes feedback."""
    feature, provider, model, template, _ = rng.choices(FEATURES, weights=[f[4] for f in FEATURES])[0]
    user = f"user-{int(rng.paretovariate(1.2)) % 400}"  # a few heavy users, a long tail
    question = _question(rng, feature)
    name, variants = EXPERIMENT
    with inferwatch.tags(feature=feature, user_id=user, prompt_template=template, template_version="1"):
        with inferwatch.experiment(name, variants) as variant:
            retrieve_docs(question, rng)
            style = "Answer in one sentence." if variant == "concise" else "Answer helpfully."
            if feature == "triage" and question in answer_cache:
                with inferwatch.llm_call(model=model, provider="openai") as call:
                    call.cache_hit("exact")
                    call.usage(input_tokens=40, output_tokens=12)
                counts["cache_hits"] += 1
                return
            try:
                if provider == "openai":
                    stream = rng.random() < 0.5
                    kwargs: dict[str, Any] = {"model": model, "messages": [
                        {"role": "system", "content": style}, {"role": "user", "content": question}]}
                    if feature == "agent":
                        kwargs["tools"] = TOOLS
                    if stream:
                        chunks = clients.openai.chat.completions.create(
                            stream=True, stream_options={"include_usage": True}, **kwargs)
                        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                        response_id = None
                    else:
                        response = clients.openai.chat.completions.create(**kwargs)
                        text, response_id = response.choices[0].message.content or "", response.id
                else:
                    if rng.random() < 0.5:
                        with clients.anthropic.messages.stream(model=model, max_tokens=512, system=style,
                                                              messages=[{"role": "user", "content": question}]
                                                              ) as stream_:
                            text = "".join(stream_.text_stream)
                            response_id = stream_.get_final_message().id
                    else:
                        message = clients.anthropic.messages.create(
                            model=model, max_tokens=512, system=style,
                            messages=[{"role": "user", "content": question}])
                        text = "".join(getattr(block, "text", "") for block in message.content)
                        response_id = message.id
            except (openai.APIError, anthropic.APIError) as exc:
                counts[f"provider error {type(exc).__name__}"] += 1
                return
            counts["calls"] += 1
            if feature == "triage":
                answer_cache[question] = text
            if response_id and rng.random() < 0.2:
                thumbs = rng.random() < (0.8 if variant == "concise" else 0.7)
                inferwatch.feedback(response_id=response_id, thumbs_up=thumbs)
                counts["feedback"] += 1


def run(collector: str, key: str, mock_url: str, rate: float, duration: float | None, seed: int,
        workers: int) -> int:
    inferwatch.init(endpoint=collector, api_key=key, service_name="demo-support-assistant", capture="redacted")
    clients = Clients(
        openai=inferwatch.wrap_openai(openai.OpenAI(base_url=f"{mock_url}/v1", api_key="demo", max_retries=0)),
        anthropic=inferwatch.wrap_anthropic(anthropic.Anthropic(base_url=mock_url, api_key="demo", max_retries=0)),
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    counts: Counter = Counter()
    answer_cache: dict[str, str] = {}
    interval = workers / rate

    def worker(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        next_at = time.monotonic() + rng.uniform(0, interval)
        while not stop.is_set():
            stop.wait(max(0.0, next_at - time.monotonic()))
            next_at += rng.expovariate(1 / interval)
            if not stop.is_set():
                one_call(clients, rng, answer_cache, counts)

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(workers)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    print(f"demo app: ~{rate:g} interactions/s through the SDK (openai + anthropic clients -> mock LLM at "
          f"{mock_url}) into {collector}", flush=True)
    try:
        while not stop.wait(10.0):
            stats = inferwatch.stats()
            dropped = sum(stats.get("dropped", {}).values())
            print(f"demo app: {_counted(counts)}; SDK exported {stats.get('exported', 0)} spans, dropped {dropped}",
                  flush=True)
            if duration and time.monotonic() - started >= duration:
                break
    except KeyboardInterrupt:
        pass
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    inferwatch.flush(10)
    stats, feedback = inferwatch.stats(), inferwatch.feedback_stats()
    inferwatch.shutdown()
    print(f"demo app: stopped after {_counted(counts)}; SDK exported {stats.get('exported', 0)} spans, dropped "
          f"{sum(stats.get('dropped', {}).values())}; feedback sent {feedback['sent']}, failed {feedback['failed']}",
          flush=True)
    return 0


def _counted(counts: dict[str, int]) -> str:
    """``counts`` as a progress line reads them: "19 calls, 4 feedback" ("no interactions yet" when empty)."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no interactions yet"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.demo_app", description=__doc__.split("\n\n")[0])
    parser.add_argument("--collector", default="http://127.0.0.1:4318", help="collector base URL")
    parser.add_argument("--key", required=True, help="an ingest API key of the demo project")
    parser.add_argument("--mock-url", help="a running mock LLM server (default: start one)")
    parser.add_argument("--rate", type=float, default=2.0, help="user interactions per second")
    parser.add_argument("--duration", type=float, help="seconds to run (default: until stopped)")
    parser.add_argument("--workers", type=int, default=8, help="concurrent simulated users")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.rate <= 0:
        parser.error("--rate must be positive")
    if args.mock_url:
        return run(args.collector, args.key, args.mock_url.rstrip("/"), args.rate, args.duration, args.seed,
                   args.workers)
    with MockLLMServer(latency="realistic", seed=args.seed) as server:
        return run(args.collector, args.key, server.base_url, args.rate, args.duration, args.seed, args.workers)


if __name__ == "__main__":
    raise SystemExit(main())
