"""The test manifest: pydantic models (unknown keys refused), the YAML loader whose errors name file and line, the JSON
Schema, setup tests."""
