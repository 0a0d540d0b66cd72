"""The price table: the bundled file, name resolution, user files and their validation, LiteLLM import, CLI."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from inferwatch_collector.cost import price_table as prices
from inferwatch_collector.cost.price_table import (
    BUNDLED_PATH,
    PriceFileError,
    bundled_table,
    import_litellm,
    load_table,
    parse_table,
)
from inferwatch_server.cli import main

LITELLM_FIELDS = {
    "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
    "cache_creation_input_token_cost", "cache_creation_input_token_cost_above_1hr",
    "output_cost_per_reasoning_token", "input_cost_per_token_above_200k_tokens",
    "output_cost_per_token_above_200k_tokens", "cache_read_input_token_cost_above_200k_tokens",
    "cache_creation_input_token_cost_above_200k_tokens",
    "cache_creation_input_token_cost_above_1hr_above_200k_tokens",
    "input_cost_per_token_above_128k_tokens", "output_cost_per_token_above_128k_tokens",
    "cache_read_input_token_cost_above_128k_tokens", "litellm_provider", "max_input_tokens", "max_output_tokens",
    "mode",
}


# --- the bundled table -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, resolved", [
    ("gpt-4o", "gpt-4o"), ("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("gpt-4.1", "gpt-4.1"), ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"), ("gpt-4.1-nano", "gpt-4.1-nano"),
    ("o1-2024-12-17", "o1"), ("o3", "o3"), ("o3-mini-2025-01-31", "o3-mini"), ("o4-mini-2025-04-16", "o4-mini"),
    ("gpt-5-2025-08-07", "gpt-5"), ("gpt-5-mini", "gpt-5-mini"), ("gpt-5-nano", "gpt-5-nano"),
    ("azure/gpt-35-turbo", "gpt-3.5-turbo"),
    ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"), ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
    ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"), ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"), ("claude-sonnet-4-0", "claude-sonnet-4"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"), ("claude-opus-4-20250514", "claude-opus-4"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"), ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
    ("bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
    ("vertex_ai/claude-sonnet-4@20250514", "claude-sonnet-4"),
    ("openrouter/anthropic/claude-3.7-sonnet", "claude-3-7-sonnet"),
    ("gemini-1.5-pro-002", "gemini-1.5-pro"), ("gemini-1.5-flash", "gemini-1.5-flash"),
    ("gemini-2.0-flash-001", "gemini-2.0-flash"), ("gemini/gemini-2.5-pro", "gemini-2.5-pro"),
    ("models/gemini-2.5-flash", "gemini-2.5-flash"), ("gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"),
    ("mistral-large-latest", "mistral-large"), ("mistral/mistral-small-2503", "mistral-small"),
    ("codestral-latest", "codestral"), ("bedrock/mistral.mistral-large-2407-v1:0", "mistral-large"),
    ("meta.llama3-1-70b-instruct-v1:0", "meta.llama3-1-70b-instruct-v1:0"),
    ("us.meta.llama3-3-70b-instruct-v1:0", "meta.llama3-3-70b-instruct-v1:0"),
    ("meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo", "together_ai/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo"),
    ("llama-3.3-70b-versatile", "groq/llama-3.3-70b-versatile"),
])
def test_bundled_table_resolves_current_models(name, resolved):
    assert bundled_table().resolve(name) == resolved


@pytest.mark.parametrize("name", [
    "ollama/llama3.1:70b",  # a self-hosted server's prefix is never stripped to an API price
    "hosted_vllm/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo",
    "codestral-2405",  # a four-digit version resolves only through an explicit alias (2405 had another price)
    "my-company/finetune-v3", "", "   ",
])
def test_names_that_must_stay_unpriced(name):
    assert bundled_table().resolve(name) is None


def test_an_exact_snapshot_entry_beats_the_stripped_name():
    table = bundled_table()
    assert table.resolve("gpt-4o-2024-05-13") == "gpt-4o-2024-05-13"
    assert table.lookup("gpt-4o-2024-05-13").fields["input_cost_per_token"] == Decimal("5e-06")
    assert table.lookup("gpt-4o-2024-08-06").fields["input_cost_per_token"] == Decimal("2.5e-06")


def test_bundled_file_uses_litellm_field_names_and_has_a_price_version():
    doc = json.loads(BUNDLED_PATH.read_text())
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}\.\d+", doc["price_version"])
    assert set(doc) == {"price_version", "source", "models", "aliases"}
    used = {field for entry in doc["models"].values() for field in entry}
    assert used <= LITELLM_FIELDS, used - LITELLM_FIELDS
    assert bundled_table().version == doc["price_version"]


def test_bundled_prices_keep_the_providers_structure():
    """Typo guards: ratios every provider publishes, and the long-context tiers the issue names."""
    table = bundled_table()
    for price in table.models.values():
        assert price.provider and price.mode in {"chat", "embedding"}
        fields = price.fields
        if price.provider == "anthropic" and price.name != "claude-3-haiku":  # Haiku 3: $0.03 read, $0.30 write
            assert fields["cache_read_input_token_cost"] == fields["input_cost_per_token"] / 10
            assert fields["cache_creation_input_token_cost"] == fields["input_cost_per_token"] * Decimal("1.25")
            assert fields["cache_creation_input_token_cost_above_1hr"] == fields["input_cost_per_token"] * 2
        if price.provider == "openai" and "cache_read_input_token_cost" in fields:
            assert fields["cache_read_input_token_cost"] <= fields["input_cost_per_token"] / 2
    for name in ("claude-sonnet-4", "claude-sonnet-4-5", "gemini-2.5-pro"):
        assert [threshold for threshold, _ in table.lookup(name).tiers] == [200_000]
    sonnet = table.lookup("claude-sonnet-4").fields
    assert sonnet["input_cost_per_token_above_200k_tokens"] == Decimal("6e-06")
    assert sonnet["output_cost_per_token_above_200k_tokens"] == Decimal("2.25e-05")
    assert table.lookup("gpt-4o").fields["cache_read_input_token_cost"] == Decimal("1.25e-06")
    providers = {price.provider for price in table.models.values()}
    assert {"openai", "anthropic", "gemini", "mistral", "together_ai", "groq", "bedrock"} <= providers


def test_resolution_is_memoised(monkeypatch):
    table = parse_table({"price_version": "t", "models": {"m": {"input_cost_per_token": 1,
                                                                 "output_cost_per_token": 1}}}, "t")
    assert table.resolve("openai/M-latest") == "m"
    monkeypatch.setattr(table, "_resolve", lambda name: pytest.fail("resolved twice"))
    assert table.resolve("openai/M-latest") == "m"
    assert table.lookup("openai/M-latest") is table.models["m"]


def test_resolution_is_deterministic_across_tables():
    names = ["gpt-4o-2024-08-06", "us.anthropic.claude-sonnet-4-20250514-v1:0", "mistral-large-latest", "nope"]
    first = [bundled_table().resolve(n) for n in names]
    again = parse_table(json.loads(BUNDLED_PATH.read_text(), parse_float=Decimal), "copy")
    assert [again.resolve(n) for n in names] == first


# --- user files and validation -----------------------------------------------------------------------------------
def write(tmp_path: Path, doc, name: str = "user.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


@pytest.mark.parametrize("entry, message", [
    ({"input_cost_per_token": "-1e-06", "output_cost_per_token": 1e-06},
     "field 'input_cost_per_token': '-1e-06' is negative"),
    ({"input_cost_per_token": 1e-06, "output_cost_per_token": -0.5},
     "field 'output_cost_per_token': -0.5 is negative"),
    ({"input_cost_per_token": "cheap", "output_cost_per_token": 1e-06},
     "field 'input_cost_per_token': 'cheap' is not a number"),
    ({"input_cost_per_token": True, "output_cost_per_token": 1e-06}, "is not a number"),
    ({"input_cost_per_token": "NaN", "output_cost_per_token": 1e-06}, "is not a finite number"),
    ({"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06, "input_cost": 1},
     "unknown field 'input_cost'"),
    ({"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06, "supports_vision": True},
     "prices import"),
    ({"input_cost_per_token": 1e-06}, "field 'output_cost_per_token' is missing"),
    ({"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06, "max_input_tokens": -5},
     "field 'max_input_tokens'"),
    ({"gpu_hour_usd": 2, "gpus": 1}, "field 'output_tokens_per_s' is missing"),
    ({"gpu_hour_usd": 2, "gpus": 1, "output_tokens_per_s": 0}, "'output_tokens_per_s' must be greater than 0"),
    ({"gpu_hour_usd": 2, "gpus": 1, "output_tokens_per_s": 9, "output_cost_per_token": 1}, "conflicts"),
    ("not a mapping", "not a mapping of fields"),
])
def test_invalid_entries_name_file_model_and_field(tmp_path, entry, message):
    path = write(tmp_path, {"my-model": entry})
    with pytest.raises(PriceFileError) as info:
        load_table(path)
    assert str(path) in str(info.value) and "'my-model'" in str(info.value)
    assert message in str(info.value)


@pytest.mark.parametrize("doc, message", [
    ({"models": {}, "aliases": {"x": "no-such-model"}}, "alias 'x' points at 'no-such-model'"),
    ({"models": {}, "aliases": {"gpt-4o": "o3"}}, "alias 'gpt-4o' is a model in the table"),
    ({"models": {}, "extra": 1}, "unknown top-level key 'extra'"),
    ({"A": {"input_cost_per_token": 1, "output_cost_per_token": 1},
      "a": {"input_cost_per_token": 1, "output_cost_per_token": 1}}, "but for case"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a mapping of models"),
])
def test_invalid_files_are_refused_with_the_reason(tmp_path, doc, message):
    path = write(tmp_path, doc)
    with pytest.raises(PriceFileError, match=re.escape(message)):
        load_table(path)


def test_missing_user_file_is_an_error_not_a_silent_bundled_table(tmp_path):
    with pytest.raises(PriceFileError, match="cannot read the price file"):
        load_table(tmp_path / "absent.json")


def test_user_file_overrides_whole_entries_adds_models_and_aliases(tmp_path):
    path = write(tmp_path, {
        "models": {"GPT-4o": {"input_cost_per_token": "2e-06", "output_cost_per_token": "8e-06"},
                   "my-llama": {"gpu_hour_usd": 3.5, "gpus": 4, "output_tokens_per_s": 2500}},
        "aliases": {"llama-prod": "my-llama"},
    })
    table = load_table(path)
    bundled = bundled_table()
    assert table.version.startswith(bundled.version + "+") and len(table.version) == len(bundled.version) + 13
    gpt = table.lookup("gpt-4o-2024-08-06")
    assert gpt.name == "GPT-4o" and "cache_read_input_token_cost" not in gpt.fields  # replaced whole
    llama = table.lookup("llama-prod")
    assert llama.provider == "self-hosted"
    assert abs(llama.fields["output_cost_per_token"] * 9_000_000 - 14) < Decimal("1e-40")  # $14 / 9M tokens
    assert len(table.models) == len(bundled.models) + 1
    assert table.resolve("claude-sonnet-4-0") == "claude-sonnet-4"  # bundled aliases survive
    assert load_table(write(tmp_path, {"Claude-Sonnet-4": {"input_cost_per_token": 1, "output_cost_per_token": 1}},
                            "renamed.json")).resolve("claude-sonnet-4-0") == "Claude-Sonnet-4"  # and follow a rename
    assert bundled_table().lookup("gpt-4o").fields["input_cost_per_token"] == Decimal("2.5e-06")  # untouched


def test_user_model_named_like_a_bundled_alias_takes_the_name(tmp_path):
    path = write(tmp_path, {"claude-sonnet-4-0": {"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06}})
    assert load_table(path).resolve("claude-sonnet-4-0") == "claude-sonnet-4-0"


def test_yaml_user_file(tmp_path):
    path = write(tmp_path, "models:\n  house-model:\n    input_cost_per_token: 1.0e-06\n"
                           "    output_cost_per_token: '2e-06'\naliases:\n  house: house-model\n", "p.yaml")
    price = load_table(path).lookup("house")
    assert price.fields["input_cost_per_token"] == Decimal("1e-06")
    assert price.fields["output_cost_per_token"] == Decimal("2e-06")


def test_gpu_hour_conversion():
    # $2.40/h x 8 GPUs / (3,600 s x 4,000 tokens/s) = $19.20 / 14,400,000 tokens = $1.3333.../M tokens
    per_token = prices.gpu_hour_cost_per_token("2.40", 8, 4000)
    assert abs(per_token * 14_400_000 - Decimal("19.20")) < Decimal("1e-40")


# --- LiteLLM import ----------------------------------------------------------------------------------------------
LITELLM_DOC = """{
  "sample_spec": {"input_cost_per_token": 0.0, "litellm_provider": "one of ...", "max_input_tokens": "max input"},
  "gpt-4o": {"cache_read_input_token_cost": 1.25e-06, "input_cost_per_token": 2.5e-06,
             "litellm_provider": "openai", "max_input_tokens": 128000, "max_output_tokens": 16384,
             "max_tokens": 16384,
             "mode": "chat", "output_cost_per_token": 1e-05, "supports_vision": true,
             "input_cost_per_token_batches": 1.25e-06},
  "claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
             "cache_creation_input_token_cost_above_1hr": 6e-06,
             "input_cost_per_token_above_200k_tokens": 6e-06, "litellm_provider": "anthropic", "mode": "chat"},
  "text-embedding-3-small": {"input_cost_per_token": 2e-08, "litellm_provider": "openai", "mode": "embedding",
                             "output_cost_per_token": 0.0},
  "dall-e-3": {"litellm_provider": "openai", "mode": "image_generation", "output_cost_per_image": 0.08},
  "whisper-1": {"input_cost_per_second": 0.0001, "litellm_provider": "openai", "mode": "audio_transcription"},
  "some-router": {"litellm_provider": "x", "mode": "chat"},
  "broken": {"input_cost_per_token": -1, "output_cost_per_token": 1e-06, "mode": "chat"},
  "GPT-4O": {"input_cost_per_token": 9e-06, "output_cost_per_token": 9e-06, "mode": "chat"}
}"""


def test_import_litellm_keeps_token_priced_models_and_counts_the_rest(tmp_path):
    source = write(tmp_path, LITELLM_DOC, "model_prices_and_context_window.json")
    result = import_litellm(source, tmp_path / "out.json")
    assert sorted(result.models) == ["claude-sonnet-4-5", "gpt-4o", "text-embedding-3-small"]
    assert dict(result.skipped) == {"mode image_generation": 1, "mode audio_transcription": 1,
                                    "no per-token price": 1, "invalid entry": 1, "duplicate name (case)": 1}
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["models"]["gpt-4o"] == {  # LiteLLM's own numbers, the fields this table knows
        "cache_read_input_token_cost": 1.25e-06, "input_cost_per_token": 2.5e-06, "litellm_provider": "openai",
        "max_input_tokens": 128000, "max_output_tokens": 16384, "max_tokens": 16384, "mode": "chat",
        "output_cost_per_token": 1e-05}
    assert '"input_cost_per_token": 2.5e-06' in (tmp_path / "out.json").read_text()
    table = load_table(tmp_path / "out.json")
    assert table.lookup("claude-sonnet-4-5-20250929").fields["input_cost_per_token_above_200k_tokens"] == \
        Decimal("6e-06")


def test_import_refuses_what_is_not_a_litellm_file(tmp_path):
    with pytest.raises(PriceFileError, match="not a LiteLLM price file"):
        import_litellm(write(tmp_path, "[]"))


# --- CLI ---------------------------------------------------------------------------------------------------------
def test_cli_prices_show_resolves_and_prints_rates_per_million(capsys):
    assert main(["prices", "show", "claude-sonnet-4-20250514"]) == 0
    out = capsys.readouterr().out
    assert "resolved to    claude-sonnet-4 (anthropic" in out
    assert f"price_version  {bundled_table().version}" in out
    assert re.search(r"input\s+3\.00\n", out) and re.search(r"cache read\s+0\.30\n", out)
    assert re.search(r"cache write \(1 hour\)\s+6\.00\n", out)
    assert "prompts above 200,000 tokens" in out and re.search(r"output\s+22\.50\n", out)
    assert main(["prices", "show", "no-such-model"]) == 1
    assert "stored unpriced" in capsys.readouterr().err


def test_cli_prices_list_filters_by_provider(capsys):
    assert main(["prices", "list", "--provider", "Anthropic"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"price_version {bundled_table().version}: ")
    rows = lines[2:]
    assert rows and all(" anthropic " in row for row in rows)
    assert any(row.startswith("claude-sonnet-4 ") and "(+ long-context tier)" in row for row in rows)


def test_cli_prices_import_then_use_the_file(tmp_path, capsys):
    source = write(tmp_path, LITELLM_DOC, "litellm.json")
    out = tmp_path / "mine.json"
    assert main(["prices", "import", str(source), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "imported 3 models, skipped 5" in printed and "mode image_generation: 1" in printed
    assert f"INFERWATCH_PRICES_FILE={out}" in printed
    assert main(["prices", "--prices-file", str(out), "show", "gpt-4o-2024-08-06"]) == 0
    shown = capsys.readouterr().out
    assert f"{out})" in shown and f"price_version  {load_table(out).version}" in shown


def test_cli_prices_reports_a_bad_user_file(tmp_path, capsys):
    bad = write(tmp_path, {"m": {"input_cost_per_token": -1, "output_cost_per_token": 0}})
    assert main(["prices", "--prices-file", str(bad), "list"]) == 2
    err = capsys.readouterr().err
    assert "model 'm'" in err and "'input_cost_per_token'" in err and "negative" in err


def test_cli_prices_shows_a_gpu_hour_model(tmp_path, capsys):
    user = write(tmp_path, {"my-llama": {"gpu_hour_usd": 3.5, "gpus": 4, "output_tokens_per_s": 2500}})
    assert main(["prices", "--prices-file", str(user), "show", "my-llama"]) == 0
    out = capsys.readouterr().out
    assert "self-hosted" in out and re.search(r"output\s+1\.555556\n", out) and re.search(r"input\s+0\.00\n", out)


def test_cli_prices_uses_the_configured_prices_file(tmp_path, capsys, monkeypatch):
    user = write(tmp_path, {"house-model": {"input_cost_per_token": "1e-06", "output_cost_per_token": "2e-06"}})
    monkeypatch.setenv("INFERWATCH_PRICES_FILE", str(user))
    assert main(["prices", "show", "house-model"]) == 0
    assert f"price_version  {load_table(user).version}" in capsys.readouterr().out
