"""``inferwatch.feedback``: exact payloads (local receiver), delivery to the real collector, never raising."""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from unittest import mock

import pytest
import uvicorn
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import inferwatch
from inferwatch.context import hash_user_id
from inferwatch.telemetry import feedback_export as fx

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
EMAIL = "bob.smith@example.com"


class Receiver:
    """Records every POST as (path, headers, parsed JSON); answers from a script of statuses (then 202)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.script: list[int] = []
        self.answers: list[dict[str, Any]] = []  # bodies of the next 2xx answers (then a fixed one)
        self.delay_s = 0.0
        self.hold: threading.Event | None = None  # when given, each request waits for it before its answer
        self.answered = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path != "/api/v1/feedback":  # e.g. the pipeline's metrics: not ours to record
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                receiver.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()},
                                          json.loads(body)))
                if receiver.hold is not None:
                    receiver.hold.wait(60)
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                receiver.answered += 1
                status = receiver.script.pop(0) if receiver.script else 202
                payload = b'{"error": "scripted"}'
                if status < 300 and receiver.answers:
                    payload = json.dumps(receiver.answers.pop(0)).encode()
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def items(self) -> list[dict[str, Any]]:
        return [item for _, _, body in self.requests for item in body]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def clean_sdk(monkeypatch) -> Iterator[None]:
    monkeypatch.setattr(fx, "RETRY", dataclasses.replace(fx.RETRY, first_backoff_s=0.01))  # 0.01, 0.02, 0.04 s
    inferwatch.shutdown()
    fx.reset_counts()
    yield
    inferwatch.feedback.flush(5)
    inferwatch.shutdown()
    fx.reset_counts()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    inferwatch.feedback.flush(5)
    inferwatch.shutdown()  # before the receiver goes: the pipeline's last metrics export would wait for it
    r.close()


def start(endpoint: str, api_key: str = "iwk_000000000000_testtesttesttesttesttest", **kwargs: Any) -> None:
    inferwatch.init(endpoint=endpoint, api_key=api_key, exporter=InMemorySpanExporter(), **kwargs)


def feedback_threads() -> list[threading.Thread]:
    """The threads that send feedback (the SDK's export threads)."""
    return [t for t in threading.enumerate() if t.name == "inferwatch-export"]


def sdk_feedback() -> fx.FeedbackExport:
    """The running SDK's feedback stage."""
    return inferwatch.client.get_pipeline().feedback


# --- exact payloads ------------------------------------------------------------------------------------------
def test_payload_shape(receiver):
    start(receiver.url + "/", capture="redacted")
    with inferwatch.tags(user_id="alice", feature="search"):
        fid = inferwatch.feedback(TRACE.upper(), score=0.5, label="partial", name="judge.relevance",
                                  comment=f"wrong; write to {EMAIL}")
    assert len(fid) == 32
    assert inferwatch.feedback.flush(5) is True
    [(path, headers, body)] = receiver.requests
    assert path == "/api/v1/feedback"
    assert headers["authorization"] == "Bearer iwk_000000000000_testtesttesttesttesttest"
    assert headers["content-type"] == "application/json"
    [item] = body
    timestamp = item.pop("timestamp")
    sent_at = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    assert timestamp.endswith("Z") and abs((datetime.now(timezone.utc) - sent_at).total_seconds()) < 60
    assert item == {"feedback_id": fid, "trace_id": TRACE, "name": "judge.relevance", "score": 0.5,
                    "label": "partial", "comment": "wrong; write to <EMAIL_ADDRESS>",
                    "user_hash": hash_user_id("alice"), "source": "sdk"}
    assert inferwatch.feedback_stats()["sent"] == 1


def test_thumbs_response_id_and_explicit_id(receiver):
    start(receiver.url, capture="full")
    assert inferwatch.feedback(response_id="chatcmpl-9", thumbs_up=False, comment=f"hi {EMAIL}",
                               feedback_id="vote-7") == "vote-7"
    inferwatch.feedback.flush(5)
    [item] = receiver.items()
    assert {k: v for k, v in item.items() if k != "timestamp"} == {
        "feedback_id": "vote-7", "response_id": "chatcmpl-9", "name": "user_feedback", "thumbs_up": False,
        "comment": f"hi {EMAIL}", "source": "sdk"}  # capture=full: sent as given (the collector still redacts)


def test_the_default_id_is_stable_for_the_same_content(receiver):
    start(receiver.url)
    first = inferwatch.feedback(TRACE, thumbs_up=True, comment="nice")
    assert inferwatch.feedback(TRACE, thumbs_up=True, comment="nice") == first
    assert inferwatch.feedback(TRACE, thumbs_up=False, comment="nice") != first
    with inferwatch.tags(user_id="u2"):
        assert inferwatch.feedback(TRACE, thumbs_up=True, comment="nice") != first


def test_the_current_span_is_used_without_ids(receiver):
    start(receiver.url)
    with inferwatch.llm_call(model="m", provider="openai") as call:
        fid = inferwatch.feedback(thumbs_up=True)
    inferwatch.feedback.flush(5)
    [item] = receiver.items()
    assert fid and item["trace_id"] == call.metrics.trace_id and item["span_id"] == call.metrics.span_id


def test_long_comments_are_truncated_to_the_collectors_limit(receiver):
    start(receiver.url)
    inferwatch.feedback(TRACE, comment="é" * 10_000)
    inferwatch.feedback.flush(5)
    [item] = receiver.items()
    assert len(item["comment"].encode()) <= fx.MAX_COMMENT_BYTES and item["comment"].startswith("éé")


# --- never raise, never block --------------------------------------------------------------------------------
def test_inert_before_init(receiver):
    deadline = time.monotonic() + 5  # earlier tests' export threads end with their shutdown()
    while feedback_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert feedback_threads() == []
    assert inferwatch.feedback(TRACE, thumbs_up=True) == ""
    assert inferwatch.feedback("garbage", score=float("nan")) == ""
    assert inferwatch.feedback.flush(0.1) is True
    assert feedback_threads() == [] and receiver.requests == []
    assert inferwatch.feedback_stats() == {"queued": 0, "sent": 0, "failed": 0, "resent": 0, "resend_failed": 0,
                                           "dropped": {"invalid": 0, "queue_full": 0, "internal_error": 0,
                                                       "shutdown": 0}}
    inferwatch.init(endpoint=receiver.url, enabled=False)
    assert inferwatch.feedback(TRACE, thumbs_up=True) == "" and feedback_threads() == []


@pytest.mark.parametrize("kwargs", [
    {"trace_id": "nope", "thumbs_up": True},
    {"trace_id": 0, "thumbs_up": True},
    {"trace_id": TRACE, "thumbs_up": True, "score": 1.0},
    {"trace_id": TRACE, "score": float("inf")},
    {"trace_id": TRACE, "score": "5"},
    {"trace_id": TRACE, "thumbs_up": "yes"},
    {"trace_id": TRACE},
    {"trace_id": TRACE, "score": 1, "name": ""},
    {"trace_id": TRACE, "score": 1, "feedback_id": "not ok!"},
    {"trace_id": TRACE, "comment": 42},
    {"thumbs_up": True},  # no ids and no current span
])
def test_bad_arguments_are_counted_not_raised(receiver, kwargs):
    start(receiver.url)
    assert inferwatch.feedback(**kwargs) == ""
    assert inferwatch.feedback_stats()["dropped"]["invalid"] == 1
    inferwatch.feedback.flush(1)
    assert receiver.requests == []


def test_collector_down_is_counted_failed(monkeypatch):
    start(f"http://127.0.0.1:{free_port()}")
    fid = inferwatch.feedback(TRACE, thumbs_up=True)
    assert fid
    assert inferwatch.feedback.flush(10) is True
    assert inferwatch.feedback_stats() | {"dropped": None} == {"queued": 0, "sent": 0, "failed": 1, "resent": 0,
                                                               "resend_failed": 0, "dropped": None}


def test_retries_429_and_5xx_but_not_4xx(receiver):
    start(receiver.url)
    receiver.script = [503, 429, 500]
    inferwatch.feedback(TRACE, thumbs_up=True)
    inferwatch.feedback.flush(5)
    assert len(receiver.requests) == 4 and inferwatch.feedback_stats()["sent"] == 1

    receiver.requests.clear()
    receiver.script = [503, 503, 503, 503]
    inferwatch.feedback(TRACE, thumbs_up=False)
    inferwatch.feedback.flush(5)
    assert len(receiver.requests) == 4 and inferwatch.feedback_stats()["failed"] == 1

    receiver.requests.clear()
    receiver.script = [401]
    inferwatch.feedback(TRACE, score=2)
    inferwatch.feedback.flush(5)
    assert len(receiver.requests) == 1 and inferwatch.feedback_stats()["failed"] == 2


def test_a_rejected_batch_is_resent_item_by_item(receiver):
    start(receiver.url)
    receiver.script = [422, 202, 422]
    sdk_feedback().deliver([{"trace_id": TRACE, "score": 1.0}, {"trace_id": TRACE, "score": 2.0}])
    assert [len(body) for _, _, body in receiver.requests] == [2, 1, 1]
    stats = inferwatch.feedback_stats()
    assert stats["sent"] == 1 and stats["failed"] == 1


def test_never_blocks_and_the_queue_is_bounded(receiver, monkeypatch):
    """The receiver holds every request until the app's calls are done: they all return while nothing was
    answered (a call that waited for the collector would wait for that hold)."""
    monkeypatch.setattr(fx, "MAX_QUEUE", 3)
    start(receiver.url)
    receiver.hold = threading.Event()
    ids = [inferwatch.feedback(f"{i + 1:032x}", thumbs_up=True) for i in range(10)]
    assert receiver.answered == 0
    receiver.hold.set()
    dropped = inferwatch.feedback_stats()["dropped"]["queue_full"]
    # The sender may take up to one queue's worth (3) before it blocks on the held request, and the queue holds 3
    # more: at least 10 - 3 - 3 = 4 are dropped, whatever the thread scheduling.
    assert 4 <= dropped <= 7 and ids.count("") == dropped
    assert inferwatch.feedback.flush(10) is True
    assert len(receiver.items()) == 10 - dropped and inferwatch.feedback_stats()["sent"] == 10 - dropped


def test_a_new_init_sends_to_the_new_endpoint(receiver):
    other = Receiver()
    try:
        start(other.url)
        inferwatch.feedback(TRACE, thumbs_up=True)
        inferwatch.feedback.flush(5)
        inferwatch.shutdown()
        assert inferwatch.feedback(TRACE, thumbs_up=False) == ""  # inert again after shutdown
        start(receiver.url)
        inferwatch.feedback(TRACE, score=3)
        inferwatch.feedback.flush(5)
        assert [i.get("thumbs_up") for i in other.items()] == [True]
        assert [i.get("score") for i in receiver.items()] == [3.0]
    finally:
        other.close()


# --- the real collector --------------------------------------------------------------------------------------
@pytest.fixture
def collector(settings, store) -> Iterator[tuple[str, Any]]:
    """The collector app served by uvicorn on a free port, committing ingested rows every 20 ms; yields (url,
    keys)."""
    yield from _serve_collector(settings, store, flush_interval_s=0.02)


@pytest.fixture
def default_collector(settings, store) -> Iterator[tuple[str, Any]]:
    """The same with the collector's default writer settings (acknowledged after its own insert, or up to
    flush_interval_s later while other requests being decoded join it)."""
    default = type(settings).model_fields["flush_interval_s"].default
    yield from _serve_collector(settings, store, flush_interval_s=default)


def _serve_collector(settings: Any, store: Any, flush_interval_s: float) -> Iterator[tuple[str, Any]]:
    from inferwatch_collector.app import create_app
    from inferwatch_collector.auth import KeyStore

    keys = KeyStore(store, cache_seconds=0)
    key_set = {"ingest": keys.create_key("p1", ["ingest"]), "read": keys.create_key("p1", ["read"]),
               "prompts": keys.create_key("p1", ["read", "prompts:read"])}
    app = create_app(settings.model_copy(update={"flush_interval_s": flush_interval_s, "ingest_workers": 0}),
                     store=store)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "collector did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}", key_set
    finally:
        server.should_exit = True
        thread.join(15)


def test_delivered_to_the_real_collector(collector, store):
    import httpx

    from inferwatch_collector.rows import LLM_CALL_COLUMNS
    from tests.helpers.factories import llm_call

    url, keys = collector
    row = llm_call("p1", trace_id=TRACE, model="gpt-4o", experiment="prompt-v3", variant="B", feature="chat")
    store.insert_columns("llm_calls", [list(c) for c in zip(row)], LLM_CALL_COLUMNS)

    start(url, api_key=keys["ingest"], capture="redacted")
    with inferwatch.tags(user_id="alice"):
        fid = inferwatch.feedback(TRACE, thumbs_up=False, comment=f"mail {EMAIL} please")
        assert inferwatch.feedback(TRACE, thumbs_up=False, comment=f"mail {EMAIL} please") == fid  # app retry
    inferwatch.feedback(response_id="never-seen", score=0.1, name="judge")
    assert inferwatch.feedback.flush(10) is True
    assert inferwatch.feedback_stats() | {"dropped": None} == {"queued": 0, "sent": 3, "failed": 0, "resent": 0,
                                                               "resend_failed": 0, "dropped": None}

    listed = httpx.get(f"{url}/api/v1/feedback", params={"trace_id": TRACE},  # comment text: prompts:read
                       headers={"Authorization": f"Bearer {keys['prompts']}"}).json()
    assert len(listed) == 1  # the retry replaced, not duplicated
    [item] = listed
    assert (item["feedback_id"], item["kind"], item["value"], item["source"]) == (fid, "thumbs", -1.0, "sdk")
    assert (item["model"], item["experiment"], item["variant"], item["feature"]) == ("gpt-4o", "prompt-v3", "B",
                                                                                      "chat")
    assert item["user_hash"] == hash_user_id("alice") and EMAIL not in item["comment"]
    assert store.query("SELECT count() FROM feedback FINAL WHERE name = 'judge'").result_rows[0][0] == 1


def test_a_read_key_is_refused_and_counted_failed(collector):
    url, keys = collector
    start(url, api_key=keys["read"])
    assert inferwatch.feedback(TRACE, thumbs_up=True)
    inferwatch.feedback.flush(10)
    assert inferwatch.feedback_stats()["failed"] == 1 and inferwatch.feedback_stats()["sent"] == 0


def test_feedback_by_response_id_of_a_recorded_call_carries_its_trace(receiver):
    """The span may still be in the export queue: the SDK links the feedback to the call's trace itself."""
    start(receiver.url)
    with inferwatch.llm_call(model="m", provider="p") as call:
        call.response(response_id="resp-linked-1")
        call.usage(input_tokens=3, output_tokens=2)
    ctx = call._span.get_span_context()
    inferwatch.feedback(response_id="resp-linked-1", thumbs_up=True)
    inferwatch.feedback(response_id="resp-unknown-2", thumbs_up=True)
    inferwatch.feedback.flush(5)
    linked, unknown = sorted(receiver.items(), key=lambda item: item["response_id"])
    assert linked["trace_id"] == f"{ctx.trace_id:032x}" and linked["span_id"] == f"{ctx.span_id:016x}"
    assert "trace_id" not in unknown


def _calls(client: Any, streams: list[bool]) -> list[str]:
    """One chat call per entry (streamed or not, read to the end): their response ids."""
    ids = []
    for n, stream in enumerate(streams):
        result = client.chat.completions.create(model="gpt-4o-mini", stream=stream,
                                                messages=[{"role": "user", "content": f"call {n}"}])
        if stream:
            assert type(result._decoder).__name__ == "_ChatEvents"  # tapped: its id read in the export thread
            ids.append([chunk.id for chunk in result][0])
        else:
            ids.append(result.id)
    return ids


def _start_queued(receiver: Receiver, client: Any, **options: Any) -> InMemorySpanExporter:
    """The SDK with spans held in the queue (no scheduled export during the test), ``client`` wrapped."""
    exporter = InMemorySpanExporter()
    inferwatch.init(endpoint=receiver.url, api_key="iwk_000000000000_testtesttesttesttesttest", exporter=exporter,
                    schedule_delay_ms=600_000, **options)
    inferwatch.wrap_openai(client)
    return exporter


def test_feedback_right_after_calls_is_linked_by_the_sender_without_exporting(receiver, openai_client):
    """Response ids are remembered by the export thread. Feedback by an id sent while its call still waits in the
    export queue is linked by the sender from the queued calls (a stream's id from its first chunk, a completion's
    from its kept facts), nothing exported early; the default feedback id is the same whichever thread linked
    it; an id of another process stays unlinked."""
    exporter = _start_queued(receiver, openai_client)
    try:
        ids = _calls(openai_client, [True, False, True])
        firsts = [inferwatch.feedback(response_id=i, thumbs_up=True) for i in ids]
        inferwatch.feedback(response_id="of-another-process", thumbs_up=False)
        assert _wait_for(lambda: len(receiver.items()) == 4)  # not flush(): that exports the spans first
        assert exporter.get_finished_spans() == ()  # linked from the queue: nothing was exported for it
        assert inferwatch.flush(10)
        spans = {span.attributes["gen_ai.response.id"]: span for span in exporter.get_finished_spans()}
        assert [inferwatch.feedback(response_id=i, thumbs_up=True) for i in ids] == firsts  # linked here now
        assert inferwatch.feedback.flush(10)
    finally:
        inferwatch.uninstrument_openai()
    items = receiver.items()
    assert len(items) == 7 and "trace_id" not in items[3]
    for response_id, early, late in zip(ids, items[:3], items[4:]):
        ids_hex = (f"{spans[response_id].context.trace_id:032x}", f"{spans[response_id].context.span_id:016x}")
        assert (early["response_id"], early["trace_id"], early["span_id"]) == (response_id, *ids_hex)
        assert early == late | {"timestamp": early["timestamp"]}


def test_a_failing_probe_is_counted_and_the_other_calls_are_still_asked(receiver, openai_client, monkeypatch):
    from inferwatch import _guard
    from inferwatch.integrations import openai as iw_openai

    probed: list[bytes] = []

    def fails_first(chunk: bytes) -> str | None:  # the newest call is asked first
        probed.append(chunk)
        if len(probed) == 1:
            raise RuntimeError("probe")
        return leading_id(chunk)

    leading_id = iw_openai._leading_id
    _start_queued(receiver, openai_client)
    errors = _guard.internal_errors.get("telemetry.pending_ids", 0)
    try:
        older, newer = _calls(openai_client, [True, True])
        monkeypatch.setattr(iw_openai, "_leading_id", fails_first)
        assert set(inferwatch.client.get_pipeline().pending_response_ids({older, newer})) == {older}
    finally:
        inferwatch.uninstrument_openai()
    assert len(probed) == 2 and _guard.internal_errors.get("telemetry.pending_ids") == errors + 1


def test_the_queue_is_read_before_the_batch_so_a_call_moving_between_them_is_seen(receiver, openai_client):
    """The export thread may move the oldest call from the queue into its batch while the sender reads them: here
    the queue's own iteration does that move, as the export thread would, between the two reads."""
    from collections import deque

    class MovingQueue(deque):
        def __iter__(self):  # type: ignore[no-untyped-def]
            pipeline._taken = [self[0]]  # joins the batch, then leaves the queue
            self.popleft()
            return super().__iter__()

    _start_queued(receiver, openai_client)
    try:
        (response_id,) = _calls(openai_client, [True])
        pipeline = inferwatch.client.get_pipeline()
        pipeline._queue = MovingQueue(pipeline._queue)
        assert set(pipeline.pending_response_ids({response_id})) == {response_id}
        assert pipeline._taken and not pipeline._queue  # the move happened
        pipeline._queue = deque(pipeline._taken)
        pipeline._taken = []
    finally:
        inferwatch.uninstrument_openai()


def test_newest_calls_are_asked_first_and_at_most_the_limit(receiver, openai_client, monkeypatch):
    from inferwatch.telemetry import pipeline as telemetry_pipeline

    _start_queued(receiver, openai_client)
    try:
        older, newer = _calls(openai_client, [False, True])
        pipeline = inferwatch.client.get_pipeline()
        monkeypatch.setattr(telemetry_pipeline, "PENDING_SCAN_LIMIT", 1)
        assert pipeline.pending_response_ids({older, newer}) == {newer: mock.ANY}
        monkeypatch.setattr(telemetry_pipeline, "PENDING_SCAN_LIMIT", 2)
        assert set(pipeline.pending_response_ids({older, newer})) == {older, newer}
    finally:
        inferwatch.uninstrument_openai()


def test_a_folded_long_streams_id_is_found(receiver, openai_client, monkeypatch):
    """A stream longer than the tap keeps is read on the app's thread as it goes: its id is there, not in the
    first chunk kept."""
    from inferwatch.integrations import _streams

    monkeypatch.setattr(_streams, "FOLD_AT", 1)
    exporter = _start_queued(receiver, openai_client)
    try:
        stream = openai_client.chat.completions.create(model="gpt-4o-mini", stream=True,
                                                       messages=[{"role": "user", "content": "long [tokens:40]"}])
        response_id = [chunk.id for chunk in stream][0]
        assert stream._decoder.totals is not None  # folded
        inferwatch.feedback(response_id=response_id, thumbs_up=True)
        assert _wait_for(lambda: len(receiver.items()) == 1)
        assert exporter.get_finished_spans() == ()
    finally:
        inferwatch.uninstrument_openai()
    [item] = receiver.items()
    assert item["response_id"] == response_id and len(item["trace_id"]) == 32


def test_a_dropped_streams_tap_is_freed_at_once(receiver, openai_client):
    """A call dropped from a full queue runs its recording at once and lets it go: the tap and its chunks are not
    left in a reference cycle for the garbage collector."""
    import gc

    def taps() -> int:
        return sum(1 for o in gc.get_objects() if type(o).__name__ == "_ChatEvents")

    _start_queued(receiver, openai_client, max_queue_size=1)
    gc.collect()
    gc.disable()
    try:
        before = taps()
        _calls(openai_client, [True, True])  # the first is queued, the second dropped
        assert inferwatch.stats()["dropped"]["queue_full"] == 1
        assert taps() == before + 1
    finally:
        gc.enable()
        inferwatch.uninstrument_openai()


def _wait_for(condition: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_items_the_collector_could_not_match_yet_are_sent_once_more(receiver, monkeypatch):
    """Feedback that reached the collector before its call did is listed ``unmatched``; an item naming its call
    by trace id is sent again, once, later (the same item: the row is replaced, the call's fields copied in then).
    One named only by an unknown response id is not: nothing would match it later either."""
    monkeypatch.setattr(fx, "RESEND_UNMATCHED_AFTER_S", 0.2)
    unmatched = {"unmatched": ["by-trace", "by-response"]}
    receiver.answers = [unmatched, unmatched]  # the two items may go in one request or two
    start(receiver.url)
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="by-trace")
    inferwatch.feedback(response_id="resp-of-another-process", thumbs_up=False, feedback_id="by-response")
    assert _wait_for(lambda: len(receiver.items()) == 2)  # not flush(): that would send it once more at once
    assert _wait_for(lambda: [item["feedback_id"] for item in receiver.items()].count("by-trace") == 2)
    time.sleep(0.6)  # three times the delay: sent once more, not again
    sent = receiver.items()
    assert sorted(item["feedback_id"] for item in sent) == ["by-response", "by-trace", "by-trace"]
    first, again = (item for item in sent if item["feedback_id"] == "by-trace")
    assert again == first  # the same item: the collector replaces the row
    assert inferwatch.feedback_stats()["resent"] == 1 and inferwatch.feedback_stats()["sent"] == 2


def test_feedback_sent_before_its_call_arrived_gets_the_calls_fields(collector, store, monkeypatch):
    """End to end with the real collector: the first send is stored unmatched; the call's row arrives; the second
    send fills in its model, experiment, variant and feature."""
    import httpx

    from inferwatch_collector.rows import LLM_CALL_COLUMNS
    from tests.helpers.factories import llm_call

    monkeypatch.setattr(fx, "RESEND_UNMATCHED_AFTER_S", 1.0)
    url, keys = collector
    start(url, api_key=keys["ingest"])
    fid = inferwatch.feedback(TRACE, thumbs_up=True)
    assert _wait_for(lambda: inferwatch.feedback_stats()["sent"] == 1)
    row = llm_call("p1", trace_id=TRACE, model="gpt-4o", experiment="prompt-v3", variant="B", feature="chat")
    store.insert_columns("llm_calls", [list(c) for c in zip(row)], LLM_CALL_COLUMNS)

    def listed() -> list[dict[str, Any]]:
        return httpx.get(f"{url}/api/v1/feedback", params={"trace_id": TRACE},
                         headers={"Authorization": f"Bearer {keys['read']}"}).json()

    assert _wait_for(lambda: inferwatch.feedback_stats()["resent"] == 1)
    [item] = listed()
    assert (item["feedback_id"], item["model"], item["experiment"], item["variant"], item["feature"]) == (
        fid, "gpt-4o", "prompt-v3", "B", "chat")


def _listed(url: str, key: str, trace_id: str) -> list[dict[str, Any]]:
    import httpx

    return httpx.get(f"{url}/api/v1/feedback", params={"trace_id": trace_id},
                     headers={"Authorization": f"Bearer {key}"}).json()


def test_a_flush_sends_waiting_feedback_at_once_after_the_spans(collector, monkeypatch):
    """Feedback the collector stored before its call's span arrived does not wait for its later send at a flush:
    the spans go first, then the item, which gets its call's fields. One whose call the collector still does not
    know (another process's) waits for its time again, and a second flush does not send it early once more."""
    monkeypatch.setattr(fx, "RESEND_UNMATCHED_AFTER_S", 600.0)
    url, keys = collector
    inferwatch.init(endpoint=url, api_key=keys["ingest"], schedule_delay_ms=600_000)  # spans held until a flush
    with inferwatch.tags(feature="nightly"), inferwatch.llm_call(model="llama-3.1-8b", provider="vllm") as call:
        call.response(response_id="resp-held-1")
        call.usage(input_tokens=3, output_tokens=2)
    own = inferwatch.feedback(response_id="resp-held-1", thumbs_up=True)  # linked at once: the trace is known
    other = inferwatch.feedback(TRACE, thumbs_up=False)  # a call no process recorded here
    assert _wait_for(lambda: inferwatch.feedback_stats()["sent"] == 2)  # both unmatched: the span is held
    trace = f"{call._span.get_span_context().trace_id:032x}"
    assert [(item["feedback_id"], item["model"]) for item in _listed(url, keys["read"], trace)] == [(own, "")]

    assert inferwatch.feedback.flush(10)
    assert inferwatch.feedback_stats()["resent"] == 2
    [item] = _listed(url, keys["read"], trace)
    assert (item["feedback_id"], item["model"], item["feature"]) == (own, "llama-3.1-8b", "nightly")
    assert [entry[1]["feedback_id"] for entry in sdk_feedback().again] == [other]  # waits for its time

    assert inferwatch.feedback.flush(10)
    assert inferwatch.feedback_stats()["resent"] == 2  # not sent early twice


def test_a_short_lived_jobs_feedback_gets_its_calls_fields_at_exit(default_collector):
    """A script that records a call, sends feedback on it and exits: the exit exports the span (which the
    collector acknowledges once committed, up to 1 s later by default) before the feedback, so the stored feedback
    has the call's model and feature (they stayed empty before: the feedback reached the collector first and its
    later send never came)."""
    import subprocess

    url, keys = default_collector
    script = f"""
import inferwatch
inferwatch.init(endpoint={url!r}, api_key={keys["ingest"]!r}, service_name="nightly-job")
with inferwatch.tags(feature="nightly"), inferwatch.llm_call(model="llama-3.1-8b", provider="vllm") as call:
    call.response(response_id="resp-exit-1")
    call.usage(input_tokens=3, output_tokens=2)
print(inferwatch.feedback(response_id="resp-exit-1", thumbs_up=True))
print(f"{{call._span.get_span_context().trace_id:032x}}")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    fid, trace = done.stdout.split()
    [item] = _listed(url, keys["read"], trace)
    assert (item["feedback_id"], item["model"], item["feature"]) == (fid, "llama-3.1-8b", "nightly")


def test_a_failed_send_once_more_is_counted_and_waits_for_its_time(receiver, monkeypatch):
    monkeypatch.setattr(fx, "RESEND_UNMATCHED_AFTER_S", 600.0)
    receiver.answers = [{"unmatched": ["fb-1"]}]
    start(receiver.url)
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="fb-1")
    assert _wait_for(lambda: inferwatch.feedback_stats()["sent"] == 1)
    receiver.script = [503] * fx.RETRY.attempts
    assert inferwatch.feedback.flush(10)
    stats = inferwatch.feedback_stats()
    assert (stats["sent"], stats["resent"], stats["resend_failed"], stats["failed"]) == (1, 0, 1, 0)
    assert len(receiver.items()) == 1 + fx.RETRY.attempts
    assert [entry[1]["feedback_id"] for entry in sdk_feedback().again] == ["fb-1"]


def test_an_item_sent_right_after_the_spans_is_not_sent_again_at_once(receiver, monkeypatch):
    """Feedback first sent by a flush, after this process's spans went out, that the collector still cannot match
    names another process's call: sending it again at once would not help; it waits for its time."""
    monkeypatch.setattr(fx, "RESEND_UNMATCHED_AFTER_S", 600.0)
    receiver.answers = [{}] + [{"unmatched": ["fb-1"]}] * 3
    receiver.delay_s = 0.3
    start(receiver.url)
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="busy")
    assert _wait_for(lambda: len(receiver.requests) == 1)  # the sender waits for its answer: what follows is
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="fb-1")  # taken in one go, item and flush
    assert inferwatch.feedback.flush(10)
    assert [item["feedback_id"] for item in receiver.items()] == ["busy", "fb-1"]
    assert inferwatch.feedback_stats()["resent"] == 0
    assert [(entry[1]["feedback_id"], entry[2]) for entry in sdk_feedback().again] == [("fb-1", True)]


