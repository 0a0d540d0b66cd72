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
