"""Planted PII and secrets: what a privacy test puts into every place an instrumentation can send text, and the
recorded and built OTLP requests of every supported convention to put it in.

:data:`PLANTED` is one line per kind of value (the redactor must find each wherever it is); :func:`plant` copies
a recording (``tests/helpers/conformance.py``: OTLP JSON with proto field names, as real libraries sent it) and
puts the values into every span's attributes (user-identifying keys and free text), every resource's
attributes, span names, status messages and events, and every logs request's records; :func:`sources` gives one
such recording per supported convention (recorded ones where there is a recording, built ones from
``tests/helpers/payloads.py`` for the Vercel AI SDK and our SDK).
"""

from __future__ import annotations

import copy
from typing import Any

from google.protobuf.json_format import MessageToDict

from tests.helpers import payloads
from tests.helpers.conformance import load

#: kind -> a value of that kind the redactor finds today. One line per kind: a new kind is one more line.
PLANTED: dict[str, str] = {
    "email": "jane.roe.iw@example.org",
    "us_ssn": "536-22-8415",
    "credit_card": "5555 5555 5555 4444",
    "phone": "+44 20 7946 0958",
    "openai_key": "sk-proj-Zq4mR8tLx2Vn6Wb0Yc3Kd7Hf1Jg5Ps9Ua2Ee4Oi8",
    "iban": "GB82 WEST 1234 5698 7654 32",
    "ip_address": "203.0.113.77",
    "aws_secret_key": "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8tRvW2kL",
    "pem_private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF\n-----END PRIVATE KEY-----",
    "uri_credentials": "postgresql://admin:S3cr3tPass@db.internal:5432/app",
    "inferwatch_key": "iwk_0123456789ab_" + "Q" * 43,
}
#: kind -> the part of its planted value that must never be stored (the whole value where not listed): a secret
#: is planted with the context it is found by, and the secret itself is what must not leak.
SECRET_PARTS: dict[str, str] = {
    "aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8tRvW2kL",
    "pem_private_key": "MIIEvQIBADANBgkqhkiG9w0BAQEF",
    "uri_credentials": "S3cr3tPass",
}
#: What a scan looks for: each planted value's secret part.
NEEDLES: list[str] = [SECRET_PARTS.get(kind, value) for kind, value in PLANTED.items()]
#: The user's raw id, as applications put it into ``enduser.id`` and friends (an e-mail address, like Langfuse's).
RAW_USER_ID = "jane.roe.user@example.org"
#: Attribute keys that identify the user (hashed at ingest, not redacted).
USER_KEYS = ("enduser.id", "user.id", "langfuse.user.id", "app.user_id", "session.id")
#: A key an application fills with the user's hash itself: stored as sent (a hex hash is no PII to redact), so the
#: stored attributes hold the hash whether or not ingest hashes the user keys.
HASH_KEY = "app.account_hash"


def blob() -> str:
    """Every planted value in one sentence, as free text quotes them."""
    return "; ".join(f"{kind} {value}" for kind, value in PLANTED.items())


def _kv(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"string_value": value}}


def _user_attributes(user: str) -> list[dict[str, Any]]:
    return [_kv(key, user) for key in USER_KEYS]


def _free_text_attributes() -> list[dict[str, Any]]:
    """One free-text attribute per planted kind, plus the places the issue found them in."""
    out = [_kv(f"app.note.{kind}", f"customer wrote {value} today") for kind, value in PLANTED.items()]
    out += [_kv("db.statement", f"SELECT * FROM users WHERE ssn = '{PLANTED['us_ssn']}'"),
            _kv("http.url", f"https://api.example.org/users/{PLANTED['email']}?from={PLANTED['ip_address']}"),
            _kv("app.request.body", blob())]
    return out


def _plant_span(span: dict[str, Any], user: str, user_hash: str | None) -> None:
    hashed = [_kv(HASH_KEY, user_hash)] if user_hash else []
    span["attributes"] = [*span.get("attributes", []), *_user_attributes(user), *hashed, *_free_text_attributes()]
    span["name"] = f"{span.get('name', '')} /users/{PLANTED['email']}/profile"
    status = dict(span.get("status", {}))
    status["message"] = f"failed for {blob()}"
    span["status"] = status
    start = span.get("start_time_unix_nano", "0")
    span["events"] = list(span.get("events", [])) + [
        {"name": "app.note", "time_unix_nano": start, "attributes": [_kv("note", blob())]},
        {"name": "exception", "time_unix_nano": start,
         "attributes": [_kv("exception.type", "ValueError"), _kv("exception.message", blob()),
                        _kv("exception.stacktrace", f"Traceback: {blob()}")]},
    ]


