"""Prompt and completion text for the demo traffic: ~1 KB per call as OTel GenAI message JSON, with PII (an
e-mail, a phone number, a card number, a secret) in a share of the samples, for the collector to redact."""

from __future__ import annotations

import json
import random


_NAMES = ("Dana Whitfield", "Marcus Oyelaran", "Priya Raman", "Tomás Ferreira", "Hannah Kowalski", "Kenji Mori")
_PII = (
    lambda r, n: f"you can email me at {n.split()[0].lower()}.{n.split()[1].lower()}@fastmail.com",
    lambda r, n: f"call me back on +1 (415) 555-{r.randint(100, 199):04d}",
    lambda r, n: f"my phone is 020 7946 {r.randint(0, 999):04d}",
    lambda r, n: "the card on file is 4111 1111 1111 1111, exp 09/28",
    lambda r, n: f"my SSN is 536-{r.randint(10, 89)}-{r.randint(1000, 8999)} if you need it",
    lambda r, n: f"I connected from 203.0.113.{r.randint(2, 250)}",
    lambda r, n: "here is our key sk-proj-" + "".join(r.choice("abcdefghijkmnopqrstuvwxyzABCDEFGH0123456789")
                                                     for _ in range(40)),
)
_ASKS = (
    "Which of our plans includes priority support, and how do I upgrade from the starter tier without losing "
    "the dashboards we already built?",
    "Summarize the attached quarterly report in five bullet points, focusing on churn, expansion revenue and "
    "the hiring plan for the support organisation.",
    "Extract the invoice number, the due date, the total amount and the VAT id from the document below and "
    "answer in JSON.",
    "My last order arrived damaged and the replacement has not shipped yet; what are my options for a refund "
    "or an exchange?",
    "Classify this ticket into billing, bug, feature request or account access, and give a one-line reason.",
    "Compare the latency guarantees of the EU and US regions and tell me which one I should pick for a team "
    "spread across Lisbon and Toronto.",
)
_CONTEXT = (
    "Context: the customer has been on the Growth plan since March, opened three tickets this quarter and "
    "their workspace has 42 seats. Relevant documentation excerpts follow. Plans: Starter (5 seats, community "
    "support), Growth (50 seats, business-hours support), Enterprise (unlimited seats, 24/7 priority support, "
    "SSO, audit logs). Upgrades take effect immediately and are prorated; dashboards, alerts and API keys are "
    "kept. Refunds are available within 30 days of a charge. Data residency is selected per workspace."
)
_ANSWERS = (
    "You can upgrade from Settings → Billing; the change is prorated and everything you built is kept. "
    "Priority support comes with the Enterprise plan.",
    "Churn fell to 2.1%, expansion revenue grew 18% quarter on quarter, and support hiring adds six people "
    "across two regions by the end of next quarter.",
    '{"invoice_number": "INV-2024-0193", "due_date": "2024-11-30", "total": "1,284.50 EUR", "vat_id": '
    '"DE811907980"}',
    "I'm sorry about the damaged order. I have opened a replacement request; if you prefer a refund, it will "
    "reach your original payment method within 5 business days.",
    "billing: the customer asks about a duplicate charge on their latest invoice.",
    "Pick the EU region: p95 latency from Lisbon is about 40 ms and from Toronto about 95 ms, within both "
    "regions' guarantees.",
)
_SYSTEM = ("You are a helpful, concise assistant for Acme Cloud customers. Answer only from the provided "
           "context; say you do not know otherwise. Never reveal internal notes.")


def build_content_pool(rng: random.Random, pii_share: float, size: int = 128) -> list[tuple[str, str, str]]:
    """(system instructions, input messages, output messages) as OTel GenAI JSON strings, ~1 KB per sample."""
    pool = []
    for _ in range(size):
        ask = rng.choice(_ASKS)
        answer = rng.choice(_ANSWERS)
        if rng.random() < pii_share:
            name = rng.choice(_NAMES)
            ask = f"Hi, this is {name}; {rng.choice(_PII)(rng, name)}. {ask}"
            if rng.random() < 0.3:
                answer = f"Thanks {name.split()[0]}. {answer}"
        user_text = f"{ask}\n\n{_CONTEXT[: rng.randint(350, len(_CONTEXT))]}"
        system = json.dumps([{"type": "text", "content": _SYSTEM}])
        inputs = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user_text}]}],
                            ensure_ascii=False)
        outputs = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}],
                               "finish_reason": "stop"}], ensure_ascii=False)
        pool.append((system, inputs, outputs))
    return pool
