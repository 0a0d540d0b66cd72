"""Mock-LLM fixtures for every test directory (registered in tests/conftest.py as a pytest plugin): the mock LLM
server (examples/mock_llm.py) and real provider clients pointed at it.

- ``mock_llm_server`` (session): one :class:`~examples.mock_llm.MockLLMServer` on 127.0.0.1 and a free port,
  ``latency="none"``, ``seed=0``; stopped at the end of the session.
- ``mock_llm`` (function): the same server with its request log and flaky counters reset for this test; use
  ``mock_llm.openai_base_url`` / ``mock_llm.anthropic_base_url`` and ``mock_llm.requests``.
- ``openai_client`` / ``anthropic_client`` (function, after the reset): real sync clients on the mock,
  ``max_retries=0``, one of each per session (closed at its end); derive variants with
  ``client.with_options()``. Async clients belong to the event loop that uses them: build them inside the
  test's coroutine (``openai.AsyncOpenAI(base_url=mock_llm.openai_base_url, api_key=..., max_retries=0)``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from examples.mock_llm import MockLLMServer

MOCK_API_KEY = "test-key"


@pytest.fixture(scope="session")
def mock_llm_server() -> Iterator[MockLLMServer]:
    server = MockLLMServer(latency="none", seed=0).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mock_llm(mock_llm_server: MockLLMServer) -> MockLLMServer:
    mock_llm_server.reset()
    return mock_llm_server


@pytest.fixture(scope="session")
def _openai_session_client(mock_llm_server: MockLLMServer) -> Iterator[object]:
    openai = pytest.importorskip("openai")
    with openai.OpenAI(base_url=mock_llm_server.openai_base_url, api_key=MOCK_API_KEY, max_retries=0) as client:
        yield client


@pytest.fixture(scope="session")
def _anthropic_session_client(mock_llm_server: MockLLMServer) -> Iterator[object]:
    anthropic = pytest.importorskip("anthropic")
    with anthropic.Anthropic(base_url=mock_llm_server.anthropic_base_url, api_key=MOCK_API_KEY,
                             max_retries=0) as client:
        yield client


@pytest.fixture
def openai_client(mock_llm: MockLLMServer, _openai_session_client: object) -> object:
    """A real ``openai.OpenAI`` on the mock (``max_retries=0``), shared by the session (one costs ~0.1 s)."""
    return _openai_session_client


@pytest.fixture
def anthropic_client(mock_llm: MockLLMServer, _anthropic_session_client: object) -> object:
    """A real ``anthropic.Anthropic`` on the mock (``max_retries=0``); shared by the session."""
    return _anthropic_session_client
