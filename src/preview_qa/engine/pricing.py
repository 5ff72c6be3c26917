"""What a model's tokens cost (prices shipped with the package, or the user's override) and when a test's budget is spent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from preview_qa.results import Usage

if TYPE_CHECKING:
    from preview_qa.manifest.models import TestSpec

# The browser-use cloud is in no public price list: its own published prices (browser_use/tokens/custom_pricing.py
# in browser-use 0.13.14), USD per million input and output tokens.
BROWSER_USE_CLOUD = {
    "bu-2-0": (0.60, 3.50),
    "bu-latest": (0.60, 3.50),
    "bu-1-0": (0.60, 3.50),
    "bu-2-0-mini-preview": (0.15, 1.50),
}
BROWSER_USE_CLOUD_DATED = "browser-use 0.13.14"
OVERRIDE = "--price-per-mtok"


@dataclass(frozen=True)
class Price:
    """How one provider's model is priced: a flat price per million tokens, or genai-prices' own (maybe tiered)."""

    provider: str
    model: str
    source: str  # where the price comes from, for the report and the docs: "genai-prices 0.2.3 (data of ...)"
    per_mtok: tuple[float, float] | None = None  # (input, output) USD per million tokens; None = genai-prices decides

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for one call's tokens (tiers, where a model has them, apply per call as the provider bills them)."""
        if self.per_mtok is not None:
            return (input_tokens * self.per_mtok[0] + output_tokens * self.per_mtok[1]) / 1_000_000
        import genai_prices

        usage = genai_prices.Usage(input_tokens=input_tokens, output_tokens=output_tokens)
        return float(genai_prices.calc_price(usage, self.model, provider_id=self.provider).total_price)


def parse_override(text: str) -> tuple[float, float]:
    """'IN,OUT' (USD per million input and output tokens) -> (IN, OUT); ValueError with the reason otherwise."""
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        prices = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(
            f"{OVERRIDE} must be two numbers 'IN,OUT' (USD per million input and output tokens), got {text!r}."
        ) from None
    if min(prices) < 0:
        raise ValueError(f"{OVERRIDE} cannot be negative (got {text!r}).")
    return prices


def find_price(provider: str, model: str, override: tuple[float, float] | None = None) -> Price | None:
    """The price of `model` on `provider`, never downloaded: the override, else the bundled data; None if unknown."""
    if override is not None:
        return Price(provider, model, OVERRIDE, override)
    if provider == "ollama":  # the model runs on the user's own machine: no provider bills its tokens
        return Price(provider, model, "ollama runs locally (free)", (0.0, 0.0))
    if provider == "browser-use":
        known = BROWSER_USE_CLOUD.get(model)
        return Price(provider, model, BROWSER_USE_CLOUD_DATED, known) if known else None
    return _bundled(provider, model)


def _bundled(provider: str, model: str) -> Price | None:
    import genai_prices
    from genai_prices.data_snapshot import get_snapshot

    # get_snapshot() is the data shipped in the wheel: genai-prices fetches newer data only when UpdatePrices is
    # started, which nothing here does (a run never downloads anything)
    try:
        found = get_snapshot().find_provider_model(model, None, provider, None)
    except LookupError:
        return None
    return Price(provider, model, f"genai-prices {genai_prices.__version__} ({found[1].id})")


def unpriced(budget: str, provider: str, model: str) -> str:
    """Why a cost budget is refused: no price is known for the model, and how to give one."""
    return (
        f"{budget} cannot be enforced: no price is known for model '{model}' of provider '{provider}'; give its "
        f"price with {OVERRIDE} IN,OUT (USD per million input and output tokens) or drop the budget."
    )


def budget_exceeded(spec: TestSpec, used: Usage) -> str | None:
    """Why the test must stop now, if it is over its token or cost budget (a cost that cannot be known is over it)."""
    if spec.max_tokens is not None and used.total_tokens > spec.max_tokens:
        return f"budget exceeded: max_tokens={spec.max_tokens} (used {used.total_tokens})"
    if spec.max_cost_usd is None or (used.llm_calls == 0 and used.total_tokens == 0):  # nothing spent, whatever the price
        return None
    if used.cost_usd is None:
        return f"budget cannot be enforced: max_cost_usd={spec.max_cost_usd:g} but the model's price is unknown"
    if used.cost_usd > spec.max_cost_usd:
        return f"budget exceeded: max_cost_usd={spec.max_cost_usd:g} (spent ${used.cost_usd:.4f})"
    return None
