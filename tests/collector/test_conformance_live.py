"""Conformance, live: the instrumentation libraries that install beside the project's pins run for real against a
collector on 127.0.0.1 and land exactly one right ``llm_calls`` row per provider request.

Each case runs the recorder's own emitter (tests/conformance/emit.py) in a subprocess of this venv's python
(instrumentors patch the provider clients globally, so never inside pytest), configured only the way a user
configures the library: the OTLP exporters' ``OTEL_EXPORTER_OTLP_HEADERS`` with a Bearer ingest key, Langfuse's
``LANGFUSE_HOST`` and a Langfuse-style key pair (``auth.langfuse_pair``). The emitter flushes before it exits;
the pairing window is then settled and the stored rows compared with the recorded scenario's hand-checked
``<scenario>.expected.json`` (the same libraries and mock, so the same numbers); for ``pii_content``, also that
the planted PII is stored nowhere in clear and the prompt log holds it redacted. OpenLIT is not here: it needs
anthropic < 1 and openai < 3 (its recordings are replayed by test_conformance.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from examples.mock_llm import MockLLMServer
from inferwatch_collector import auth
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app
from tests.conformance.libraries import BY_SLUG, PII_LIBRARIES
from tests.helpers.conformance import (PLANTED_PII, conformance_problems, expected, pii_leaks, redacted_log_problems,
                                       settle, stored_trace_ids)
from tests.helpers.keys import Keys
from tests.helpers.live_collector import ServerThread

EMIT = Path(__file__).resolve().parents[1] / "conformance" / "emit.py"
LIVE_LIBRARIES = ("openinference-openai", "openinference-anthropic", "openllmetry-openai", "openllmetry-anthropic",
                  "otel-contrib-openai", "langfuse-openai")
LIVE_SCENARIOS = ("non_stream", "stream_usage", "provider_error")
PROVIDER_PATHS = ("/v1/chat/completions", "/v1/responses", "/v1/messages")
EMIT_TIMEOUT_S = 60
CASES = [(slug, scenario) for slug in LIVE_LIBRARIES for scenario in LIVE_SCENARIOS] + [
    (slug, "pii_content") for slug in LIVE_LIBRARIES if slug in PII_LIBRARIES]


@pytest.fixture
def live(app_settings: Settings, store: Store) -> Iterator[tuple[FastAPI, str]]:
    """The platform's app served on 127.0.0.1 (its base URL), on the test's store."""
    app = create_app(app_settings, store=store)
    with ServerThread(app) as url:
        yield app, url


def _emit(slug: str, scenario: str, collector_url: str, mock: MockLLMServer, ingest_key: str) -> None:
    """Run ``emit.py`` for one scenario in a subprocess pointed at the collector with the user's settings."""
    public, secret = auth.langfuse_pair(ingest_key)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("OTEL_", "LANGFUSE_", "TRACELOOP_", "OPENAI_", "ANTHROPIC_"))}
    env.update({
        "IW_RECEIVER": collector_url,
        "IW_MOCK": mock.base_url,
        "PYTHONPATH": "",  # the emitter imports the libraries only, never project code
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{ingest_key}",
        "LANGFUSE_HOST": collector_url,
        "LANGFUSE_PUBLIC_KEY": public,
        "LANGFUSE_SECRET_KEY": secret,
    })
    done = subprocess.run([sys.executable, str(EMIT), slug, scenario, BY_SLUG[slug].provider_client], env=env,
                          capture_output=True, text=True, timeout=EMIT_TIMEOUT_S, cwd="/tmp")
    assert done.returncode == 0, f"emit.py {slug} {scenario} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    # an exporter that was refused only logs it; the emitter still exits 0
    refused = [line for line in done.stderr.splitlines() if "export" in line.lower()]
    assert not refused, f"emit.py {slug} {scenario} reported export errors:\n" + "\n".join(refused[:10])


@pytest.mark.parametrize(("slug", "scenario"), CASES, ids=[f"{slug}/{scenario}" for slug, scenario in CASES])
def test_live_library_lands_one_right_row_per_provider_request(live: tuple[FastAPI, str], store: Any,
                                                               mock_llm: MockLLMServer, keys: Keys, slug: str,
                                                               scenario: str) -> None:
    app, url = live
    wanted = expected(slug, scenario)

    _emit(slug, scenario, url, mock_llm, keys.ingest)
    settle(app)

    served = sum(1 for r in mock_llm.requests if r.method == "POST" and r.path in PROVIDER_PATHS)
    assert served == len(wanted), f"the mock served {served} provider request(s), the scenario expects {len(wanted)}"
    traces = stored_trace_ids(store)
    assert traces, f"{slug} / {scenario}: no span reached the collector"
    problems = conformance_problems(store, traces, wanted, served)
    if scenario == "pii_content":  # the planted e-mail address and phone number: redacted, never stored in clear
        problems += pii_leaks(store, traces, list(PLANTED_PII)) + redacted_log_problems(store, traces)
    assert not problems, f"{slug} live / {scenario}:\n  " + "\n  ".join(problems)
