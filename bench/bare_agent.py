"""The baseline for bench/speed.py: a bare browser-use Agent script doing the same scripted test, nothing of ours."""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")

from browser_use import Agent, BrowserProfile, BrowserSession
from browser_use.llm.openai.chat import ChatOpenAI


async def main(llm_url: str, start: str, task: str, chromium: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="bare-agent-") as workdir:
        session = BrowserSession(
            browser_profile=BrowserProfile(
                executable_path=chromium,
                headless=True,
                user_data_dir=os.path.join(workdir, "profile"),
                chromium_sandbox=os.geteuid() != 0,
                enable_default_extensions=False,
                args=["--disable-dev-shm-usage"],
            )
        )
        agent = Agent(
            task=task,
            llm=ChatOpenAI(model="scripted", api_key="bench", base_url=llm_url),
            browser_session=session,
            initial_actions=[{"navigate": {"url": start}}],
            directly_open_url=False,
            enable_signal_handler=False,
            file_system_path=os.path.join(workdir, "f"),
        )
        history = await agent.run(max_steps=5)
        await session.kill()
        return bool(history.is_done())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--llm-url", required=True)
    parser.add_argument("--start", required=True)
    parser.add_argument("--task", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    raise SystemExit(0 if asyncio.run(main(args.llm_url, args.start, args.task, args.chromium)) else 1)
