"""PII/secret redaction for prompt, completion and status-message text that reaches the collector.

The collector redacts with the SDK's redactor, :mod:`inferwatch.redaction` (shared code, not a copy: the
``inferwatch`` distribution is a dependency of the server). So content redacted in an application by the SDK and
content redacted here went through the same rules and carry the same policy string, and a fix to a rule reaches
both at once. Those rules find what Microsoft Presidio's predefined recognizers find, with the standard library
only (``tests/sdk/test_redaction.py`` compares them with Presidio on a labelled corpus):

==================  =============================================================================================
entity              what matches
==================  =============================================================================================
EMAIL_ADDRESS       ``local@domain.tld`` whose domain ends in a public suffix (or a reserved/internal TLD)
PHONE_NUMBER        numbers valid for US, GB, DE, FR, IL, IN, CA or BR in any format (phonenumbers' matcher,
                    ported), and numbers written with ``+``/an international prefix valid in their own country
US_SSN              ``AAA-GG-SSSS`` and its weak variants, outside the never-issued ranges
CREDIT_CARD         13-19 digits with card prefixes and grouping, **Luhn-validated**
IP_ADDRESS          IPv4 (+CIDR) and IPv6 addresses
IBAN_CODE           IBANs with a valid mod-97 checksum and country format
URL                 URLs with or without scheme
CRYPTO              bitcoin addresses (base58check, bech32)
OPENAI_API_KEY …    secrets: OpenAI, Anthropic, inferwatch (``iwk_…``, ``sk-lf-…``), AWS access key id and secret key,
PASSWORD            private-key blocks, GitHub, Slack, Google, Stripe, Hugging Face tokens, JWTs, ``Bearer``
                    credentials, ``password=``/``pwd:`` values, passwords in URIs (``postgres://user:<PASSWORD>@…``)
==================  =============================================================================================

(The complete list with scores is in :mod:`inferwatch.redaction`.) Each finding becomes ``<ENTITY>``, the text
Presidio's ``replace`` operator writes, so a redacted text stays readable; redacting is stable (redacting the
result again changes nothing), and ``RedactionResult.counts`` says how many of each entity were replaced: the
collector adds them up for ``/metrics`` (``inferwatch_redactions_total{entity=...}``).

This module is the collector's interface to it: :data:`DEFAULT_REDACTOR`, used by the normaliser and the feedback
API unless another redactor is passed; :class:`Redactor`, the protocol a custom redactor follows (``policy: str``
and ``redact(text) -> RedactionResult``); :func:`redact`; and :data:`POLICY`, :data:`ENTITIES` and
:data:`PLACEHOLDERS`. The policy string is stored with every prompt log row (``PromptLogRow.redaction``), so a
stored text always says which rules redacted it.
"""

from __future__ import annotations

from inferwatch.redaction import DEFAULT_REDACTOR, ENTITIES, PLACEHOLDERS, POLICY, RedactionResult
from inferwatch.redaction import SupportsRedact as Redactor

__all__ = [
    "DEFAULT_REDACTOR",
    "ENTITIES",
    "PLACEHOLDERS",
    "POLICY",
    "RedactionResult",
    "Redactor",
    "redact",
]


def redact(text: str) -> RedactionResult:
    """Redact ``text`` with :data:`DEFAULT_REDACTOR`."""
    return DEFAULT_REDACTOR.redact(text)
