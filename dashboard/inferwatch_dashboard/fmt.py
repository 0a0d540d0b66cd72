"""Numbers as people read them, and the deltas beside them. Pure; the tests format expected values with these too.

``None`` (no data: a percentile of no calls, a rate of zero calls) is shown as "—", never as 0, which would be a
claim.
"""

from __future__ import annotations

import math
from typing import Any

NONE = "—"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def count(value: Any) -> str:
    return NONE if _missing(value) else f"{int(round(float(value))):,}"


def money(value: Any) -> str:
    """Dollars: cents above $1, four significant decimals below (per-call costs are often fractions of a cent)."""
    if _missing(value):
        return NONE
    value = float(value)
    if abs(value) >= 1 or value == 0:
        return f"${value:,.2f}"
    return f"${value:.4f}" if abs(value) >= 0.0001 else f"${value:.2e}"


def ms(value: Any) -> str:
    if _missing(value):
        return NONE
    value = float(value)
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:,.0f} ms"


def pct(value: Any, digits: int = 2) -> str:
    """A ratio (0.012) as a percentage ("1.20%")."""
    return NONE if _missing(value) else f"{float(value) * 100:.{digits}f}%"


def number(value: Any, digits: int = 1) -> str:
    return NONE if _missing(value) else f"{float(value):,.{digits}f}"


def ratio(numerator: Any, denominator: Any) -> float | None:
    """``numerator / denominator``, or None when there is nothing to divide by."""
    if _missing(numerator) or _missing(denominator) or not denominator:
        return None
    return float(numerator) / float(denominator)


def change(current: Any, previous: Any) -> str | None:
    """Relative change for st.metric's delta ("+12.5%"), None when the previous period has nothing to compare."""
    if _missing(current) or _missing(previous) or not previous:
        return None
    return f"{(float(current) - float(previous)) / abs(float(previous)) * 100:+.1f}%"


def points(current: Any, previous: Any) -> str | None:
    """Change of a rate in percentage points ("+0.40 pp")."""
    if _missing(current) or _missing(previous):
        return None
    return f"{(float(current) - float(previous)) * 100:+.2f} pp"
