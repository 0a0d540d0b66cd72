"""UTC time helpers shared by the jobs: ClickHouse hands back naive UTC datetimes and stores milliseconds."""

from __future__ import annotations

from datetime import UTC, datetime


def utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime (naive values are taken as UTC, as ClickHouse returns them)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def to_ms(value: datetime) -> datetime:
    """UTC, cut to whole milliseconds: what a ``DateTime64(3)`` column keeps, so a read-back compares equal."""
    value = utc(value)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def iso_s(value: datetime) -> str:
    """``2026-12-02T16:00:00Z``."""
    return utc(value).isoformat(timespec="seconds").replace("+00:00", "Z")


def iso_ms(value: datetime) -> str:
    """``2026-12-02T16:00:00.123Z``."""
    return utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")
