"""The third-party instrumentations the conformance suite records, each with its exact pinned package set.

Each library gets its own throwaway venv (``/tmp/iw-conformance/<venv>``): they pin ``openai`` / ``anthropic`` /
OpenTelemetry versions that conflict with the project's and with each other, so none of them is installed in the
project venv. How each one is instrumented is in ``emit.py`` (``setup``), keyed by ``slug``.

Provider clients' own spans (checked in their sources):

- ``anthropic`` 2.x emits one ``CLIENT`` span per API call (scope ``com.anthropic.sdk.python``, ``anthropic/_tracing.py``)
  whenever a global TracerProvider exists; it is on by default (``ANTHROPIC_OPEN_TELEMETRY=false`` turns it off).
  So the Anthropic instrumentations below on anthropic 2.x record it too, next to their own span (OpenLIT
  needs anthropic < 1, which has no spans of its own).
- ``openai`` 3.x emits no spans of its own: its sources do not import OpenTelemetry.

Versions: the latest that install on Python 3.11 on the day of the recording (see the fixtures' ``packages``).
"""

from __future__ import annotations

from dataclasses import dataclass

SCENARIOS = ("non_stream", "stream_usage", "tool_call", "provider_error", "cached_reasoning", "parent_span",
             "pii_content")
# pii_content (a user message with an e-mail address and a phone number) is recorded only for libraries that
# capture content: PII_LIBRARIES.
PII_LIBRARIES = ("openlit-openai", "otel-contrib-openai", "openinference-openai")

ANTHROPIC = "anthropic==2.17.0"
OPENAI = "openai==3.63.0"
# OpenLIT 1.45.0 requires anthropic < 1 and openai < 3: the latest of those (no native anthropic span in 0.x).
OPENLIT = ("openlit==1.45.0", "anthropic==0.125.0", "openai==2.54.0")
OTEL = ("opentelemetry-api==1.45.2", "opentelemetry-sdk==1.45.2", "opentelemetry-exporter-otlp-proto-http==1.45.2")


@dataclass(frozen=True)
class Library:
    """One instrumentation as a user installs it. ``venv``: the throwaway venv's name (shared by the slugs that
    install the same packages); ``package``: the distribution whose version the fixtures name."""

    slug: str
    package: str
    requirements: tuple[str, ...]
    provider_client: str  # "anthropic" or "openai"
    venv: str
    description: str


LIBRARIES: tuple[Library, ...] = (
    Library("anthropic-native", "anthropic", (ANTHROPIC, *OTEL), "anthropic", "anthropic-native",
            "The anthropic client alone with a global TracerProvider: its own GenAI span per API call."),
    Library("openinference-anthropic", "openinference-instrumentation-anthropic",
            ("openinference-instrumentation-anthropic==3.1.0", "openinference-instrumentation==0.1.72",
             "openinference-semantic-conventions==0.1.42", ANTHROPIC, *OTEL), "anthropic",
            "openinference-anthropic",
            "Arize OpenInference's Anthropic instrumentation (llm.* / input.value attributes); the client's own "
            "span nests under its span."),
    Library("openllmetry-anthropic", "opentelemetry-instrumentation-anthropic",
            ("opentelemetry-instrumentation-anthropic==0.62.4", ANTHROPIC, *OTEL), "anthropic",
            "openllmetry-anthropic",
            "Traceloop OpenLLMetry's Anthropic instrumentation (gen_ai.* plus llm.* / traceloop attributes)."),
    Library("openlit-anthropic", "openlit", OPENLIT, "anthropic", "openlit",
            "OpenLIT's auto-instrumentation (openlit.init with its own OTLP exporters; content capture on), "
            "Anthropic client."),
    Library("openlit-openai", "openlit", OPENLIT, "openai", "openlit",
            "OpenLIT's auto-instrumentation (openlit.init with its own OTLP exporters; content capture on), "
            "OpenAI client."),
    Library("langfuse-openai", "langfuse", ("langfuse==5.2.0", OPENAI), "openai", "langfuse",
            "The Langfuse SDK (v3+ is OpenTelemetry-based): the langfuse.openai drop-in client and @observe; its "
            "exporter posts to {host}/api/public/otel/v1/traces with HTTP Basic auth (public:secret key)."),
    Library("otel-contrib-openai", "opentelemetry-instrumentation-openai-v2",
            # it imports httpx without declaring it (openai 3.x moved to httpx2), and its util-genai floor lets pip
            # pick 1.2b0+, which dropped the module it imports (util.genai.instruments): 1.1b0 is the last that works
            ("opentelemetry-instrumentation-openai-v2==2.4b0", "opentelemetry-util-genai==1.1b0", "httpx==0.28.1",
             OPENAI, *OTEL), "openai",
            "otel-contrib-openai",
            "The OpenTelemetry contrib OpenAI instrumentation (openai-v2); content capture on, so prompts and "
            "completions go out as gen_ai.* log events on /v1/logs."),
    Library("openllmetry-openai", "opentelemetry-instrumentation-openai",
            ("opentelemetry-instrumentation-openai==0.62.4", OPENAI, *OTEL), "openai", "openllmetry-openai",
            "Traceloop OpenLLMetry's OpenAI instrumentation (gen_ai.content.completion.chunk events on streams)."),
    Library("openinference-openai", "openinference-instrumentation-openai",
            ("openinference-instrumentation-openai==0.1.66", "openinference-instrumentation==0.1.72",
             "openinference-semantic-conventions==0.1.42", OPENAI, *OTEL), "openai", "openinference-openai",
            "Arize OpenInference's OpenAI instrumentation."),
)

BY_SLUG = {lib.slug: lib for lib in LIBRARIES}
