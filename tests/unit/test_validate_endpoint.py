"""`validate` asks an LLM endpoint given with --llm-base-url whether it answers and serves the model: one that gives no
HTTP answer is refused with its URL (before, validate passed a dead endpoint and `run`'s error did not name it); one
that does not list the model is a warning (llama.cpp's server serves its one model whatever it is called)."""

from __future__ import annotations

import socket
from pathlib import Path

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env, run_in_process

MANIFEST = "version: 1\ntests:\n  - name: Home\n    task: Open the home page.\n"


def validate(tmp_path: Path, url: str, model: str) -> tuple[int, str]:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    env = {**clean_env(), "OPENAI_API_KEY": "sk-local"}
    done = run_in_process(["validate", "qa.yml", "--llm-base-url", url, "--model", model], env, tmp_path)
    return done.returncode, done.stdout + done.stderr


def test_an_endpoint_that_serves_the_model_passes(tmp_path: Path) -> None:
    with ScriptedLLM([]) as llm:
        code, said = validate(tmp_path, llm.url, "scripted")
    assert code == 0 and "warning" not in said, said


def test_an_endpoint_that_does_not_list_the_model_is_a_warning(tmp_path: Path) -> None:
    with ScriptedLLM([]) as llm:
        url = llm.url
        code, said = validate(tmp_path, url, "llama3.2")
    assert code == 0, said
    assert f"preview-qa: warning: {url}/models does not list model 'llama3.2' (it lists: scripted)" in said


def test_a_dead_endpoint_is_refused_naming_its_url(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, said = validate(tmp_path, f"http://127.0.0.1:{port}/v1", "m")
    assert code == 2, said
    assert f"the LLM endpoint did not answer: ConnectError for http://127.0.0.1:{port}/v1/models" in said
