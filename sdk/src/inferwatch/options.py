"""SDK options: every setting, its ``INFERWATCH_*`` environment variable and default, in one place.

Precedence is argument > environment variable > default, so an app can hard-code what it means and leave the
rest to its deployment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any, Literal

CaptureMode = Literal["off", "redacted", "full"]
CAPTURE_MODES: tuple[str, ...] = ("off", "redacted", "full")


@dataclass(frozen=True)
class Options:
    """Resolved SDK configuration (see :func:`resolve`)."""

    endpoint: str = "http://127.0.0.1:4318"  # collector base URL; spans go to {endpoint}/v1/traces
    api_key: str = ""  # an ingest key of the project
    # PEM file of the CA(s) to trust for an https endpoint (a self-signed collector certificate, a private CA);
    # empty: the system's trust store (or REQUESTS_CA_BUNDLE). OTEL_EXPORTER_OTLP_CERTIFICATE is the app's own.
    ca_file: str = ""
    service_name: str = "unknown_service"
    capture: str = "off"  # off: no prompt/completion text leaves the process; redacted; full (secrets scrubbed)
    sample_rate: float = 1.0  # share of LLM calls recorded (errors are always kept)
    # spans waiting for export (and call rows waiting for the histograms); beyond, they are dropped and counted.
    # About 1 KiB per queued call with capture off (plus the captured text when on): ~32 MiB when full. At 5,000
    # calls/s it holds 6.5 s of calls: a collector's commit (~1 s) plus a Retry-After or two.
    max_queue_size: int = 32_768
    max_export_batch_size: int = 512  # spans per request while the export keeps up
    # while a backlog builds up (the requests in flight take longer than the spans take to arrive), requests grow
    # up to this many spans (and at most ~8 MiB; the collector takes 16 MiB): one decode and commit for many spans
    max_backlog_batch_size: int = 8192
    max_concurrent_exports: int = 4  # span export requests in flight at once (a sender thread and connection each)
    schedule_delay_ms: int = 500  # how often the export thread wakes up
    export_timeout_s: float = 10.0  # one export attempt, retries included
    max_attribute_chars: int = 32_768  # longer captured text is truncated before redaction
    user_hash_key: str = ""  # HMAC key for user ids; empty: a per-process random key (ids not joinable)
    enabled: bool = True  # False: init() installs nothing
    # off by default; a directory: span export requests the collector could not take (down, 429/502/503/504,
    # timeout) are kept there, bounded, and re-sent in order when it is back, across restarts (disk_buffer.py)
    disk_buffer_dir: str = ""
    disk_buffer_max_bytes: int = 64 << 20  # when full, the oldest requests are dropped (counted disk_buffer_full)


_ENV = {f.name: f"INFERWATCH_{f.name.upper()}" for f in fields(Options)}


def _coerce(name: str, raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    return raw


def resolve(**arguments: Any) -> Options:
    """Options from arguments (``None`` = not given), then ``INFERWATCH_*`` variables, then defaults."""
    unknown = set(arguments) - set(_ENV)
    if unknown:
        raise TypeError(f"unknown inferwatch.init() argument(s): {', '.join(sorted(unknown))}")
    defaults = Options()
    values: dict[str, Any] = {}
    for f in fields(Options):
        given = arguments.pop(f.name, None)
        if given is not None:
            values[f.name] = given
        elif (raw := os.environ.get(_ENV[f.name])) not in (None, ""):
            try:
                values[f.name] = _coerce(f.name, raw, getattr(defaults, f.name))
            except ValueError as exc:
                raise ValueError(f"{_ENV[f.name]}={raw!r} is not a valid {f.name}") from exc
    options = Options(**values)
    if options.capture not in CAPTURE_MODES:
        raise ValueError(f"capture must be one of {', '.join(CAPTURE_MODES)}, not {options.capture!r}")
    if not 0.0 <= options.sample_rate <= 1.0:
        raise ValueError(f"sample_rate must be between 0 and 1, not {options.sample_rate}")
    for name in ("max_queue_size", "max_export_batch_size", "max_backlog_batch_size", "max_concurrent_exports"):
        if getattr(options, name) < 1:
            raise ValueError(f"{name} must be at least 1, not {getattr(options, name)}")
    if options.disk_buffer_max_bytes < 1:
        raise ValueError("disk_buffer_max_bytes must be at least 1")
    return options


def env_var(name: str) -> str:
    """The environment variable of an option (for docs and error messages)."""
    return _ENV[name]
