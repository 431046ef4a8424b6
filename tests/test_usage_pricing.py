"""Prices from the maintained source (``transcript_reader/usage/pricing.py``): every expected figure is
computed here by hand from the per-token prices read out of genai-prices' own bundled data (never typed
in), so a data update moves the witness and the code together, and a wrong sum in the code does not."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, FIXTURES
from transcript_reader import api
from transcript_reader.model import TokenUsage, UsageRow
from transcript_reader.usage.accounting import PROMPT_EDGES, Accountant, sum_tokens
from transcript_reader.usage.pricing import Price, price_row, price_rows, price_session, source_name

genai_prices = pytest.importorskip("genai_prices", reason="genai-prices (the price source) is not installed")

DAY = "2026-11-30"
M = Decimal(1_000_000)


def data_prices(provider: str, model_id: str, day: str = DAY, context: dict[str, str] | None = None) -> Any:
    """The package's price record for ``model_id`` in force on ``day`` (its data, its date rule)."""
    from genai_prices.data import providers

    model = next(m for p in providers if p.id == provider for m in p.models if m.id == model_id)
    return model.get_prices(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC), context)


def base(v: Any) -> Decimal:
    """A flat price, or the base band of a banded one."""
    return v.base if hasattr(v, "base") else v


def band(v: Any, prompt: int) -> Decimal:
    """The price of a band-priced unit for a call with a ``prompt``-token prompt (the data's cliff rule:
    a start is passed when the prompt is greater than it)."""
    if not hasattr(v, "base"):
        return v
    got = v.base
    for t in v.tiers:
        if prompt > t.start:
            got = t.price
    return got


def row(model: str | None, *, inp: int = 0, cached: int = 0, write: int = 0, out: int = 0, reasoning: int = 0,
        calls: int = 1, day: str | None = DAY, tier: str | None = None) -> UsageRow:
    return UsageRow(model=model, day=day, tier=tier, calls=calls,
                    tokens=TokenUsage(input=inp, cached_input=cached, cache_write=write, output=out,
                                      reasoning=reasoning, total=inp + out, source="test"))


def test_a_real_model_costs_its_per_token_prices_from_the_package_data() -> None:
    p = data_prices("openai", "gpt-5.5")
    inp, cached, out = 12_000, 8_000, 900
    expected = ((inp - cached) * base(p.input_mtok) + cached * base(p.cache_read_mtok) + out * base(p.output_mtok)) / M
    got = price_row(row("gpt-5.5", inp=inp, cached=cached, out=out, reasoning=300), provider="openai")
    assert got.usd == pytest.approx(float(expected), rel=1e-12)
    assert got.reason is None and got.price_date == DAY
    assert got.source == source_name() and got.source is not None and genai_prices.__version__ in got.source


def test_cached_input_is_priced_apart_from_uncached_input() -> None:
    p = data_prices("openai", "gpt-5")
    assert p.cache_read_mtok < p.input_mtok  # the case is only a test when the data prices them apart
    all_uncached = price_row(row("gpt-5", inp=100_000, out=10), provider="openai")
    half_cached = price_row(row("gpt-5", inp=100_000, cached=50_000, out=10), provider="openai")
    assert all_uncached.usd is not None and half_cached.usd is not None
    assert all_uncached.usd - half_cached.usd == pytest.approx(
        float(50_000 * (p.input_mtok - p.cache_read_mtok) / M), rel=1e-12)


def test_claude_code_cache_writes_and_reads_are_priced_apart() -> None:
    p = data_prices("anthropic", "claude-opus-4-5")
    uncached, write, read, out = 3_000, 20_000, 50_000, 1_200
    got = price_row(row("claude-opus-4-5-20251101", inp=uncached + write + read, cached=read, write=write, out=out),
                    provider="anthropic")
    expected = (uncached * p.input_mtok + write * p.cache_write_mtok + read * p.cache_read_mtok
                + out * p.output_mtok) / M
    assert p.cache_write_mtok != p.cache_read_mtok
    assert got.usd == pytest.approx(float(expected), rel=1e-12)


def test_an_unknown_model_has_no_price_and_says_so() -> None:
    got = price_row(row("gpt-9-foo", inp=1000, out=10), provider="openai")
    assert got == Price(None, source_name(), None, got.reason)
    assert got.reason is not None and "unknown model" in got.reason and "gpt-9-foo" in got.reason


@pytest.mark.parametrize(("name", "provider"), [("gpt-5-nano-foo", "openai"), ("claude-opus-4-5-foo", "anthropic")])
def test_a_name_close_to_a_real_model_is_not_priced_as_it(name: str, provider: str) -> None:
    """The package's own lookup prices these made-up names as a real model (by prefix); the reader does not."""
    guessed = genai_prices.calc_price(genai_prices.Usage(input_tokens=1000, output_tokens=10), name,
                                      provider_id=provider)
    assert guessed.total_price > 0  # the guess the rule refuses
    got = price_row(row(name, inp=1000, out=10), provider=provider)
    assert got.usd is None and got.reason is not None and name in got.reason