def test_an_item_sent_early_in_vain_still_gets_its_later_send(receiver, monkeypatch):
    monkeypatch.setattr(fx, "RESEND_UNMATCHED_AFTER_S", 3.0)
    receiver.answers = [{"unmatched": ["fb-1"]}] * 3
    start(receiver.url)
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="fb-1")
    assert _wait_for(lambda: inferwatch.feedback_stats()["sent"] == 1)  # unmatched: waits 3 s for its time
    assert inferwatch.feedback.flush(10)  # sent early, in vain
    assert inferwatch.feedback_stats()["resent"] == 1
    assert _wait_for(lambda: inferwatch.feedback_stats()["resent"] == 2)  # at its time
    time.sleep(0.5)
    assert [item["feedback_id"] for item in receiver.items()] == ["fb-1"] * 3 and sdk_feedback().again == []


def test_a_forked_child_sends_its_own_feedback_only(receiver):
    """The child of a fork starts a sender of its own: it sends its own items, never the parent's queue (the
    parent sends those, once)."""
    from tests.helpers.forked import in_child

    receiver.delay_s = 0.3
    start(receiver.url)
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="parent-1")
    assert _wait_for(lambda: len(receiver.requests) == 1)  # the parent's sender waits for its answer
    inferwatch.feedback(TRACE, thumbs_up=True, feedback_id="parent-2")  # queued in the parent at the fork
    def child_work() -> dict[str, Any]:
        fid = inferwatch.feedback(TRACE, thumbs_up=False, feedback_id="child-1")
        flushed = inferwatch.feedback.flush(10)
        return {"fid": fid, "flushed": flushed, "stats": inferwatch.feedback_stats()}

    child = in_child(child_work, timeout_s=20)
    assert inferwatch.feedback.flush(10)
    assert child["fid"] == "child-1" and child["flushed"] and child["stats"]["queued"] == 0
    assert sorted(item["feedback_id"] for item in receiver.items()) == ["child-1", "parent-1", "parent-2"]
