"""The mock LLM's documented token rules (examples/mock_llm.py), recomputed here on their own so that the tests
check the SDK's numbers against the rules rather than against the mock's code, and the one-message request the
provider tests send."""

from __future__ import annotations

from typing import Any


def tokens(text: str) -> int:
    """The mock's token count of a text: one per 4 characters, rounded up."""
    return -(-len(text) // 4)


def prompt_tokens(*texts: str) -> int:
    """The prompt tokens of messages with these texts: 4 per message plus their text's tokens."""
    return sum(4 + tokens(t) for t in texts)


def user(text: str) -> list[dict[str, Any]]:
    """The messages of a request with one user message."""
    return [{"role": "user", "content": text}]
