"""The recorded conformance fixtures (tests/fixtures/conformance, made by tests/conformance/record.py): list them,
load them, and turn them back into OTLP requests that the collector accepts today.

A recording holds each OTLP request a real instrumentation library sent, as OTLP JSON with proto field names
(ids base64, 64-bit numbers as strings). :func:`requests_of` re-encodes each one as the library sent it (protobuf,
gzip where it was gzipped) with every timestamp moved by one offset, so the newest ends just before ``now_ns``:
the collector drops spans older than its retention, and recordings age. Ids and durations are kept intact. The
offset also moves the attributes that hold an absolute time as ISO 8601 text (:data:`ISO_TIME_ATTRIBUTES`, e.g.
Langfuse's ``completion_start_time``), so a time to first token derived from one stays what was recorded.
"""

from __future__ import annotations

import base64
import gzip
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.helpers.db_scan import texts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
EXPECTED_SUFFIX = ".expected.json"
MARGIN_NS = 1_000_000  # the newest timestamp lands 1 ms before now
#: attributes whose string value is an absolute time in ISO 8601 (Langfuse's is JSON-quoted: "\"2026-...Z\"")
ISO_TIME_ATTRIBUTES = frozenset({"langfuse.observation.completion_start_time"})


def fixtures() -> list[tuple[str, str]]:
    """(library slug, scenario) of every recording, sorted."""
    return sorted((p.parent.name, p.name[: -len(".json")]) for p in FIXTURES.glob("*/*.json")
                  if not p.name.endswith(EXPECTED_SUFFIX))


def load(slug: str, scenario: str) -> dict[str, Any]:
    """The recording of ``scenario`` under ``slug`` (see tests/conformance/record.py for its fields)."""
    return json.loads((FIXTURES / slug / f"{scenario}.json").read_text())


def expected(slug: str, scenario: str) -> list[dict[str, Any]]:
    """The hand-checked rows for a recording: one entry per provider request, in start-time order, each with
    the row's expected fields and a ``why`` (where its numbers come from)."""
    return json.loads((FIXTURES / slug / f"{scenario}{EXPECTED_SUFFIX}").read_text())


def _timestamps(node: Any) -> list[int]:
    if isinstance(node, dict):
        found = [int(v) for k, v in node.items() if k.endswith("_unix_nano") and int(v)]
        for v in node.values():
            found.extend(_timestamps(v))
        return found
    if isinstance(node, list):
        return [t for item in node for t in _timestamps(item)]
    return []


def _shifted_iso(text: str, offset: int) -> str:
    """An ISO 8601 time moved by ``offset`` ns (to the microsecond), in the spelling it came in."""
    quoted = len(text) >= 2 and text[0] == text[-1] == '"'
    bare = text[1:-1] if quoted else text
    zulu = bare.endswith("Z")
    moment = datetime.fromisoformat(bare) + timedelta(microseconds=round(offset / 1000))
    out = moment.isoformat()
    if zulu:
        out = out.removesuffix("+00:00") + "Z"
    return f'"{out}"' if quoted else out


def _shifted(node: Any, offset: int) -> Any:
    if isinstance(node, dict):
        if node.get("key") in ISO_TIME_ATTRIBUTES and "string_value" in node.get("value", {}):
            return {**node, "value": {"string_value": _shifted_iso(node["value"]["string_value"], offset)}}
        return {k: (str(int(v) + offset) if k.endswith("_unix_nano") and int(v) else _shifted(v, offset))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_shifted(item, offset) for item in node]
    return node


def requests_of(fixture: dict[str, Any], now_ns: int) -> list[tuple[str, dict[str, str], bytes]]:
    """(path, headers, body) of each recorded request in order, timestamps shifted (see the module docstring).

    Headers are the recorded ``Content-Type``, ``Content-Encoding`` and ``Authorization`` (the caller replaces
    the last with a key of its own)."""
    newest = max((t for r in fixture["requests"] for t in _timestamps(r["otlp_json"])), default=now_ns)
    offset = now_ns - MARGIN_NS - newest
    out = []
    for request in fixture["requests"]:
        recorded = request["headers"]
        document = _shifted(request["otlp_json"], offset)
        content_type = recorded.get("content-type", "application/x-protobuf")
        if content_type.startswith("application/json"):
            body = json.dumps(document).encode()
        else:
            message = ExportLogsServiceRequest() if request["path"].endswith("/v1/logs") \
                else ExportTraceServiceRequest()
            body = json_format.ParseDict(document, message).SerializeToString()
        headers = {"Content-Type": content_type}
        if recorded.get("content-encoding") == "gzip":
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        if "authorization" in recorded:
            headers["Authorization"] = recorded["authorization"]
        out.append((request["path"], headers, body))
    return out


def hex_id(value: str) -> str:
    """A recorded (base64) trace or span id as the lowercase hex the collector stores."""
    return base64.b64decode(value).hex()


