"""The redactor's output is unchanged on the golden texts (the redaction corpus and its variants, the demo
traffic's content pool, pieces of both): a change meant to make it faster changes no text and no count. A change
of behaviour (a new rule, a fixed rule) bumps ``POLICY`` and writes the golden file again
(``python -m tests.helpers.redaction_golden``)."""

from __future__ import annotations

import json

import pytest

from inferwatch.redaction import DEFAULT_REDACTOR
from tests.helpers.redaction_golden import DIGEST_CHARS, GOLDEN, SELECTIONS, digest, entities_for, golden_texts


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return golden_texts()


@pytest.mark.parametrize("selection", SELECTIONS)
def test_redaction_matches_the_golden_digests(texts: list[str], selection: str) -> None:
    wanted = json.loads(GOLDEN.read_text())[selection]
    assert len(wanted) == len(texts) * DIGEST_CHARS, "the golden texts changed: write the golden file again"
    entities = entities_for(selection)
    differ = []
    for i, text in enumerate(texts):
        got = digest(DEFAULT_REDACTOR.redact(text, entities=entities))
        if got != wanted[i * DIGEST_CHARS:(i + 1) * DIGEST_CHARS]:
            differ.append(i)
    assert not differ, (f"{len(differ)} of {len(texts)} texts redact differently, e.g. "
                        f"{[texts[i][:120] for i in differ[:3]]}")


def test_only_overlapping_findings_are_scored_when_redacting() -> None:
    """``_overlapping`` (which findings redact() scores with context words) returns exactly the findings that
    share a character with another one, on random layouts."""
    import random

    from inferwatch.redaction.findings import _R
    from inferwatch.redaction.redactor import _overlapping

    rng = random.Random(29)
    for _ in range(5000):
        results = []
        for _ in range(rng.randint(0, 8)):
            start = rng.randint(0, 30)
            results.append(_R("X", start, start + rng.randint(1, 8), 0.5, "x"))
        wanted = [r for i, r in enumerate(results)
                  if any(j != i and r.start < o.end and o.start < r.end for j, o in enumerate(results))]
        assert [id(r) for r in _overlapping(results)] == [id(r) for r in wanted], results
