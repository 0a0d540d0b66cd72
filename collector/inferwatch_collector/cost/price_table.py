"""The price table: a bundled, pinned list of model prices, user overrides, and model-name resolution.

Why a bundled table: a cost must be reproducible, so prices are never fetched at run time. The bundled
file ``prices.json`` beside this module uses the field names of LiteLLM's ``model_prices_and_context_window.json``
(USD per token) so LiteLLM's file can be imported as is (:func:`import_litellm`) and entries can be compared side by side.

A table has a ``price_version``. Every priced row is stamped with it, so a report can say which prices it used and
a recompute job can find the rows a price change touches. A user price file (JSON or YAML) overrides or adds
models; the combined table's version is ``<bundled version>+<first 12 hex of the user file's sha256>``, so editing
either file changes the version.

User file format, either flat (``{"my-model": {...}, ...}``) or structured (``{"models": {...}, "aliases":
{...}}``). An entry replaces the bundled entry of the same name *whole* (what you write is what is charged: a
half-merged entry could keep a list cache rate under a negotiated input rate). Self-hosted models can be priced by
the GPU-hour instead of per token::

    {"my-llama": {"gpu_hour_usd": 3.5, "gpus": 4, "output_tokens_per_s": 2500}}

is converted to ``output_cost_per_token = gpu_hour_usd × gpus ÷ (3600 × output_tokens_per_s)`` = 14 ÷ 9,000,000 =
$1.5556 per 1M output tokens: the fleet's hourly cost spread over the output tokens it produces in an hour at the
given aggregate decode throughput. Prompt processing runs on the same GPUs in the same hours, so input tokens
cost 0 unless the entry also gives ``input_cost_per_token``.

Model names resolve deterministically, first hit wins: the name as given; lowercased; with known provider prefixes
removed (``openai/``, ``azure/``, ``bedrock/``, ``vertex_ai/``, ``openrouter/anthropic/``, Bedrock's ``us.``
region and ``anthropic.`` vendor prefixes, ...); then, on each of those, snapshot suffixes removed one at a time
(``-2024-08-06``, ``-20241022``, ``@20250514``, ``-latest``, Bedrock's ``-v2:0``, Google's ``-001``). Every name
is also looked up among the table's explicit ``aliases``. Four-digit suffixes (``mistral-large-2411``,
``gpt-4-0613``) are versions, not dates, and older versions had other prices, so they resolve only through
aliases. Prefixes of self-hosting servers (``ollama/``, ``hosted_vllm/``) are deliberately not stripped: a
self-hosted model must not be charged an API's price.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

BUNDLED_PATH = Path(__file__).with_name("prices.json")

#: Rates are held as exact integers in units of 1e-18 USD per token (a price written with more decimals than
#: that is rounded half-even: the error is below $1e-9 per billion tokens).
ATTO = 10**18
PICO_IN_ATTO = 10**6

INPUT = "input_cost_per_token"
OUTPUT = "output_cost_per_token"
CACHE_READ = "cache_read_input_token_cost"
CACHE_WRITE = "cache_creation_input_token_cost"
CACHE_WRITE_1H = "cache_creation_input_token_cost_above_1hr"
REASONING = "output_cost_per_reasoning_token"

#: Rate fields that have long-context variants (``<field>_above_<N>k_tokens``).
TIERED_FIELDS = (INPUT, OUTPUT, CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H)
#: Long-context thresholds LiteLLM's file uses; a tier applies when the prompt (input incl. cache) exceeds it.
TIER_THRESHOLDS = {"128k": 128_000, "200k": 200_000, "256k": 256_000, "272k": 272_000}


def tier_field(field: str, tag: str) -> str:
    """LiteLLM's name for ``field`` above a prompt-size threshold (``input_cost_per_token_above_200k_tokens``)."""
    return f"{field}_above_{tag}_tokens"


