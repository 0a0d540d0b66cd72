"""Request bodies for the ingest bench: OTLP/HTTP protobuf ``ExportTraceServiceRequest`` s of LLM-call spans.

Every body is built before any clock starts, and every span in it has fresh random trace and span ids, so no two
bodies are alike (the collector remembers recent bodies to absorb exporter retries) and every span is one row.
The spans come from the demo traffic model (``examples/traffic.py``: realistic models, tokens, latencies,
errors) under its scope ``inferwatch-demo-traffic``, which the collector treats like our SDK's spans: written at
once, not held for the pairing window (the common case: our SDK in front of our collector). :func:`rescoped`
makes them another library's. :func:`exporter_payloads` pads the content to what the issue's exporter sends:
~1 KB of prompt and ~0.5 KB of completion per span.
"""

from __future__ import annotations

import json
import random
import time
from typing import Callable, Sequence

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans

from examples.traffic import TrafficModel, build_request

PROJECT = "bench"
THIRD_PARTY_SCOPE = "openinference.instrumentation.openai"
PROMPT_CHARS = 1024  # exporter-shaped content: a span's prompt attributes (system instructions + input messages)
COMPLETION_CHARS = 512  # and its output messages, in characters as sent

_PROMPT_FILLER = (" Further context: the account has two workspaces, one per region, and the admin asked for a "
                  "summary that the finance team can read without the product vocabulary.")
_COMPLETION_FILLER = (" In short, nothing changes for existing users until the next billing cycle, and the "
                      "team can follow up in the same thread.")
_INPUT_MESSAGES = "gen_ai.input.messages"
_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
_OUTPUT_MESSAGES = "gen_ai.output.messages"


def build_payloads(n_requests: int, spans_per_request: int, *, with_content: bool, seed: int,
                   templates: int = 8,
                   transform: Callable[[ExportTraceServiceRequest], None] | None = None,
                   pii_share: float | None = None) -> list[bytes]:
    """``n_requests`` encoded requests of LLM-call spans only, every span with fresh random ids; ``pii_share``:
    the share of content samples whose prompt carries PII (default: the demo traffic's).

    A few requests are generated in full by the traffic model (and changed in place by ``transform``); the rest
    are copies of them with new trace and span ids, which costs ~1 ms per request instead of ~25 ms and keeps
    every span (and body) unique.
    """
    model = TrafficModel(seed=seed, embeddings=False) if pii_share is None else \
        TrafficModel(seed=seed, embeddings=False, pii_share=pii_share)
    now_ns = time.time_ns()
    bases = [build_request(model, spans_per_request, with_content=with_content, now_ns=now_ns, spread_s=10,
                           app_spans=False) for _ in range(min(templates, n_requests))]
    if transform is not None:
        for base in bases:
            transform(base)
    randbytes = random.Random(seed ^ 0x5EED).randbytes
    out: list[bytes] = []
    for i in range(n_requests):
        request = ExportTraceServiceRequest()
        request.CopyFrom(bases[i % len(bases)])
        for span in request.resource_spans[0].scope_spans[0].spans:
            span.trace_id = randbytes(16)
            span.span_id = randbytes(8)
        out.append(request.SerializeToString())
    return out


def rescoped(payloads: Sequence[bytes], scope: str, *, seed: int, shift_ns: int) -> list[bytes]:
    """``payloads`` as another library would send them: scope ``scope``, fresh trace/span ids and response ids
    (provider ids are unique; the pairing code looks twins up by them), every time moved by ``shift_ns``.

    The shift keeps each rep's spans apart in time from every other rep's rows: the pairing window compares a held
    root span with the root rows near it in time, and in real traffic a later rep would have later timestamps.
    """
    from inferwatch import semconv as sc

    randbytes = random.Random(seed).randbytes
    out: list[bytes] = []
    for body in payloads:
        request = ExportTraceServiceRequest.FromString(body)
        scope_spans = request.resource_spans[0].scope_spans[0]
        scope_spans.scope.name = scope
        scope_spans.scope.version = "0.1.99"
        for span in scope_spans.spans:
            span.trace_id = randbytes(16)
            span.span_id = randbytes(8)
            span.start_time_unix_nano += shift_ns
            span.end_time_unix_nano += shift_ns
            for attr in span.attributes:
                if attr.key == sc.GEN_AI_RESPONSE_ID:
                    attr.value.string_value = span.span_id.hex()
        out.append(request.SerializeToString())
    return out


def unique_suffix(seq: int) -> bytes:
    """An empty ResourceSpans, encoded: appended to a request it makes the body unique (protobuf messages
    concatenate as a merge, so the request gains one span-less resource and nothing else)."""
    marker = ExportTraceServiceRequest(resource_spans=[ResourceSpans(resource=Resource(
        attributes=[KeyValue(key="bench.seq", value=AnyValue(int_value=seq))]))])
    return marker.SerializeToString()


def llm_calls_per_request(body: bytes) -> int | None:
    """How many ``llm_calls`` rows the collector's normaliser makes of one request (None if unavailable)."""
    try:
        from inferwatch_collector.normalize import normalize
    except ImportError:
        return None
    batch = normalize(ExportTraceServiceRequest.FromString(body), PROJECT, content_capture="redacted")
    return len(batch.llm_calls)


def _padded(messages_json: str, chars: int, filler: str) -> str:
    """``messages_json`` (OTel GenAI message JSON) with filler appended to its last text part until the JSON is
    ``chars`` characters long (unchanged when it is longer already or is not message JSON). The filler is plain
    ASCII, so each character of it adds one to the JSON."""
    try:
        messages = json.loads(messages_json)
        part = messages[-1]["parts"][-1]
        text = part["content"]
    except (ValueError, LookupError, TypeError):
        return messages_json
    short = chars - len(json.dumps(messages, ensure_ascii=False))
    if short <= 0:
        return messages_json
    part["content"] = text + (filler * (short // len(filler) + 1))[:short]
    return json.dumps(messages, ensure_ascii=False)


def pad_content(request: ExportTraceServiceRequest, prompt_chars: int = PROMPT_CHARS,
                completion_chars: int = COMPLETION_CHARS) -> None:
    """Pad, in place, every span's prompt to ``prompt_chars`` characters (its system instructions and input
    messages together, as sent) and its output messages to ``completion_chars`` (the demo pool's samples are
    ~0.5-0.8 KB of prompt and ~0.2 KB of answer)."""
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                system = sum(len(a.value.string_value) for a in span.attributes if a.key == _SYSTEM_INSTRUCTIONS)
                for attr in span.attributes:
                    if attr.key == _INPUT_MESSAGES:
                        attr.value.string_value = _padded(attr.value.string_value, prompt_chars - system,
                                                          _PROMPT_FILLER)
                    elif attr.key == _OUTPUT_MESSAGES:
                        attr.value.string_value = _padded(attr.value.string_value, completion_chars,
                                                          _COMPLETION_FILLER)


def exporter_payloads(n_requests: int, spans_per_request: int, *, with_content: bool, seed: int,
                      pii_share: float | None = None) -> list[bytes]:
    """``n_requests`` bodies as a real exporter sends them: ``spans_per_request`` LLM-call spans each (512, a
    BatchSpanProcessor's default batch), with content ~1 KB of prompt and ~0.5 KB of completion per span, PII in
    the prompts of ``pii_share`` of the content samples (default: the demo traffic's 30 %)."""
    return build_payloads(n_requests, spans_per_request, with_content=with_content, seed=seed,
                          transform=pad_content if with_content else None, pii_share=pii_share)
