"""Process logging: plain text (default) or one JSON object per line, never with payload content.

Why JSON: log shippers (Loki, Elastic, CloudWatch) index fields without regexes. Why no payload: a log line is
read by more people and kept longer than ``prompt_logs``, so prompts, completions and keys must never reach it.
Our own log calls only ever pass counts, names and exception *types*; this module makes that hold for anything
else that logs too:

- secrets are scrubbed from every message: first by the secret kinds of the shared redactor
  (:data:`inferwatch.redaction.SECRET_ENTITIES`: AWS keys, private-key blocks, JWTs, provider keys ...), so a
  kind the redactor learns is kept out of the logs too, then by the patterns here, which write shorter forms for
  inferwatch keys, ``Bearer``/``Basic`` credentials, passwords in URLs and after ``password=`` (and keep what
  follows them: ``password=<redacted>&user=x``);
- in JSON an exception is logged as its type and its stack (file, line, function), without its message (which can
  quote the data that failed: an attribute value, a prompt), except for I/O and database-driver errors, whose
  messages say what is wrong with the connection and are kept, scrubbed and cut to 500 characters;
- ``extra`` fields are kept only when they are numbers, booleans or short scrubbed strings.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import traceback
from datetime import datetime, timezone
from typing import IO, Any, Literal

from inferwatch.redaction import DEFAULT_REDACTOR, SECRET_ENTITIES

_SECRETS = [
    (re.compile(r"iwk_[A-Za-z0-9]{6,}_[A-Za-z0-9_\-]{10,}"), "iwk_<redacted>"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"), r"\1 <redacted>"),
    (re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-]{16,}"), r"\1-<redacted>"),
    (re.compile(r"\b(xox[abpr]-|ghp_|github_pat_|AKIA)[A-Za-z0-9_\-]{8,}"), r"\1<redacted>"),
    (re.compile(r"(://[^/\s:@]+):[^@\s/]+@"), r"\1:<redacted>@"),
    (re.compile(r"(?i)((?:password|passwd|secret|api[_-]?key|token)\s*[=:]\s*)[^\s,;&\"']+"), r"\1<redacted>"),
]
# the patterns above write their own forms for these
_REDACTOR_SECRETS = SECRET_ENTITIES - {"PASSWORD", "BEARER_TOKEN", "INFERWATCH_API_KEY"}
_MAX_MESSAGE = 2000
_MAX_EXC_MESSAGE = 500
_MAX_EXTRA = 200
# Attributes every LogRecord has; anything else came in through ``extra=``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}
_KEEP_EXC_MESSAGE_MODULES = ("clickhouse_connect", "chdb", "urllib3", "httpx", "httpcore", "inferwatch_collector.store")


def scrub(text: str) -> str:
    """``text`` with the shared redactor's secret kinds and every secret pattern replaced."""
    text = DEFAULT_REDACTOR.redact(text, entities=_REDACTOR_SECRETS).text
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _exception_message_is_safe(exc: BaseException) -> bool:
    if isinstance(exc, OSError):  # connection refused, timeouts, disk full: about the system, not the data
        return True
    module = type(exc).__module__ or ""
    return module.startswith(_KEEP_EXC_MESSAGE_MODULES)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, message, thread, exception type and stack, safe extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": scrub(record.getMessage())[:_MAX_MESSAGE],
            "thread": record.threadName,
        }
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            entry["exc_type"] = f"{type(exc).__module__}.{type(exc).__qualname__}"
            if _exception_message_is_safe(exc):
                entry["exc_message"] = scrub(str(exc))[:_MAX_EXC_MESSAGE]
            entry["exc_stack"] = [f"{frame.filename}:{frame.lineno} in {frame.name}"
                                  for frame in traceback.extract_tb(exc.__traceback__)][-20:]
            cause = exc.__cause__ or exc.__context__
            if cause is not None:
                entry["exc_cause_type"] = f"{type(cause).__module__}.{type(cause).__qualname__}"
        for key, value in vars(record).items():
            if key in _STANDARD or key.startswith("_") or key in entry:
                continue
            if isinstance(value, bool) or isinstance(value, (int, float)):
                entry[key] = value
            elif isinstance(value, str) and len(value) <= _MAX_EXTRA:
                entry[key] = scrub(value)
        return json.dumps(entry, ensure_ascii=False, default=str)


class ScrubFilter(logging.Filter):
    """Scrubs secrets from text-format records too (the message is rendered once, here)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = scrub(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(log_format: Literal["text", "json"] = "text", level: str | int = "INFO",
                      stream: IO[str] | None = None) -> logging.Handler:
    """Install one handler on the root logger (replacing earlier ones) and return it.

    Uvicorn's loggers are pointed at the root logger, so their lines come out in the same format; run uvicorn with
    ``log_config=None`` so that it does not install its own handlers over these.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.addFilter(ScrubFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # APScheduler logs two INFO lines per job run (the scheduler lease runs every 10 s): noise that buries the
    # platform's own lines. Job runs are recorded in job_runs and /metrics; DEBUG brings these lines back.
    debug = root.level <= logging.DEBUG
    logging.getLogger("apscheduler").setLevel(logging.NOTSET if debug else max(root.level, logging.WARNING))
    return handler


def configure_from_env(stream: IO[str] | None = None) -> logging.Handler:
    """:func:`configure_logging` from ``INFERWATCH_LOG_FORMAT`` / ``INFERWATCH_LOG_LEVEL`` (the CLI's first step).

    Reads the two variables directly rather than building :class:`~.settings.Settings`, so that logging works even
    when another setting is invalid (that error is then logged in the configured format).
    """
    import os

    log_format = "json" if os.environ.get("INFERWATCH_LOG_FORMAT", "").strip().lower() == "json" else "text"
    level = os.environ.get("INFERWATCH_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        level = "INFO"
    return configure_logging(log_format, level, stream)
