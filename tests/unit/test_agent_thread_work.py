"""Work browser-use's Agent did on the run's one thread, which every concurrent test waited for
(agent/adapter/patches.py, items 10 to 13): a full garbage collection as each agent closed; its four step models
(its actions' and its answer's) made again before every step, and the answer model's JSON schema for every request;
a pydantic TypeAdapter made for every event handler's result, and a default factory's signature read for every
private attribute of every model made. An agent now leaves collection to Python, and keeps its models while nothing
they depend on changes, and makes them again when something does; an adapter is made once a type, a signature read
once a factory."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

from browser_use import Agent, Tools
from browser_use.llm.openai.chat import ChatOpenAI
from browser_use.llm.schema import SchemaOptimizer

from preview_qa.agent.adapter import patches
from preview_qa.agent.adapter.build import report_model

STEP_MODELS = ("ActionModel", "AgentOutput", "DoneActionModel", "DoneAgentOutput")


def agent(tmp_path: Path, output_schema: dict[str, Any] | None = None) -> Agent:
    patches.apply()
    llm = ChatOpenAI(model="scripted", api_key="never-used", base_url="http://127.0.0.1:9/")
    answer = report_model(output_schema)
    return Agent(task="Read the price.", llm=llm, tools=Tools(), file_system_path=str(tmp_path), output_model_schema=answer)


def models(of: Agent) -> list[object]:
    return [getattr(of, name) for name in STEP_MODELS]


def test_an_agent_keeps_its_step_models_from_page_to_page(tmp_path: Path) -> None:
    a = agent(tmp_path)
    made = models(a)
    asyncio.run(a._update_action_models_for_page("http://shop.test/"))
    asyncio.run(a._update_action_models_for_page("http://shop.test/cart"))
    assert models(a) == made and all(x is y for x, y in zip(models(a), made, strict=True))


def test_agents_with_the_same_actions_and_answer_share_their_step_models(tmp_path: Path, monkeypatch: Any) -> None:
    """Each agent's tools are new, and some of their parameter models too (browser-use makes them from the action's
    signature): the second agent takes the models the first one made, and they still read an action it asks for."""
    first = agent(tmp_path)
    made: list[object] = []
    monkeypatch.setattr(patches, "_setup_action_models", lambda a: made.append(a))
    second = agent(tmp_path)
    assert made == [] and all(x is y for x, y in zip(models(second), models(first), strict=True))
    assert (
        second.tools.registry.registry.actions["wait"].param_model
        is not first.tools.registry.registry.actions["wait"].param_model
    )
    asked = second.AgentOutput.model_validate(
        {"evaluation_previous_goal": "", "memory": "", "next_goal": "", "action": [{"wait": {"seconds": 2}}]}
    )
    assert asked.action[0].model_dump(exclude_unset=True) == {"wait": {"seconds": 2}}


def test_agents_whose_answers_differ_get_answer_models_of_their_own(tmp_path: Path) -> None:
    """A test's output_schema types its answer's `data`: an agent never gets the answer model of another test's schema,
    and the same schema gives the same class (so its agents share their models)."""
    price = {"type": "object", "properties": {"price": {"type": "string"}}, "required": ["price"]}
    count = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    plain, priced, counted, priced_again = (agent(tmp_path, schema) for schema in (None, price, count, dict(price)))

    def data(of: Agent) -> str:
        return str(SchemaOptimizer.create_optimized_json_schema(of.DoneAgentOutput))

    assert "price" in data(priced) and "count" not in data(priced)
    assert "count" in data(counted) and "price" not in data(counted)
    assert "price" not in data(plain) and "count" not in data(plain)
    assert priced_again.DoneAgentOutput is priced.DoneAgentOutput and counted.DoneAgentOutput is not priced.DoneAgentOutput


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


def test_a_handler_results_type_is_checked_by_one_adapter_made_once_and_still_checks(monkeypatch: Any) -> None:
    """Item 12: bubus made a pydantic TypeAdapter for every handler's result; one per type now, which still refuses a
    result of the wrong type as bubus's own did."""
    from bubus import BaseEvent, EventBus
    from pydantic import TypeAdapter

    patches.apply()
    made: list[object] = []
    monkeypatch.setattr(patches, "TypeAdapter", lambda tp: made.append(tp) or TypeAdapter(tp))
    patches._adapter_once.cache_clear()

    class Counted(BaseEvent[list[int]]):
        pass

    async def run(answer: object) -> object:
        bus = EventBus(name="counted")
        bus.on(Counted, lambda event: answer)
        try:
            return await (await bus.dispatch(Counted())).event_result()
        except Exception as e:
            return e
        finally:
            await bus.stop()

    assert [asyncio.run(run([n])) for n in range(3)] == [[0], [1], [2]]
    assert made == [list[int]]  # one adapter for the three results
    assert "did not match expected event_result_type" in str(asyncio.run(run("not a list")))


def test_a_default_factorys_signature_is_read_once() -> None:
    """Item 13: pydantic read `inspect.signature` of a private attribute's default factory for every model made."""
    from pydantic import BaseModel, PrivateAttr
    from pydantic._internal import _fields

    patches.apply()

    def seen() -> dict[str, int]:
        return {}

    class Watchdog(BaseModel):
        _seen: dict[str, int] = PrivateAttr(default_factory=seen)

    before = patches._takes_validated_data_once.cache_info()
    first = Watchdog()
    for _ in range(50):
        assert Watchdog()._seen == {} and Watchdog()._seen is not first._seen  # a new dict each, as before
    after = patches._takes_validated_data_once.cache_info()
    assert after.misses - before.misses == 1 and after.hits - before.hits >= 100
    assert _fields.takes_validated_data_argument is patches._takes_validated_data_asked_once
