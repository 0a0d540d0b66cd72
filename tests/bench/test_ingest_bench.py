"""bench/ingest.py's pieces on a tiny scale, so the bench cannot rot silently: exporter-shaped bodies, the
closed- and open-loop sender models, percentiles, and one tiny end-to-end run against a real collector."""

from __future__ import annotations

import json
import math
import time

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import ingest
from ingest_clients import make_clients, send_all, send_paced
from ingest_payloads import COMPLETION_CHARS, PROMPT_CHARS, exporter_payloads, llm_calls_per_request
from ingest_report import percentile


def _texts(span, key: str) -> list[str]:
    for attr in span.attributes:
        if attr.key == key:
            return [part["content"] for m in json.loads(attr.value.string_value) for part in m["parts"]]
    return []


def _chars(span, *keys: str) -> int:
    return sum(len(attr.value.string_value) for attr in span.attributes if attr.key in keys)


def test_exporter_bodies_are_512_distinct_llm_calls_with_the_issues_content_sizes() -> None:
    bodies = exporter_payloads(3, 512, with_content=True, seed=1)
    requests = [ExportTraceServiceRequest.FromString(b) for b in bodies]
    spans = [s for r in requests for s in r.resource_spans[0].scope_spans[0].spans]
    assert len(spans) == 3 * 512
    assert len({s.span_id for s in spans}) == len(spans)  # every span its own row
    assert llm_calls_per_request(bodies[0]) == 512
    prompts = [t for s in spans for t in _texts(s, "gen_ai.input.messages")]
    completions = [t for s in spans for t in _texts(s, "gen_ai.output.messages")]
    assert len(prompts) == len(spans) and len(completions) > len(spans) * 0.8  # failed calls have no completion
    # the issue's shape: ~1 KB of prompt (system instructions and input messages, as sent) and ~0.5 KB of
    # completion per span
    answered = [s for s in spans if _texts(s, "gen_ai.output.messages")]
    assert {_chars(s, "gen_ai.system_instructions", "gen_ai.input.messages") for s in spans} == {PROMPT_CHARS}
    assert {_chars(s, "gen_ai.output.messages") for s in answered} == {COMPLETION_CHARS}
    bare = ExportTraceServiceRequest.FromString(exporter_payloads(1, 16, with_content=False, seed=1)[0])
    assert not any(_texts(s, "gen_ai.input.messages") for s in bare.resource_spans[0].scope_spans[0].spans)


@pytest.mark.parametrize(("pii_share", "low", "high"), [(0.0, 0.0, 0.0), (None, 0.2, 0.4), (1.0, 0.9, 1.0)])
def test_exporter_prompts_carry_pii_in_the_share_asked_for(pii_share, low, high) -> None:
    """``--content-pii``: the share of prompts in which the redactor finds something (default: the demo's 30 %)."""
    from inferwatch.redaction import DEFAULT_REDACTOR

    body = exporter_payloads(1, 512, with_content=True, seed=3, pii_share=pii_share)[0]
    spans = ExportTraceServiceRequest.FromString(body).resource_spans[0].scope_spans[0].spans
    prompts = [a.value.string_value for s in spans for a in s.attributes if a.key == "gen_ai.input.messages"]
    share = sum(bool(DEFAULT_REDACTOR.redact(p).counts) for p in prompts) / len(prompts)
    assert low <= share <= high


def test_percentile_is_a_measured_value_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert [percentile(values, q) for q in (50, 95, 99, 100)] == [50.0, 95.0, 99.0, 100.0]
    assert percentile([0.3, 0.1, 0.2], 50) == 0.2
    assert math.isnan(percentile([], 50))


def test_closed_loop_senders_keep_one_request_in_flight_each_and_time_retries(slow_receiver) -> None:
    slow_receiver.reject_first = 1
    clients = make_clients(2)
    try:
        stats = send_all(slow_receiver.url, "iwk_test", [b"x"] * 6, clients)
    finally:
        for c in clients:
            c.close()
    assert (stats.acks, stats.rejected_503, slow_receiver.posts) == (6, 1, 7)
    assert slow_receiver.max_in_flight == 2
    assert len(stats.latencies) == 6 and min(stats.latencies) >= slow_receiver.delay_s
    assert max(stats.latencies) >= 2 * slow_receiver.delay_s  # the retried body counts both attempts


@pytest.mark.parametrize("slow_receiver", [(0.3, 0)], indirect=True)
def test_paced_sender_keeps_its_schedule_while_answers_are_slow(slow_receiver) -> None:
    stats = send_paced(slow_receiver.url, "iwk_test", [b"x"] * 5, 0.05)
    elapsed = time.perf_counter() - stats.first_send  # from the first slot (the connections' warm-up is before it)
    assert stats.acks == 5 and len(stats.latencies) == 5
    assert slow_receiver.max_in_flight >= 3  # open loop: sends do not wait for earlier answers
    assert elapsed < 5 * slow_receiver.delay_s  # a closed loop would take 1.5 s
    assert min(stats.latencies) >= slow_receiver.delay_s


@pytest.mark.slow
def test_a_tiny_exporter_run_prints_the_must_show_table(capsys) -> None:
    code = ingest.main(["--scenario", "exporter", "--runs", "1", "--exporter-in-flight", "1",
                        "--exporter-requests", "2", "--spans-per-request", "64", "--paced-seconds", "1",
                        "--ceiling-rows", "2000"])
    out = capsys.readouterr().out
    assert code == 0, out
    for line in ("1 in flight, no content: queryable spans/s", "1 in flight, with content: queryable spans/s",
                 "paced 100 spans/s, content: ack p50", "chDB insert ceiling rows/s"):
        assert line in out, out
    assert "only " not in out and "failed requests" not in out, out  # every span acknowledged and queryable
