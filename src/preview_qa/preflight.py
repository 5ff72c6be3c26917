"""What `run` refuses before it starts a browser (a secret's variable unset, no API key, no Chromium): one check that
`run` and `validate` share."""

from __future__ import annotations

from collections.abc import Mapping

from preview_qa.agent.llm import LLMConfigError, make_llm
from preview_qa.manifest import Manifest, ManifestError, resolve_secrets

NO_CHROMIUM = "no Chromium found; install it (apt-get install chromium) or set PREVIEW_QA_CHROMIUM."


class PreflightError(Exception):
    """The environment cannot run this manifest; the message is one sentence saying what to set."""


def preflight(manifest: Manifest, environ: Mapping[str, str], provider: str, model: str | None, api_key: str | None,
              llm_base_url: str | None, chromium: str | None) -> dict[str, dict[str, str]]:
    """Each test's secret values; PreflightError naming the first thing missing (secrets first: they name file and line)."""
    try:
        secrets = resolve_secrets(manifest, environ)
        make_llm(provider, model, api_key, llm_base_url, dict(environ))
    except (ManifestError, LLMConfigError) as e:
        raise PreflightError(str(e)) from None
    if chromium is None:
        raise PreflightError(NO_CHROMIUM)
    return secrets