RATE_FIELDS = frozenset(
    (INPUT, OUTPUT, CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H, REASONING)
    + tuple(tier_field(f, tag) for f in TIERED_FIELDS for tag in TIER_THRESHOLDS)
)
TEXT_FIELDS = frozenset(("litellm_provider", "mode"))
COUNT_FIELDS = frozenset(("max_input_tokens", "max_output_tokens", "max_tokens"))
GPU_FIELDS = ("gpu_hour_usd", "gpus", "output_tokens_per_s")
KNOWN_FIELDS = RATE_FIELDS | TEXT_FIELDS | COUNT_FIELDS | frozenset(GPU_FIELDS)
#: Top-level keys of a structured price file besides the models.
DOCUMENT_KEYS = frozenset(("models", "aliases", "price_version", "source"))
#: LiteLLM modes whose calls are priced per token; other modes (images, audio, rerank, ...) are left out on import.
TOKEN_MODES = frozenset(("chat", "completion", "responses", "embedding"))

PROVIDER_PREFIXES = frozenset((
    "openai", "azure", "azure_ai", "anthropic", "bedrock", "bedrock_converse", "converse", "invoke", "vertex_ai",
    "vertex_ai_beta", "vertex_ai-language-models", "gemini", "google", "models", "mistral", "mistralai", "groq",
    "together_ai", "together", "fireworks_ai", "openrouter", "deepinfra", "meta", "meta_llama", "litellm_proxy",
    "text-completion-openai",
))
BEDROCK_REGIONS = frozenset(("us", "eu", "apac", "jp", "au", "ca", "us-gov", "global"))
BEDROCK_VENDORS = frozenset(("anthropic", "meta", "mistral", "amazon", "cohere", "ai21"))
_SNAPSHOT_SUFFIXES = (
    re.compile(r"@[0-9a-z.-]+$"),  # Vertex: claude-sonnet-4@20250514
    re.compile(r"-v\d+(?::\d+)?$|:\d+$"),  # Bedrock: -v2:0, or a bare :0
    re.compile(r"-latest$"),
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # OpenAI: -2024-08-06
    re.compile(r"-\d{8}$"),  # Anthropic: -20241022
    re.compile(r"-\d{3}$"),  # Google stable versions: -001, -002
)
_MEMO_LIMIT = 65_536
_DECIMAL = Context(prec=60)


class PriceFileError(ValueError):
    """A price file that cannot be used; the message names the file, the model and the field."""


@dataclass(frozen=True, slots=True)
class Rates:
    """Effective per-token rates with every default applied, as exact integers of ``unit`` × 1e-18 USD.

    ``unit`` is 1,000,000 (rates in 1e-12 USD) when every rate is a whole number of 1e-12 USD per token — true of
    every list price, which has at most six decimals per 1M tokens — so a call's cost is an exact product with
    nothing to round; otherwise it is 1 (rates in 1e-18 USD, e.g. a GPU-hour price) and costs are rounded to
    1e-12 USD. ``saving`` is ``input − cache_read``: what each cached read saves.
    """

    input: int
    cache_read: int
    cache_write: int
    cache_write_1h: int
    output: int
    reasoning: int
    saving: int
    unit: int


@dataclass(frozen=True, eq=False)
class ModelPrice:
    """One model's prices: the fields as written (USD per token) and the compiled :class:`Rates`.

    Defaults, because a missing rate must never price tokens as free: cache read and cache write default to the
    input rate, the 1-hour cache write to the 5-minute write rate (the nearer of the two: it is the write rate
    that has the 1-hour variant), reasoning to the output rate. In a long-context tier a rate the table does not
    give for that tier keeps its base value (or, for a cache rate the table never gives, the tier's input rate).
    """

    name: str
    provider: str
    mode: str
    max_input_tokens: int | None
    max_output_tokens: int | None
    fields: Mapping[str, Decimal]
    base: Rates
    tiers: tuple[tuple[int, Rates], ...]  # (threshold, rates), highest threshold first
    source: str

    def rates_for(self, prompt_tokens: int) -> Rates:
        """The rates that apply to a call whose prompt (input incl. cache tokens) has ``prompt_tokens`` tokens."""
        for threshold, rates in self.tiers:
            if prompt_tokens > threshold:
                return rates
        return self.base


