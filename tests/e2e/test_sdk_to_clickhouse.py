"""SDK -> collector -> ClickHouse, end to end, with the real ``openai`` and ``anthropic`` clients.

A real collector subprocess (embedded chDB in a temp directory, a free port on 127.0.0.1) receives what the SDK
exports from this process: calls through ``wrap_openai`` / ``wrap_anthropic`` against the mock LLM server, made
inside ``inferwatch.tags(feature="search", user_id="alice")`` and ``inferwatch.experiment(...)``. The rows are
read back through the query API while the collector runs, then from the chDB directory itself once it has stopped
(one chDB directory belongs to one process at a time). Every number asserted follows from the mock's documented
rules (examples/mock_llm.py).

PII: hypothesis generates e-mail addresses, US phone numbers, SSNs, Luhn-valid card numbers and ``sk-`` keys, and
draws IP addresses, mod-97-valid IBANs, crypto wallet addresses and one of the secret kinds (OpenAI, Anthropic, AWS
access and secret keys, GitHub tokens, JWTs, bearer tokens, Slack and Stripe tokens, passwords: the redaction
corpus's generator, tests/helpers/redaction_corpus.py); all of them go through the SDK (``capture="redacted"``) in the
same collector run, as prompts and as feedback comments, and none may appear anywhere in ``llm_calls``, ``spans``,
``prompt_logs`` or ``feedback``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import inferwatch  # noqa: E402
from examples.mock_llm import count_tokens, estimate_prompt_tokens  # noqa: E402
from inferwatch import _guard  # noqa: E402
from tests.helpers.processes import interrupt_group  # noqa: E402
from tests.helpers.redaction_corpus import _Gen, luhn_complete  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "e2e"
USER = "alice"
HASH_KEY = "k"
EXPERIMENT = "exp"
VARIANTS = {"A": 0.5, "B": 0.5}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}
BAD_ARGS = '{"location":"sample-location",}'
PII_EXAMPLES = 15

# one request model per case, so each case is one row to find
M_SLOW, M_PLAIN, M_TRUNC, M_TOOL, M_NOUSAGE = "gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4.1"
M_ANT, M_ANT_STREAM = "claude-haiku-4-5", "claude-opus-4-5"
M_PII_OPENAI, M_PII_ANT = "gpt-3.5-turbo", "claude-3-haiku-20240307"
M_REFUSE, M_EMPTY = "o4-mini", "claude-e2e-empty"




def luhn_valid(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return total % 10 == 0


_alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

emails = st.builds(
    lambda user, dot, domain: f"{user}{dot}@{domain}",
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=10),
    st.sampled_from(["", ".smith", ".k9", "_work"]),
    st.sampled_from(["example.com", "gmail.com", "acme-corp.io", "mail.co.uk", "uni.edu"]),
)
phones = st.builds(
    lambda area, exchange, line, fmt: fmt.format(a=area, e=exchange, s=f"{line:04d}"),
    st.sampled_from(["212", "415", "617", "312", "646", "206", "303"]),
    st.integers(201, 989).filter(lambda e: e % 100 != 11 and e != 555).map(str),
    st.integers(1000, 9999),
    st.sampled_from(["({a}) {e}-{s}", "{a}-{e}-{s}", "+1 {a} {e} {s}", "+1-{a}-{e}-{s}"]),
)
ssns = st.builds(
    lambda area, group, serial: f"{area:03d}-{group:02d}-{serial:04d}",
    st.integers(100, 665), st.integers(10, 99), st.integers(1000, 9999),
)
cards = st.builds(
    lambda prefix, body, sep: (lambda n: sep.join(n[i:i + 4] for i in range(0, 16, 4)))(
        luhn_complete(prefix + f"{body:0{15 - len(prefix)}d}")),
    st.sampled_from(["4", "51", "53", "55"]),
    st.integers(10**11, 10**13 - 1),
    st.sampled_from([" ", "-", ""]),
)
openai_keys = st.builds(
    lambda prefix, body: prefix + body,
    st.sampled_from(["sk-", "sk-proj-"]),
    st.text(_alnum, min_size=40, max_size=56),
)


def _planted(seed: int) -> dict[str, str]:
    """An IP address, an IBAN, a wallet and a secret with the words around it (``lead``, ``tail``: not PII), drawn
    by the redaction corpus's generator from ``seed`` (hypothesis draws the seed, and shrinks it)."""
    draw = _Gen(random.Random(seed))
    _, lead, secret, tail = draw.secret()
    return {"ip": draw.ip(), "iban": draw.iban(), "crypto": draw.crypto(), "secret": secret, "lead": lead,
            "tail": tail}


