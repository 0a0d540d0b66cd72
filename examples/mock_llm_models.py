"""The models the mock LLM knows: the dated snapshot each alias answers with, and its speed in realistic mode."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelInfo:
    prefix: str
    snapshot: str  # '' -> echo the requested name
    ttft_ms: float  # median time to first token
    tps: float  # median decode speed, tokens/s
    provider: str


MODELS: tuple[ModelInfo, ...] = (  # longest prefix first
    ModelInfo("gpt-4o-mini", "gpt-4o-mini-2024-07-18", 380, 110, "openai"),
    ModelInfo("gpt-4o", "gpt-4o-2024-08-06", 620, 75, "openai"),
    ModelInfo("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14", 400, 100, "openai"),
    ModelInfo("gpt-4.1", "gpt-4.1-2025-04-14", 600, 80, "openai"),
    ModelInfo("gpt-5-mini", "gpt-5-mini-2025-08-07", 500, 140, "openai"),
    ModelInfo("gpt-5", "gpt-5-2025-08-07", 750, 90, "openai"),
    ModelInfo("o4-mini", "o4-mini-2025-04-16", 450, 150, "openai"),
    ModelInfo("o3-mini", "o3-mini-2025-01-31", 450, 140, "openai"),
    ModelInfo("o3", "o3-2025-04-16", 900, 70, "openai"),
    ModelInfo("o1", "o1-2024-12-17", 1200, 60, "openai"),
    ModelInfo("text-embedding-3-small", "", 60, 0, "openai"),
    ModelInfo("text-embedding-3-large", "", 90, 0, "openai"),
    ModelInfo("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", 950, 62, "anthropic"),
    ModelInfo("claude-haiku-4-5", "claude-haiku-4-5-20251001", 480, 125, "anthropic"),
    ModelInfo("claude-sonnet-4-6", "", 900, 65, "anthropic"),
    ModelInfo("claude-opus-4-5", "claude-opus-4-5-20251101", 1300, 45, "anthropic"),
    ModelInfo("claude-opus-4-1", "claude-opus-4-1-20250805", 1400, 40, "anthropic"),
    ModelInfo("claude-3-5-haiku", "claude-3-5-haiku-20241022", 450, 110, "anthropic"),
)
_DEFAULT_MODEL = ModelInfo("", "", 500, 80, "openai")
EMBEDDING_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def model_info(model: str) -> ModelInfo:
    for info in MODELS:
        if model.startswith(info.prefix):
            return info
    return _DEFAULT_MODEL


def snapshot_for(model: str) -> str:
    """The dated snapshot a provider answers with for an alias; a dated or unknown name is echoed."""
    info = model_info(model)
    return info.snapshot if info.snapshot and model == info.prefix else model


def is_reasoning_model(model: str) -> bool:
    m = model.lower()
    if m.startswith("gpt-5"):
        return "-chat" not in m
    return bool(re.match(r"o\d", m))
