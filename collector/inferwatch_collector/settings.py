"""Typed settings for every server process, read from ``INFERWATCH_*`` environment variables.

One object, one prefix: the README's configuration table is generated from these fields' descriptions
(``inferwatch-server config``), so a setting documented there always exists here.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    """Where the embedded database lives when no directory is configured.

    ``./.inferwatch/data`` when the current directory already has one (a checkout running the demo), else the
    user's data directory (``~/.local/share/inferwatch/data`` on Linux).
    """
    local = Path.cwd() / ".inferwatch" / "data"
    if local.exists():
        return local
    from platformdirs import user_data_path

    return user_data_path("inferwatch") / "data"


#: A ClickHouse user name inferwatch creates: a lower-case identifier (pasted into DDL, never quoted).
USER_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def default_inflight_bytes() -> int:
    """1/16 of this machine's memory (or of the cgroup's limit when lower), between 64 MiB and 1 GiB: decoding
    may need several times what the budget counts (Python objects of a parsed body), and the database and the
    write queue need the rest."""
    total = 0
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            total = min(total, int(limit)) if total else int(limit)
    except OSError:
        pass
    mib = 1024 * 1024
    return max(64 * mib, min(1024 * mib, total // 16)) if total else 64 * mib


class Settings(BaseSettings):
    """Settings of the collector, scheduler, dashboard and CLI."""

    model_config = SettingsConfigDict(env_prefix="INFERWATCH_", env_ignore_empty=True, extra="ignore")

    # --- storage ---
    clickhouse_url: str = Field(
        "",
        description="ClickHouse server URL (http://host:8123 or https://...). Empty: embedded chDB in data_dir.",
    )
    clickhouse_user: str = Field("default", description="ClickHouse user (server mode only).")
    clickhouse_password: str = Field("", description="ClickHouse password (server mode only).", repr=False)
    database: str = Field("inferwatch", description="ClickHouse database that holds every inferwatch table.")
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Embedded chDB data directory (default ./.inferwatch/data if present, else the user data dir).",
    )
    runtime_user: str = Field(
        "",
        description="ClickHouse user that `migrate` creates (or updates) for the services: SELECT, INSERT, ALTER "
        "UPDATE/DELETE on the inferwatch database only. Set it on the migrate step, which runs as the migration "
        "(DDL) user; the services then connect as it (INFERWATCH_CLICKHOUSE_USER). Empty: no user is created. "
        "Server mode only: embedded chDB has no users.",
    )
    runtime_password: str = Field(
        "", description="Password of runtime_user (at least 12 characters); sent to ClickHouse only as a salted "
        "SHA-256 hash.", repr=False,
    )
    cluster: str = Field("", description="ClickHouse cluster name for ON CLUSTER migrations (server mode only).")
    migration_mode: Literal["auto", "single", "replicated", "sharded"] = Field(
        "auto",
        description="Migration rendering: auto = single without a cluster, else asks system.clusters.",
    )
    retention_days: int = Field(90, ge=1, le=3650, description="Days of LLM call and span history kept.")
    prompt_retention_days: int = Field(14, ge=7, le=30, description="Days redacted prompts/completions are kept.")
    project_retention_days: dict[str, int] = Field(
        default_factory=dict,
        description="Shorter retention for some projects, as JSON: {\"project\": days}. Their calls, spans, "
        "prompt logs and feedback older than that are deleted daily by the scheduler; retention_days and "
        "prompt_retention_days still cap every project.",
    )

    # --- collector ---
    host: str = Field("127.0.0.1", description="Collector bind address.")
    port: int = Field(4318, ge=1, le=65535, description="Collector port (OTLP/HTTP's standard port).")
    ingest_workers: int = Field(
        default_factory=lambda: min(4, os.cpu_count() or 1),
        ge=0,
        le=64,
        description="Processes that decode and normalise OTLP requests (default: CPUs, at most 4); "
        "0 = in the collector process.",
    )
    release_library_pages: bool = Field(
        True,
        description="Once started, let the kernel reclaim the pages of the embedded chDB library that only "
        "start-up touched (Linux; about 200 MiB of resident set; see library_pages.py).",
    )
    chdb_cache_mib: int = Field(
        128, ge=0, le=1 << 20,
        description="Embedded chDB: the most MiB each of its mark, primary-index and secondary-index caches may "
        "hold (ClickHouse's server defaults, 1-5 GiB each, suit a dedicated server, not an embedded store).",
    )
    max_body_bytes: int = Field(
        16 * 1024 * 1024, ge=1024, description="Largest accepted request body, after decompression (413 above)."
    )
    max_inflight_bytes: int = Field(
        default_factory=lambda: default_inflight_bytes(),
        ge=1024,
        description="Request bytes, counted decompressed, being decoded or waiting to be written, for every "
        "route that reads a body (traces, metrics, logs, feedback); a request that does not fit waits at most "
        "inflight_wait_s, then gets 503 + Retry-After (bounds memory and queued work whatever the number of "
        "clients). Default: 1/16 of the memory (cgroup limit if lower), between 64 MiB and 1 GiB.",
    )
    inflight_project_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Share of max_inflight_bytes one project may hold (a project holding nothing is always let "
        "in), so one tenant's flood cannot starve another; beyond it its requests wait, then get 429 + "
        "Retry-After. 1 = no per-project limit (one-project installations).",
    )
    inflight_wait_s: float = Field(
        2.0,
        ge=0,
        le=5,
        description="Seconds a request waits for room in the in-flight budget before 429/503 + Retry-After "
        "(at most 5: exporters give up after 10 s).",
    )
    min_insert_interval_s: float = Field(
        0.1,
        ge=0,
        le=10,
        description="Least time between the starts of two inserts into a table. The writer inserts as soon as it "
        "is free, batching every request that arrived meanwhile, and a request is acknowledged once its insert "
        "returns; this spacing bounds the new parts ClickHouse must merge to 1/min_insert_interval_s per second in "
        "each table and partition.",
    )
    flush_rows: int = Field(
        10_000,
        ge=1,
        description="A batch stops waiting for requests still being decoded once this many rows are pending "
        "(while ClickHouse fails: a spooled batch is cut here)...",
    )
    flush_interval_s: float = Field(
        1.0,
        gt=0,
        description="...or once its oldest row has waited this long: the most a request waits for others to "
        "join its insert (while ClickHouse fails: for its spooled batch to fill).",
    )
    max_batch_rows: int = Field(100_000, ge=1, description="Largest single insert the writer makes.")
    max_queue_rows: int = Field(
        200_000, ge=1, description="Rows waiting for the writer; beyond this ingest answers 503 + Retry-After."
    )
    insert_retries: int = Field(3, ge=0, description="Retries of a failed insert (same deduplication token).")
    spool_dir: Path | None = Field(
        None,
        description="Directory of the on-disk spool that holds accepted batches while ClickHouse fails, replayed "
        "in order when it returns (one directory per collector). Empty: `spool` beside data_dir.",
    )
    spool_max_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=0,
        description="Size limit of the spool; when it is full ingest answers 503 + Retry-After. 0 = no spool "
        "(a failed insert fails its requests with 503).",
    )
    spool_replay_interval_s: float = Field(
        1.0, gt=0, description="Seconds between replay attempts while ClickHouse still fails (doubles up to 30 s)."
    )
    content_capture: Literal["off", "redacted"] = Field(
        "redacted",
        description="What happens to prompt/completion text that arrives: off = dropped, redacted = stored "
        "in prompt_logs after PII/secret redaction.",
    )
    user_hash_key: str = Field(
        "",
        description="HMAC key for user-identifying attribute values (enduser.id, user.id, *.user_id, ...), stored "
        "hashed like the SDK's user hash: give the SDK the same key (init(user_hash_key=...)) to join them. "
        "Empty: a random key created once and kept in the database.",
        repr=False,
    )
    dedup_window: int = Field(
        100_000, ge=0, description="Recent request digests remembered so a retried OTLP request lands once."
    )
    pairing_window_s: float = Field(
        10.0,
        ge=0,
        le=300,
        description="Seconds an LLM span from another library waits for a twin span of the same provider request "
        "(the provider client's own span, a second instrumentation) before its row is written; twins become one "
        "row. Covers an exporter's batch delay (5 s by default). 0 = write every span's row at once, no merging.",
    )
    key_cache_s: float = Field(30.0, ge=0, description="Seconds an API key lookup is cached.")
    key_poll_s: float = Field(
        2.0,
        ge=0,
        description="Seconds between polls of the API key table for keys revoked or created through another "
        "collector (one small query); a revoked key stops working everywhere within this. 0 = no poll (other "
        "collectors refuse it after key_cache_s).",
    )
    unknown_key_cache_s: float = Field(
        10.0, ge=0, description="Seconds an unknown or revoked API key is remembered as such (by hash; at most "
        "key_cache_s)."
    )
    unknown_key_cache_size: int = Field(
        10_000, ge=1, description="Unknown API keys remembered; kept apart from valid keys, which they never evict."
    )
    unknown_key_lookups_per_s: float = Field(
        20.0,
        ge=0,
        description="Database lookups per second of API keys the collector does not know (one token bucket per "
        "collector process); above it such a key is answered 503 + Retry-After without a lookup. Keys created "
        "through this collector, or seen by the key poll, are exempt. 0 = no limit.",
    )
    unknown_key_lookup_burst: int = Field(
        100, ge=1, description="Unknown-key lookups allowed at once before unknown_key_lookups_per_s applies."
    )
    metrics_host: str = Field(
        "127.0.0.1",
        description="Bind address of the internal listener that serves Prometheus /metrics (not on the public "
        "port). 0.0.0.0 in a container whose scraper runs in another container.",
    )
    metrics_port: int = Field(
        9318, ge=0, le=65535, description="Port of the internal /metrics listener; 0 = no listener."
    )
    api_docs: bool = Field(
        False,
        description="Serve the interactive API docs (/docs, /redoc) and /openapi.json on the public port "
        "(`inferwatch-server up` turns them on for its local try-out).",
    )
    ingest_rate_limit_per_key: float = Field(
        0.0,
        ge=0,
        description="OTLP ingest requests per second allowed per API key (token bucket, per collector process); "
        "above it /v1/traces and /v1/metrics answer 429 + Retry-After. 0 = no limit.",
    )
    ingest_rate_burst: int = Field(
        0,
        ge=0,
        description="Requests a key may send at once before the per-key rate applies (bucket size). "
        "0 = the rate rounded up (one second's worth).",
    )
    prices_file: Path | None = Field(
        None,
        description="YAML/JSON price file overriding or adding models to the bundled price table (see "
        "`inferwatch-server prices`); re-read when it changes. Empty: bundled prices only.",
    )
    alert_rules_file: Path | None = Field(
        None,
        description="YAML alert rules and notification channels (schema: `inferwatch-server alerts rules`; "
        "checked with `alerts rules --check FILE`). Empty: the packaged default rules.",
    )
    alert_secrets_file: Path | None = Field(
        None,
        description="YAML/JSON file of notifier secrets (webhook URLs, routing keys) named by the rules' "
        "`*_secret` fields; must not be world-readable. Secrets may also come from env vars (`*_env`).",
    )

    # --- logs ---
    log_format: Literal["text", "json"] = Field(
        "text",
        description="Log lines as text, or as one JSON object per line (for log shippers). Neither ever holds "
        "prompt/completion text or keys: secrets are scrubbed and exception messages left out in JSON.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Least severe level logged.")

    # --- scheduler ---
    collector_scheduler: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Run the scheduled jobs (budget alerts, cost reports) inside the collector process. auto: "
        "only on the embedded database (the collector is the one process that may open it); with a ClickHouse "
        "server run one `inferwatch-server scheduler` instead. on: also with a server (in one collector only, "
        "or alerts go out twice). off: never.",
    )

    @field_validator("prices_file", "spool_dir", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("project_retention_days")
    @classmethod
    def _project_days(cls, value: dict[str, int]) -> dict[str, int]:
        for project, days in value.items():
            if days < 1:
                raise ValueError(f"project_retention_days[{project!r}] must be at least 1 day, not {days}")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("database", "cluster")
    @classmethod
    def _identifier(cls, value: str, info: ValidationInfo) -> str:
        """Both end up in DDL as identifiers, so only plain names are allowed (no quoting games)."""
        if value == "" and info.field_name == "cluster":
            return value
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", value):
            raise ValueError(f"{info.field_name} must be a plain identifier (letters, digits, underscore)")
        return value

    @field_validator("runtime_user")
    @classmethod
    def _user_name(cls, value: str) -> str:
        """Pasted into CREATE USER/GRANT as an identifier: lower-case plain names only."""
        if value and (not USER_NAME.fullmatch(value) or value == "default"):
            raise ValueError("runtime_user must be a lower-case identifier (letters, digits, underscore), "
                             "not 'default'")
        return value

    @property
    def embedded(self) -> bool:
        """True when the platform runs on its in-process chDB engine."""
        return not self.clickhouse_url


@lru_cache
def get_settings() -> Settings:
    """Process-wide settings; tests build their own ``Settings(...)`` instead of touching this."""
    return Settings()
