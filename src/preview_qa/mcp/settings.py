"""What the server was started with, for every call: its folder, its environment (the provider, model and API key,
as for `run`), and the cost cap of each call that may spend (--run-max-cost-usd), refused for a model of unknown price."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from preview_qa.engine.pricing import find_price, parse_override, unpriced
from preview_qa.mcp.folder import Folder, ToolRefused
from preview_qa.providers import default_model

Progress = Callable[[float, float | None, str], Coroutine[Any, Any, None]]  # (done, total, message) to the caller
CAP_FLAG = "the server's --run-max-cost-usd"


@dataclass(frozen=True)
class Settings:
    folder: Folder
    env: Mapping[str, str]
    provider: str
    model: str | None
    run_max_cost_usd: float  # each call's: the run it starts
    price_per_mtok: str | None = None  # IN,OUT as given, handed on to each run

    def llm_flags(self) -> list[str]:
        """The provider, the model and the price, as each run's flags (the API key stays in the environment)."""
        flags = ["--provider", self.provider, *(["--model", self.model] if self.model else [])]
        return flags + (["--price-per-mtok", self.price_per_mtok] if self.price_per_mtok else [])

    def refuse_unpriced(self) -> None:
        """A call that may spend needs the model's price, as `run` does for a cost budget: a cap that cannot hold is
        refused, never ignored (a run whose tests cannot call the LLM does not ask)."""
        price = parse_override(self.price_per_mtok) if self.price_per_mtok else None
        model = default_model(self.provider, self.model)
        if find_price(self.provider, model, price) is None:
            raise ToolRefused(unpriced(CAP_FLAG, self.provider, model).replace("or drop the budget", "when the server starts"))

    def child_env(self) -> dict[str, str]:
        """The server's environment for a run it starts, outside GitHub Actions' reporting (no job summary, no PR
        comment, no workflow commands: the run is the coding agent's, not the workflow's)."""
        return {k: v for k, v in self.env.items() if k != "GITHUB_ACTIONS"}