@pytest.mark.parametrize(("name", "provider"), [("claude-sonnet-4-20250514", "anthropic"),
                                                ("gpt-5-2025-08-07", "openai"), ("gpt-5.6-terra", "openai")])
def test_names_and_dated_snapshots_of_a_model_are_exact(name: str, provider: str) -> None:
    assert price_row(row(name, inp=1000, out=10), provider=provider).usd is not None


def test_a_service_tier_is_priced_at_that_tier() -> None:
    p = data_prices("openai", "gpt-5.5", context={"service_tier": "priority"})
    got = price_row(row("gpt-5.5", inp=10_000, out=1_000, tier="priority"), provider="openai")
    assert got.usd == pytest.approx(float((10_000 * base(p.input_mtok) + 1_000 * base(p.output_mtok)) / M))
    standard = price_row(row("gpt-5.5", inp=10_000, out=1_000), provider="openai")
    assert standard.usd is not None and got.usd is not None and got.usd > standard.usd


def test_a_tier_without_a_price_that_day_is_unknown_not_standard() -> None:
    got = price_row(row("gpt-5.5", inp=10_000, out=1_000, tier="priority", day="2026-01-05"), provider="openai")
    assert got.usd is None and got.reason is not None and "priority" in got.reason
    assert price_row(row("gpt-5.5", inp=10, out=1, tier="no-such-tier"), provider="openai").usd is None


def test_a_price_change_in_the_data_prices_each_day_at_its_own_price() -> None:
    """gpt-5.6-terra's data holds a dated price cut: usage before it costs the earlier price."""
    before, after = data_prices("openai", "gpt-5.6-terra", "2026-07-01"), data_prices("openai", "gpt-5.6-terra")
    assert base(before.input_mtok) != base(after.input_mtok)
    old = price_row(row("gpt-5.6-terra", inp=100_000, day="2026-07-01"), provider="openai")
    new = price_row(row("gpt-5.6-terra", inp=100_000), provider="openai")
    assert (old.usd, old.price_date) == (pytest.approx(float(base(before.input_mtok) / 10)), "2026-07-01")
    assert (new.usd, new.price_date) == (pytest.approx(float(base(after.input_mtok) / 10)), DAY)


def accounted(model: str, *calls: tuple[int, int, int], summed: bool = False) -> UsageRow:
    """The one row the accounting makes of per-call ``(input, cached, output)`` figures (or of one figure
    that sums them all, as an exec stream's summary does, when ``summed``)."""
    acc = Accountant()
    figures = [TokenUsage(input=i, cached_input=c, output=o, total=i + o, source="test") for i, c, o in calls]
    if summed:
        acc.add_total(sum_tokens(figures) or TokenUsage(), model=model, timestamp=DAY + "T10:00:00Z")
    for f in [] if summed else figures:
        acc.add(f, model=model, timestamp=DAY + "T10:00:00Z")
    (only,) = acc.rows()
    return only


def hand_price(p: Any, *calls: tuple[int, int, int]) -> Decimal:
    """Each call at the band of its own prompt."""
    return sum((((i - c) * band(p.input_mtok, i) + c * band(p.cache_read_mtok, i) + o * band(p.output_mtok, i)) / M
                for i, c, o in calls), Decimal(0))


def test_the_price_data_bands_prompts_only_at_edges_the_accounting_keeps() -> None:
    from genai_prices.data import providers

    starts = {t.start for pr in providers if pr.id in ("openai", "anthropic") for m in pr.models
              for mp in ([m.prices] if not isinstance(m.prices, list) else [c.prices for c in m.prices])
              + [v.prices for v in m.price_variants or ()]
              for v in vars(mp).values() if hasattr(v, "tiers") for t in v.tiers}
    assert starts and starts <= set(PROMPT_EDGES)


def test_one_long_prompt_call_is_priced_in_its_band() -> None:
    p = data_prices("openai", "gpt-5.5")
    assert band(p.input_mtok, 300_000) != base(p.input_mtok)
    got = price_row(accounted("gpt-5.5", (300_000, 0, 1_000)), provider="openai")
    assert got.usd == pytest.approx(float(hand_price(p, (300_000, 0, 1_000))), rel=1e-12)


