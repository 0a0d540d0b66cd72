"""Caps on what one row stores, and the window a span's start time must fall in."""

from __future__ import annotations

MAX_ATTRIBUTES = 128  # keys per row's attributes map (span keys first, then resource, then scope)
MAX_ATTRIBUTE_CHARS = 4096  # characters per attribute value (longer values are cut)
MAX_CONTENT_CHARS = 65536  # characters per prompt / completion stored (cut after redaction)
MAX_TOKENS_PER_CALL = 10_000_000  # a token count above this (or negative) is treated as absent
MAX_ERRORS = 100  # messages kept in NormalizedBatch.errors; the rest are summarised in one line
DROPPED_ATTRIBUTES_KEY = "inferwatch.collector.dropped_attributes"  # how many keys MAX_ATTRIBUTES cut
DEFAULT_RETENTION_DAYS = 90  # normalize(retention_days=...): pass the tables' retention (Settings.retention_days)
MAX_DURATION_NS = 49 * 86_400 * 10**9  # a longer span is rejected: latency_ms (UInt32) holds up to 49.7 days
MAX_FUTURE_SECONDS = 3600  # a span starting further ahead of now than this is rejected (clock skew allowance)
