"""What one normalize() call produces (:class:`NormalizedBatch`) and what its spans share while it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from ..redaction import Redactor
from ..rows import LlmCallRow, PromptLogRow, SpanRow
from ..user_ids import UserHasher
from .attributes import read_fast, read_standard, scan_fast, scan_standard
from .limits import MAX_ERRORS, MAX_FUTURE_SECONDS
from .scrubber import scrubber_for

#: Prices one LLM call for its row: ``price(model, provider, input_tokens, output_tokens, cache_read_tokens,
#: cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, usage_missing, cache_hit)`` with tokens in the
#: OTel convention → ``(cost_usd, price_version, (cost_input_usd, cost_cache_read_usd, cost_cache_write_usd,
#: cost_output_usd, cost_reasoning_usd, cache_savings_usd, unpriced), cost_avoided_usd)``.
#: See ``cost/ingest_pricer.py``.
Pricer = Callable[[str, str, int, int, int, int, int, int, bool, bool], tuple[float, str, tuple, float]]


@dataclass(slots=True)
class NormalizedBatch:
    """Rows from one OTLP request. ``rejected`` spans gave no row; ``errors`` says why (and notes kept-but-fixed
    spans, such as an out-of-range token count); ``redactions`` counts replaced entities in stored content."""

    llm_calls: list[LlmCallRow]
    spans: list[SpanRow]
    prompt_logs: list[PromptLogRow]
    rejected: int
    errors: list[str]
    redactions: dict[str, int] = field(default_factory=dict)


class Errors:
    """Error messages of one batch: the first MAX_ERRORS, then a count of the rest."""

    __slots__ = ("messages", "overflow")

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.overflow = 0

    def add(self, message: str) -> None:
        if len(self.messages) < MAX_ERRORS:
            self.messages.append(message)
        else:
            self.overflow += 1

    def finish(self) -> list[str]:
        if self.overflow:
            self.messages.append(f"... and {self.overflow} more")
        return self.messages


class Batch:
    """What every span of one normalize() call shares: options, readers for the input type, and the output.
    ``scrubber`` redacts (and hashes user ids in) every text stored outside prompt logs; ``text(s)`` is its
    memoised redaction of one text, ``texts(tuple)`` of a row's text columns at once, counted."""

    __slots__ = (
        "project_id", "capture", "redactor", "scrubber", "scan", "read", "text", "texts", "oldest_ns", "newest_ns",
        "retention_days", "llm_calls", "spans", "prompt_logs", "errors", "redactions", "price",
    )  # fmt: skip

    def __init__(self, project_id: str, capture: bool, redactor: Redactor, fast: bool, now_ns: int,
                 retention_days: int, price: Pricer | None, hasher: UserHasher | None = None) -> None:  # fmt: skip
        self.project_id = project_id
        self.price = price
        self.capture = capture
        self.redactor = redactor
        self.redactions: dict[str, int] = {}
        self.scrubber = scrubber = scrubber_for(redactor, hasher)
        # scan(attributes, capture): what the attributes map keeps is redacted or hashed, and counted
        self.scan = partial(scan_fast if fast else scan_standard, scrubber=scrubber, totals=self.redactions)
        self.read = partial(read_fast if fast else read_standard, scrubber=scrubber)
        self.text = partial(scrubber.text, totals=self.redactions)
        self.texts = partial(scrubber.texts, totals=self.redactions)
        self.oldest_ns = now_ns - retention_days * 86_400_000_000_000
        self.newest_ns = now_ns + MAX_FUTURE_SECONDS * 1_000_000_000
        self.retention_days = retention_days
        self.llm_calls: list[LlmCallRow] = []
        self.spans: list[SpanRow] = []
        self.prompt_logs: list[PromptLogRow] = []
        self.errors = Errors()

    def result(self, rejected: int) -> NormalizedBatch:
        return NormalizedBatch(self.llm_calls, self.spans, self.prompt_logs, rejected, self.errors.finish(),
                               self.redactions)  # fmt: skip
