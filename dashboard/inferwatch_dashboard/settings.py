"""The dashboard's settings, from ``INFERWATCH_DASHBOARD_*`` variables (the CLI sets them for ``streamlit run``).

The dashboard holds API keys, never database credentials: everything it shows comes through the collector's
query API with a ``read`` key (``prompts:read`` as well to show redacted prompt text).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class DashboardSettings(BaseSettings):
    """Where the collector is, which keys to read with, and how long answers are cached."""

    model_config = SettingsConfigDict(env_prefix="INFERWATCH_DASHBOARD_", env_ignore_empty=True, extra="ignore")

    api_url: str = Field("http://127.0.0.1:4318", description="Base URL of the collector's query API.")
    api_key: str = Field("", repr=False,
                         description="Read key(s), comma-separated: one key per project the dashboard offers.")
    timeout_s: float = Field(15.0, gt=0, description="Timeout of one API request.")
    cache_ttl_s: int = Field(30, ge=0, description="Seconds an API answer is reused (per query).")
    slo_ttft_ms: float = Field(2000.0, gt=0, description="TTFT p95 objective drawn on the latency charts.")
    host: str = Field("127.0.0.1", description="Address the dashboard listens on (inferwatch-server up).")
    port: int = Field(8501, ge=0, le=65535, description="Dashboard port; 0 or taken: a free one (up).")

    @property
    def keys(self) -> list[str]:
        """The configured keys, in order (the first is the default project)."""
        return [key.strip() for key in self.api_key.split(",") if key.strip()]

    @property
    def base_url(self) -> str:
        return self.api_url.rstrip("/")
