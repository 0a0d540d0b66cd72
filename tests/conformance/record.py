"""Re-record the conformance fixtures: real spans from real instrumentation libraries.

    .venv/bin/python -m tests.conformance.record [--library SLUG] [--scenario NAME]

For each library of :mod:`tests.conformance.libraries` it makes (or reuses) a throwaway venv under
``/tmp/iw-conformance/<venv>`` with the library's pinned packages, starts the mock LLM server and an OTLP/HTTP
capture receiver in this process, and runs ``emit.py`` in that venv once per scenario. Every POST the library
makes (``/v1/traces``, ``/v1/logs``, Langfuse's ``/api/public/otel/v1/traces``; ``/v1/metrics`` only counted) is
written to ``tests/fixtures/conformance/<slug>/<scenario>.json`` as OTLP JSON (``google.protobuf.json_format``,
proto field names), with the number of provider requests the mock served during the scenario: the ground truth
of how many ``llm_calls`` rows the collector must make. The hand-checked ``<scenario>.expected.json`` beside each
recording is never touched.

Needs network access to the package index the first time a venv is made (``pip install``).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from examples.mock_llm import MockLLMServer
from tests.conformance.libraries import BY_SLUG, LIBRARIES, PII_LIBRARIES, SCENARIOS, Library
from tests.helpers.otlp_receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "conformance"
EMIT = Path(__file__).with_name("emit.py")
VENV_ROOT = Path("/tmp/iw-conformance")
PROVIDER_PATHS = ("/v1/chat/completions", "/v1/responses", "/v1/messages")
KEPT_HEADERS = ("content-type", "content-encoding", "authorization")
CHILD_TIMEOUT_S = 180


def ensure_venv(lib: Library) -> Path:
    """The python of ``lib``'s throwaway venv, with exactly its requirements installed (reinstalled when they
    change: a stamp file holds their hash)."""
    venv = VENV_ROOT / lib.venv
    python = venv / "bin" / "python"
    stamp = venv / ".iw-requirements"
    wanted = hashlib.sha256("\n".join(sorted(lib.requirements)).encode()).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if not python.exists():
        base = shutil.which("python3.11") or sys.executable
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *lib.requirements], check=True)
    stamp.write_text(wanted)
    return python


def decode(path: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """An OTLP request body (already decompressed) as OTLP JSON with proto field names."""
    if headers.get("content-type", "").startswith("application/json"):
        return json.loads(body)
    message = ExportLogsServiceRequest() if path.endswith("/v1/logs") else ExportTraceServiceRequest()
    message.ParseFromString(body)
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def provider_requests(mock: MockLLMServer) -> int:
    return sum(1 for r in mock.requests if r.method == "POST" and r.path in PROVIDER_PATHS)


def record(lib: Library, scenario: str, python: Path, mock: MockLLMServer, receiver: Receiver) -> dict[str, Any]:
    """Run one scenario in the library's venv and return the fixture (see the module docstring)."""
    mock.reset()
    receiver.requests.clear()
    env = {**os.environ, "IW_RECEIVER": receiver.url, "IW_MOCK": mock.base_url, "PYTHONPATH": ""}
    done = subprocess.run([str(python), str(EMIT), lib.slug, scenario, lib.provider_client], env=env,
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, cwd="/tmp")
    if done.returncode != 0:
        raise RuntimeError(f"{lib.slug}/{scenario} failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    packages = json.loads(done.stdout.strip().splitlines()[-1])
    time.sleep(0.2)  # exporters are answered before they return; this only covers a straggling background POST
    kept, metrics = [], 0
    for path, headers, body in list(receiver.requests):
        if path.endswith("/v1/metrics"):
            metrics += 1
            continue
        kept.append({"path": path, "headers": {k: headers[k] for k in KEPT_HEADERS if k in headers},
                     "otlp_json": decode(path, headers, body)})
    return {
        "library": lib.package,
        "version": packages.get(lib.package, ""),
        "slug": lib.slug,
        "packages": packages,
        "provider_client": lib.provider_client,
        "scenario": scenario,
        "recorded_on": datetime.date.today().isoformat(),
        "recorder": "tests/conformance/record.py",
        "provider_requests": provider_requests(mock),
        "metrics_requests": metrics,
        "requests": kept,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", choices=sorted(BY_SLUG), action="append",
                        help="only this library (repeatable); default: all")
    parser.add_argument("--scenario", choices=SCENARIOS, action="append",
                        help="only this scenario (repeatable); default: all")
    args = parser.parse_args(argv)
    libraries = [BY_SLUG[s] for s in args.library] if args.library else list(LIBRARIES)
    scenarios = args.scenario or list(SCENARIOS)
    receiver = Receiver()
    try:
        with MockLLMServer(latency="none", seed=0) as mock:
            for lib in libraries:
                python = ensure_venv(lib)
                for scenario in scenarios:
                    if scenario == "pii_content" and lib.slug not in PII_LIBRARIES:
                        continue  # recorded only where the library captures content
                    fixture = record(lib, scenario, python, mock, receiver)
                    out = FIXTURES / lib.slug / f"{scenario}.json"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text(json.dumps(fixture, indent=1, sort_keys=False) + "\n")
                    spans = sum(len(ss.get("spans", [])) for r in fixture["requests"]
                                for rs in r["otlp_json"].get("resource_spans", [])
                                for ss in rs.get("scope_spans", []))
                    print(f"{lib.slug}/{scenario}: {fixture['provider_requests']} provider request(s), "
                          f"{len(fixture['requests'])} OTLP request(s), {spans} span(s), "
                          f"{fixture['metrics_requests']} metrics request(s)")
    finally:
        receiver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