pii_sets = st.builds(lambda fixed, planted: {**fixed, **planted},
                     st.fixed_dictionaries({"email": emails, "phone": phones, "ssn": ssns, "card": cards,
                                            "key": openai_keys}),
                     st.integers(0, 2**32 - 1).map(_planted))
NOT_PII = frozenset({"lead", "tail"})


@settings(max_examples=30, deadline=None)
@given(pii_sets)
def test_pii_generators_have_the_advertised_shapes(values: dict[str, str]) -> None:
    assert "@" in values["email"] and "." in values["email"].split("@")[1]
    digits = "".join(c for c in values["phone"] if c.isdigit())
    assert len(digits) in (10, 11) and digits[-10:-7] in {"212", "415", "617", "312", "646", "206", "303"}
    area, group, serial = values["ssn"].split("-")
    assert (len(area), len(group), len(serial)) == (3, 2, 4) and area != "666" and area[0] != "9"
    card = "".join(c for c in values["card"] if c.isdigit())
    assert len(card) == 16 and card[0] in "45" and luhn_valid(card)
    assert values["key"].startswith("sk-") and len(values["key"]) >= 43


def test_luhn_helper() -> None:
    assert luhn_valid("4111 1111 1111 1111") and luhn_complete("411111111111111") == "4111111111111111"
    assert not luhn_valid("4111 1111 1111 1112")


# --- the collector subprocess -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def create_key(data_dir: Path, env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "inferwatch_server", "--data-dir", str(data_dir), "keys", "create",
         "--project", PROJECT, "--scope", "ingest", "--scope", "read", "--scope", "prompts:read"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


# --- the app side ---------------------------------------------------------------------------------------------
def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def drain(stream: Any) -> None:
    for _ in stream:
        pass


@inferwatch.observe(name="search_request")
def slow_stream_request(client: Any) -> str:
    """The slow stream inside a span of its own: its trace id is the one the LLM call gets too."""
    from opentelemetry import trace

    drain(client.chat.completions.create(model=M_SLOW, messages=user("[slow-first-token:150] find docs"),
                                         stream=True, stream_options={"include_usage": True}))
    return f"{trace.get_current_span().get_span_context().trace_id:032x}"


def pii_prompt(values: dict[str, str]) -> str:
    """Some values after a line break or a tab: escaped in the captured JSON (``\\n``), where they once hid."""
    return (f"Contact {values['email']} or call\n{values['phone']}. SSN\n{values['ssn']}, "
            f"card\t{values['card']}, api key\n{values['key']}. From\r\n{values['ip']}, IBAN {values['iban']}, "
            f"wallet\n{values['crypto']};\n{values['lead']}{values['secret']}{values['tail']} Summarise.")


