"""Offline test world: a fixture web app and a scripted LLM server (any provider's protocol)."""
