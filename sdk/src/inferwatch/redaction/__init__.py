"""PII and secret redaction that finds what Presidio finds, with the standard library only.

:class:`Redactor` reproduces Microsoft Presidio's predefined recognizers (presidio-analyzer 2.2.366) for the
entities below: the same regular expressions, the same scores, the same validators (Luhn, IBAN mod-97 plus the
per-country formats, the SSN never-issued ranges and published sample numbers, bitcoin base58check/bech32, e-mail
domains checked against the public-suffix list the way ``tldextract`` does, ``ipaddress`` for IPs), the same
``finditer`` semantics, the same context-word score boost, the same duplicate removal as ``AnalyzerEngine`` and the
same conflict resolution as ``AnonymizerEngine``. Phone numbers are found the way Presidio's ``PhoneRecognizer``
finds them (``phonenumbers.PhoneNumberMatcher`` at leniency VALID over the regions US, GB, DE, FR, IL, IN, CA,
BR) by a port of that matcher onto phonenumbers' numbering-plan metadata (:mod:`.phones`). A test
(``tests/sdk/test_redaction.py``) runs both on a labelled corpus and requires the same findings.

It is fast because it runs each recognizer only where it can match: a mask of the text's character classes and a
few substring tests find those places at C speed (:mod:`.scan`), and each pattern is anchored there
(:mod:`.recognizers`); the phone matcher walks only stretches with 4+ digits and rejects most candidates for all
regions at once (:mod:`.phones`). ``bench/redaction.py`` measures it against Presidio on the corpus and times the
collector's content path, which uses this redactor (``inferwatch_collector.redaction``).

==================  ========  =================================================================================
entity              score     what matches (the finding's span is what gets replaced)
==================  ========  =================================================================================
EMAIL_ADDRESS       1.0       Presidio's e-mail pattern; the domain must end in a public suffix
PHONE_NUMBER        0.4       numbers valid for one of the 8 regions above in any format the matcher accepts;
                              written with ``+`` or an IDD: valid in their own country's numbering plan
US_SSN              0.05-0.5  ``AAA-GG-SSSS`` (0.5), ``AAAGGSSSS``/``AAAAA-SSSS``/``AAA-GGSSSS`` (0.05, very weak)
CREDIT_CARD         1.0       13-19 digits with Presidio's prefixes and grouping, Luhn-valid
IP_ADDRESS          0.6       IPv4 (+CIDR), IPv6, IPv4-mapped/embedded IPv6, valid for ``ipaddress``
IBAN_CODE           1.0       mod-97 checksum plus the country's format
URL                 0.5-0.6   Presidio's URL patterns (with or without scheme, quoted)
CRYPTO              1.0       bitcoin P2PKH/P2SH (base58check) and bech32/bech32m addresses
OPENAI_API_KEY      0.95      ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…``
ANTHROPIC_API_KEY   1.0       ``sk-ant-…``
AWS_ACCESS_KEY_ID   0.95      ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 upper-case base32 characters
INFERWATCH_API_KEY  1.0       inferwatch's own ``iwk_<key id>_<secret>`` and its Langfuse spelling ``sk-lf-…``
                              (the public half ``pk-lf-<key id>`` is the key id, public, and stays)
AWS_SECRET_KEY      0.9       a 40-character value after a key name (``aws_secret_access_key``, ``AWS_SECRET_KEY``,
                              ``"SecretAccessKey"``, ``secret_key``, ``Secret access key``, then ``:``/``=``);
                    0.8       or right after an access key id (``AKIA…,<secret>``) if it holds both letter cases
                              (a bare 40-character value, a git SHA-1 or base64, is not enough)
PRIVATE_KEY         1.0       a PEM/PGP private-key block, ``-----BEGIN … PRIVATE KEY-----`` to its END line
                              (newlines, CRLFs or escaped ``\\n`` inside); cut off (no END): the base64 lines
GITHUB_TOKEN        1.0       ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36-255, ``github_pat_…``
SLACK_TOKEN         0.95      ``xoxb-``/``xoxp-``/``xoxa-``/``xoxr-``/``xoxs-`` tokens
GOOGLE_API_KEY      0.95      ``AIza`` + 35 characters
STRIPE_API_KEY      0.95      ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` keys
HUGGINGFACE_TOKEN   0.9       ``hf_`` + 30+ characters
JWT                 1.0       three base64url parts whose header decodes to a JSON object with ``alg``
BEARER_TOKEN        0.8       the credential after ``Bearer`` (the word ``Bearer`` is kept)
PASSWORD            0.7       the value after ``password``/``passwd``/``pwd``/``secret`` (+ ``:``/``=``)
                    0.9       a URI's password: ``scheme://user:<password>@host`` (user, host and path stay)
==================  ========  =================================================================================

Secrets are case sensitive (``akia…`` is not an AWS key id); context words (Presidio's lists; ``key``, ``token``,
``secret``, ``api``, ``authorization``, ``password``, ``credential`` for secrets) add 0.35 to a score, as
Presidio's ``LemmaContextAwareEnhancer`` does with a lower-case lemma.
The score threshold defaults to 0, Presidio's default, so very weak findings (a bare 9-digit number as US_SSN at
0.05) are redacted too; pass ``score_threshold=0.4`` to keep those.

Every finding is replaced by ``<ENTITY_TYPE>`` (what Presidio's ``replace`` operator writes), so a redacted text
stays readable, and counts per entity are returned. Overlaps are resolved the way ``AnonymizerEngine`` resolves
them: overlapping findings of one type are merged, a finding inside another is dropped (on equal spans the lower
score goes), findings of one type separated only by spaces are merged, and two partly overlapping findings of
different types become adjacent placeholders. Redacting is stable: ``redact(redact(x).text)`` changes nothing.
No pattern matches a placeholder, and where replacing a finding uncovers another one (a rejected candidate can hide
an overlapping valid one, Presidio's way of validating after ``finditer``), the text is redacted again; checking
for that costs little, because such a finding can only sit right next to a placeholder (see :mod:`.zones`).

Four deliberate differences, two of them privacy first (``Redactor(presidio_compatible=True)`` drops all four):

* US SSN: Presidio treats the published sample numbers 078-05-1120, 123-45-6789 and 987-65-4320 as "not an SSN";
  they are redacted here (they identify nobody, but a prompt holding one is usually a test of exactly this).
* E-mail: Presidio drops an address whose domain does not end in a public suffix; addresses under reserved and
  internal TLDs (:data:`RESERVED_TLDS`: ``jane@corp.example``, ``ops@build.internal``) are redacted here.
  An address after a path (``GET /users/jane@example.com/profile``), which Presidio's check reads as the URL
  ``users/jane@example.com`` and drops, is checked from after the path's last ``/`` and redacted.
* URL: a match without scheme with a label of one or two digits after its first is a dotted path with an index,
  not a host (``items.0.name``; ``contents.0.me`` in the flattened key ``message.contents.0.message_content``),
  and is left alone; hosts with a numeric label (``mail.163.com``) and every URL with a scheme are still found.
* URI passwords: Presidio's e-mail pattern reads the ``password@host.tld`` of ``scheme://user:password@host.tld``
  as an address, which swallows the password finding and half the host (``postgres://admin:<EMAIL_ADDRESS><URL>``);
  that address is dropped, so the URI reads ``postgres://admin:<PASSWORD>@<URL>``.

A JSON object or array is redacted value by value, so its keys and structure stay (:mod:`.documents`).

Known differences of the reimplementation (documented by tests; none occurs in the test corpus):

* Phone numbers: the matcher's carrier-code case (``xx`` inside a number) is not ported; such candidates are
  rejected. The numbering-plan metadata is phonenumbers' (every country, as of the version the table was made
  from; a test compares it with the installed phonenumbers).
* E-mail domains: ``tldextract`` with the bundled public-suffix snapshot decides; here the last label must be an
  ICANN TLD of that snapshot (and a two-label domain under a wildcard TLD such as ``.ck`` is rejected). A domain
  that is itself a multi-label public suffix (``someone@co.uk``) is accepted here, rejected there.
* ``\\w``/``\\b`` follow Python's ``re`` (the ``regex`` module Presidio uses also counts combining marks as word
  characters); context words use a tokenizer that approximates spaCy's English rules (scores only).

Optional NER (PERSON, LOCATION) needs Presidio and an installed spaCy model: see :class:`PresidioRedactor`
(``pip install 'inferwatch[presidio]'``). This package itself imports nothing outside the standard library.

Modules: :mod:`.redactor` (:class:`Redactor`, :func:`redact`), :mod:`.documents` (JSON documents), :mod:`.rules` (entities, secret recognizers,
Presidio's patterns), :mod:`.validators`, :mod:`.recognizers`, :mod:`.scan`, :mod:`.phones`, :mod:`.context`
(context words), :mod:`.conflicts` (Presidio's overlap resolution), :mod:`.zones` (what to look at again after a
redaction), :mod:`.ner` (:class:`PresidioRedactor`), :mod:`._data` (generated tables).
"""