def _plant_resource(resource_block: dict[str, Any], user: str) -> None:
    resource = dict(resource_block.get("resource", {}))
    resource["attributes"] = list(resource.get("attributes", [])) + [
        _kv("deployment.owner", f"owner {PLANTED['email']}"), _kv("host.note", blob()), _kv("enduser.id", user)]
    resource_block["resource"] = resource


def _plant_logs(scope_logs: dict[str, Any]) -> None:
    records = scope_logs.get("log_records", [])
    for record in records:
        record["attributes"] = list(record.get("attributes", [])) + [_kv("app.note", blob())]
    if records:
        first = records[0]
        ids = {k: first[k] for k in ("trace_id", "span_id", "time_unix_nano") if k in first}
        records.append({**ids, "event_name": "gen_ai.user.message", "body": {"string_value": blob()}})
        records.append({**ids, "body": {"string_value": f"app log: {blob()}"}})  # not a GenAI event


def plant(recording: dict[str, Any], user: str = RAW_USER_ID, *, user_hash: str | None = None) -> dict[str, Any]:
    """A copy of ``recording`` with the planted values in every span, resource and log record; ``user`` goes
    into the user-identifying keys (:data:`USER_KEYS`) of spans and resources, ``user_hash`` (when given) into
    :data:`HASH_KEY` of every span."""
    out = copy.deepcopy(recording)
    for request in out["requests"]:
        document = request["otlp_json"]
        for resource_spans in document.get("resource_spans", []):
            _plant_resource(resource_spans, user)
            for scope_spans in resource_spans.get("scope_spans", []):
                for span in scope_spans.get("spans", []):
                    _plant_span(span, user, user_hash)
        for resource_logs in document.get("resource_logs", []):
            _plant_resource(resource_logs, user)
            for scope_logs in resource_logs.get("scope_logs", []):
                _plant_logs(scope_logs)
    return out


# --- one recording per supported convention ---------------------------------------------------------------------
#: convention -> (recorded library, scenario): a real library's spans (tests/fixtures/conformance).
RECORDED = {
    "otel-genai": ("otel-contrib-openai", "parent_span"),  # OTel GenAI, content as logs
    "otel-genai-native": ("anthropic-native", "parent_span"),  # a provider client's own GenAI span
    "openinference": ("openinference-openai", "parent_span"),
    "openllmetry": ("openllmetry-openai", "parent_span"),
    "openlit": ("openlit-openai", "parent_span"),  # spans and logs
    "langfuse": ("langfuse-openai", "parent_span"),  # Langfuse's own path and Basic auth
}


def _built(*spans: Any, scope: str) -> dict[str, Any]:
    """A recording-shaped dict of one protobuf trace request built from ``payloads`` spans."""
    request = payloads.make_request(*spans, scope=scope)
    document = MessageToDict(request, preserving_proto_field_name=True)
    return {"requests": [{"path": "/v1/traces", "headers": {"content-type": "application/x-protobuf"},
                          "otlp_json": document}]}


def _vercel() -> dict[str, Any]:
    trace = payloads.new_trace_id()
    outer = payloads.vercel_outer_span()
    outer.trace_id = trace
    inner = payloads.vercel_do_stream_span()
    inner.trace_id, inner.parent_span_id = trace, outer.span_id
    return _built(outer, inner, scope="ai")


def _our_sdk(user_hash: str) -> dict[str, Any]:
    trace = payloads.new_trace_id()
    app_span = payloads.make_span("handle_request", {"inferwatch.feature": "search"}, trace_id=trace,
                                  kind=payloads.SERVER)
    call = payloads.sdk_span(**{"inferwatch.user.hash": user_hash})
    call.trace_id, call.parent_span_id = trace, app_span.span_id
    return _built(app_span, call, scope="inferwatch")


def sources(user_hash: str) -> dict[str, dict[str, Any]]:
    """convention -> a recording of it (not yet planted). ``user_hash``: what our SDK sends as
    ``inferwatch.user.hash`` for the user (the SDK hashes on the application's side)."""
    out = {name: load(slug, scenario) for name, (slug, scenario) in RECORDED.items()}
    out["vercel-ai"] = _vercel()
    out["inferwatch-sdk"] = _our_sdk(user_hash)
    return out
