"""Every dashboard page rendered headlessly (Streamlit's AppTest) against a real collector with seeded traffic.

The pages run exactly as in production: the entry file, its sidebar and ``st.navigation``, HTTP to the
collector on 127.0.0.1. Assertions are on what a person sees (metric values, messages, table rows, chart
contents), computed from the seeded rows or from the API's own answer to the same question.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta
from typing import Any

import httpx
import pytest

from inferwatch_dashboard import fmt, metrics, timerange
from tests.helpers import seed
from tests.helpers.dashboard_app import PAGES, app, chart_specs, frames, goto, shown, texts
from tests.helpers.live_collector import Collector, free_port


def api(collector: Collector, path: str, **params: Any) -> Any:
    response = httpx.get(f"{collector.url}{path}", params=params,
                         headers={"Authorization": f"Bearer {collector.key}"}, timeout=30)
    response.raise_for_status()
    return response.json()


# --- pages over seeded traffic ---------------------------------------------------------------------------------
def test_overview_headline_matches_the_api_and_the_seeded_calls(collector: Collector, monkeypatch):
    at = app(monkeypatch, collector.url, collector.key)
    assert not at.exception
    win = timerange.window("24h")
    need = "volume,flags,latency"
    now = api(collector, "/api/v1/dashboard/stats", need=need, **win.params())["rows"][0]
    before = api(collector, "/api/v1/dashboard/stats", need=need, **win.previous().params())["rows"][0]
    expected = {label: (value, delta or "") for label, value, delta, _ in metrics.headline(now, before)}
    got = shown(at)
    for label, value in expected.items():
        assert got[label] == value, label
    exact, previous = seed.totals(collector.rows["current"]), seed.totals(collector.rows["previous"])
    assert got["Calls"][0] == fmt.count(exact["calls"]) == "120"
    assert got["Cost"][0] == fmt.money(exact["cost_usd"])
    assert got["Calls"][1] == fmt.change(exact["calls"], previous["calls"]) == "+100.0%"
    assert got["Error rate"][0] == fmt.pct(exact["errors"] / exact["calls"])
    assert got["Unpriced calls"][0] == "1" and got["Usage missing"][0] == "1"
    assert "1 unpriced and 1 usage-missing calls" in texts(at)
    assert "Project **p1** · Last 24 hours" in texts(at)
    calls_chart, cost_chart = chart_specs(at)[:2]
    assert {t["name"] for t in cost_chart["data"]} >= {"gpt-4o-mini", "claude-3-5-sonnet", "gpt-4o"}
    colours = {t["name"]: t["marker"]["color"] for t in calls_chart["data"]}
    assert colours == {t["name"]: t["marker"]["color"] for t in cost_chart["data"]}  # one colour per model
    assert any(seed.FIRING_RULE in frame.to_string() for frame in frames(at))


def test_cost_page_series_budget_report_csv_and_whatif(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key), "cost")
    got = shown(at)
    assert got["Spent this month"][0].startswith("$") and "Provider cache savings" in got
    assert any(frame["model"].tolist()[:1] == ["claude-3-5-sonnet"] for frame in frames(at) if "model" in frame)
    report = api(collector, "/api/v1/costs/report", period="month", by="model")
    lines = next(f for f in frames(at) if "key" in f and "calls" in f)
    assert sorted(lines["key"]) == sorted(line["key"] for line in report["breakdowns"][0]["lines"])
    assert at.get("download_button"), "the cost report CSV can be downloaded"
    assert "served from `llm_calls_1m`" in texts(at)

    at.radio(key="cost_by").set_value("User (hashed)").run()
    assert not at.exception
    users = next(f for f in frames(at) if "user_hash" in f)
    assert len(users) == len(seed.USERS)

    form_selects = [s for s in at.selectbox if s.label == "Traffic of"]
    form_selects[0].set_value("model")
    next(t for t in at.text_input if t.label == "equal to").set_value("claude-3-5-sonnet")
    next(s for s in at.slider if s.label == "Share moved").set_value(1.0)
    next(t for t in at.text_input if t.label == "to model").set_value("gpt-4o-mini")
    next(b for b in at.button if b.label == "Price this scenario").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    got = shown(at)
    assert "Scenario" in got and got["Difference"][0].startswith("$-")


def test_latency_page_draws_the_slo_and_flags_the_slow_model(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key), "latency")
    total = api(collector, "/api/v1/dashboard/stats", need="volume,latency", **timerange.window("24h").params())
    assert shown(at)["TTFT p95"][0] == fmt.ms(total["rows"][0]["ttft_ms_p95"])
    assert "above the 2,000 ms objective (models over it: claude-3-5-sonnet)" in texts(at)
    ttft = chart_specs(at)[0]
    slo = [shape for shape in ttft["layout"]["shapes"] if shape.get("y0") == 2000.0]
    assert slo and "SLO" in json.dumps(ttft["layout"]["annotations"])
    by_model = next(f for f in frames(at) if "ttft_ms_p95" in f)
    assert set(by_model["model"]) == {"gpt-4o-mini", "claude-3-5-sonnet", "gpt-4o", "mystery-model"}
    decode = next(f for f in frames(at) if "decode_tps_p50" in f)
    assert (decode["decode_tps_p50"] >= 80).all()
    assert any(trace["type"] == "heatmap" for spec in chart_specs(at) for trace in spec["data"])


def test_quality_page_rates_against_their_baseline(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key), "quality")
    got = shown(at)
    rows = collector.rows["current"]
    assert got["Refusal rate"][0] == fmt.pct(len(seed.REFUSALS) / len(rows))
    assert got["Truncated responses"][0] == fmt.pct(len(seed.TRUNCATED) / len(rows))
    tool_calls = sum(r.tool_calls for r in rows)
    assert got["Tool-call failures"][0] == fmt.pct(len(seed.TOOL_FAILURES) / tool_calls)
    assert got["Refusal rate"][1] == "+2.50 pp"  # the previous day had no refusals
    assert got["Thumbs-down rate"][0] == "20.00%"
    specs = {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}
    assert len(specs) == 7
    refusals = specs["Refusal rate per 15m"]
    assert [shape["y0"] for shape in refusals["layout"]["shapes"]] == [0.0]  # the baseline: no refusals before
    assert any(seed.DRIFT_RULE in frame.to_string() for frame in frames(at))


def test_experiments_page_shows_the_verdict_intervals_and_live_variants(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key), "experiments")
    assert at.selectbox(key="experiment_page").value == seed.EXPERIMENT
    variants = next(f for f in frames(at) if "variant" in f and "error_rate" in f)
    expected = {v: sum(r.variant == v and r.experiment == seed.EXPERIMENT for r in collector.rows["current"])
                for v in ("control", "treatment")}
    assert dict(zip(variants["variant"], variants["calls"])) == expected
    assert "Verdict: keep running** — minimum sample not reached" in texts(at)
    got = shown(at)
    assert got["SRM p-value"][0] == "0.6200" and got["Users"][0] == "4" and got["Trustworthy"][0] == "yes"
    assert at.get("progress")[0].proto.text.startswith("Sample progress: 4 of 1,000 users planned")
    kinds = {trace["type"] for spec in chart_specs(at) for trace in spec["data"]}
    assert kinds == {"scatter", "bar"}  # intervals per variant, lift of the treatment


def test_alerts_page_lists_firing_alerts_rules_and_job_runs(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key), "alerts")
    assert shown(at)["Firing"][0] == "1"
    assert any(seed.FIRING_RULE in frame.to_string() for frame in frames(at))
    assert "No scheduled job has run" in texts(at)
    # the seeded project has a day of history, not three: its baseline-relative rules are still learning
    [note] = [i.value for i in at.info if "learning their baseline" in i.value]
    assert "cost-per-hour-spike (learning: has 1 of 3 days)" in note
    assert "ttft-p95-high" not in note  # a threshold has nothing to learn
    rules = next(f for f in frames(at) if "learning_status" in f)
    status = dict(zip(rules["id"], rules["learning_status"]))
    assert status["refusal-rate-drift"] == "learning: has 1 of 3 days" and status["error-rate-high"] == "ready"
    log = next(f for f in frames(at) if "channel" in f)
    assert sorted(log["channel"]) == ["pagerduty", "slack"]
    assert "1 of 2 notifications failed" in texts(at)
    # Creating a silence needs the admin scope: the read key gets a sentence, not a traceback.
    next(t for t in at.text_input if t.label == "Rule id").set_value(seed.FIRING_RULE)
    next(b for b in at.button if b.label == "Create silence").click().run()
    assert not at.exception
    assert any("may not do this" in e.value for e in at.error)


def test_traces_page_opens_a_trace_with_its_spans_and_prompt(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key, trace=seed.TRACE_ID), "traces")
    assert "Matching calls: 1" in texts(at)
    got = shown(at)
    assert got["Spans"][0] == "3" and got["LLM calls"][0] == "1"
    timeline = chart_specs(at)[0]
    names = {y for trace in timeline["data"] for y in trace["y"]}
    assert {"1. retrieve documents", "2. chat gpt-4o-mini", "3. execute_tool get_weather"} == names
    areas = {t.label: t.value for t in at.text_area}
    assert areas["Prompt (redacted)"] == seed.PROMPT_TEXT
    assert areas["Completion (redacted)"] == seed.COMPLETION_TEXT


def test_traces_search_by_flag_and_prompts_need_the_scope(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.read_only_key), "traces")
    assert "Matching calls: 100+" in texts(at)  # newest 100 of 120
    at.selectbox(key="flag").set_value("refusal").run()
    assert f"Matching calls: {len(seed.REFUSALS)}" in texts(at)
    assert not at.text_area and "need a key with the `prompts:read` scope" in texts(at)


def test_capacity_page_plans_from_observed_traffic(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key), "capacity")
    got = shown(at)
    assert got["Observed calls"][0] == "120"
    assert got["Tensor parallel"][0] == "TP 4" and got["GPUs"][0] == "4"
    assert "Stay on the API" in texts(at)
    at.checkbox(key="cap_brief").check().run()
    assert not at.exception and "The brief's plan" in texts(at)


def test_filters_live_in_the_url_and_survive_page_switches(collector: Collector, monkeypatch):
    at = app(monkeypatch, collector.url, collector.key, model="gpt-4o-mini", range="Last 7 days")
    mini = sum(r.model == "gpt-4o-mini" for r in collector.rows["current"] + collector.rows["previous"])
    assert shown(at)["Calls"][0] == fmt.count(mini)
    assert at.selectbox(key="range").value == "Last 7 days"
    for page in PAGES[1:]:
        goto(at, page)
        assert "model: gpt-4o-mini" in texts(at) and "Last 7 days" in texts(at), page
    goto(at, "latency")
    assert set(next(f for f in frames(at) if "ttft_ms_p95" in f)["model"]) == {"gpt-4o-mini"}


def test_feature_filter_reads_the_daily_rollup_on_long_ranges(collector: Collector, monkeypatch):
    at = goto(app(monkeypatch, collector.url, collector.key, feature="search", range="Last 30 days"), "cost")
    assert "served from `llm_calls_1d`" in texts(at)
    search = sum(r.feature == "search" for r in collector.rows["current"] + collector.rows["previous"])
    table = next(f for f in frames(at) if "model" in f and "calls" in f)
    assert table["calls"].sum() == search


# --- empty project, API failures -------------------------------------------------------------------------------
def test_every_page_has_an_empty_state_for_a_project_without_traffic(collector: Collector, monkeypatch):
    at = app(monkeypatch, collector.url, collector.empty_key)
    assert not at.exception
    assert "No traffic yet in this time range" in texts(at) and "inferwatch.init(endpoint=" in texts(at)
    for page in PAGES[1:]:
        goto(at, page)
        assert not at.error, (page, [e.value for e in at.error])
        assert any(word in texts(at) for word in ("No traffic yet", "No experiments", "Nothing is firing",
                                                    "not available", "No traffic to size from")), page


@pytest.mark.parametrize("case", ["unreachable", "bad key", "no key"])
def test_api_failures_are_sentences_not_tracebacks(collector: Collector, monkeypatch, case: str):
    url, key, message = {
        "unreachable": (f"http://127.0.0.1:{free_port()}", collector.key, "cannot reach the collector"),
        "bad key": (collector.url, "iw_not-a-real-key", "rejected the dashboard's API key"),
        "no key": (collector.url, "", "No API key configured"),
    }[case]
    at = app(monkeypatch, url, key)
    for page in PAGES:
        if page != "overview":
            goto(at, page)
        assert not at.exception
        assert any(message in e.value for e in at.error), (page, [e.value for e in at.error])
        assert not at.metric and not at.get("plotly_chart")


def test_custom_dates_from_the_url(collector: Collector, monkeypatch):
    today = datetime.now(UTC).date()
    first = today - timedelta(days=1)
    at = app(monkeypatch, collector.url, collector.key, range="Custom dates", **{"from": first.isoformat(),
                                                                                 "to": today.isoformat()})
    assert not at.exception
    assert f"{first.isoformat()} to {today.isoformat()}" in texts(at)
    assert shown(at)["Calls"][0] == fmt.count(sum(
        r.start_time >= datetime.combine(first, time(), UTC).timestamp() * 1e6
        for r in collector.rows["current"] + collector.rows["previous"]))


def test_several_keys_offer_a_project_choice(collector: Collector, monkeypatch):
    at = app(monkeypatch, collector.url, f"{collector.key},{collector.empty_key}")
    assert at.selectbox(key="project").options == ["p1", "p-empty"]
    assert shown(at)["Calls"][0] == "120"
    at.selectbox(key="project").set_value("p-empty").run()
    assert "Project **p-empty**" in texts(at) and "No traffic yet" in texts(at)
