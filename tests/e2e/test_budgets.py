"""End to end, with no network beyond 127.0.0.1: a cost budget holds (the prices ship with preview-qa), a test over it
is errored naming it, and a budget on a model of unknown price is refused before anything runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CliRun, clean_env, preview_qa_run, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

DEAD = "http://127.0.0.1:9"  # every request that is not to 127.0.0.1 fails, as offline or behind a closed proxy
OFFLINE = {
    "HTTP_PROXY": DEAD,
    "HTTPS_PROXY": DEAD,
    "ALL_PROXY": DEAD,
    "http_proxy": DEAD,
    "https_proxy": DEAD,
    "all_proxy": DEAD,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}

MANIFEST = """
version: 1
defaults: {max_steps: 6, timeout: 120, start: /product}
tests:
  - name: over its budget
    task: "[scrolls] Read the price."
    max_cost_usd: 0.0005
  - name: within its budget
    task: "[passes] Read the price."
    max_cost_usd: 1
"""
SCENARIOS = [
    {"match": "[scrolls]", "turns": [{"actions": [{"scroll": {"down": True}}]}]},
    {"match": "[passes]", "turns": [{"done": {"status": "pass", "reason": "The price is shown."}}]},
]


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    # gpt-4.1-mini at $0.40/$1.60 per million tokens; each scripted answer reports about 3,000 prompt tokens
    with scripted_run(
        tmp_path_factory.mktemp("budgets"),
        site,
        MANIFEST,
        SCENARIOS,
        "--model",
        "gpt-4.1-mini",
        "--concurrency",
        "2",
        env=clean_env(**OFFLINE),
    ) as done:
        yield done


def test_a_test_over_its_cost_budget_is_errored_naming_it(budget_run: CliRun) -> None:
    over = budget_run.test("over its budget")
    assert over["status"] == "errored", over
    assert over["reason"].startswith("budget exceeded: max_cost_usd=0.0005 (spent $"), over["reason"]
    assert over["usage"]["cost_usd"] > 0.0005 and over["usage"]["llm_calls"] < 6
    assert budget_run.exit_code == 1


def test_tokens_and_cost_are_counted_from_our_own_count(budget_run: CliRun) -> None:
    passed = budget_run.test("within its budget")
    assert passed["status"] == "passed", passed
    usage = passed["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    expected = (usage["prompt_tokens"] * 0.4 + usage["completion_tokens"] * 1.6) / 1_000_000
    assert usage["cost_usd"] == pytest.approx(expected)


def test_a_cost_budget_on_a_model_of_unknown_price_is_refused_before_the_run(tmp_path: Path, site: DemoSite) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests:\n  - {name: a, task: do it}\n", encoding="utf-8")
    args = ["--llm-base-url", "http://127.0.0.1:9/v1", "--model", "my-own-finetune", "--max-cost-usd", "0.01"]
    run = preview_qa_run(manifest, site.url, tmp_path / "out", None, *args, env=clean_env(**OFFLINE))
    assert run.exit_code == 2, run.stderr
    assert run.stderr.strip() == (
        "preview-qa: error: --max-cost-usd cannot be enforced: no price is known for model 'my-own-finetune' of "
        "provider 'openai'; give its price with --price-per-mtok IN,OUT (USD per million input and output tokens) "
        "or drop the budget."
    )
    assert not (tmp_path / "out").exists()


def test_a_budget_on_exact_steps_runs_on_a_model_of_unknown_price(tmp_path: Path, site: DemoSite) -> None:
    """Exact steps call no LLM (#65, 10): their budgets hold whatever the model's price, and the test passes."""
    manifest = tmp_path / "qa.yml"
    manifest.write_text(
        "version: 1\ntests:\n  - name: exact settings\n    start: /settings\n    max_cost_usd: 0.01\n    steps:\n"
        "      - {fill: {label: Display name, value: Ada Lovelace}}\n"
        "      - {click: {role: button, name: Save}, expect: {text: 'Saved display name: Ada Lovelace'}}\n",
        encoding="utf-8",
    )
    args = ["--llm-base-url", "http://127.0.0.1:9/v1", "--model", "my-own-finetune", "--max-cost-usd", "0.01"]
    run = preview_qa_run(manifest, site.url, tmp_path / "out", None, *args, "--run-max-cost-usd", "1", env=clean_env(**OFFLINE))
    assert run.exit_code == 0, run.stderr
    test = run.test("exact settings")
    assert test["status"] == "passed" and test["usage"]["llm_calls"] == 0, test
