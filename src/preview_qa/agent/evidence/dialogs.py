"""Dialogs answered one way, on purpose: alert OK, confirm OK, beforeunload leave, prompt cancel (or the test's text);
each one is an event. Only this handler answers: browser-use's own (its popups watchdog) is switched off."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from preview_qa.agent.page import every_page
from preview_qa.events import DialogAnswered, Observed
from preview_qa.results import clip

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Dialog, Page

MESSAGE_LIMIT = 300


class Answer(StrEnum):
    """How a dialog was answered."""

    OK = "ok"  # alert, confirm: accepted
    LEAVE = "leave"  # beforeunload: the page is left
    CANCEL = "cancel"  # prompt without a value from the test
    TEXT = "text"  # prompt with the test's `dialogs: {prompt: TEXT}`


def answer_for(dialog_type: str, prompt_text: str | None) -> Answer:
    """The one rule: every dialog is accepted, except a prompt the test gave no text for."""
    if dialog_type == "beforeunload":
        return Answer.LEAVE
    if dialog_type == "prompt":
        return Answer.CANCEL if prompt_text is None else Answer.TEXT
    return Answer.OK


class DialogAnswerer:
    """A Playwright `dialog` listener on every page of the test's context. Playwright dismisses any dialog no listener
    of its own handles, and browser-use accepts them over CDP: two answers racing made a confirm a coin toss."""

    def __init__(self, test: str, prompt_text: str | None, emit: Callable[[Observed], None], step: Callable[[], int | None]):
        self._test, self._prompt_text, self._emit, self._step = test, prompt_text, emit, step
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self, context: BrowserContext) -> None:
        every_page(context, self._watch)

    def _watch(self, page: Page) -> None:
        page.on("dialog", self._on_dialog)

    def _on_dialog(self, dialog: Dialog) -> None:
        answer = answer_for(dialog.type, self._prompt_text)
        task = asyncio.get_running_loop().create_task(self._answer(dialog, answer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, dialog: Dialog, answer: Answer) -> None:
        step, error = self._step(), None
        try:
            if answer is Answer.CANCEL:
                await dialog.dismiss()
            else:
                await dialog.accept(self._prompt_text if answer is Answer.TEXT else None)
        except Exception as e:  # the page closed under it: the event says it was not answered
            error = f"{type(e).__name__}: {e}"
        message = clip(dialog.message, MESSAGE_LIMIT)
        answered = DialogAnswered(dialog=dialog.type, message=message, answer=str(answer), step=step, error=error)
        self._emit(answered.observed(self._test))
