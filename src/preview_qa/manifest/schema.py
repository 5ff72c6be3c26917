"""The manifest's JSON Schema, generated from its pydantic models, for editors and CI (`preview-qa schema`)."""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import CoreSchema

from preview_qa.manifest.models import Manifest

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_URL = "https://raw.githubusercontent.com/OWNER/preview-qa/v1/schema/manifest-v1.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA_URL}"


class _DescribedFields(GenerateJsonSchema):
    """Fields keep their description (what an editor shows on hover), not a title made from their name."""

    def field_title_should_be_set(self, schema: CoreSchema) -> bool:
        return False


def manifest_schema() -> dict[str, Any]:
    """What the loader accepts, as far as JSON Schema can say it (not: unique names, declared secrets, glob syntax)."""
    generated = Manifest.model_json_schema(mode="validation", schema_generator=_DescribedFields)
    # A test has a task or steps, never both. The loader merges `defaults` into each test before it checks the test, so
    # a test may leave `task` to defaults (a default task does not apply to a test with steps).
    spec = generated["$defs"]["TestSpec"]
    spec["not"] = {"required": ["task", "steps"]}
    generated["if"] = {
        "required": ["defaults"],
        "properties": {"defaults": {"required": ["task"], "properties": {"task": {"type": "string"}}}},
    }
    generated["else"] = {"properties": {"tests": {"items": {"anyOf": [{"required": ["task"]}, {"required": ["steps"]}]}}}}
    generated.pop("title", None)
    return {"$schema": DIALECT, "$id": SCHEMA_URL, "title": "preview-qa manifest", **generated}


def render() -> str:
    """The schema as the file the repository keeps (schema/manifest-v1.json) and `preview-qa schema` prints."""
    return json.dumps(manifest_schema(), indent=2, ensure_ascii=False) + "\n"