class PriceTable:
    """An immutable price table with memoised name resolution.

    :meth:`lookup` runs for every ingested call, so the first lookup of a name walks the resolution rules and
    every later one is a single dict hit (the memo is bounded: past 65,536 distinct names it starts over).
    """

    def __init__(self, version: str, models: Mapping[str, ModelPrice], aliases: Mapping[str, str]) -> None:
        self.version = version
        self.models: Mapping[str, ModelPrice] = MappingProxyType(dict(models))
        self.aliases: Mapping[str, str] = MappingProxyType(dict(aliases))
        index = {alias.lower(): target for alias, target in aliases.items()}
        index.update({name.lower(): name for name in models})
        self._index = index
        self._memo: dict[str, ModelPrice | None] = {}

    def __repr__(self) -> str:
        return f"PriceTable(version={self.version!r}, models={len(self.models)}, aliases={len(self.aliases)})"

    def lookup(self, name: str) -> ModelPrice | None:
        """The price of the model called ``name``, or None when no rule resolves it (the call is unpriced)."""
        price = self._memo.get(name, _MISSING)
        if price is _MISSING:
            canonical = self._resolve(name)
            price = None if canonical is None else self.models[canonical]
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[name] = price
        return price  # type: ignore[return-value]

    def resolve(self, name: str) -> str | None:
        """The table's name for ``name`` (see the module docstring for the rules), or None."""
        price = self.lookup(name)
        return None if price is None else price.name

    def _resolve(self, name: str) -> str | None:
        if not isinstance(name, str) or not name.strip():
            return None
        if name in self.models:
            return name
        index = self._index
        for candidate in candidate_names(name):
            found = index.get(candidate)
            if found is not None:
                return found
        return None


_MISSING: Any = object()


def candidate_names(name: str) -> Iterator[str]:
    """The names tried for ``name``, most specific first: prefix forms before any snapshot suffix is removed, so
    an exact snapshot entry (``gpt-4o-2024-05-13``, priced unlike ``gpt-4o``) always beats the stripped name."""
    low = name.strip().lower()
    forms = [low]
    rest = low
    while "/" in rest:
        head, tail = rest.split("/", 1)
        if head not in PROVIDER_PREFIXES or not tail:
            break
        rest = tail
        forms.append(rest)
    for form in list(forms):
        head, _, tail = form.partition(".")
        if tail and head in BEDROCK_REGIONS:
            form = tail
            forms.append(form)
            head, _, tail = form.partition(".")
        if tail and head in BEDROCK_VENDORS:
            forms.append(tail)
    yield from forms
    for form in forms:
        current = form
        stripped = True
        while stripped:
            stripped = False
            for pattern in _SNAPSHOT_SUFFIXES:
                shorter = pattern.sub("", current)
                if shorter != current and shorter:
                    current = shorter
                    stripped = True
                    yield current
                    break


