"""A real browser-use Agent in real Chromium logs in to DemoSite, driven by ScriptedLLM over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from preview_qa.demo.scripted_llm import ScriptedLLM, load_scenarios
from tests.repo import DEMO
from tests.site import DemoSite

CHROMIUM = os.environ.get("PREVIEW_QA_CHROMIUM", "/usr/bin/chromium")


class Verdict(BaseModel):
    status: Literal["pass", "fail"]
    reason: str


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"no Chromium at {CHROMIUM}")
def test_scripted_login_drives_a_real_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "false")
    monkeypatch.setenv("BROWSER_USE_SETUP_LOGGING", "false")
    from browser_use import Agent, BrowserProfile, BrowserSession
    from browser_use.llm import ChatOpenAI

    scenarios = [s for s in load_scenarios(DEMO / "agent.yml") if s["name"] == "login"]
    with DemoSite() as site, ScriptedLLM(scenarios) as llm:
        profile = BrowserProfile(
            executable_path=CHROMIUM,
            headless=True,
            enable_default_extensions=False,
            chromium_sandbox=False,
            user_data_dir=str(tmp_path / "profile"),
        )
        session = BrowserSession(browser_profile=profile)
        agent = Agent(
            task="Log in as demo@acme.test with password <secret>demo_password</secret> and check the dashboard "
            "lists three orders.",
            llm=ChatOpenAI(model="gpt-4.1-mini", api_key="sk-scripted", base_url=llm.url, max_retries=0),
            browser_session=session,
            output_model_schema=Verdict,
            sensitive_data={"demo_password": site.password},
            initial_actions=[{"navigate": {"url": f"{site.url}/login", "new_tab": False}}],
            use_judge=False,
            enable_signal_handler=False,
        )

        async def run() -> object:
            try:
                return await asyncio.wait_for(agent.run(max_steps=5), timeout=180)
            finally:
                await session.kill()

        history = asyncio.run(run())

    assert ("POST", "/login") in site.request_log
    assert ("GET", "/dashboard") in site.request_log, site.request_log
    result = json.loads(history.final_result() or "{}")  # type: ignore[attr-defined]
    assert result["status"] == "pass", result
    assert [c["kind"] for c in llm.calls] == ["agent", "agent"]
    assert all(c["status"] == 200 for c in llm.calls)
    assert site.password not in json.dumps(llm.requests)  # the secret never reaches the LLM
