"""Extreme numbers as a client can send them: in a query string, and spliced into a JSON body as raw text (so
that spellings ``json.dumps`` would refuse or rewrite, ``NaN``, ``Infinity``, a million digits, reach the server).

Used by the API-wide property test (``tests/collector/test_numeric_inputs.py``): no number makes a route answer
5xx. A huge value in a float field is what once made ``/api/v1/capacity/plan?overhead=1e300`` a 500
(``OverflowError``); floats where ints are expected, negative and zero values, and numbers beyond int64 are the
other usual suspects.
"""

from __future__ import annotations

from hypothesis import strategies as st

MILLION_DIGITS = "1" * 1_000_000
# a URL holds at most 64 KiB (httpx's limit; servers allow less): the longest run of digits a query can carry,
# far beyond the 4,300 digits of Python's int() limit
QUERY_DIGITS = "1" * 60_000

# query strings: what an int/float parameter (or a string one parsed by hand) may receive
QUERY_EXTREMES: tuple[str, ...] = (
    "0", "-0", "-1", "0.5", "-2.5", "1e300", "-1e300", "1e309", "-1e309", "1e-320", "nan", "NaN", "inf", "-inf",
    "Infinity", "-Infinity", "9" * 30, "-" + "9" * 30, str(2**63), str(-(2**63) - 1), str(2**64), "1_000", " 7",
    "\uff17", "0x10", "1e3", QUERY_DIGITS,
)  # fmt: skip

# raw JSON numbers (and numbers in strings, for fields a handler converts itself); NaN/Infinity are what Python's
# json module accepts beyond the standard, and the million-digit integer exceeds its int conversion limit
JSON_EXTREMES: tuple[str, ...] = (
    "0", "-0", "-1", "0.5", "-2.5", "1e300", "-1e300", "1e309", "-1e309", "1e-320", "NaN", "Infinity",
    "-Infinity", "9" * 30, "-" + "9" * 30, str(2**63), str(-(2**63) - 1), str(2**64), "1.0", "123456789.75",
    MILLION_DIGITS, f'"{MILLION_DIGITS}"', '"1e300"', '"NaN"', '"-1"',
)  # fmt: skip

# the few that break most (overflow on use, negative, a float for an int, not a number, beyond UInt64): every input
# gets each of them
SHARPEST_QUERY: tuple[str, ...] = ("1e300", "-1e300", "-1", "0.5", "nan", str(2**64))
SHARPEST_JSON: tuple[str, ...] = ("1e300", "-1e300", "-1", "0.5", "NaN", str(2**64))


def query_numbers() -> st.SearchStrategy[str]:
    """A query-string number: one of :data:`QUERY_EXTREMES`, or any float or integer (beyond int64 too)."""
    return st.one_of(
        st.sampled_from(QUERY_EXTREMES),
        st.floats().map(repr),
        st.integers(min_value=-(2**80), max_value=2**80).map(str),
    )


def json_numbers() -> st.SearchStrategy[str]:
    """A raw JSON number: one of :data:`JSON_EXTREMES`, or any float (``NaN``/``Infinity`` spelt as Python's
    ``json`` module writes them) or integer."""
    return st.one_of(
        st.sampled_from(JSON_EXTREMES),
        st.floats().map(_json_float),
        st.integers(min_value=-(2**80), max_value=2**80).map(str),
    )


def _json_float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)
