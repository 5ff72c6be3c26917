"""Runs the selected tests: the runner (concurrency, timeouts, retries, setup tests, baseline, cancellation), preview
readiness, saved state, the replay cache, the merge of shards."""
