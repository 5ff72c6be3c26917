"""--vision: which provider refusals say the model reads no images (each server's own words), auto learning it once a
run, and the messages sent without their image parts."""

from __future__ import annotations

import pytest
from browser_use.llm.messages import ContentPartImageParam, ContentPartTextParam, ImageURL, SystemMessage, UserMessage

from preview_qa.agent.vision import VisionSwitch, takes_no_images, without_images
from preview_qa.config import Vision


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"),  # llama.cpp
        (400, 'model "llama3.2" does not support images'),  # Ollama's wording
        (400, "Qwen/Qwen2.5-7B-Instruct is not a multimodal model"),  # vLLM
        (400, "Invalid content type. image_url is only supported by certain models."),  # OpenAI
    ],
)
def test_each_server_s_refusal_of_an_image_is_known(status: int, message: str) -> None:
    assert takes_no_images(status, message)


@pytest.mark.parametrize(
    ("status", "message"), [(500, "internal error"), (None, "image input is not supported"), (429, "slow down")]
)
def test_other_faults_are_not_taken_for_a_text_only_model(status: int | None, message: str) -> None:
    assert not takes_no_images(status, message)


def test_auto_learns_once_and_on_and_off_never_change() -> None:
    refusal = "image input is not supported"
    auto = VisionSwitch(Vision.AUTO)
    assert auto.sends_images and auto.refused(500, refusal) and auto.learn(refusal) and not auto.sends_images
    assert auto.refused(500, refusal) and not auto.learn(refusal) and auto.off_because == refusal  # said once a run
    on, off = VisionSwitch(Vision.ON), VisionSwitch(Vision.OFF)
    assert not on.refused(500, refusal) and on.sends_images and not off.sends_images


def test_messages_go_without_their_images_and_keep_their_text() -> None:
    image = ContentPartImageParam(image_url=ImageURL(url="data:image/png;base64,AAAA"))
    messages = [SystemMessage(content="rules"), UserMessage(content=[ContentPartTextParam(text="the page: Orders"), image])]
    sent = without_images(messages)
    assert sent[0] == messages[0] and sent[1].content == [ContentPartTextParam(text="the page: Orders")]
    assert without_images([UserMessage(content=[image])])[0].content == [ContentPartTextParam(text="(no screenshot)")]
