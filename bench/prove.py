"""The cost of --prove (engine/proof.py) on the demo's passing tests, one at a time: a run that replays them from the
cache, against the same run with --prove (its proofs not yet cached, then cached), in wall seconds and LLM calls (the
page checks counted). Goal: proving costs at most (mutations + 1) times the replay. Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from preview_qa import app
from preview_qa.config import RunConfig
from preview_qa.demo.runner import DEMO_PASSWORD, HERE, INTENDED
from preview_qa.demo.scripted_llm import ScriptedLLM, load_scenarios
from preview_qa.demo.shop import DemoShop
from preview_qa.engine.proof import PROOFS
from preview_qa.manifest import loader
from preview_qa.results import RunResult


def timed(config: RunConfig) -> tuple[float, RunResult]:
    manifest = loader.load(config.manifest)
    clock = time.monotonic()
    result = app.execute(manifest, config, {**os.environ, "DEMO_PASSWORD": DEMO_PASSWORD})
    return time.monotonic() - clock, result


def config(site: DemoShop, llm: ScriptedLLM, folder: Path, only: list[str], prove: bool) -> RunConfig:
    return RunConfig(
        manifest=HERE / "qa.yml",
        base_url=site.url,
        out=folder / "out",
        model="scripted-demo",
        api_key="demo-key",
        llm_base_url=llm.url,
        concurrency=1,
        only=only,
        cache=folder / "cache",
        prove=prove,
    )


def main(repeat: int) -> None:
    manifest = loader.load(HERE / "qa.yml")
    passing = [t.name for t in manifest.tests if t.name not in INTENDED]
    scenarios = load_scenarios(HERE / "agent.yml")
    with tempfile.TemporaryDirectory() as folder, DemoShop(password=DEMO_PASSWORD) as site, ScriptedLLM(scenarios) as llm:
        plain, proving = (config(site, llm, Path(folder), passing, prove) for prove in (False, True))
        timed(plain)  # the agent records each test
        replays, proofs, cached = [], [], []
        for _ in range(repeat):
            replays.append(timed(plain))
            shutil.rmtree(Path(folder) / "cache" / PROOFS, ignore_errors=True)
            calls = len(llm.calls)
            proofs.append((*timed(proving), len(llm.calls) - calls))
            cached.append(timed(proving))
    replay_s, replayed = min(replays, key=lambda r: r[0])
    prove_s, proved, page_checks = min(proofs, key=lambda r: r[0])
    cached_s = min(s for s, _ in cached)
    mutations = sum(len(t.proof.mutations) for t in proved.tests if t.proof is not None)
    goal = (mutations / len(passing) + 1) * replay_s
    print(f"{len(passing)} passing demo tests, one at a time, fastest of {repeat}:")
    print(f"  replayed from the cache: {replay_s:.1f} s, {replayed.usage.llm_calls} LLM call(s)")
    print(
        f"  with --prove: {prove_s:.1f} s ({prove_s / replay_s:.1f}x the replay), {mutations} mutation replays, "
        f"{page_checks} LLM call(s) in all (page checks included); goal: at most {goal:.1f} s "
        f"((mutations per test + 1) x the replay)"
    )
    print(f"  with --prove, its proofs cached: {cached_s:.1f} s ({cached_s / replay_s:.1f}x the replay)")
    for t in proved.tests:
        if t.proof is not None:
            print(f"    {t.name}: {t.proof.verdict.value}, {len(t.proof.mutations)} mutation(s): {t.proof.reason}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    main(parser.parse_args().repeat)