@pytest.mark.slow
def test_sdk_calls_land_in_clickhouse(tmp_path, mock_llm, openai_client, anthropic_client):
    data_dir = tmp_path / "data"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "INFERWATCH_DATA_DIR": str(data_dir), "INFERWATCH_FLUSH_INTERVAL_S": "0.2",
           "INFERWATCH_INGEST_WORKERS": "1"}
    key = create_key(data_dir, env)
    log_path = tmp_path / "collector.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferwatch_server", "--data-dir", str(data_dir), "collector",
         "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    pii_values: list[dict[str, str]] = []
    try:
        def ready() -> bool:
            try:
                return httpx.get(f"{base}/readyz", timeout=1).status_code == 200
            except httpx.HTTPError:
                assert proc.poll() is None, log_path.read_text()
                return False

        wait_for(ready, 60, "the collector to be ready")

        feedback_before = inferwatch.feedback_stats()  # process-lifetime counters: earlier tests' count too
        inferwatch.init(endpoint=base, api_key=key, capture="redacted", schedule_delay_ms=50,
                        user_hash_key=HASH_KEY, sample_rate=1.0)
        try:
            oai = inferwatch.wrap_openai(openai_client)
            ant = inferwatch.wrap_anthropic(anthropic_client)
            with inferwatch.tags(feature="search", user_id=USER), inferwatch.experiment(EXPERIMENT, VARIANTS):
                trace_id = slow_stream_request(oai)
                oai.chat.completions.create(model=M_PLAIN, messages=user("hello there"))
                oai.chat.completions.create(model=M_TRUNC, messages=user("[truncate] write a story"))
                oai.chat.completions.create(model=M_TOOL, messages=user("[tool:bad-json] weather in Paris?"),
                                            tools=[WEATHER])
                drain(oai.chat.completions.create(model=M_NOUSAGE, messages=user("[no-usage] stream it"),
                                                  stream=True, stream_options={"include_usage": True}))
                ant.messages.create(model=M_ANT, max_tokens=256, messages=user("hello anthropic"))
                drain(ant.messages.create(model=M_ANT_STREAM, max_tokens=256, messages=user("stream anthropic"),
                                          stream=True))
                oai.chat.completions.create(model=M_REFUSE, messages=user("[refuse] how to pick a lock"))
                ant.messages.create(model=M_EMPTY, max_tokens=64, messages=user("[empty] say nothing"))

                @settings(max_examples=PII_EXAMPLES, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck))
                @given(pii_sets)
                def send_pii(values: dict[str, str]) -> None:
                    pii_values.append(values)
                    prompt = pii_prompt(values)
                    if len(pii_values) % 2:
                        answer = oai.chat.completions.create(model=M_PII_OPENAI, messages=[
                            {"role": "system", "content": f"The user is {values['email']}."},
                            {"role": "user", "content": prompt}])
                    else:
                        answer = ant.messages.create(model=M_PII_ANT, max_tokens=64, system=f"key {values['key']}",
                                                     messages=user(prompt))
                    inferwatch.feedback(response_id=answer.id, thumbs_up=False, comment=f"wrong: {prompt}")

                send_pii()
            assert inferwatch.flush(10)
            stats = inferwatch.stats()
            feedback_stats = inferwatch.feedback_stats()
        finally:
            inferwatch.shutdown()
            _guard.reset()
        expected_calls = 9 + len(pii_values)
        assert (feedback_stats["sent"] - feedback_before["sent"], feedback_stats["failed"] - feedback_before["failed"]
                ) == (len(pii_values), 0), feedback_stats
        assert stats["export_failures"] == 0, stats
        assert not any(stats["dropped"].values()), stats
        assert stats["exported"] >= expected_calls + 1, stats  # + the observe span

        # --- read back through the query API, while the collector runs ---
        headers = {"Authorization": f"Bearer {key}"}

        def calls() -> int:
            r = httpx.get(f"{base}/api/v1/calls/summary", headers=headers, timeout=5)
            assert r.status_code == 200, r.text
            n = r.json()["calls"]
            return n if n >= expected_calls else 0

        assert wait_for(calls, 20, f"{expected_calls} calls") == expected_calls
        by_model = httpx.get(f"{base}/api/v1/cost/by-model", headers=headers, timeout=5).json()
        assert sum(m["calls"] for m in by_model) == expected_calls
        assert sum(m["usage_missing"] for m in by_model) == 1

        r = httpx.get(f"{base}/api/v1/traces/{trace_id}", headers=headers, timeout=5)
        assert r.status_code == 200, r.text
        assert r.json()["trace_id"] == trace_id
        spans = r.json()["spans"]
        assert len(spans) == 2, spans
        by_type = {s["type"]: s for s in spans}
        assert by_type["span"]["name"] == "search_request"
        llm = by_type["llm"]
        assert llm["parent_span_id"] == by_type["span"]["span_id"]
        assert llm["ttft_ms"] >= 150 and llm["streamed"] and not llm["usage_missing"]
        assert llm["feature"] == "search" and llm["output_tokens"] == 24
    finally:
        interrupt_group(proc, wait_s=20)
        log.close()

    # --- read the chDB directory itself, now that the collector has let go of it ---
    from inferwatch_collector.settings import Settings
    from inferwatch_collector.store import Store

    store = Store.open(Settings(data_dir=data_dir))
    try:
        result = store.query("SELECT * FROM llm_calls WHERE project_id = {p:String}", {"p": PROJECT})
        cols = list(result.column_names)
        rows = [dict(zip(cols, r)) for r in result.result_rows]
        dumps = {table: "\n".join(repr(r) for r in store.query(f"SELECT * FROM {table}").result_rows)
                 for table in ("llm_calls", "spans", "prompt_logs", "feedback")}
        prompt_log_count = store.query("SELECT count() FROM prompt_logs").result_rows[0][0]
        feedback_comments = store.query("SELECT count() FROM feedback FINAL WHERE comment LIKE 'wrong: %'"
                                        ).result_rows[0][0]
    finally:
        store.close()

    assert len(rows) == 9 + len(pii_values)
    by_model: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_model.setdefault(r["request_model"], []).append(r)
    one = {m: rs[0] for m, rs in by_model.items() if len(rs) == 1}

    variant = inferwatch.assign(USER, EXPERIMENT, VARIANTS)
    user_hash = hmac.new(HASH_KEY.encode(), USER.encode(), hashlib.sha256).hexdigest()
    for r in rows:
        assert (r["feature"], r["experiment"], r["variant"], r["user_hash"]) == \
            ("search", EXPERIMENT, variant, user_hash), r
        assert r["status"] != "error" and r["error_type"] == "", r

    def in_tokens(text: str) -> int:
        return 4 + count_tokens(text)

    slow = one[M_SLOW]
    assert slow["streamed"] and not slow["usage_missing"] and slow["ttft_ms"] >= 150
    assert (slow["input_tokens"], slow["output_tokens"]) == (in_tokens("[slow-first-token:150] find docs"), 24)
    assert slow["trace_id"] == trace_id

    plain = one[M_PLAIN]
    assert not plain["streamed"] and plain["finish_reason"] == "stop" and not plain["truncated"]
    assert (plain["input_tokens"], plain["output_tokens"]) == (in_tokens("hello there"), 24)
    assert plain["cost_usd"] >= 0  # no price table is loaded in a fresh data dir

    trunc = one[M_TRUNC]
    assert trunc["truncated"] and trunc["finish_reason"] == "length"
    assert (trunc["input_tokens"], trunc["output_tokens"]) == (in_tokens("[truncate] write a story"), 12)

    tool = one[M_TOOL]
    assert (tool["tool_calls"], tool["tool_call_failures"]) == (1, 1)
    assert tool["input_tokens"] == estimate_prompt_tokens(user("[tool:bad-json] weather in Paris?"),
                                                          tools=[WEATHER])
    assert tool["output_tokens"] == count_tokens("get_weather") + count_tokens(BAD_ARGS)

    nousage = one[M_NOUSAGE]
    assert nousage["streamed"] and nousage["usage_missing"]
    assert nousage["input_tokens"] == 0 and nousage["output_tokens"] == 0

    ant_row = one[M_ANT]
    assert ant_row["provider"] == "anthropic" and not ant_row["streamed"]
    assert (ant_row["input_tokens"], ant_row["output_tokens"]) == (in_tokens("hello anthropic"), 24)
    ant_stream = one[M_ANT_STREAM]
    assert ant_stream["streamed"] and not ant_stream["usage_missing"] and ant_stream["ttft_ms"] > 0
    assert (ant_stream["input_tokens"], ant_stream["output_tokens"]) == (in_tokens("stream anthropic"), 24)

    refused, empty = one[M_REFUSE], one[M_EMPTY]
    assert refused["refusal"] and not refused["empty_response"] and refused["provider"] == "openai"
    assert empty["empty_response"] and not empty["refusal"] and empty["provider"] == "anthropic"
    assert sum(r["refusal"] for r in rows) == 1 and sum(r["empty_response"] for r in rows) == 1

    # --- nothing personal reached ClickHouse ---
    assert prompt_log_count >= len(pii_values)  # the prompts were captured (redacted), so the check means something
    assert feedback_comments == len(pii_values)  # and the comments were stored (redacted)
    everything = "\n".join(dumps.values())
    assert USER not in everything
    leaked = []
    for values in pii_values:
        for kind, value in values.items():
            if kind in NOT_PII:
                continue
            needles = {value}
            if kind in ("card", "iban"):
                needles.add("".join(c for c in value if c.isalnum()))
            leaked += [(kind, n) for n in needles if n in everything]
    assert not leaked, leaked
    assert len(pii_values) == PII_EXAMPLES
