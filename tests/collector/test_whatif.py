"""What-if repricing: sums reproduce per-call pricing (tiers, app-cache hits, no usage), rules by hand, errors."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from inferwatch_collector.cost.call_cost import price_tokens
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.cost.price_table import bundled_table
from inferwatch_collector.cost.ingest_pricer import make_pricer
from inferwatch_collector.rows import LlmCallRow
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_collector.cost.whatif import WhatIfError, parse_request, run_whatif, split_traffic
from inferwatch_server.cli import main

from tests.helpers.keys import Keys
from tests.helpers.factories import llm_call
from tests.helpers.cost_data import TABLE, at, insert, priced, random_calls

TODAY = datetime.now(UTC).date()
DAY = TODAY - timedelta(days=3)
NOW = datetime.now(UTC)


def charged(row: LlmCallRow) -> bool:
    return not (row.cache_hit or row.usage_missing)


def cost(model: str, row: LlmCallRow) -> float:
    """The ingest pricer's cost of ``row``'s usage on ``model`` (per call: tiers from the call's own prompt)."""
    return price_tokens(TABLE, model, row.input_tokens, row.output_tokens, row.cache_read_tokens,
                        row.cache_write_tokens, row.reasoning_tokens, row.cache_write_1h_tokens).total


def day_request(**rules) -> dict:
    return {"period": "day", "date": DAY.isoformat(), **rules}


@pytest.fixture
def traffic(store: Store) -> list[LlmCallRow]:
    rows = random_calls(random.Random(11), [DAY], 400)
    rows += [priced(llm_call(start_time=at(DAY), model="gpt-4o-2024-08-06", feature="simple", input_tokens=900,
                             output_tokens=90))]  # a snapshot name
    rows += random_calls(random.Random(12), [DAY - timedelta(days=1)], 50)  # outside the period
    insert(store, rows)
    return [row for row in rows if row.start_time >= at(DAY, 0)]


def test_no_rules_reproduces_the_observed_cost_exactly(store: Store, traffic: list[LlmCallRow]) -> None:
    result = run_whatif(store, "p1", day_request(), TABLE, now=NOW)
    assert any(row.input_tokens > 200_000 and row.model == "claude-sonnet-4" and charged(row) for row in traffic)
    assert result.observed_cost_usd == pytest.approx(sum(row.cost_usd for row in traffic), abs=1e-9)
    assert result.baseline_cost_usd == pytest.approx(result.observed_cost_usd, abs=1e-9)
    assert result.scenario_cost_usd == pytest.approx(result.baseline_cost_usd, abs=1e-12)
    assert result.delta_usd == pytest.approx(0, abs=1e-12) and not result.approximate
    assert result.excluded_calls == sum(not charged(row) for row in traffic)
    assert result.unpriced_calls == sum(row.model == "mystery-7b" and charged(row) for row in traffic)
    assert result.unpriced_models == ("mystery-7b",)
    assert result.price_version == "r1" and result.observed_price_versions == ("r1",)
    by_model = {m.model: m for m in result.models}
    assert by_model["gpt-4o"].baseline_calls == sum(row.model.startswith("gpt-4o-2") or row.model == "gpt-4o"
                                                    for row in traffic if charged(row))


def test_mix_moves_a_share_of_a_feature_priced_call_by_call(store: Store, traffic: list[LlmCallRow]) -> None:
    request = day_request(mix=[{"feature": "summarise", "model": "gpt-4o", "share": 0.7,
                                "to_model": "claude-sonnet-4"}])
    result = run_whatif(store, "p1", request, TABLE, now=NOW)
    expected = baseline = 0.0
    matched = 0
    for row in traffic:
        if not charged(row) or row.model == "mystery-7b":
            continue
        model = TABLE.resolve(row.model)
        baseline += cost(model, row)
        if row.feature == "summarise" and model == "gpt-4o":
            matched += 1
            expected += 0.3 * cost(model, row) + 0.7 * cost("claude-sonnet-4", row)  # tiers of the call's prompt
        else:
            expected += cost(model, row)
    assert any(row.input_tokens > 200_000 and row.feature == "summarise" and row.model == "gpt-4o"
               for row in traffic)  # so the target's long-context tier is exercised
    assert result.baseline_cost_usd == pytest.approx(baseline, abs=1e-9)
    assert result.scenario_cost_usd == pytest.approx(expected, abs=1e-9)
    assert result.delta_pct == pytest.approx((expected - baseline) / baseline)
    (effect,) = result.rules
    assert (effect.rule, effect.matched_calls) == ("mix[0]", matched)
    sonnet = {m.model: m for m in result.models}["claude-sonnet-4"]
    assert sonnet.scenario_calls == pytest.approx(sonnet.baseline_calls + 0.7 * matched)


def test_cascade_prices_cheap_for_all_and_the_original_for_the_escalated_share(
        store: Store, traffic: list[LlmCallRow]) -> None:
    request = day_request(cascade=[{"feature": "chat", "cheap_model": "gpt-4o-mini", "escalation_rate": 0.2}])
    result = run_whatif(store, "p1", request, TABLE, now=NOW)
    expected = 0.0
    for row in traffic:
        if not charged(row) or row.model == "mystery-7b":
            continue
        model = TABLE.resolve(row.model)
        if row.feature == "chat" and model != "gpt-4o-mini":
            expected += cost("gpt-4o-mini", row) + 0.2 * cost(model, row)
        else:
            expected += cost(model, row)
    assert result.scenario_cost_usd == pytest.approx(expected, abs=1e-9)
    cascaded = [row for row in traffic if charged(row) and row.feature == "chat"
                and row.model not in ("gpt-4o-mini", "mystery-7b")]
    assert result.rules[0].matched_calls == len(cascaded)


def test_the_first_matching_rule_wins_and_a_model_scope_matches_snapshots(store: Store) -> None:
    rows = [priced(llm_call(start_time=at(DAY), model="gpt-4o-2024-08-06", feature="simple", input_tokens=1_000,
                            output_tokens=200)),
            priced(llm_call(start_time=at(DAY), model="gpt-4o", feature="other", input_tokens=1_000,
                            output_tokens=200))]
    insert(store, rows)
    request = day_request(mix=[{"model": "gpt-4o", "feature": "simple", "share": 1, "to_model": "gpt-4o-mini"},
                               {"model": "gpt-4o", "share": 0.5, "to_model": "gpt-4o-mini"}])
    result = run_whatif(store, "p1", request, TABLE, now=NOW)
    # by hand: gpt-4o 1,000 x $2.5/M + 200 x $10/M = $0.0045; gpt-4o-mini 1,000 x $0.15/M + 200 x $0.6/M = $0.00027
    assert result.baseline_cost_usd == pytest.approx(0.009)
    assert result.scenario_cost_usd == pytest.approx(0.00027 + (0.0045 + 0.00027) / 2)
    assert [(r.rule, r.matched_calls) for r in result.rules] == [("mix[0]", 1), ("mix[1]", 1)]


def test_days_past_the_raw_retention_are_flagged_approximate(store: Store) -> None:
    old = TODAY - timedelta(days=20)
    insert(store, [priced(llm_call(start_time=at(old), model="gpt-4o", input_tokens=1_000, output_tokens=100,
                                   cache_hit=True))])
    result = run_whatif(store, "p1", {"period": "day", "date": old.isoformat()}, TABLE, now=NOW,
                        retention_days=10)
    assert result.approximate and "retention" in result.notes[0]
    assert result.excluded_calls == 1
    exact = run_whatif(store, "p1", {"period": "day", "date": old.isoformat()}, TABLE, now=NOW)
    assert not exact.approximate and exact.baseline_cost_usd == 0


def test_rollup_and_raw_that_disagree_are_flagged() -> None:
    rollup = [{"provider": "openai", "model": "gpt-4o", "feature": "f", "prompt_template": "t", "calls": 1,
               "input_tokens": 10, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 0,
               "cache_write_1h_tokens": 0, "reasoning_tokens": 0, "cost_usd": 0.1, "cache_hits": 0,
               "usage_missing": 0, "price_versions": ["r1"]}]
    raw = [{**rollup[0], "calls": 2, "band": 200_000, "excluded": False}]
    traffic = split_traffic(rollup, raw, raw_complete=True)
    assert traffic.approximate and "disagree" in traffic.notes[0]


@pytest.mark.parametrize("body, field, message", [
    ({"mix": [{"share": 0.5, "to_model": "gpt-9-ultra"}]}, "mix[0].to_model", "not in the price table"),
    ({"mix": [{"share": 1.5, "to_model": "gpt-4o-mini"}]}, "mix[0].share", "between 0 and 1"),
    ({"mix": [{"share": True, "to_model": "gpt-4o-mini"}]}, "mix[0].share", "must be a number"),
    ({"mix": [{"to_model": "gpt-4o-mini"}]}, "mix[0].share", "is required"),
    ({"mix": [{"share": 0.1, "to_model": "gpt-4o-mini"}, {"share": 0.1}]}, "mix[1].to_model", "is required"),
    ({"mix": [{"feature": 3, "share": 0.1, "to_model": "gpt-4o-mini"}]}, "mix[0].feature", "non-empty string"),
    ({"mix": [{"sharee": 0.1}]}, "mix[0].sharee", "is not a field"),
    ({"mix": "simple"}, "mix", "must be a list"),
    ({"cascade": [{"cheap_model": "gpt-4o-mini", "escalation_rate": -0.1}]}, "cascade[0].escalation_rate",
     "between 0 and 1"),
    ({"cascade": [{"escalation_rate": 0.1}]}, "cascade[0].cheap_model", "is required"),
    ({"mixes": []}, "mixes", "is not a field"),
    ({"period": "week"}, "period", "must be one of day, month"),
    ({"date": "tomorrow"}, "date", "YYYY-MM-DD"),
    ({"date": "2999-01-01"}, "date", "in the future"),
    ("move everything", "body", "JSON object"),
])
def test_bad_scenarios_name_the_field(body: object, field: str, message: str) -> None:
    with pytest.raises(WhatIfError, match=message) as info:
        parse_request(body, TABLE, TODAY)
    assert info.value.field == field and str(info.value).startswith(f"{field}: ")


def test_a_single_rule_object_is_accepted_and_defaults_are_month_to_date() -> None:
    period, scenario = parse_request({"cascade": {"cheap_model": "gpt-4o-mini", "escalation_rate": 0.3}}, TABLE,
                                     date(2026, 3, 9))
    assert (period.kind, period.start, period.end) == ("month", date(2026, 3, 1), date(2026, 3, 9))
    assert scenario.cascade[0].cheap_model == "gpt-4o-mini" and scenario.mix == ()


# --------------------------------------------------------------------------------------------------- API, CLI

BUNDLED = make_pricer(bundled_table())


def bundled_priced(row: LlmCallRow) -> LlmCallRow:
    cost_usd, version, parts, _ = BUNDLED(row.model, row.provider, row.input_tokens, row.output_tokens,
                                                row.cache_read_tokens, row.cache_write_tokens,
                                                row.cache_write_1h_tokens, row.reasoning_tokens, row.usage_missing,
                                                row.cache_hit)
    return row._replace(cost_usd=cost_usd, price_version=version, cost_input_usd=parts[0],
                        cost_output_usd=parts[3], unpriced=parts[6])


def test_whatif_api_reprices_with_the_current_table_and_answers_400s(client, store: Store, keys: Keys) -> None:
    insert(store, [bundled_priced(llm_call(start_time=at(DAY), model="gpt-4o", feature="simple",
                                           input_tokens=1_000, output_tokens=200)),
                   bundled_priced(llm_call("p2", start_time=at(DAY), model="gpt-4o"))])
    auth = Keys.header(keys.read)
    body = day_request(mix=[{"feature": "simple", "share": 0.7, "to_model": "gpt-4o-mini"}])
    response = client.post("/api/v1/costs/whatif", json=body, headers=auth)
    assert response.status_code == 200, response.text
    result = response.json()
    # bundled prices: gpt-4o $0.0045 (as above), gpt-4o-mini $0.00027; 70% moved
    assert result["baseline_cost_usd"] == pytest.approx(0.0045)
    assert result["scenario_cost_usd"] == pytest.approx(0.3 * 0.0045 + 0.7 * 0.00027)
    assert result["delta_pct"] == pytest.approx((0.3 * 0.0045 + 0.7 * 0.00027) / 0.0045 - 1)
    assert result["price_version"] == bundled_table().version and result["rules"][0]["matched_calls"] == 1
    assert {m["model"] for m in result["models"]} == {"gpt-4o", "gpt-4o-mini"}

    bad = client.post("/api/v1/costs/whatif", json=day_request(mix=[{"share": 2, "to_model": "gpt-4o-mini"}]),
                      headers=auth)
    assert bad.status_code == 400 and bad.json()["error"].startswith("mix[0].share: must be between 0 and 1")
    unknown = client.post("/api/v1/costs/whatif", headers=auth,
                          json={"cascade": [{"cheap_model": "nope", "escalation_rate": 0}]})
    assert unknown.status_code == 400 and "cascade[0].cheap_model: model 'nope'" in unknown.json()["error"]
    assert client.post("/api/v1/costs/whatif", headers=auth).status_code == 400
    assert client.post("/api/v1/costs/whatif", json=body).status_code == 401


def test_whatif_cli(tmp_path, capsys) -> None:
    data = tmp_path / "data"
    settings = Settings(data_dir=data, clickhouse_url="")
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        insert(store, [bundled_priced(llm_call("shop", start_time=at(DAY), model="gpt-4o", feature="simple",
                                               input_tokens=1_000, output_tokens=200))])
    finally:
        store.close()
    args = ["--data-dir", str(data), "whatif", "--project", "shop", "--period", "day", "--date", DAY.isoformat()]
    assert main([*args, "--cascade", "feature=simple,cheap_model=gpt-4o-mini,escalation_rate=0.2"]) == 0
    text = capsys.readouterr().out
    assert "What-if: project shop" in text and "cascade[0]" in text and "Baseline at these prices $0.0045" in text
    assert main([*args, "--mix", "feature=simple,share=lots,to_model=gpt-4o-mini"]) == 2
    assert "mix[0].share: must be a number" in capsys.readouterr().err
