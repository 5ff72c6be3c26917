#!/usr/bin/env bash
# The action's run step: choose the image, then run `preview-qa run` in it, the workspace mounted at its own path.
# Every input arrives as an environment variable (INPUT_*, hyphens kept) and is forwarded with `-e NAME`:
# no input is ever pasted into shell text or a command line.
set -euo pipefail

image="${PREVIEW_QA_IMAGE:-}"
# The image of the ref the workflow used the action at: the release tags each image with its version tags and its
# full commit SHA, so `@v1`, `@v1.2.3` and `@<commit SHA>` all find theirs. A ref that cannot be an image tag (a
# branch with a slash) has none.
if [ -z "$image" ] && [ -n "${ACTION_REPOSITORY:-}" ] && [[ "${ACTION_REF:-}" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
  image="ghcr.io/${ACTION_REPOSITORY,,}:${ACTION_REF}"
  docker pull --quiet "$image" >&2 || image=""
fi
if [ -z "$image" ]; then  # `uses: ./`, or a ref without a release image: build from the action's own source
  image="preview-qa:local"
  docker build --quiet --tag "$image" "$GITHUB_ACTION_PATH" >&2
fi

# Same paths inside and out, so results-path, annotations and $GITHUB_OUTPUT/$GITHUB_STEP_SUMMARY (under
# RUNNER_TEMP) mean the same on both sides; the runner's uid, so later steps own what the run writes;
# the host's network, so a preview served on localhost by an earlier step is reachable. No --shm-size: Chromium
# runs with --disable-dev-shm-usage (its shared memory lives in /tmp), so /dev/shm's size never matters.
args=(run --rm --network host --user "$(id -u):$(id -g)"
      --volume "$GITHUB_WORKSPACE:$GITHUB_WORKSPACE" --workdir "$GITHUB_WORKSPACE"
      --volume "$RUNNER_TEMP:$RUNNER_TEMP")
forward=(CI GITHUB_ACTIONS GITHUB_WORKSPACE GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_EVENT_PATH GITHUB_EVENT_NAME GITHUB_REF_NAME
         GITHUB_API_URL GITHUB_SERVER_URL GITHUB_REPOSITORY GITHUB_RUN_ID GITHUB_RUN_ATTEMPT GITHUB_SHA
         INPUT_MANIFEST INPUT_BASE-URL INPUT_PROVIDER INPUT_MODEL INPUT_API-KEY INPUT_LLM-BASE-URL INPUT_CONCURRENCY
         INPUT_OUT INPUT_WAIT-TIMEOUT INPUT_EXTRA-HEADERS INPUT_HTTP-CREDENTIALS INPUT_COMMENT INPUT_GITHUB-TOKEN INPUT_FAIL-ON
         INPUT_SHARD INPUT_MAX-TOKENS INPUT_MAX-COST-USD INPUT_RUN-MAX-TOKENS INPUT_RUN-MAX-COST-USD INPUT_PRICE-PER-MTOK INPUT_TAGS INPUT_SKIP-TAGS INPUT_CHANGED-ONLY INPUT_IMPACTED
         INPUT_RETRIES INPUT_BASELINE-URL INPUT_ACCEPT-VISUAL INPUT_TRACE INPUT_VISION INPUT_LLM-TIMEOUT INPUT_MAX-OUTPUT-TOKENS INPUT_BROWSER-START-TIMEOUT INPUT_CDP-URL INPUT_PROVE
         PREVIEW_QA_NO_CACHE INPUT_PLAN INPUT_PLAN-MAX-COST-USD INPUT_EXPLORE
         OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY GOOGLE_API_KEY GEMINI_API_KEY AZURE_OPENAI_API_KEY
         AZURE_OPENAI_KEY AZURE_OPENAI_ENDPOINT BROWSER_USE_API_KEY OLLAMA_HOST)
for name in "${forward[@]}"; do args+=(--env "$name"); done

# The variables the manifest's secrets are read from (the step's `env:`), asked of the manifest itself. If that
# fails (a manifest to fix: 2), the run never starts, and the step's exit-code output is that code.
secret_env="$(docker "${args[@]}" "$image" validate --secret-env)" || {
  status=$?
  echo "exit-code=$status" >> "$GITHUB_OUTPUT"
  exit "$status"
}
while IFS= read -r name; do
  if [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then args+=(--env "$name"); fi
done <<< "$secret_env"

# exec: a cancelled job's signal reaches the container (tini, then preview-qa), which still writes its results. The
# step exits with preview-qa's own code, which preview-qa also writes as the step's exit-code output.
exec docker "${args[@]}" "$image" run