def test_calls_on_both_sides_of_a_band_start_are_each_priced_at_their_own_band() -> None:
    p = data_prices("openai", "gpt-5.5")
    calls = [(150_000, 100_000, 900), (280_000, 200_000, 1_100), (300_000, 250_000, 700), (20_000, 0, 50)]
    got = price_row(accounted("gpt-5.5", *calls), provider="openai")
    assert got.usd == pytest.approx(float(hand_price(p, *calls)), rel=1e-12)
    # the same tokens as one summed prompt would be priced wholly in the upper band: more
    assert float(hand_price(p, (750_000, 550_000, 2_750))) > got.usd


def test_calls_summed_under_the_first_band_start_are_all_in_the_base_band() -> None:
    p = data_prices("openai", "gpt-5.5")
    got = price_row(row("gpt-5.5", inp=200_000, out=1_000, calls=5), provider="openai")
    assert got.usd == pytest.approx(float((200_000 * base(p.input_mtok) + 1_000 * base(p.output_mtok)) / M))


def test_a_figure_summing_calls_past_a_band_start_has_no_price() -> None:
    """An exec stream's summary of 400,000 prompt tokens: two calls of 200,000 or one of 300,000 and one of
    100,000 cost differently, so the sum is not priced."""
    got = price_row(accounted("gpt-5.5", (200_000, 0, 500), (200_000, 0, 500), summed=True), provider="openai")
    assert got.usd is None and got.reason is not None and "272,000" in got.reason
    per_call = price_row(accounted("gpt-5.5", (200_000, 0, 500), (200_000, 0, 500)), provider="openai")
    assert per_call.usd is not None


def test_unknown_day_model_or_usage_gives_a_reason_never_zero() -> None:
    assert price_rows([]).reason == "no usage recorded" and price_rows([]).usd is None
    assert price_row(row("gpt-5.5", inp=10, day=None), provider="openai").usd is None
    assert price_row(row(None, inp=10), provider="openai").usd is None


def test_a_sum_with_one_unpriceable_row_is_unknown_and_names_the_model() -> None:
    got = price_rows([row("gpt-5.5", inp=10, out=1), row("gpt-9-foo", inp=10, out=1)], provider="openai")
    assert got.usd is None and got.reason is not None and "gpt-9-foo" in got.reason


def test_rows_sum_and_the_price_date_is_the_last_day() -> None:
    a = price_row(row("gpt-5.5", inp=1000, out=10, day="2026-11-01"), provider="openai")
    b = price_row(row("gpt-5", inp=1000, out=10), provider="openai")
    both = price_rows([row("gpt-5.5", inp=1000, out=10, day="2026-11-01"), row("gpt-5", inp=1000, out=10)],
                      provider="openai")
    assert a.usd is not None and b.usd is not None
    assert both.usd == pytest.approx(a.usd + b.usd) and both.price_date == DAY


# ------------------------------------------------------------------------- every recording and fixture

REAL = CORPUS / "realcodex"
RECORDINGS = sorted(REAL.glob("*/*.rollout.jsonl")) + sorted(REAL.glob("*/*.exec.jsonl")) if REAL.is_dir() else []
FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*.json*") if p.is_file() and "/js/" not in str(p))


def _check_priced_or_said(path: Path) -> Price | None:
    try:
        info = api.inspect(path)
    except Exception:  # not a session file (a fixture of another kind): nothing to price
        return None
    got = price_session(info)
    if info.tokens is None:
        assert got.usd is None and got.reason == "no usage recorded"
    else:
        assert (got.usd is not None) != (got.reason is not None), got
        assert got.source is not None
    return got


@pytest.mark.skipif(not RECORDINGS, reason="../shared/corpus/realcodex is absent")
def test_every_real_recording_with_usage_has_a_cost_or_a_stated_reason() -> None:
    priced = 0
    for path in RECORDINGS:
        got = _check_priced_or_said(path)
        if got is not None and got.usd is not None:
            assert got.usd > 0 and got.price_date is not None
            priced += 1
    assert priced >= 100  # the recordings name models the data knows: each of them is priced


def test_every_fixture_with_usage_has_a_cost_or_a_stated_reason() -> None:
    seen = [g for g in map(_check_priced_or_said, FIXTURE_FILES) if g is not None]
    assert any(g.usd is not None for g in seen) and any(g.reason == "no usage recorded" for g in seen)


CLAUDE = next((FIXTURES / "claude" / "recorded").rglob("*.projects/*/*.jsonl"))


