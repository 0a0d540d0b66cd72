"""Child process of the conformance recorder: one scenario of one instrumentation library, in that library's
throwaway venv (``python emit.py SLUG SCENARIO``).

It sets telemetry up the way a user of the library would (a global TracerProvider with a BatchSpanProcessor and
the OTLP/HTTP protobuf exporter; OpenLIT and Langfuse through their own init), pointed at the recorder's capture
receiver; instruments; runs the scenario with the real ``openai`` / ``anthropic`` client against the mock LLM
server; then flushes and shuts every provider down, so everything the library sends has been received when this
process exits. Its last stdout line is JSON: the installed distributions that matter (name -> version).

Standard library and the libraries installed in the venv only: this file must not import project code, since it
runs beside pins that conflict with the project's.

Environment: ``IW_RECEIVER`` (base URL of the capture receiver, or of a live collector), ``IW_MOCK`` (base URL of
the mock LLM server). Credentials, where the receiver wants them, come the way a user passes them: the OTLP
exporters' own ``OTEL_EXPORTER_OTLP_HEADERS`` (``Authorization=Bearer%20<key>``); Langfuse's ``LANGFUSE_HOST``,
``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from typing import Any, Callable

RECEIVER = os.environ["IW_RECEIVER"]
MOCK = os.environ["IW_MOCK"]
SERVICE = "conformance-app"
OPENAI_MODEL = "gpt-4o-mini"
OPENAI_REASONING_MODEL = "o4-mini"
ANTHROPIC_MODEL = "claude-sonnet-4-5"
SYSTEM = "You are a terse assistant."
# A long system prompt, so the cache markers have a prompt to be cached (the mock clamps them to its size).
LONG_SYSTEM = "You answer questions about the travel policy. " * 24
USER = "Say hello."
CACHED_USER_OPENAI = "[cache:200] Summarise the policy."
CACHED_USER_ANTHROPIC = "[cache:200][cache-write:64] Summarise the policy."
TOOL_USER = "[tool] What is the weather in Paris?"
ERROR_USER = "[error:500] Say hello."
# Planted PII for the content-capturing libraries: none of it may be stored unredacted (test_conformance.py).
PII_USER = "My email is jane.doe@example.com and my phone is +1 415 555 0132. Say hello."
WEATHER_SCHEMA = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
RELEVANT_PREFIXES = ("opentelemetry", "openinference", "openlit", "langfuse", "openai", "anthropic", "traceloop",
                     "httpx", "wrapt", "protobuf")

# --- telemetry set-up ------------------------------------------------------------------------------------------


def resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    return Resource.create({"service.name": SERVICE})


def otel_tracer_provider() -> Any:
    """A global TracerProvider exporting OTLP/HTTP protobuf to the receiver, as the libraries' docs show."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=resource())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{RECEIVER}/v1/traces")))
    trace.set_tracer_provider(provider)
    return provider


def otel_logger_provider() -> Any:
    """A global LoggerProvider exporting OTLP/HTTP protobuf logs to the receiver (for gen_ai.* events)."""
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    provider = LoggerProvider(resource=resource())
    provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{RECEIVER}/v1/logs")))
    set_logger_provider(provider)
    return provider


def setup(slug: str) -> None:
    """Instrument as a user of ``slug`` would."""
    if slug == "anthropic-native":
        otel_tracer_provider()  # the client's own spans need nothing more
    elif slug == "openinference-anthropic":
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=otel_tracer_provider())
    elif slug == "openllmetry-anthropic":
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=otel_tracer_provider())
    elif slug in ("openlit-anthropic", "openlit-openai"):
        import openlit

        openlit.init(otlp_endpoint=RECEIVER, application_name=SERVICE, environment="conformance",
                     capture_message_content=True)
    elif slug == "langfuse-openai":
        from langfuse import Langfuse

        # Configured as the Langfuse docs show, from the environment only (host and keys): the live suite sets
        # LANGFUSE_HOST and a key pair of the collector's; the recorder leaves them to these defaults.
        os.environ.setdefault("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
        os.environ.setdefault("LANGFUSE_SECRET_KEY", "sk-lf-test")
        if "LANGFUSE_HOST" not in os.environ:
            os.environ.setdefault("LANGFUSE_BASE_URL", RECEIVER)
        Langfuse()
    elif slug == "otel-contrib-openai":
        # Content capture on, as log events: with opentelemetry-util-genai >= 1.0 the instrumentation is always on
        # the latest conventions, where "true" means no content; event_only sends gen_ai.* events to /v1/logs.
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "event_only"
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=otel_tracer_provider(),
                                        logger_provider=otel_logger_provider())
    elif slug == "openllmetry-openai":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=otel_tracer_provider())
    elif slug == "openinference-openai":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=otel_tracer_provider())
    else:
        raise SystemExit(f"unknown library {slug!r}")


