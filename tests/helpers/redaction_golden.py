"""Texts and digests for the redactor's golden test (``tests/sdk/test_redaction_golden.py``).

The golden file (``tests/sdk/data/redaction_golden.json``) holds, for each entity selection of :data:`SELECTIONS`,
the digests of what the redactor returned (text and counts) for the texts of :func:`golden_texts`, in order, at
the revision it was written from (8 hex digits each, concatenated). A change that only makes the redactor faster
leaves every digest as it was. Written with ``python -m tests.helpers.redaction_golden``, run where ``inferwatch``
imports the revision whose behaviour is the reference (the current file: ``ca5c0ab``, with
``PYTHONPATH=<its sdk/src>``).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parents[1] / "sdk" / "data" / "redaction_golden.json"
#: name -> entities argument of ``redact`` (None: all): everything, the collector's attribute selection (all but
#: URL) and secrets only (the SDK's capture="full").
SELECTIONS = ("all", "no_url", "secrets")
DIGEST_CHARS = 8

# variants that move what the recognizers' literal and character prefilters see: case, escapes, prefixes
_VARIANTS = (
    lambda t: t.upper(),
    lambda t: t.lower(),
    lambda t: json.dumps(t),
    lambda t: t.replace(" ", "\n"),
    lambda t: "Authorization: " + t,
    lambda t: t.replace("-", "_"),
    lambda t: t.replace(".", ":"),
)


def golden_texts() -> list[str]:
    """The redaction corpus, its variants, the demo traffic's content pool and short edge cases."""
    from examples.traffic_content import build_content_pool
    from tests.helpers.redaction_corpus import corpus

    samples = corpus(300)
    texts = [sample.text for sample in samples]
    rng = random.Random(29)
    # each planted value alone (a match at the very start and end of a text), after a key, and inside prose
    planted = list(dict.fromkeys(p.value for sample in samples for p in sample.planted))
    texts += [form.format(value) for value in planted for form in ("{0}", "key={0}", "see {0} now", "{0}\n{0}",
                                                                     "secret_key: {0}")]
    texts += [variant(text) for text in texts[:120] for variant in _VARIANTS]
    for system, inputs, outputs in build_content_pool(random.Random(7), pii_share=0.5, size=96):
        texts += [system, inputs, outputs, f"{system}\n\n{inputs}"]
    pieces = [t[i:i + rng.randint(1, 60)] for t in texts[:200] for i in range(0, len(t), 97)]
    texts += pieces
    texts += ["", "a", "sk-", "iwk_", "AKIA", "akia", "SECRET", "Pass: hunter22", "::", "1::2", "a:b:c:d:e:f:g",
              "1:2:3:4:5:6:7:8", "fe80::1%eth0", "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
              "at 2001:db8:85a3:0:0:8a2e:370:7334.", "a:1:b:2:c:3:d", "eyJ", "xoxb-", "-----BEGIN ",
              "\u017fecret=abc123", "\u0130aws"]
    return texts


def digest(result: Any) -> str:
    """A short digest of a RedactionResult: its text and its counts."""
    body = json.dumps([result.text, sorted(result.counts.items())], ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def entities_for(selection: str) -> Any:
    from inferwatch.redaction import ENTITIES, SECRET_ENTITIES

    return {"all": None, "no_url": frozenset(ENTITIES) - {"URL"}, "secrets": SECRET_ENTITIES}[selection]


def compute() -> dict[str, str]:
    """Each selection's digests over :func:`golden_texts` with the installed ``DEFAULT_REDACTOR``."""
    from inferwatch.redaction import DEFAULT_REDACTOR

    texts = golden_texts()
    return {name: "".join(digest(DEFAULT_REDACTOR.redact(t, entities=entities_for(name))) for t in texts)
            for name in SELECTIONS}


if __name__ == "__main__":
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(compute(), indent=0) + "\n")
    print(f"wrote {GOLDEN}")
