"""Work browser-use's Agent did on the run's one thread, which every concurrent test waited for
(agent/browser_use_patches.py, item 10): a full garbage collection as each agent closed. An agent now leaves
collection to Python."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

from browser_use import Agent, Tools
from browser_use.llm.openai.chat import ChatOpenAI

from preview_qa.agent import browser_use_patches


def agent(tmp_path: Path) -> Agent:
    browser_use_patches.apply()
    llm = ChatOpenAI(model="scripted", api_key="never-used", base_url="http://127.0.0.1:9/")
    return Agent(task="Read the price.", llm=llm, tools=Tools(), file_system_path=str(tmp_path))


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
