"""A labelled corpus for the redactor: realistic ~1 KB LLM prompts with planted entities and look-alikes.

Deterministic (``corpus(n, seed)`` always returns the same texts): every text is assembled from pieces, so the
offsets of the planted entities are known exactly (:class:`Planted`). The planted values are valid for their
checkers (Luhn cards, mod-97 IBANs, base58check/bech32 addresses, SSNs outside the never-issued ranges, phone
numbers in real numbering-plan ranges, e-mail domains under public suffixes); the look-alikes are the things a
redactor must leave alone or that Presidio treats in its own way (cards failing Luhn, never-issued SSNs,
versions, dates, times, order ids, amounts, hashes, UUIDs, ``config.py``, lower-case ``akia…``, ``sk-learn`` …).

Standard library only at import; :func:`presidio_reference` (the analyzer it is compared with) imports Presidio
and spaCy when called. Used by ``tests/sdk/test_redaction.py`` and ``bench/redaction.py``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
from dataclasses import dataclass, field

__all__ = ["Planted", "Sample", "btc_bech32", "btc_p2pkh", "corpus", "iban", "luhn_complete", "presidio_reference"]


@dataclass(frozen=True)
class Planted:
    entity: str
    start: int
    end: int
    value: str


@dataclass(frozen=True)
class Sample:
    text: str
    planted: tuple[Planted, ...]
    kind: str


@dataclass
class _Builder:
    parts: list[str] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)
    length: int = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def plant(self, entity: str, value: str) -> None:
        self.planted.append(Planted(entity, self.length, self.length + len(value), value))
        self.add(value)

    def build(self, kind: str) -> Sample:
        return Sample("".join(self.parts), tuple(self.planted), kind)


# --- value generators --------------------------------------------------------------------------------------------
def luhn_complete(body: str) -> str:
    """``body`` plus the check digit that makes it pass Luhn."""
    for d in "0123456789":
        digits = [int(x) for x in body + d]
        total = sum(digits[-1::-2]) + sum(sum(divmod(2 * x, 10)) for x in digits[-2::-2])
        if total % 10 == 0:
            return body + d
    raise AssertionError("unreachable")


def _luhn_ok(number: str) -> bool:
    digits = [int(x) for x in number]
    return (sum(digits[-1::-2]) + sum(sum(divmod(2 * x, 10)) for x in digits[-2::-2])) % 10 == 0


def iban(country: str, bban: str) -> str:
    """A valid IBAN (mod-97 check digits) for ``country`` and ``bban``."""
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def btc_p2pkh(payload: bytes, version: int = 0) -> str:
    data = bytes([version]) + payload
    data += hashlib.sha256(hashlib.sha256(data).digest()).digest()[:4]
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = _B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32_polymod(values: list[int]) -> int:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def btc_bech32(program: bytes) -> str:
    """A segwit v0 address (bech32) for a 20-byte program."""
    acc, bits, data = 0, 0, [0]
    for b in program:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    hrp = "bc"
    expanded = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    polymod = _bech32_polymod(expanded + data + [0] * 6) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32[d] for d in data + checksum)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_FIRST = ["jane", "john", "maria", "li", "ahmed", "sofia", "lucas", "emma", "noah", "priya", "omar", "chloe",
          "ivan",
          "fatima", "diego", "hana", "peter", "aisha", "tom", "nina"]
_LAST = ["roe", "smith", "garcia", "chen", "khan", "rossi", "martin", "muller", "kowalski", "patel", "silva",
         "nguyen", "brown", "dubois", "novak", "tanaka", "obrien", "jensen", "haddad", "costa"]
_DOMAINS = ["example.com", "acme.io", "corp.example.org", "mail.contoso.net", "shop.example.co.uk", "uni.edu",
            "gmail.com", "outlook.de", "startup.ai", "bank.example.fr", "health.example.org", "company.com.br"]
_US_AREAS = ["212", "213", "312", "415", "503", "617", "646", "702", "718", "805", "917", "206", "303", "404",
             "512",
             "602", "713", "305", "408", "650"]
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_KEY = _ALNUM + "_-"


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def pick(self, seq):  # type: ignore[no-untyped-def]
        return self.r.choice(seq)

    def digits(self, n: int, first: str = "0123456789") -> str:
        return self.r.choice(first) + "".join(self.r.choice(string.digits) for _ in range(n - 1))

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    # planted values ----------------------------------------------------------------------------------------------
    def email(self) -> str:
        first, last = self.pick(_FIRST), self.pick(_LAST)
        local = self.pick([f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{self.r.randint(1, 99)}",
                           f"{first}+{self.pick(['billing', 'news', 'support'])}", f"{last}.{first}"])
        return f"{local}@{self.pick(_DOMAINS)}"

    def phone(self) -> str:
        area = self.pick(_US_AREAS)
        sub = f"{self.r.randint(2, 9)}{self.digits(2)}"
        line = self.digits(4)
        return self.pick([
            f"({area}) {sub}-{line}", f"{area}-{sub}-{line}", f"{area}.{sub}.{line}", f"+1 {area} {sub} {line}",
            f"+1-{area}-{sub}-{line}", f"1-800-{sub}-{line}", f"+44 20 7946 {self.digits(4)}",
            f"020 7946 {self.digits(4)}", f"+44 74{self.digits(2)} {self.digits(6)}",
            f"+49 30 {self.digits(8, '123456789')}",
            f"030 {self.digits(8, '123456789')}", f"+49 151 {self.digits(8)}", f"+33 1 {self._pairs(4)}",
            f"01 {self._pairs(4)}", f"+33 6 1{self.digits(1)} {self._pairs(3)}",
            f"+91 98{self.digits(3)} {self.digits(5)}",
            f"+55 11 9{self.digits(4, '6789')}-{self.digits(4)}", f"(11) 3{self.digits(3)}-{self.digits(4)}",
            f"+61 2 9{self.digits(3)} {self.digits(4)}",
            f"+34 91{self.digits(1)} {self.digits(3)} {self.digits(3)}",
            f"+81 3-3{self.digits(3)}-{self.digits(4)}", f"+52 55 {self.digits(4)} {self.digits(4)}",
            f"+972 3-{self.digits(3, '2345678')}-{self.digits(4)}", f"+30 21 0{self.digits(3)} {self.digits(4)}",
        ])  # fmt: skip

    def _pairs(self, n: int) -> str:
        return " ".join(self.digits(2) for _ in range(n))

    def ssn(self) -> str:
        while True:
            area = self.r.randint(1, 899)
            if area == 666:
                continue
            value = f"{area:03d}{self.r.randint(1, 99):02d}{self.r.randint(1, 9999):04d}"
            if value in ("123456789", "987654320", "078051120") or len(set(value)) == 1:
                continue
            sep = self.pick(["-", "-", " "])
            return f"{value[:3]}{sep}{value[3:5]}{sep}{value[5:]}"

    def card(self) -> str:
        kind = self.pick(["visa", "visa", "mc", "discover", "amex"])
        if kind == "amex":
            number = luhn_complete(self.pick(["34", "37"]) + self.digits(12))
            return self.pick([f"{number[:4]} {number[4:10]} {number[10:]}", number])
        prefix = {"visa": "4", "mc": self.pick(["51", "52", "53", "54", "55"]), "discover": "6011"}[kind]
        number = luhn_complete(prefix + self.digits(15 - len(prefix)))
        sep = self.pick([" ", "-", ""])
        return sep.join(number[i:i + 4] for i in range(0, 16, 4))

    def ip(self) -> str:
        if self.r.random() < 0.75:
            return ".".join(str(self.r.randint(1, 254)) for _ in range(4))
        return self.pick(["2001:db8:85a3::8a2e:370:7334", "fe80::1ff:fe23:4567:890a", "2001:db8::1",
                          f"2001:db8:{self.r.randint(1, 0xffff):x}::{self.r.randint(1, 0xffff):x}"])

    def iban(self) -> str:
        country = self.pick(["DE", "GB", "FR", "NL", "ES", "IT", "CH", "BE"])
        bban = {
            "DE": lambda: self.digits(18),
            "GB": lambda: self.chars(string.ascii_uppercase, 4) + self.digits(14),
            "FR": lambda: (self.digits(10) + self.chars(string.ascii_uppercase + string.digits, 11)
                           + self.digits(2)),
            "NL": lambda: self.chars(string.ascii_uppercase, 4) + self.digits(10),
            "ES": lambda: self.digits(20),
            "IT": lambda: self.chars(string.ascii_uppercase, 1) + self.digits(10) + self.digits(12),
            "CH": lambda: self.digits(5) + self.digits(12),
            "BE": lambda: self.digits(12),
        }[country]()
        value = iban(country, bban)
        if self.r.random() < 0.6:
            value = " ".join(value[i:i + 4] for i in range(0, len(value), 4))
        return value

    def url(self) -> str:
        host = self.pick(["www.example.com", "docs.acme.io", "portal.contoso.net", "shop.example.co.uk",
                          "status.startup.ai", "example.org"])
        path = self.pick(["", "/", "/account/settings", "/orders/48213?ref=mail", "/docs/v2/guide#auth",
                          "/reset-password?token=abc123"])
        return self.pick([f"https://{host}{path}", f"http://{host}{path}", f"{host}{path}"])

    def crypto(self) -> str:
        payload = self.r.randbytes(20)
        return self.pick([btc_p2pkh(payload), btc_p2pkh(payload, 5), btc_bech32(payload)])

    def secret(self) -> tuple[str, str, str, str]:
        """(entity, text before, value, text after)."""
        kind = self.r.randrange(20)
        if kind >= 12:
            return self._newer_secret(kind)
        if kind == 0:
            return "OPENAI_API_KEY", "OPENAI_API_KEY=", "sk-proj-" + self.chars(_KEY, 48), ""
        if kind == 1:
            return "OPENAI_API_KEY", "my key is ", "sk-" + self.chars(_ALNUM, 48), ""
        if kind == 2:
            return "ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY: ", "sk-ant-api03-" + self.chars(_KEY, 80), ""
        if kind == 3:
            return ("AWS_ACCESS_KEY_ID", "aws_access_key_id = ",
                    self.pick(["AKIA", "ASIA"]) + self.chars(string.ascii_uppercase + "234567", 16), "")
        if kind == 4:
            return "AWS_SECRET_KEY", "aws_secret_access_key = ", self.chars(_ALNUM + "/+", 40), ""
        if kind == 5:
            return "GITHUB_TOKEN", "git clone https://", "ghp_" + self.chars(_ALNUM, 36), ""
        if kind == 6:
            return "GITHUB_TOKEN", "GH_TOKEN=", "github_pat_" + self.chars(_ALNUM + "_", 60), ""
        if kind == 7:
            header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
            payload = _b64url(json.dumps({"sub": self.digits(8), "name": self.pick(_FIRST),
                                          "iat": 1700000000 + self.r.randint(0, 10**7)}).encode())
            return "JWT", "session=", f"{header}.{payload}.{_b64url(self.r.randbytes(32))}", ""
        if kind == 8:
            return ("BEARER_TOKEN", "Authorization: Bearer ", self.chars(_ALNUM + "._-", 40) + self.chars(_ALNUM, 1),
                    "")
        if kind == 9:
            token = f"xoxb-{self.digits(12)}-{self.digits(13)}-{self.chars(_ALNUM, 24)}"
            return "SLACK_TOKEN", "SLACK_BOT_TOKEN=", token, ""
        if kind == 10:
            return "STRIPE_API_KEY", "stripe.api_key = '", "sk_live_" + self.chars(_ALNUM, 24), "'"
        lead = self.pick(["password: ", "DB_PASSWORD=", '"password": "'])
        return "PASSWORD", lead, self.chars(_ALNUM + "!#%", 12), '"' if lead.endswith('"') else ""

    def aws_secret_key(self) -> str:
        """40 base64 characters with both letter cases (what AWS issues; a hex SHA-1 has one case)."""
        return self.chars(string.ascii_uppercase, 1) + self.chars(string.ascii_lowercase, 1) + self.chars(
            _ALNUM + "/+", 38)

    def pem_body(self, lines: int) -> list[str]:
        return [base64.b64encode(self.r.randbytes(48)).decode() for _ in range(lines)]

    def _newer_secret(self, kind: int) -> tuple[str, str, str, str]:
        """AWS secret keys by key name or next to their key id, private keys, URI passwords, inferwatch keys."""
        if kind == 12:
            lead = self.pick(["AWS_SECRET_KEY=", '"SecretAccessKey": "', "Secret access key: ", "secret_key = '"])
            return "AWS_SECRET_KEY", lead, self.aws_secret_key(), {'"': '"', "'": "'"}.get(lead[-1], "")
        if kind == 13:
            key_id = "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)
            return "AWS_SECRET_KEY", f"credentials {key_id}{self.pick([',', ' ', ':', chr(9)])}", \
                self.aws_secret_key(), ""
        if kind in (14, 15):
            label = self.pick(["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""])
            body = self.pem_body(self.r.randint(2, 5))
            if kind == 15:  # cut off: no END line
                return "PRIVATE_KEY", "the key starts ", "\n".join([f"-----BEGIN {label}PRIVATE KEY-----", *body]), ""
            newline = self.pick(["\n", "\\n", "\r\n"])  # "\\n": escaped, as in a JSON string or an env file
            block = newline.join([f"-----BEGIN {label}PRIVATE KEY-----", *body, f"-----END {label}PRIVATE KEY-----"])
            return "PRIVATE_KEY", self.pick(["key:\n", "PRIVATE_KEY=\"", "here it is "]), block, ""
        if kind in (16, 17):
            scheme = self.pick(["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqp"])
            user = self.pick(["", "app", "admin", "root", "svc_ingest"])
            host = self.pick(["db:5432/app", "localhost/orders", "cache:6379/0", "10.0.3.7:5432/app",
                              "rabbit:5672/", "mongo-0/prod?retryWrites=true"])
            return ("PASSWORD", self.pick(["DATABASE_URL=", "connect to ", "dsn: "]) + f"{scheme}://{user}:",
                    self.chars(_ALNUM + "%!*-_~", self.r.randint(8, 24)), "@" + host)
        if kind == 18:
            return "INFERWATCH_API_KEY", "INFERWATCH_API_KEY=", \
                f"iwk_{self.chars(_HEX, 12)}_{self.chars(_KEY, 43)}", ""
        return "INFERWATCH_API_KEY", "LANGFUSE_SECRET_KEY=", "sk-lf-" + self.chars(_KEY, 43), ""

    # look-alikes -------------------------------------------------------------------------------------------------
    def lookalike(self) -> str:
        r = self.r
        bad_card = self.digits(16, "456")
        while _luhn_ok(bad_card):
            bad_card = self.digits(16, "456")
        return self.pick([
            f"card {bad_card[:4]} {bad_card[4:8]} {bad_card[8:12]} {bad_card[12:]} was declined",
            f"ssn 000-{self.digits(2)}-{self.digits(4)} is invalid", f"666-{self.digits(2)}-{self.digits(4)}",
            f"{self.digits(3, '12345678')}-00-{self.digits(4)}",
            f"{self.digits(3, '12345678')}-{self.digits(2)}-0000",
            f"version {r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 30)}",
            f"v{r.randint(1, 4)}.{r.randint(0, 9)}",
            f"released on 2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
            f"{r.randint(1, 12)}/{r.randint(1, 28)}/2024",
            f"at {r.randint(0, 23):02d}:{r.randint(0, 59):02d}",
            f"2024-03-{r.randint(10, 28)} {r.randint(10, 23)}:{r.randint(10, 59)}:05",
            f"order #{self.digits(6, '123456789')}", f"order ORD-2024-{self.digits(6)}",
            f"invoice INV{self.digits(5)}",
            f"${r.randint(1, 9)},{self.digits(3)}.{self.digits(2)}",
            f"{r.randint(1, 99)}% of {r.randint(100, 999)} items",
            f"tracking 1Z{self.chars(string.ascii_uppercase + string.digits, 16)}",
            f"ZIP {self.digits(5, '123456789')}",
            f"commit {self.chars(_HEX, 40)}",
            f"id {self.chars(_HEX, 8)}-{self.chars(_HEX, 4)}-4{self.chars(_HEX, 3)}-a{self.chars(_HEX, 3)}-"
            f"{self.chars(_HEX, 12)}",
            "see config.py and README.md", "e.g. the settings page", "localhost:8080/health",
            "pip install scikit-learn",
            "akia" + self.chars(string.ascii_lowercase + "234567", 16), "sk-learn is a library", "ghp_short",
            "a bearer of bad news", "the password is long enough", "eyJ is how base64 JSON starts",
            f"room {r.randint(100, 999)}, floor {r.randint(1, 30)}", f"ticket {self.digits(7, '123456789')}",
            f"PO {self.digits(10, '123456789')}", f"batch {self.digits(9, '123456789')}", "the @mention and user@",
            f"{self.digits(3)} {self.digits(3)} {self.digits(3)}",
            f"lat 48.{self.digits(4)}, lon 2.{self.digits(4)}",
            f"secret_key = {self.chars(_HEX, 40)}x", f"AKIA is how an access key id starts, {self.chars(_HEX, 40)}",
            f"base64 {base64.b64encode(self.r.randbytes(30)).decode()}",
            "-----BEGIN PUBLIC KEY-----\n" + "\n".join(self.pem_body(2)) + "\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----", "connect to localhost:5432 as postgres",
            f"https://example.com:8443/v{r.randint(1, 3)}/items", f"pk-lf-{self.chars(_HEX, 12)}",
            "iwk_ is the key prefix", "sk-lf- keys are for Langfuse clients",
        ])  # fmt: skip


_FILLER = [
    "Thanks for getting back to me so quickly.", "I have been a customer for about three years now.",
    "The dashboard keeps timing out when I open the billing tab.", "Could you summarize the thread below?",
    "Please draft a polite reply and keep it under 120 words.", "We migrated the service last week.",
    "Nothing changed on our side except the deployment.", "The nightly job failed twice in a row.",
    "Let me know if you need anything else from me.", "Here is the relevant part of the log:",
    "Translate the following note into French.", "Extract the action items as a bulleted list.",
    "The customer is asking for a refund of the last two invoices.", "Our staging environment is unaffected.",
    "I tried clearing the cache and logging in again.", "Can you explain why the retry policy did not kick in?",
    "Rewrite this paragraph in a friendlier tone.", "The agent escalated the ticket to tier two.",
    "Classify the sentiment of this message.", "Check whether the configuration below looks right.",
]
_LEADS = {
    "EMAIL_ADDRESS": ["You can reach me at ", "Send the receipt to ", "cc: ", "From: ", "email me at "],
    "PHONE_NUMBER": ["Call me on ", "My phone number is ", "reach the office at ", "mobile: ", "Tel. "],
    "US_SSN": ["My SSN is ", "social security number ", "SSN: ", "for the tax form, ", "ssn "],
    "CREDIT_CARD": ["Charge the card ", "Visa ", "card number: ", "I paid with ", "Mastercard ending in full: "],
    "IP_ADDRESS": ["The request came from ", "server IP ", "client_ip=", "blocked address ", "host "],
    "IBAN_CODE": ["Wire it to IBAN ", "bank account ", "IBAN: ", "refund to ", "transfer to "],
    "URL": ["See ", "The link is ", "open ", "website: ", "docs at "],
    "CRYPTO": ["Send BTC to ", "my wallet ", "bitcoin address: ", "pay to ", "address "],
}
_KINDS = ["support chat", "email thread", "log excerpt", "config review", "form data"]


def _sample(g: _Gen, index: int) -> Sample:
    b = _Builder()
    kind = _KINDS[index % len(_KINDS)]
    b.add({"support chat": "User: ", "email thread": "Subject: follow-up\n\n", "log excerpt": "[worker-3] ",
           "config review": "# settings\n", "form data": "Form submission:\n"}[kind])
    entities = ["EMAIL_ADDRESS", "PHONE_NUMBER", "US_SSN", "CREDIT_CARD", "IP_ADDRESS", "IBAN_CODE", "URL",
                "CRYPTO", "SECRET"]
    plan = [g.pick(entities) for _ in range(g.r.randint(3, 6))]
    if index % 3 == 0:
        plan.append("PHONE_NUMBER")
    while b.length < 950:
        choice = g.r.random()
        if plan and choice < 0.45:
            entity = plan.pop()
            if entity == "SECRET":
                name, lead, value, tail = g.secret()
                b.add(" " + lead)
                b.plant(name, value)
                b.add(tail)
            else:
                b.add(" " + g.pick(_LEADS[entity]))
                b.plant(entity, getattr(g, {"EMAIL_ADDRESS": "email", "PHONE_NUMBER": "phone", "US_SSN": "ssn",
                                            "CREDIT_CARD": "card", "IP_ADDRESS": "ip", "IBAN_CODE": "iban",
                                            "URL": "url", "CRYPTO": "crypto"}[entity])())
            # (not " -" or ". ": phonenumbers would read a number after it as part of one longer candidate)
            b.add(g.pick([",", ";", ".\n", ", thanks.", "; thanks."]))
        elif choice < 0.7:
            b.add(" " + g.lookalike() + g.pick([".", ",", ";", "\n"]))
        else:
            b.add(" " + g.pick(_FILLER) + g.pick(["", "\n"]))
    return b.build(kind)


def corpus(n: int = 300, seed: int = 20261202) -> list[Sample]:
    """``n`` texts of about 1 KB each (the same ones for the same arguments)."""
    g = _Gen(random.Random(seed))
    return [_sample(g, i) for i in range(n)]


if __name__ == "__main__":  # a quick look: python tests/helpers/redaction_corpus.py
    for sample in corpus(3):
        print(sample.kind, len(sample.text), [(p.entity, p.value) for p in sample.planted])
        print(sample.text, end="\n\n")


# --- the reference: Presidio's AnalyzerEngine, offline (notes/pii-notifiers-ui-tooling.md §1) --------------------
def presidio_reference(*, context: bool = True):  # type: ignore[no-untyped-def]
    """Presidio's ``AnalyzerEngine`` as ``inferwatch.redaction`` is compared with: a blank English spaCy pipeline
    (no model, nothing downloaded) with the notes' ``lower_lemma`` component so context words work (``context``),
    tldextract limited to its bundled public-suffix snapshot, and our secret recognizers registered as Presidio
    ``PatternRecognizer``s (same regexes via ``\\K``, same scores, context words and validators), so both sides
    look for the same entities. Returns ``analyze(text) -> list[RecognizerResult]`` with the attribute ``engine``.

    Needs presidio-analyzer, spaCy and tldextract (the ``test`` extra); imported here, not at module import.
    """
    import logging

    import regex
    import spacy
    import tldextract
    import tldextract.tldextract
    from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from spacy.language import Language

    from inferwatch.redaction import ENTITIES, SECRET_RECOGNIZERS

    # EmailRecognizer -> tldextract would fetch the public-suffix list over HTTP: use the bundled snapshot only
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    if "inferwatch_lower_lemma" not in Language.factories:
        @Language.component("inferwatch_lower_lemma")
        def lower_lemma(doc):  # type: ignore[no-untyped-def]
            for token in doc:
                token.lemma_ = token.lower_
            return doc

    nlp = spacy.blank("en")
    if context:
        nlp.add_pipe("inferwatch_lower_lemma")
    nlp_engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": "blank"}])
    nlp_engine.nlp = {"en": nlp}  # in memory: AnalyzerEngine does not load (or download) anything
    engine = AnalyzerEngine(nlp_engine=nlp_engine, supported_languages=["en"])
    for spec in SECRET_RECOGNIZERS:
        cls = PatternRecognizer
        if spec.validator is not None:
            cls = type(f"{spec.entity.title().replace('_', '')}Recognizer", (PatternRecognizer,),
                       {"validate_result": lambda self, text, _v=spec.validator: _v(text)})
        engine.registry.add_recognizer(cls(
            supported_entity=spec.entity, name=f"{spec.entity.title().replace('_', '')}Recognizer",
            patterns=[Pattern(p.name, p.presidio_regex(), p.score) for p in spec.patterns],
            context=list(spec.context), global_regex_flags=regex.DOTALL | regex.MULTILINE))
    entities = list(ENTITIES)

    def analyze(text: str):  # type: ignore[no-untyped-def]
        return engine.analyze(text, language="en", entities=entities)

    analyze.engine = engine  # type: ignore[attr-defined]
    return analyze