# --- parsing and validation --------------------------------------------------------------------------------------
def _rate(value: Any, where: str, field: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise PriceFileError(f"{where}: field {field!r}: {value!r} is not a number")
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        raise PriceFileError(f"{where}: field {field!r}: {value!r} is not a number") from None
    if not number.is_finite():
        raise PriceFileError(f"{where}: field {field!r}: {value!r} is not a finite number")
    if number < 0:
        shown = str(value) if isinstance(value, Decimal) else repr(value)
        raise PriceFileError(f"{where}: field {field!r}: {shown} is negative")
    return number


def _count(value: Any, where: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        if isinstance(value, float) and value.is_integer() and value >= 0:
            return int(value)
        raise PriceFileError(f"{where}: field {field!r}: {value!r} is not a non-negative whole number")
    return value


def gpu_hour_cost_per_token(gpu_hour_usd: Decimal | float | str, gpus: Decimal | float | str,
                            output_tokens_per_s: Decimal | float | str) -> Decimal:
    """USD per output token of a self-hosted fleet: ``gpu_hour_usd × gpus ÷ (3600 × output_tokens_per_s)``."""
    where = "gpu-hour price"
    hourly = _rate(gpu_hour_usd, where, "gpu_hour_usd") * _rate(gpus, where, "gpus")
    return _DECIMAL.divide(hourly, Decimal(3600) * _rate(output_tokens_per_s, where, "output_tokens_per_s"))


def _atto(value: Decimal) -> int:
    return int(_DECIMAL.multiply(value, Decimal(ATTO)).to_integral_value(ROUND_HALF_EVEN))


def _compile(fields: Mapping[str, Decimal]) -> tuple[Rates, tuple[tuple[int, Rates], ...]]:
    def rates(tag: str | None) -> Rates:
        def get(field: str) -> Decimal | None:
            if tag is not None and tier_field(field, tag) in fields:
                return fields[tier_field(field, tag)]
            return fields.get(field)

        input_rate = get(INPUT) or Decimal(0)
        output_rate = get(OUTPUT) or Decimal(0)
        write = get(CACHE_WRITE)
        write = input_rate if write is None else write
        read = get(CACHE_READ)
        write_1h = get(CACHE_WRITE_1H)
        reasoning = fields.get(REASONING)
        atto = [_atto(input_rate), _atto(input_rate if read is None else read), _atto(write),
                _atto(write if write_1h is None else write_1h), _atto(output_rate),
                _atto(output_rate if reasoning is None else reasoning)]
        unit = PICO_IN_ATTO if all(value % PICO_IN_ATTO == 0 for value in atto) else 1
        values = [value // unit for value in atto]
        return Rates(*values, saving=values[0] - values[1], unit=unit)

    tags = sorted({tag for tag in TIER_THRESHOLDS for f in TIERED_FIELDS if tier_field(f, tag) in fields},
                  key=TIER_THRESHOLDS.__getitem__, reverse=True)
    return rates(None), tuple((TIER_THRESHOLDS[tag], rates(tag)) for tag in tags)


def parse_entry(name: Any, entry: Any, source: str) -> ModelPrice:
    """Validate one model entry and compile its rates; :class:`PriceFileError` names file, model and field."""
    if not isinstance(name, str) or not name.strip():
        raise PriceFileError(f"{source}: model name {name!r} is not a non-empty string")
    where = f"{source}: model {name!r}"
    if not isinstance(entry, Mapping):
        raise PriceFileError(f"{where}: the entry is not a mapping of fields")
    fields: dict[str, Decimal] = {}
    text: dict[str, str] = {}
    counts: dict[str, int] = {}
    gpu: dict[str, Decimal] = {}
    for field, value in entry.items():
        if field not in KNOWN_FIELDS:
            hint = (" (a LiteLLM file? convert it with `inferwatch-server prices import`)"
                    if isinstance(field, str) and field.startswith("supports_") else "")
            raise PriceFileError(f"{where}: unknown field {field!r}{hint}")
        if field in RATE_FIELDS:
            fields[field] = _rate(value, where, field)
        elif field in TEXT_FIELDS:
            if not isinstance(value, str):
                raise PriceFileError(f"{where}: field {field!r}: {value!r} is not a string")
            text[field] = value
        elif field in COUNT_FIELDS:
            counts[field] = _count(value, where, field)
        else:
            gpu[field] = _rate(value, where, field)
    mode = text.get("mode", "chat")
    if gpu:
        missing = [f for f in GPU_FIELDS if f not in gpu]
        if missing:
            raise PriceFileError(f"{where}: field {missing[0]!r} is missing (GPU-hour pricing needs "
                                 f"{', '.join(GPU_FIELDS)})")
        if OUTPUT in fields:
            raise PriceFileError(f"{where}: field {OUTPUT!r} conflicts with GPU-hour pricing "
                                 "(give one or the other)")
        for field in ("gpus", "output_tokens_per_s"):
            if gpu[field] == 0:
                raise PriceFileError(f"{where}: field {field!r} must be greater than 0")
        fields[OUTPUT] = gpu_hour_cost_per_token(gpu["gpu_hour_usd"], gpu["gpus"], gpu["output_tokens_per_s"])
        fields.setdefault(INPUT, Decimal(0))
    if INPUT not in fields:
        raise PriceFileError(f"{where}: field {INPUT!r} is missing")
    if OUTPUT not in fields and mode != "embedding":
        raise PriceFileError(f"{where}: field {OUTPUT!r} is missing")
    base, tiers = _compile(fields)
    return ModelPrice(
        name=name, provider=text.get("litellm_provider", "self-hosted" if gpu else ""), mode=mode,
        max_input_tokens=counts.get("max_input_tokens", counts.get("max_tokens")),
        max_output_tokens=counts.get("max_output_tokens"),
        fields=MappingProxyType(fields), base=base, tiers=tiers, source=source,
    )


def _split_document(doc: Any, source: str) -> tuple[Mapping[str, Any], Mapping[str, Any], Any]:
    """(models, aliases, price_version) of a structured or flat price document."""
    if not isinstance(doc, Mapping):
        raise PriceFileError(f"{source}: the file is not a mapping of models")
    if isinstance(doc.get("models"), Mapping):
        unknown = [key for key in doc if key not in DOCUMENT_KEYS]
        if unknown:
            raise PriceFileError(f"{source}: unknown top-level key {unknown[0]!r} "
                                 f"(expected {', '.join(sorted(DOCUMENT_KEYS))})")
        aliases = doc.get("aliases") or {}
        if not isinstance(aliases, Mapping):
            raise PriceFileError(f"{source}: 'aliases' is not a mapping of alias -> model")
        return doc["models"], aliases, doc.get("price_version")
    return doc, {}, None


def _parse_models(models: Mapping[str, Any], source: str) -> dict[str, ModelPrice]:
    parsed: dict[str, ModelPrice] = {}
    seen: dict[str, str] = {}
    for name, entry in models.items():
        price = parse_entry(name, entry, source)
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise PriceFileError(f"{source}: model {name!r}: same name as {other!r} but for case "
                                 "(names are matched case-insensitively)")
        parsed[name] = price
    return parsed


def _check_aliases(aliases: Mapping[Any, Any], models: Mapping[str, ModelPrice], source: str) -> dict[str, str]:
    names = {name.lower() for name in models}
    by_lower = {name.lower(): name for name in models}
    checked: dict[str, str] = {}
    for alias, target in aliases.items():
        if not isinstance(alias, str) or not alias.strip() or not isinstance(target, str):
            raise PriceFileError(f"{source}: alias {alias!r} -> {target!r}: both must be non-empty strings")
        if alias.lower() in names:
            raise PriceFileError(f"{source}: alias {alias!r} is a model in the table (override its entry instead)")
        if target.lower() not in by_lower:
            raise PriceFileError(f"{source}: alias {alias!r} points at {target!r}, "
                                 "which is not a model in the table")
        checked[alias] = by_lower[target.lower()]
    return checked


def read_price_file(path: str | Path) -> tuple[Any, bytes]:
    """The parsed document and raw bytes of a JSON or YAML price file (YAML by suffix ``.yaml``/``.yml``).

    JSON numbers are read as :class:`~decimal.Decimal` so a price is exactly the decimal written in the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PriceFileError(f"{path}: cannot read the price file: {exc.strerror or exc}") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:  # pragma: no cover - PyYAML ships with uvicorn[standard]
            raise PriceFileError(f"{path}: reading YAML needs PyYAML (or write the file as JSON)") from None
        try:
            return yaml.safe_load(raw), raw
        except yaml.YAMLError as exc:
            raise PriceFileError(f"{path}: not valid YAML: {exc}") from None
    try:
        return json.loads(raw, parse_float=Decimal), raw
    except (ValueError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"{path}: not valid JSON: {exc}") from None


def parse_table(doc: Any, source: str) -> PriceTable:
    """A complete table from a structured document with a ``price_version`` (the bundled file's shape)."""
    models, aliases, version = _split_document(doc, source)
    if not isinstance(version, str) or not version.strip():
        raise PriceFileError(f"{source}: 'price_version' is missing or not a non-empty string")
    parsed = _parse_models(models, source)
    return PriceTable(version, parsed, _check_aliases(aliases, parsed, source))


def with_overrides(base: PriceTable, doc: Any, raw: bytes, source: str) -> PriceTable:
    """``base`` with the user document's models and aliases laid over it; version ``<base>+<sha256[:12]>``."""
    models, aliases, _ = _split_document(doc, source)
    user = _parse_models(models, source)
    user_names = {name.lower() for name in user}
    merged = {name: price for name, price in base.models.items() if name.lower() not in user_names}
    merged.update(user)
    by_lower = {name.lower(): name for name in merged}  # a bundled alias follows its model when a user renames it
    kept = {alias: by_lower[target.lower()] for alias, target in base.aliases.items()
            if alias.lower() not in user_names and target.lower() in by_lower}
    kept.update(_check_aliases(aliases, merged, source))
    digest = hashlib.sha256(raw).hexdigest()[:12]
    return PriceTable(f"{base.version}+{digest}", merged, kept)


@lru_cache(maxsize=1)
def bundled_table() -> PriceTable:
    """The pinned table shipped with the collector (parsed once per process)."""
    doc, _ = read_price_file(BUNDLED_PATH)
    return parse_table(doc, f"bundled {BUNDLED_PATH.name}")


def load_table(user_file: str | Path | None = None) -> PriceTable:
    """The bundled table, with the user price file at ``user_file`` laid over it when one is given."""
    base = bundled_table()
    if user_file is None or str(user_file) == "":
        return base
    doc, raw = read_price_file(user_file)
    return with_overrides(base, doc, raw, str(user_file))


# --- LiteLLM import ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_litellm` kept, what it left out and why (reason -> count)."""

    models: Mapping[str, Mapping[str, Any]]
    skipped: Mapping[str, int]
    out: Path | None

    @property
    def imported(self) -> int:
        return len(self.models)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def _json_number(value: Any) -> Any:
    """A Decimal as the JSON number LiteLLM wrote when a float carries it exactly, else as a decimal string."""
    if isinstance(value, Decimal):
        as_float = float(value)
        return as_float if math.isfinite(as_float) and Decimal(repr(as_float)) == value else str(value)
    return value


def import_litellm(path: str | Path, out: str | Path | None = None) -> ImportResult:
    """Convert LiteLLM's ``model_prices_and_context_window.json`` to a user price file (written to ``out``).

    Kept: entries whose mode is priced per token (chat, completion, responses, embedding; or no mode) and that
    carry per-token prices, reduced to the fields this table knows. Left out, counted by reason: other modes
    (images, audio, rerank, ...), entries without per-token prices, entries that fail validation, and names that
    differ from an earlier one only by case. ``sample_spec`` (LiteLLM's schema example) is not a model.
    """
    source = str(path)
    doc, _ = read_price_file(path)
    if not isinstance(doc, Mapping):
        raise PriceFileError(f"{source}: not a LiteLLM price file (expected a mapping of model -> entry)")
    kept: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for name, entry in doc.items():
        if name == "sample_spec":
            continue
        if not isinstance(entry, Mapping):
            skip("not an entry")
            continue
        mode = entry.get("mode", "chat")
        if mode not in TOKEN_MODES:
            skip(f"mode {mode}")
            continue
        if INPUT not in entry and OUTPUT not in entry:
            skip("no per-token price")
            continue
        fields = {key: value for key, value in entry.items() if key in KNOWN_FIELDS and key not in GPU_FIELDS}
        try:
            parse_entry(name, fields, source)
        except PriceFileError:
            skip("invalid entry")
            continue
        if name.lower() in seen:
            skip("duplicate name (case)")
            continue
        seen.add(name.lower())
        kept[name] = {key: _json_number(value) for key, value in sorted(fields.items())}
    target = None
    if out is not None:
        target = Path(out)
        document = {"source": f"imported from {Path(path).name} (LiteLLM format)", "models": kept}
        target.write_text(json.dumps(document, indent=2) + "\n")
    return ImportResult(models=MappingProxyType(kept), skipped=MappingProxyType(skipped), out=target)


def per_million(value: Decimal) -> Decimal:
    """USD per 1M tokens for a per-token price (for display)."""
    return _DECIMAL.multiply(value, Decimal(1_000_000))