def trace_ids(fixture: dict[str, Any]) -> set[str]:
    """The hex trace ids of every span and log record in the recording."""
    ids = set()
    for request in fixture["requests"]:
        doc = request["otlp_json"]
        for rs in doc.get("resource_spans", []):
            for ss in rs.get("scope_spans", []):
                ids.update(hex_id(s["trace_id"]) for s in ss.get("spans", []) if s.get("trace_id"))
        for rl in doc.get("resource_logs", []):
            for sl in rl.get("scope_logs", []):
                ids.update(hex_id(r["trace_id"]) for r in sl.get("log_records", []) if r.get("trace_id"))
    return ids


def spans_of(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """Every recorded span (OTLP JSON) with its scope name under ``"_scope"``."""
    out = []
    for request in fixture["requests"]:
        for rs in request["otlp_json"].get("resource_spans", []):
            for ss in rs.get("scope_spans", []):
                out.extend({**s, "_scope": ss.get("scope", {}).get("name", "")} for s in ss.get("spans", []))
    return out


def settle(app: Any) -> None:
    """End the pairing window now: every held LLM row is merged with its twins and written."""
    app.state.call_pairing.settle_all()


def split_by_scope(fixture: dict[str, Any], now_ns: int) -> list[bytes]:
    """The recording's trace spans as one OTLP protobuf request per instrumentation scope (the scopes' order as
    recorded; timestamps shifted as in :func:`requests_of`): what two exporters, or two batches, send apart."""
    newest = max((t for r in fixture["requests"] for t in _timestamps(r["otlp_json"])), default=now_ns)
    offset = now_ns - MARGIN_NS - newest
    bodies = []
    for request in fixture["requests"]:
        for resource_spans in _shifted(request["otlp_json"], offset).get("resource_spans", []):
            for scope_spans in resource_spans.get("scope_spans", []):
                alone = {"resource_spans": [{**resource_spans, "scope_spans": [scope_spans]}]}
                bodies.append(json_format.ParseDict(alone, ExportTraceServiceRequest()).SerializeToString())
    return bodies


# --- comparing stored rows with the hand-checked ones ------------------------------------------------------------

SYSTEM_PROMPT = "You are a terse assistant."  # the system prompt of the non-cached scenarios (emit.py)
APP_SPAN = "handle_request"  # the app's own span around the call in the parent_span scenario (emit.py)
ROW_FIELDS = ("parent_span_id", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
              "cost_usd", "ttft_ms", "finish_reason", "streamed", "status", "provider", "request_model",
              "response_model", "span_id", "trace_id", "start_time")
EXACT = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
         "finish_reason", "streamed", "status", "provider", "request_model", "response_model")
COST_TOLERANCE_USD = 1e-9  # far inside "to the cent": every cost here is a few tenths of a cent at most


def stored_rows(store: Any, traces: set[str]) -> list[dict[str, Any]]:
    """The ``llm_calls`` rows of ``traces`` (fields :data:`ROW_FIELDS`), in start-time order."""
    result = store.query(f"SELECT {', '.join(ROW_FIELDS)} FROM llm_calls WHERE trace_id IN {{t:Array(String)}} "
                         "ORDER BY start_time, span_id", parameters={"t": sorted(traces)})
    return [dict(zip(ROW_FIELDS, row)) for row in result.result_rows]


def stored_prompt_logs(store: Any, traces: set[str]) -> list[tuple[str, str, str]]:
    """(span_id, prompt, completion) of every ``prompt_logs`` row of ``traces``, in start-time order."""
    result = store.query("SELECT span_id, prompt, completion FROM prompt_logs WHERE trace_id IN {t:Array(String)} "
                         "ORDER BY start_time, span_id", parameters={"t": sorted(traces)})
    return [tuple(row) for row in result.result_rows]


def stored_trace_ids(store: Any) -> set[str]:
    """Every trace id in ``llm_calls`` and ``spans`` (the other spans): a live run's store holds one scenario."""
    result = store.query("SELECT DISTINCT trace_id FROM llm_calls UNION DISTINCT SELECT trace_id FROM spans")
    return {row[0] for row in result.result_rows}


