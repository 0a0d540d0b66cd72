"""Conformance with real third-party emitters: what each instrumentation library really sent (recorded by
tests/conformance/record.py, fixtures in tests/fixtures/conformance) lands as exactly one ``llm_calls`` row per
provider request, with the hand-checked tokens, cost, TTFT, finish reason, streamed flag, status, provider,
models and prompt-log placement of ``<scenario>.expected.json``; and that no PII the library sent (the
``pii_content`` scenario plants an e-mail address and a phone number) is stored in clear anywhere in its traces,
while its redacted content is in the prompt log.

Each recording is posted to the full app as the library posted it (its path, encoding and compression; timestamps
moved to now), then :func:`~tests.helpers.conformance.settle` lets the collector finish merging the spans of one
request, and the rows of the recording's traces are compared with the expected ones in start-time order. Every
difference is reported at once, so one run tells the whole story of a library.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers.conformance import (PLANTED_PII, conformance_problems, expected, fixtures, load, pii_leaks,
                                       planted_pii, post_all, redacted_log_problems, settle, trace_ids)
from tests.helpers.keys import Keys

CASES = fixtures()
PII_CASES = [(slug, scenario) for slug, scenario in CASES if scenario == "pii_content"]


@pytest.mark.parametrize(("slug", "scenario"), CASES, ids=[f"{slug}/{scenario}" for slug, scenario in CASES])
def test_recorded_library_lands_one_right_row_per_provider_request(unsettled_client: TestClient, store: Any,
                                                                   keys: Keys, slug: str, scenario: str) -> None:
    client = unsettled_client  # every request of the recording arrives inside one pairing window, as it did live
    fixture = load(slug, scenario)
    wanted = expected(slug, scenario)
    assert len(wanted) == fixture["provider_requests"], "the expected file must have one entry per request"

    problems = post_all(client, fixture, keys.ingest)
    settle(client.app)
    traces = trace_ids(fixture)
    problems.extend(conformance_problems(store, traces, wanted, fixture["provider_requests"]))
    problems.extend(pii_leaks(store, traces, planted_pii(fixture)))

    assert not problems, f"{slug} {fixture['version']} / {scenario}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize(("slug", "scenario"), PII_CASES, ids=[f"{slug}/{scenario}" for slug, scenario in PII_CASES])
def test_recorded_content_lands_redacted_in_the_prompt_log(unsettled_client: TestClient, store: Any, keys: Keys,
                                                           slug: str, scenario: str) -> None:
    fixture = load(slug, scenario)
    assert planted_pii(fixture) == list(PLANTED_PII), "the library must have sent the planted PII"

    assert not post_all(unsettled_client, fixture, keys.ingest)
    settle(unsettled_client.app)

    problems = redacted_log_problems(store, trace_ids(fixture))
    assert not problems, f"{slug}: " + "; ".join(problems)