def shutdown(slug: str) -> None:
    """Flush and shut down whatever providers are global now, so every export has been answered on return."""
    if slug == "langfuse-openai":
        from langfuse import get_client

        get_client().shutdown()
    from opentelemetry import metrics, trace
    from opentelemetry._logs import get_logger_provider

    for provider in (trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider()):
        if hasattr(provider, "force_flush"):
            provider.force_flush()
        if hasattr(provider, "shutdown"):
            provider.shutdown()


# --- scenarios -------------------------------------------------------------------------------------------------


def openai_client(slug: str) -> Any:
    if slug == "langfuse-openai":
        from langfuse.openai import OpenAI  # the drop-in: the integration a Langfuse user imports
    else:
        from openai import OpenAI
    return OpenAI(base_url=f"{MOCK}/v1", api_key="test-key", max_retries=0)


def anthropic_client() -> Any:
    import anthropic

    return anthropic.Anthropic(base_url=MOCK, api_key="test-key", max_retries=0)


def openai_scenario(client: Any, scenario: str) -> None:
    import openai

    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    if scenario in ("non_stream", "parent_span"):
        client.chat.completions.create(model=OPENAI_MODEL, messages=messages)
    elif scenario == "stream_usage":
        stream = client.chat.completions.create(model=OPENAI_MODEL, messages=messages, stream=True,
                                                stream_options={"include_usage": True})
        for _ in stream:
            pass
    elif scenario == "tool_call":
        tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                                   "parameters": WEATHER_SCHEMA}}]
        client.chat.completions.create(model=OPENAI_MODEL, tools=tools,
                                       messages=[{"role": "user", "content": TOOL_USER}])
    elif scenario == "provider_error":
        try:
            client.chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": ERROR_USER}])
        except openai.InternalServerError:
            pass
        else:
            raise SystemExit("the mock did not fail the request")
    elif scenario == "pii_content":
        client.chat.completions.create(model=OPENAI_MODEL, messages=[
            {"role": "system", "content": SYSTEM}, {"role": "user", "content": PII_USER}])
    elif scenario == "cached_reasoning":
        client.chat.completions.create(model=OPENAI_REASONING_MODEL, messages=[
            {"role": "system", "content": LONG_SYSTEM}, {"role": "user", "content": CACHED_USER_OPENAI}])
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")


def anthropic_scenario(client: Any, scenario: str) -> None:
    import anthropic

    messages = [{"role": "user", "content": USER}]
    if scenario in ("non_stream", "parent_span"):
        client.messages.create(model=ANTHROPIC_MODEL, max_tokens=256, system=SYSTEM, messages=messages)
    elif scenario == "stream_usage":
        stream = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=256, system=SYSTEM, messages=messages,
                                        stream=True)
        for _ in stream:
            pass
    elif scenario == "tool_call":
        tools = [{"name": "get_weather", "description": "Weather for a city.", "input_schema": WEATHER_SCHEMA}]
        client.messages.create(model=ANTHROPIC_MODEL, max_tokens=256, tools=tools,
                               messages=[{"role": "user", "content": TOOL_USER}])
    elif scenario == "provider_error":
        try:
            client.messages.create(model=ANTHROPIC_MODEL, max_tokens=256,
                                   messages=[{"role": "user", "content": ERROR_USER}])
        except anthropic.InternalServerError:
            pass
        else:
            raise SystemExit("the mock did not fail the request")
    elif scenario == "pii_content":
        client.messages.create(model=ANTHROPIC_MODEL, max_tokens=256, system=SYSTEM,
                               messages=[{"role": "user", "content": PII_USER}])
    elif scenario == "cached_reasoning":
        client.messages.create(model=ANTHROPIC_MODEL, max_tokens=2048, system=LONG_SYSTEM,
                               thinking={"type": "enabled", "budget_tokens": 1024},
                               messages=[{"role": "user", "content": CACHED_USER_ANTHROPIC}])
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")


def with_parent(slug: str, call: Callable[[], None]) -> None:
    """The app's own span around one call (Langfuse: ``@observe``, since its exporter drops other app spans)."""
    if slug == "langfuse-openai":
        from langfuse import observe

        observe(name="handle_request")(call)()
        return
    from opentelemetry import trace

    with trace.get_tracer("conformance.app").start_as_current_span("handle_request"):
        call()


def packages() -> dict[str, str]:
    found = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower().startswith(RELEVANT_PREFIXES):
            found[name.lower()] = dist.version
    return dict(sorted(found.items()))


def main(slug: str, scenario: str, provider_client: str) -> None:
    setup(slug)
    if provider_client == "anthropic":
        client = anthropic_client()
        run: Callable[[], None] = lambda: anthropic_scenario(client, scenario)  # noqa: E731
    else:
        client = openai_client(slug)
        run = lambda: openai_scenario(client, scenario)  # noqa: E731
    if scenario == "parent_span":
        with_parent(slug, run)
    else:
        run()
    shutdown(slug)
    print(json.dumps(packages()))


if __name__ == "__main__":
    main(*sys.argv[1:4])
