"""Pure parts of the SDK: tags, experiment assignment, InferenceMetrics rules, options."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections import Counter

import pytest

import inferwatch
from inferwatch import context, semconv as sc
from inferwatch.metrics import InferenceMetrics, normalise_anthropic_usage, normalise_openai_usage
from inferwatch.options import resolve


def test_tags_nest_and_reset():
    assert context.current_tags() == {}
    with inferwatch.tags(feature="search", prompt_template="answer"):
        with inferwatch.tags(feature="rerank", template_version="3"):
            assert dict(context.current_tags()) == {"feature": "rerank", "prompt_template": "answer",
                                                    "template_version": "3"}
        assert context.current_tags()["feature"] == "search"
    assert context.current_tags() == {}


def test_user_ids_are_hmac_hashed_and_never_kept_raw():
    context.set_hash_key("deployment-key")
    with inferwatch.tags(user_id="alice@example.com"):
        tags = dict(context.current_tags())
        attrs = context.tag_attributes()
    expected = hmac.new(b"deployment-key", b"alice@example.com", hashlib.sha256).hexdigest()
    assert tags == {"user_hash": expected} and attrs == {sc.USER_HASH: expected}
    assert "alice" not in str(attrs)


def test_tags_follow_asyncio_tasks():
    async def inner():
        return context.current_tags().get("feature")

    async def main():
        with inferwatch.tags(feature="chat"):
            return await asyncio.gather(inner(), asyncio.create_task(inner()))

    assert asyncio.run(main()) == ["chat", "chat"]


def test_assignment_is_deterministic_sticky_and_follows_the_weights():
    variants = {"A": 0.2, "B": 0.8}
    first = [inferwatch.assign(f"user-{i}", "prompt-v3", variants) for i in range(20_000)]
    again = [inferwatch.assign(f"user-{i}", "prompt-v3", variants) for i in range(20_000)]
    assert first == again
    share_a = Counter(first)["A"] / len(first)
    assert 0.19 < share_a < 0.21  # 20k users: the binomial sd is 0.003
    # the bucket is sha256("user:experiment") mapped to [0, 1)
    digest = hashlib.sha256(b"user-7:prompt-v3").digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    assert first[7] == ("A" if point < 0.2 else "B")
    # another experiment reshuffles users independently
    other = [inferwatch.assign(f"user-{i}", "model-swap", variants) for i in range(20_000)]
    assert sum(a != b for a, b in zip(first, other)) > 4000


def test_experiment_tags_calls_and_needs_a_user():
    with inferwatch.tags(user_id="u-1"):
        with inferwatch.experiment("prompt-v3", {"A": 0.5, "B": 0.5}) as variant:
            tags = context.current_tags()
            assert tags["experiment"] == "prompt-v3" and tags["variant"] == variant
            assert variant == inferwatch.assign("u-1", "prompt-v3", {"A": 0.5, "B": 0.5})
    with pytest.raises(ValueError, match="needs a user"):
        with inferwatch.experiment("x", {"A": 1}):
            pass
    with pytest.raises(ValueError, match="weights"):
        inferwatch.assign("u", "x", {"A": 0, "B": 0})


def test_decode_speed_excludes_time_to_first_token():
    m = InferenceMetrics(start_time_ns=0, first_token_time_ns=1_000_000_000, end_time_ns=3_000_000_000,
                         output_tokens=201, input_tokens=10, streamed=True)
    assert m.ttft_ms == 1000 and m.latency_ms == 3000
    assert m.decode_tokens_per_s == pytest.approx(100.0)  # (201 - 1) / 2 s, not 201 / 3 s


def test_flags():
    ok = dict(input_tokens=10, output_tokens=5, response_chars=20)
    assert InferenceMetrics(finish_reason="length", **ok).truncated
    assert InferenceMetrics(finish_reason="content_filter", **ok).is_refusal
    assert InferenceMetrics(input_tokens=10, output_tokens=0).empty_response
    assert not InferenceMetrics(input_tokens=10, output_tokens=0, tool_calls=1).empty_response
    assert InferenceMetrics(output_tokens=None, input_tokens=None).usage_missing
    assert not InferenceMetrics(status="error", error_type="RateLimitError").usage_missing


def test_span_attributes_use_the_conventions():
    m = InferenceMetrics(operation="chat", provider="openai", request_model="gpt-4o", response_model="gpt-4o-x",
                         input_tokens=100, output_tokens=20, cache_read_tokens=64, reasoning_tokens=5,
                         finish_reason="stop", response_chars=80, start_time_ns=0, first_token_time_ns=250_000_000,
                         end_time_ns=1_000_000_000, streamed=True, feature="search")
    attrs = m.span_attributes()
    assert attrs[sc.GEN_AI_USAGE_INPUT_TOKENS] == 100 and attrs[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 64
    assert attrs[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert attrs[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] == 0.25 and attrs[sc.FEATURE] == "search"
    missing = InferenceMetrics(operation="chat", provider="openai").span_attributes()
    assert sc.GEN_AI_USAGE_INPUT_TOKENS not in missing and missing[sc.USAGE_MISSING] is True


def test_new_metrics_fields_default_to_nothing_and_map_to_attributes():
    m = InferenceMetrics(input_tokens=10, output_tokens=2)
    assert (m.cache_write_1h_tokens, m.cache_hit, m.cache_hit_kind, m.downgraded_from) == (0, False, "", "")
    attrs = m.span_attributes()
    assert sc.CACHE_CREATION_1H_INPUT_TOKENS not in attrs and sc.CACHE_HIT not in attrs
    assert not any(k.startswith("inferwatch.budget.") for k in attrs)
    attrs = InferenceMetrics(input_tokens=10, output_tokens=2, cache_write_tokens=8, cache_write_1h_tokens=6,
                             cache_hit=True, cache_hit_kind="exact", request_model="gpt-4o-mini",
                             downgraded_from="gpt-4o").span_attributes()
    assert attrs[sc.CACHE_CREATION_1H_INPUT_TOKENS] == 6
    assert attrs[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 8
    assert attrs[sc.CACHE_HIT] is True and attrs["inferwatch.cache_hit.kind"] == "exact"
    assert attrs["inferwatch.budget.downgraded_from"] == "gpt-4o"
    assert attrs[sc.GEN_AI_REQUEST_MODEL] == "gpt-4o-mini"


def test_usage_normalisation_to_the_otel_convention():
    assert normalise_openai_usage(1200, 150, 1024, 40) == {
        "input_tokens": 1200, "output_tokens": 150, "cache_read_tokens": 1024, "cache_write_tokens": 0,
        "reasoning_tokens": 40}
    # Anthropic: 300 fresh + 4000 read + 1000 written = 5300 input tokens in the OTel convention
    assert normalise_anthropic_usage(300, 401, 4000, 1000)["input_tokens"] == 5300
    # of the 1000 written, 600 with the 1-hour TTL: a subset, the write count stays 1000
    n = normalise_anthropic_usage(300, 401, 4000, 1000, 400, 600)
    assert (n["input_tokens"], n["cache_write_tokens"], n["cache_write_1h_tokens"]) == (5300, 1000, 600)


def test_options_precedence_and_validation(monkeypatch):
    monkeypatch.setenv("INFERWATCH_SAMPLE_RATE", "0.25")
    monkeypatch.setenv("INFERWATCH_CAPTURE", "redacted")
    options = resolve(capture="off")
    assert options.sample_rate == 0.25 and options.capture == "off"  # argument beats env
    monkeypatch.setenv("INFERWATCH_MAX_QUEUE_SIZE", "lots")
    with pytest.raises(ValueError, match="INFERWATCH_MAX_QUEUE_SIZE"):
        resolve()
    with pytest.raises(ValueError, match="capture"):
        resolve(capture="everything", max_queue_size=5)
    with pytest.raises(TypeError, match="unknown"):
        resolve(colour="blue")


def test_sdk_is_inert_before_init():
    assert inferwatch.stats()["queued"] == 0
    with inferwatch.llm_call(model="m", provider="p") as call:
        call.first_token()
        call.usage(input_tokens=3, output_tokens=4)
    assert call.metrics.output_tokens == 4 and call.metrics.trace_id == ""  # measured, nothing exported

    @inferwatch.observe
    def double(x):
        return 2 * x

    assert double(21) == 42
    assert inferwatch.flush(0.1) is True
