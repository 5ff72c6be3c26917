"""Offline test world: a fixture web app and a scripted OpenAI-compatible LLM server."""