from __future__ import annotations

from .conflicts import resolve_conflicts
from .findings import Finding, RedactionResult, SupportsRedact
from .ner import PresidioRedactor
from .redactor import DEFAULT_REDACTOR, Redactor, redact
from .rules import (
    ALL_ENTITIES,
    DEFAULT_PHONE_REGIONS,
    ENTITIES,
    NER_ENTITIES,
    PII_ENTITIES,
    PLACEHOLDERS,
    POLICY,
    SECRET_ENTITIES,
    SECRET_RECOGNIZERS,
    SecretPattern,
    SecretRecognizer,
)
from .validators import (
    RESERVED_TLDS,
    crypto_valid,
    email_domain_valid,
    iban_valid,
    ip_valid,
    jwt_header_valid,
    luhn_valid,
    ssn_valid,
)

__all__ = [
    "ALL_ENTITIES",
    "DEFAULT_PHONE_REGIONS",
    "DEFAULT_REDACTOR",
    "ENTITIES",
    "NER_ENTITIES",
    "PII_ENTITIES",
    "PLACEHOLDERS",
    "POLICY",
    "RESERVED_TLDS",
    "SECRET_ENTITIES",
    "SECRET_RECOGNIZERS",
    "Finding",
    "PresidioRedactor",
    "RedactionResult",
    "Redactor",
    "SecretPattern",
    "SecretRecognizer",
    "SupportsRedact",
    "crypto_valid",
    "email_domain_valid",
    "iban_valid",
    "ip_valid",
    "jwt_header_valid",
    "luhn_valid",
    "redact",
    "resolve_conflicts",
    "ssn_valid",
]