def row_problems(index: int, row: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """How one stored row differs from its expected entry (empty when it matches)."""
    problems = []
    for field in EXACT:
        if row[field] != want[field]:
            problems.append(f"row {index}: {field} = {row[field]!r}, expected {want[field]!r}")
    if abs(row["cost_usd"] - want["cost_usd"]) > COST_TOLERANCE_USD:
        problems.append(f"row {index}: cost_usd = {row['cost_usd']:.10f}, expected {want['cost_usd']:.10f}")
    if (row["ttft_ms"] > 0) != want["ttft_ms_present"]:
        problems.append(f"row {index}: ttft_ms = {row['ttft_ms']}, expected "
                        f"{'a TTFT' if want['ttft_ms_present'] else 'none'}")
    return problems


def conformance_problems(store: Any, traces: set[str], wanted: list[dict[str, Any]],
                         provider_requests: int) -> list[str]:
    """Every way the stored rows of ``traces`` differ from ``wanted`` (one entry per provider request): the row
    count, each row's fields, its parent (the app's span, or none), and one prompt log per call with content
    holding the system prompt once."""
    problems = []
    rows = stored_rows(store, traces)
    if len(rows) != provider_requests:
        problems.append(f"{len(rows)} llm_calls rows for {provider_requests} provider request(s): "
                        + "; ".join(f"span {r['span_id']} model {r['request_model'] or r['response_model']!r}"
                                    for r in rows))
    for index, (row, want) in enumerate(zip(rows, wanted)):
        problems.extend(row_problems(index, row, want))
    app_spans = {span_id for (span_id,) in store.query(
        "SELECT span_id FROM spans WHERE trace_id IN {t:Array(String)} AND name = {n:String}",
        parameters={"t": sorted(traces), "n": APP_SPAN}).result_rows}
    for index, row in enumerate(rows):  # the call hangs under the app's span (a merged twin never parents it)
        if row["parent_span_id"] not in (app_spans or {""}):
            problems.append(f"row {index}: parent_span_id = {row['parent_span_id']!r}, expected "
                            f"{sorted(app_spans) or 'none'}")

    calls = {row["span_id"] for row in rows}  # an app span's own input (a Langfuse @observe) is not the call's
    logs = [log for log in stored_prompt_logs(store, traces) if log[0] in calls]
    with_content = sum(1 for want in wanted if want["has_prompt_log"])
    if len(logs) != with_content:
        problems.append(f"{len(logs)} prompt_logs rows of the calls, expected {with_content} (one per call with "
                        "content)")
    for span_id, prompt, _ in logs:
        if prompt.count(SYSTEM_PROMPT) > 1:
            problems.append(f"prompt log of span {span_id} holds the system prompt {prompt.count(SYSTEM_PROMPT)} "
                            "times")
    return problems


# --- planted PII ------------------------------------------------------------------------------------------------

PLANTED_PII = ("jane.doe@example.com", "+1 415 555 0132", "415 555 0132")
"""What the ``pii_content`` scenario plants in its user message (emit.py ``PII_USER``), with the phone number's
local part alone, so a partly redacted number is caught too."""
PII_PLACEHOLDERS = ("<EMAIL_ADDRESS>", "<PHONE_NUMBER>")  # what the collector's redactor puts in their place
PII_TABLES = ("llm_calls", "spans", "prompt_logs")


def planted_pii(fixture: dict[str, Any]) -> list[str]:
    """The :data:`PLANTED_PII` strings the recording holds (what the library really sent)."""
    sent = json.dumps(fixture["requests"], ensure_ascii=False)
    return [text for text in PLANTED_PII if text in sent]


def pii_leaks(store: Any, traces: set[str], planted: list[str]) -> list[str]:
    """Every stored place (table, column) of ``traces`` where a ``planted`` string survives: any text column of
    ``llm_calls``, ``spans`` and ``prompt_logs`` (names, attributes, status messages, prompts, completions)."""
    leaks = []
    for table in PII_TABLES:
        result = store.query(f"SELECT * FROM {table} WHERE trace_id IN {{t:Array(String)}}",
                             parameters={"t": sorted(traces)})
        for row in result.result_rows:
            for column, value in zip(result.column_names, row):
                for text in planted:
                    if any(text in found for found in texts(value)):
                        leaks.append(f"{table}.{column} holds {text!r}")
    return sorted(set(leaks))


def redacted_log_problems(store: Any, traces: set[str]) -> list[str]:
    """What is wrong with the prompt log of a ``pii_content`` run: absent, or without the redaction
    placeholders where the planted PII was (empty when it is there and redacted)."""
    logs = stored_prompt_logs(store, traces)
    if not logs:
        return ["the content never reached the prompt log"]
    prompt = "".join(log[1] for log in logs)
    missing = [placeholder for placeholder in PII_PLACEHOLDERS if placeholder not in prompt]
    return [f"the prompt log lacks {missing}: {prompt[:400]!r}"] if missing else []


# --- sending ----------------------------------------------------------------------------------------------------
LANGFUSE_PATH = "/api/public/otel/v1/traces"


def auth_header(path: str, ingest_key: str) -> str:
    """Bearer for OTLP paths; for Langfuse's path, Basic with the key's Langfuse-style pair."""
    from inferwatch_collector import auth

    if path != LANGFUSE_PATH:
        return f"Bearer {ingest_key}"
    public, secret = auth.langfuse_pair(ingest_key)
    return "Basic " + base64.b64encode(f"{public}:{secret}".encode()).decode()


def post_all(client: Any, recording: dict[str, Any], ingest_key: str) -> list[str]:
    """POST every request of ``recording`` as its library did (timestamps moved to now); the failures."""
    import time

    problems = []
    for path, headers, body in requests_of(recording, time.time_ns()):
        headers = {**headers, "Authorization": auth_header(path, ingest_key)}
        response = client.post(path, content=body, headers=headers)
        if response.status_code != 200:
            problems.append(f"POST {path} answered {response.status_code}: {response.text[:200]}")
    return problems
