"""Work browser-use's Agent did on the run's one thread, which every concurrent test waited for
(agent/adapter/patches.py, items 10 and 11): a full garbage collection as each agent closed; its four step models
(its actions' and its answer's) made again before every step, and the answer model's JSON schema for every request.
An agent now leaves collection to Python, and keeps its models while nothing they depend on changes, and makes them
again when something does."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

from browser_use import Agent, Tools
from browser_use.llm.openai.chat import ChatOpenAI
from browser_use.llm.schema import SchemaOptimizer

from preview_qa.agent.adapter import patches

STEP_MODELS = ("ActionModel", "AgentOutput", "DoneActionModel", "DoneAgentOutput")


def agent(tmp_path: Path) -> Agent:
    patches.apply()
    llm = ChatOpenAI(model="scripted", api_key="never-used", base_url="http://127.0.0.1:9/")
    return Agent(task="Read the price.", llm=llm, tools=Tools(), file_system_path=str(tmp_path))


def models(of: Agent) -> list[object]:
    return [getattr(of, name) for name in STEP_MODELS]


def test_an_agent_keeps_its_step_models_from_page_to_page(tmp_path: Path) -> None:
    a = agent(tmp_path)
    made = models(a)
    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    asyncio.run(a._update_action_models_for_page("http://shop.test/cart"))
    assert models(a) == made and all(x is y for x, y in zip(models(a), made, strict=True))


def test_the_next_step_after_a_forced_answer_has_every_action_again(tmp_path: Path) -> None:
    a = agent(tmp_path)
    a.AgentOutput = a.DoneAgentOutput  # what browser-use does on the last step, or after too many failures
    assert "navigate" not in str(SchemaOptimizer.create_optimized_json_schema(a.AgentOutput))
    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    assert "navigate" in str(SchemaOptimizer.create_optimized_json_schema(a.AgentOutput))


def test_an_action_kept_to_a_domain_comes_and_goes_with_the_page(tmp_path: Path) -> None:
    a = agent(tmp_path)

    @a.tools.registry.action("Only on the admin site.", domains=["admin.test"])
    async def refund_order() -> None: ...

    def actions() -> str:
        return str(SchemaOptimizer.create_optimized_json_schema(a.AgentOutput))

    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    assert "refund_order" not in actions()
    asyncio.run(a._update_action_models_for_page("https://admin.test/orders"))
    assert "refund_order" in actions()
    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    assert "refund_order" not in actions()


def test_an_action_registered_again_makes_the_models_again(tmp_path: Path) -> None:
    a = agent(tmp_path)

    @a.tools.registry.action("Read the price.")
    async def read_price() -> None: ...

    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    assert "currency" not in str(SchemaOptimizer.create_optimized_json_schema(a.AgentOutput))

    @a.tools.registry.action("Read the price.")
    async def read_price(currency: str) -> None: ...  # noqa: F811  # the same name, registered again with a parameter

    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    assert "currency" in str(SchemaOptimizer.create_optimized_json_schema(a.AgentOutput))


def test_a_schema_is_made_once_and_each_request_gets_its_own_copy(tmp_path: Path) -> None:
    output = agent(tmp_path).AgentOutput
    first = SchemaOptimizer.create_optimized_json_schema(output)
    first["properties"].clear()
    again = SchemaOptimizer.create_optimized_json_schema(output)
    assert again["properties"] and again == SchemaOptimizer.create_optimized_json_schema(output)


def test_an_agent_closing_leaves_collection_to_python(tmp_path: Path) -> None:
    a = agent(tmp_path)
    full: list[int] = []

    def heard(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(heard)
    try:
        asyncio.run(a.close())
    finally:
        gc.callbacks.remove(heard)
    assert full == []
