"""Secrets kept out of every output: redaction of every form of a value, and the safe stderr."""