def claude_with(tmp_path: Path, change: Any) -> Path:
    """The recorded Claude Code session ``CLAUDE`` with ``change`` applied to each message's usage."""
    import json

    out = []
    for line in CLAUDE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        u = obj["message"].get("usage") if isinstance(obj.get("message"), dict) else None
        if isinstance(u, dict):
            change(u)
        out.append(json.dumps(obj))
    path = tmp_path / CLAUDE.name
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def test_claude_code_fast_mode_is_priced_at_the_fast_price(tmp_path: Path) -> None:
    fast = api.inspect(claude_with(tmp_path, lambda u: u.update(speed="fast")))
    (r,) = fast.usage
    assert r.tier == "fast" and r.model is not None
    p = data_prices("anthropic", r.model, r.day or DAY, {"speed": "fast"})
    t = r.tokens
    expected = ((t.input - t.cached_input - t.cache_write) * p.input_mtok + t.cached_input * p.cache_read_mtok
                + t.cache_write * p.cache_write_mtok + t.output * p.output_mtok) / M
    got = price_session(fast)
    assert got.usd == pytest.approx(float(expected), rel=1e-12)
    standard = price_session(api.inspect(CLAUDE))
    assert standard.usd is not None and got.usd is not None and got.usd > standard.usd


def test_claude_code_cache_writes_kept_an_hour_are_priced_at_their_own_rate(tmp_path: Path) -> None:
    """The same recorded Claude Code session with its cache writes said to be 1-hour writes
    (``cache_creation.ephemeral_1h_input_tokens``) costs the difference of the two write prices more."""
    def hour(u: dict[str, Any]) -> None:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": 0,
                               "ephemeral_1h_input_tokens": u.get("cache_creation_input_tokens", 0)}

    five, sixty = api.inspect(CLAUDE), api.inspect(claude_with(tmp_path, hour))
    assert five.tokens is not None and sixty.tokens is not None
    assert five.tokens.cache_write_1h == 0 and sixty.tokens.cache_write_1h == sixty.tokens.cache_write > 0
    (r,) = five.usage
    p = data_prices("anthropic", "claude-opus-5-5", r.day or DAY)
    assert r.model == "claude-opus-5-5" and p.cache_write_1h_mtok != p.cache_write_mtok
    a, b = price_session(five), price_session(sixty)
    assert a.usd is not None and b.usd is not None
    assert b.usd - a.usd == pytest.approx(float(r.tokens.cache_write * (p.cache_write_1h_mtok - p.cache_write_mtok) / M))


@pytest.mark.parametrize("tier", ["flex", "priority"])
def test_a_codex_turn_that_asked_for_a_service_tier_is_priced_at_it(tmp_path: Path, tier: str) -> None:
    """The bundled real recording (gpt-5.5) with its ``turn_context`` naming a tier: every call of the turn
    is that tier's, priced at that tier's prices read from the data."""
    import json

    src = Path(__file__).resolve().parents[1] / "transcript_reader" / "examples" / "codex-0.171.0-multi_step.rollout.jsonl"
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj.get("type") == "turn_context":
            obj["payload"]["service_tier"] = tier
        out.append(json.dumps(obj))
    path = tmp_path / src.name
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    info = api.inspect(path)
    (r,) = info.usage
    assert r.tier == tier and r.model == "gpt-5.5"
    p = data_prices("openai", "gpt-5.5", r.day or DAY, {"service_tier": tier})
    t = r.tokens
    expected = ((t.input - t.cached_input) * base(p.input_mtok) + t.cached_input * base(p.cache_read_mtok)
                + t.output * base(p.output_mtok)) / M
    got = price_session(info)
    assert got.usd == pytest.approx(float(expected), rel=1e-12) and got.price_date == r.day


def test_the_store_keeps_the_hour_long_cache_writes_and_prices_them_again_alike(tmp_path: Path) -> None:
    """The store's usage rows keep ``cache_write_1h``: a report from the store, and the store's prices
    after new price data (``reprice``), equal those of the file read whole."""
    from transcript_reader import providers
    from transcript_reader.sessions.store import open_store, refresh
    from transcript_reader.sessions.store_schema import connect
    from transcript_reader.sessions.stored import stored_usage
    from transcript_reader.usage.stored_prices import reprice

    def hour(u: dict[str, Any]) -> None:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": 0,
                               "ephemeral_1h_input_tokens": u.get("cache_creation_input_tokens", 0)}

    home = tmp_path / "claude" / "projects" / "-home-user-project"
    home.mkdir(parents=True)
    path = claude_with(home, hour)
    info = api.inspect(path)
    want = price_session(info).usd
    assert info.tokens is not None and info.tokens.cache_write_1h > 0 and want is not None
    sources = [(providers.get("claude"), tmp_path / "claude")]
    with open_store(tmp_path / "claude", cache_dir=tmp_path / "cache", provider="claude") as store:
        assert refresh(store).read == 1
        con = connect(store.path)
        assert reprice(con, "another price key") == len(info.usage)
        con.close()
    (_ident, rows, prices) = stored_usage(sources, tmp_path / "cache", key="another price key")[str(path)]
    assert [r.tokens.cache_write_1h for r in rows] == [r.tokens.cache_write_1h for r in info.usage]
    assert prices is not None
    assert sum(p.usd or 0 for p in prices) == pytest.approx(float(want), rel=1e-12)
