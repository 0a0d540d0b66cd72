"""System instructions in the prompt log: kept once when a library sends them twice (OpenLIT).

OPENLIT_ATTRIBUTES is what OpenLIT 1.45.0 (openai 2.54.0, ``openlit.init(capture_message_content=True)``) set on
the span of ``client.chat.completions.create(model="gpt-4o-mini", messages=[system, user])`` against the mock LLM
server, recorded with an in-memory span exporter: ``gen_ai.system_instructions`` and ``gen_ai.input.messages``
are JSON strings, and the system message is in both.
"""

from __future__ import annotations

import json
from typing import Any

from inferwatch_collector.normalize import normalize
from inferwatch_collector.otlp_decode import to_fast
from inferwatch_collector.rows import PromptLogRow

from tests.helpers import payloads as P

SYSTEM = "You are terse. Contact ops@example.com."
OPENLIT_ATTRIBUTES: dict[str, Any] = {
    "telemetry.sdk.name": "openlit",
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "server.address": "127.0.0.1",
    "server.port": 33917,
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.request.stream": False,
    "gen_ai.server.time_to_first_token": 0.01827073097229004,
    "gen_ai.response.id": "chatcmpl-22024b9acd9d45b09a70ed6fdf5e0",
    "gen_ai.response.finish_reasons": ["stop"],
    "gen_ai.output.type": "text",
    "gen_ai.usage.input_tokens": 25,
    "gen_ai.usage.output_tokens": 24,
    "gen_ai.input.messages": '[{"role": "system", "parts": [{"type": "text", "content": "You are terse. Contact '
                             'ops@example.com."}]}, {"role": "user", "parts": [{"type": "text", "content": "hi, '
                             'call me at 415-555-2671"}]}]',
    "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "How add key all few '
                              'max all way top two top big so."}], "finish_reason": "stop"}]',
    "gen_ai.system_instructions": '[{"type": "text", "content": "You are terse. Contact ops@example.com."}]',
}  # fmt: skip


def _log(attributes: dict[str, Any]) -> PromptLogRow:
    request = P.make_request(P.make_span("chat gpt-4o-mini", attributes))
    batch = normalize(to_fast(request), "p1")
    assert normalize(request, "p1") == batch
    (log,) = batch.prompt_logs
    return log


def test_openlits_system_prompt_is_stored_once() -> None:
    log = _log(OPENLIT_ATTRIBUTES)
    assert json.loads(log.prompt) == [  # the input messages as they came, redacted; nothing prepended
        {"role": "system", "parts": [{"type": "text", "content": "You are terse. Contact <EMAIL_ADDRESS>."}]},
        {"role": "user", "parts": [{"type": "text", "content": "hi, call me at <PHONE_NUMBER>"}]},
    ]
    assert log.prompt.count("You are terse.") == 1


def test_other_system_instructions_are_still_prepended() -> None:
    different = dict(OPENLIT_ATTRIBUTES, **{"gen_ai.system_instructions": json.dumps(
        [{"type": "text", "content": "Answer in French."}])})  # fmt: skip
    log = _log(different)
    assert log.prompt.startswith('[{"type": "text", "content": "Answer in French."}]\n\n[{"role": "system"')
    alone = {k: v for k, v in OPENLIT_ATTRIBUTES.items() if k != "gen_ai.input.messages"}  # instructions only
    assert json.loads(_log(alone).prompt) == [{"type": "text", "content": "You are terse. Contact <EMAIL_ADDRESS>."}]
    # the same text, split into parts or spaced differently, in a plain-string system message: still once
    plain = dict(OPENLIT_ATTRIBUTES, **{
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You are terse."},
                                                  {"type": "text", "content": " Contact ops@example.com. "}]),
        "gen_ai.input.messages": json.dumps([{"role": "system", "content": SYSTEM},
                                             {"role": "user", "content": "hi"}])})  # fmt: skip
    assert json.loads(_log(plain).prompt) == [{"role": "system", "content": "You are terse. Contact <EMAIL_ADDRESS>."},
                                              {"role": "user", "content": "hi"}]  # fmt: skip
