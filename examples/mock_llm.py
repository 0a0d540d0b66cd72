"""An OpenAI- and Anthropic-compatible mock LLM server, for the demo app and the end-to-end tests.

The real ``openai`` and ``anthropic`` client libraries talk to it unchanged (point ``base_url`` at it): it speaks
the wire formats those clients parse, streaming included, and answers deterministically so a test can compute
every number it will see. Nothing leaves the machine; no model runs.

Run it::

    python -m examples.mock_llm --host 127.0.0.1 --port 8765 [--latency realistic|none] [--seed N]

    openai.OpenAI(base_url="http://127.0.0.1:8765/v1", api_key="any")
    anthropic.Anthropic(base_url="http://127.0.0.1:8765", api_key="any")

or in a test, :class:`MockLLMServer` (uvicorn on 127.0.0.1, a free port, a background thread)::

    with MockLLMServer() as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)

Endpoints
---------
OpenAI: ``POST /v1/chat/completions`` (JSON or SSE ``data: {...}`` ... ``data: [DONE]``; usage in a final chunk
with empty ``choices`` only when ``stream_options.include_usage`` is set, as OpenAI does), ``POST /v1/responses``
(JSON or typed SSE events ``response.created`` ... ``response.completed``), ``POST /v1/embeddings``,
``GET /v1/models``. Anthropic: ``POST /v1/messages`` (JSON or SSE ``message_start``, ``ping``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``), ``POST /v1/messages/count_tokens``;
``GET /v1/models`` answers in Anthropic's shape when the request carries an ``anthropic-version`` header.
Validation the real APIs do and the mock copies: ``stream_options`` without ``stream`` is a 400 (OpenAI);
``max_tokens`` is required and must exceed ``thinking.budget_tokens`` (Anthropic).

Auth: every request needs a non-empty key, ``Authorization: Bearer KEY`` or ``x-api-key: KEY`` (either provider);
without one, or with a key starting with ``invalid``, the answer is 401 in the provider's error shape.

Token counts (exact, so tests can compute them; :func:`count_tokens` and :func:`estimate_prompt_tokens`)
--------------------------------------------------------------------------------------------------------
- ``tokens(text) = ceil(len(text) / 4)``.
- Prompt tokens = sum over messages of ``4 + tokens(text of the message)`` + ``4 + tokens(system)`` when a system
  prompt (Anthropic ``system``, Responses ``instructions``) is given + ``tokens(compact JSON of the tools list)``
  when tools are given. The text of a message is its string content, or its parts' ``text`` joined; tool calls
  add their name and arguments, tool results their content.
- Completion text is made of 4-character tokens, so visible output tokens = ``len(text) / 4`` exactly (JSON for
  structured output is cut into 4-character pieces, the last maybe shorter: ``tokens(json)``). Default length:
  24 tokens (``[tokens:N]`` sets it; in ``realistic`` mode the default varies, lognormal around 120).
- A tool call costs ``tokens(name) + tokens(arguments)`` output tokens.
- Reasoning: OpenAI reasoning models (``o1``/``o3``/``o4*``, ``gpt-5*`` except ``*-chat*``) reason for 8/32/64/128/
  256 tokens at effort minimal/low/medium (default)/high/xhigh (``none``: 0); Anthropic thinks for 32 tokens
  (capped by ``budget_tokens``) when ``thinking`` is enabled. ``[reasoning:N]`` sets it. Reasoning tokens are
  inside output tokens (OpenAI ``completion_tokens_details.reasoning_tokens``; Anthropic ``output_tokens`` plus
  ``output_tokens_details.thinking_tokens``).
- Output token limits (``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens``) are honoured: reasoning
  is spent first, then the visible text is cut, and the finish reason becomes ``length`` / ``max_tokens`` /
  status ``incomplete``. A reasoning model that spends the whole budget reasoning answers with empty content.
- Cache: OpenAI reports cached tokens inside ``prompt_tokens`` (``prompt_tokens_details.cached_tokens``);
  Anthropic reports ``input_tokens`` = prompt tokens - cache reads - cache writes, with
  ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` on top. ``usage.total = prompt + completion``.

Markers (in the LAST user message; several may be combined)
-----------------------------------------------------------
- ``[refuse]``: a refusal. OpenAI chat: ``message.refusal`` set, ``content`` null, finish ``stop`` (streamed as
  ``delta.refusal``); Responses: a ``refusal`` content part; Anthropic: stop reason ``refusal`` (+
  ``stop_details``).
- ``[truncate]``: finish ``length`` / ``max_tokens`` / ``incomplete`` even without a limit (half the output).
- ``[content-filter]``: OpenAI finish ``content_filter`` after half the text (Responses: incomplete,
  reason ``content_filter``; Anthropic has none: stop reason ``refusal``).
- ``[empty]``: empty content (``""``; Anthropic ``content: []``), zero visible output tokens, normal finish.
- ``[tokens:N]``: N visible output tokens. ``[reasoning:N]``: N reasoning/thinking tokens.
- ``[tool]``: call a tool (the first one given; ``get_weather`` when none is given). ``[tool:NAME]``: that tool.
  ``[tools:N]``: N parallel calls. ``[tool:bad-json]``: arguments that are not valid JSON, even to a partial
  parser (a trailing comma: ``{"location":"sample-location",}``). Anthropic non-stream: ``input`` is that raw
  string; stream: the ``input_json_delta`` fragments concatenate to it (so ``anthropic``'s ``messages.stream()``
  helper raises ``ValueError`` while accumulating, as it would with a real provider sending such JSON).
  ``[tool:unknown]``: a call to ``nonexistent_function``, which the request did not offer. ``[no-tool]``: answer
  with text even though tools are given. Without a marker, a request that offers tools gets a call to the first
  tool (or the one ``tool_choice`` names; ``tool_choice`` ``none`` gives text). When the conversation ends with a
  tool result (an OpenAI ``tool`` message, a Responses ``function_call_output``, an Anthropic ``tool_result``
  block) the model answers with text, tool markers or not, so an agent loop ends. Arguments are sampled from the
  tool's JSON schema (strings ``"sample-<name>"``, integers 42, numbers 4.2, the first enum value ...), and so is
  structured output (``response_format`` / ``text.format`` json_schema; json_object gives ``{"result": ...}``).
- ``[error:CODE]``: fail with that HTTP status in the provider's error shape (429 with ``retry-after`` /
  ``retry-after-ms``, 400, 401, 403, 404, 500, 503, 529 (Anthropic ``overloaded_error``) ...); a streaming
  request gets the status before any event, as with the real APIs.
  ``[retry-after:S]`` sets the 429's retry-after seconds (default 0.2). ``[flaky:CODE]`` / ``[flaky:CODE:K]``:
  the first K (default 1) requests with that same last user message fail, later ones succeed (client retries).
- ``[stream-error]``: a stream that fails after 3 tokens: OpenAI chat ``data: {"error": ...}`` (the client
  raises ``APIError``); Responses ``response.failed``; Anthropic an ``event: error`` (``overloaded_error``).
- ``[no-usage]``: the stream never reports usage: no usage chunk even when ``include_usage`` is asked; Responses
  ``response.completed`` with ``usage: null``; Anthropic: the stream stops after the content blocks, with no
  ``message_delta`` / ``message_stop``. Non-streaming OpenAI answers ``usage: null`` (Anthropic non-streaming
  always reports usage: its ``usage`` is required).
- ``[slow-first-token:MS]``: the first token comes MS ms after the request (OpenAI: before the first chunk;
  Anthropic: after ``message_start`` and ``ping``, before the first content block). ``[token-delay:MS]``: MS ms
  between tokens. Non-streaming responses take the same total time.
- ``[cache:N]``: N cached prompt tokens (clamped to the prompt). ``[cache-write:N]``: N cache-creation tokens
  (Anthropic; OpenAI ``prompt_tokens_details.cache_write_tokens``).

Latency: ``none`` (default, tests) sleeps only where a marker asks; ``realistic`` gives each model a lognormal
time to first token (median per model, sigma 0.35, 1% spikes ×3-8; reasoning adds reasoning tokens / speed) and
lognormal inter-token delays around a per-model decode speed, from a ``random.Random`` seeded by ``--seed`` and
the request's last user message. The words of an answer come from the same seeded source.

Not modelled: ``n`` > 1, stop sequences, logprobs, audio, images (0 tokens), server-side tools, prompt caching
by prefix (use ``[cache:N]``), parameter restrictions of particular models (``max_tokens`` is accepted everywhere).

Code: this module is the command line and the names tests import; ``mock_llm_tokens`` (token counts),
``mock_llm_markers``, ``mock_llm_models`` (snapshots, speeds), ``mock_llm_plan`` (one provider-neutral answer),
``mock_llm_openai`` and ``mock_llm_anthropic`` (the wire formats), ``mock_llm_sse`` (streaming and pacing),
``mock_llm_http`` (state, auth, errors), ``mock_llm_server`` (the app and :class:`MockLLMServer`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if not __package__:  # run as a file (python examples/mock_llm.py): import the examples package from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.mock_llm_markers import DEFAULT_OUTPUT_TOKENS, Markers, parse_markers  # noqa: E402
from examples.mock_llm_openai import REASONING_BY_EFFORT  # noqa: E402
from examples.mock_llm_plan import REFUSAL_TEXT  # noqa: E402
from examples.mock_llm_server import MockLLMServer, RecordedRequest, create_app  # noqa: E402
from examples.mock_llm_tokens import (  # noqa: E402
    CHARS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, count_tokens, estimate_prompt_tokens,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "REASONING_BY_EFFORT",
    "REFUSAL_TEXT",
    "Markers",
    "MockLLMServer",
    "RecordedRequest",
    "count_tokens",
    "create_app",
    "estimate_prompt_tokens",
    "main",
    "parse_markers",
]


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m examples.mock_llm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", choices=("realistic", "none"), default="none")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    base = f"http://{args.host}:{args.port}"
    print(f"mock LLM: OpenAI base_url {base}/v1, Anthropic base_url {base} "
          f"(latency={args.latency}, seed={args.seed})", flush=True)
    uvicorn.run(create_app(latency=args.latency, seed=args.seed), host=args.host, port=args.port,
                log_level=args.log_level, ws="none", lifespan="off")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
