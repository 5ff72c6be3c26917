"""Replace secret values with their `<secret>name</secret>` placeholders in any text or JSON-like value."""

from __future__ import annotations

from typing import Any


class Redactor:
    """Knows every secret of a run; longest values first so a secret that contains another is replaced whole."""

    def __init__(self, secrets: dict[str, str]):
        self._pairs = sorted(((v, f"<secret>{k}</secret>") for k, v in secrets.items() if v), key=lambda p: -len(p[0]))

    @classmethod
    def of_tests(cls, secrets: dict[str, dict[str, str]]) -> Redactor:
        """Every test's secrets at once: test name -> placeholder -> value."""
        return cls({name: value for values in secrets.values() for name, value in values.items()})

    def add(self, secrets: dict[str, str]) -> None:
        """Secrets learnt during the run (a saved login's cookie values): redacted from now on, like the others."""
        self._pairs = sorted([*self._pairs, *Redactor(secrets)._pairs], key=lambda p: -len(p[0]))

    def text(self, text: str) -> str:
        for value, placeholder in self._pairs:
            text = text.replace(value, placeholder)
        return text

    def value(self, value: Any) -> Any:
        if not self._pairs:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value
