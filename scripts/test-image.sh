#!/usr/bin/env bash
# Builds the action's image from the Dockerfile, unchanged, and runs it the way the action does. No Docker engine:
# Debian's buildah builds it and podman runs it (runc runtime). The Dockerfile's base image is replaced by a stand-in
# made from Debian packages (debootstrap bookworm + Python, shaped like python:3.12-slim-bookworm), cached between
# runs on this machine; the real base is used by the release workflow on GitHub. Then, as a non-root runner uid:
#   1. `preview-qa demo --plan` in the image (its tests proven, then drafts planned and tried);
#   2. scripts/action.sh, as a runner runs it (GITHUB_* files, INPUT_* with hyphens, a `docker` on PATH that forwards
#      to podman), the action pinned by a commit SHA whose image it pulls by that SHA (podman's storage plays the
#      registry), against the demo fixtures: exit code, $GITHUB_OUTPUT, summary, masks, annotations, file owners;
#   3. a cancelled job: SIGTERM to the running step, which must end with exit 130 within seconds, several times.
# .ci/run runs it (as root: it installs Debian packages and runs podman's service, as a runner's docker daemon).
#
#   scripts/test-image.sh        KEEP=1 scripts/test-image.sh   (keeps the work folder for a look afterwards)
#   FRESH=1 scripts/test-image.sh   (builds every layer again: the dependencies' install under this machine's settings)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

runner_uid=1001 runner_gid=1001         # a GitHub-hosted runner's user
image=localhost/preview-qa:image-test
cancel_tries=3 cancel_limit_s=30  # from SIGTERM to exit: 2 to 14 s measured on a busy 2-core machine; a hang is minutes
failures=()
say() { printf 'test-image: %s\n' "$*" >&2; }
check() {  # check <what> <command...>: run a check, remember a failure and go on
  local what="$1"; shift
  if "$@"; then say "ok: $what"; else say "FAILED: $what"; failures+=("$what"); fi
}
[ "$(id -u)" -eq 0 ] || { say "run as root: it installs Debian packages and runs podman's service"; exit 2; }
started=$SECONDS
# One image test at a time on a machine: two would share podman's storage, the image's tag and each other's containers.
mkdir -p /var/cache/preview-qa
exec 9> /var/cache/preview-qa/test-image.lock
if ! flock --nonblock 9; then
  say "waiting for the image test already running on this machine"
  flock --timeout 1800 9 || { say "it did not finish within 30 minutes"; exit 1; }
fi

# --- the tools, from Debian, each checked on its own --------------------------------------------------------------
missing=()
for package in buildah podman runc debootstrap; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# crun refuses on hosts with cgroups in hybrid mode; runc works. Podman's default ulimits are above what this host
# allows (setrlimit is refused): ask for the host's own hard limits, nproc capped at podman's own 32768.
podman=(podman --runtime runc)
nofile="$(ulimit -Hn)" nproc="$(ulimit -Hu)"
[ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
ulimits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

work="$(mktemp -d /tmp/preview-qa-image-test.XXXXXX)"
chmod 755 "$work"
cleanup() {
  local status=$?
  [ -n "${service_pid:-}" ] && kill "$service_pid" 2>/dev/null
  [ -z "${fixtures:-}" ] || "${podman[@]}" rm --force --ignore --time 0 "$fixtures" >/dev/null 2>&1 || true
  [ -z "${pinned:-}" ] || "${podman[@]}" untag "$image" "$pinned" >/dev/null 2>&1 || true
  if [ -n "${KEEP:-}" ]; then say "kept $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT

# --- the stand-in base ----------------------------------------------------------------------------------------------
base="$(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]\{1,\}\).*/\1/p' Dockerfile | head -n 1)"
[[ "$base" == */* ]] || base="docker.io/library/$base"
make_stand_in() {  # make_stand_in <dir>: a Debian root shaped like the python:*-slim-bookworm images
  local dir="$1"
  debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates,netbase,tzdata \
    bookworm "$dir" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
  rm -f "$dir"/usr/lib/python3*/EXTERNALLY-MANAGED  # the python images' pip installs into the system Python
  ln -sf /usr/bin/python3 "$dir/usr/local/bin/python"
  ln -sf /usr/bin/pip3 "$dir/usr/local/bin/pip"
  rm -f "$dir/etc/apt/sources.list"  # debian:bookworm's sources, deb822 style
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    > "$dir/etc/apt/sources.list.d/debian.sources"
  # debian:bookworm-slim's apt and dpkg settings: no package cache, no docs, man pages or translations in layers
  printf '%s\n' 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
    'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";' > "$dir/etc/apt/apt.conf.d/docker-clean"
  echo 'Acquire::Languages "none";' > "$dir/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true"; Acquire::CompressionTypes::Order:: "gz";' > "$dir/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' > "$dir/etc/apt/apt.conf.d/docker-autoremove-suggests"
  printf 'path-exclude /usr/share/%s/*\n' doc man groff info lintian linda locale > "$dir/etc/dpkg/dpkg.cfg.d/docker"
  echo 'path-include /usr/share/doc/*/copyright' >> "$dir/etc/dpkg/dpkg.cfg.d/docker"
  find "$dir/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "$dir"/usr/share/{man,groff,info,lintian,linda,locale}/* "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
}
recipe="$(printf '%s\n' "$(declare -f make_stand_in)" "$base" | sha256sum | cut -c1-16)"
if [ "$("${podman[@]}" image inspect --format '{{index .Labels "preview-qa.stand-in"}}' "$base" 2>/dev/null)" != "$recipe" ]; then
  cache="${XDG_CACHE_HOME:-/var/cache}/preview-qa/stand-in-$recipe.tar"
  if [ ! -s "$cache" ]; then
    say "making the stand-in for $base (debootstrap, a few minutes; cached in $cache)"
    mkdir -p "$(dirname "$cache")"
    make_stand_in "$work/rootfs"
    tar -C "$work/rootfs" --numeric-owner -cf "$cache.partial" . && mv "$cache.partial" "$cache"
    rm -rf "$work/rootfs"
  fi
  "${podman[@]}" import --quiet --change "LABEL preview-qa.stand-in=$recipe" --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' "$cache" "$base" >/dev/null
fi
say "stand-in base ready: $base ($((SECONDS - started)) s)"

# --- build-time mounts: this machine's package-index configuration and CA bundle, never baked into the image -------
# Mounted over paths the base already has (a missing mount target would be left behind, empty, in the layer):
# the CA bundle over the base's, apt's sources and settings over the base's folders, and pip's settings in the
# build's HOME (the Dockerfile's HOME=, else /root), where pip reads a user's configuration.
stage="$work/build-mounts"
mkdir -p "$stage/apt-sources" "$stage/apt-conf"
home="$(sed -n 's/.*[[:space:]]HOME=\([^[:space:]\\]*\).*/\1/p' Dockerfile | head -n 1)"
home="${home:-/root}"
install -d -m 1777 "$stage/home"
container="$("${podman[@]}" create "$base")"
"${podman[@]}" cp "$container:/etc/apt/apt.conf.d/." "$stage/apt-conf/"
"${podman[@]}" rm "$container" >/dev/null
for file in /etc/apt/apt.conf.d/*; do  # the host's network settings (proxy, validity, retries), not its hooks
  [ -e "$stage/apt-conf/$(basename "$file")" ] || ! grep -q 'Acquire::' "$file" || cp "$file" "$stage/apt-conf/"
done
[ ! -f /etc/apt/apt.conf ] || cp /etc/apt/apt.conf "$stage/apt-conf/99host-apt.conf"
cp /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list "$stage/apt-sources/" 2>/dev/null || true
[ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$stage/apt-sources/host.list"
mounts=(--volume "$stage/apt-sources:/etc/apt/sources.list.d:ro" --volume "$stage/apt-conf:/etc/apt/apt.conf.d:ro"
        --volume "$stage/home:$home")
# pip's effective settings here (files and PIP_* variables), translated by scripts/pip_build_settings.py: local
# files and folders it names (find-links, file:// indexes, certs) are mounted read-only inside the build's HOME and
# the settings rewritten to point there; settings for the host alone (a constraints file, its cache) are left out.
pip_targets=()
while IFS=$'\t' read -r kind first second; do
  case "$kind" in
    conf) mkdir -p "$stage/home/.config/pip" && printf '%s\n' "$first" >> "$stage/home/.config/pip/pip.conf" ;;
    mount) mounts+=(--volume "$first:$second:ro"); pip_targets+=("$second") ;;
    left-out) say "pip setting left out of the build (the host's own): $first" ;;
    cert) mounts+=(--volume "$first:/etc/ssl/certs/ca-certificates.crt:ro") ;;
  esac
done < <(python3 scripts/pip_build_settings.py "$home")

# --- the build -------------------------------------------------------------------------------------------------------
build_started=$SECONDS
fresh=(); [ -z "${FRESH:-}" ] || fresh=(--no-cache)
if ! buildah bud --runtime runc --isolation oci --pull=never --network host --layers "${fresh[@]}" "${ulimits[@]}" "${mounts[@]}" \
     --tag "$image" . > "$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log" >&2; say "the image did not build"; exit 1
fi
build_s=$((SECONDS - build_started))
"${podman[@]}" image prune --force >/dev/null  # earlier builds' images; the cached layers of this one stay
size="$("${podman[@]}" image inspect --format '{{.Size}}' "$image")"
say "built $image in ${build_s} s: $((size / 1000000)) MB"
base_and_image_agree() {  # folders mounted over the base's own during the build hold the base's files again
  local listing='for d; do find "$d" -type f -exec sha256sum {} + | sort; done'
  diff <("${podman[@]}" run --rm "${ulimits[@]}" --entrypoint sh "$base" -c "$listing" _ "$@") \
       <("${podman[@]}" run --rm "${ulimits[@]}" --entrypoint sh "$image" -c "$listing" _ "$@") >&2
}
nothing_of_the_machine() {  # no mount target was left behind: the CA bundle and apt's folders are the base's,
  # and none of the paths pip's settings were mounted at (nor the pip.conf written for the build) is in the image
  base_and_image_agree /etc/ssl/certs/ca-certificates.crt /etc/apt/sources.list.d /etc/apt/apt.conf.d &&
    "${podman[@]}" run --rm "${ulimits[@]}" --entrypoint sh "$image" -c \
      'for target; do ! test -e "$target" || { echo "left in the image: $target" >&2; exit 1; }; done' \
      _ "$home/.config/pip" "${pip_targets[@]}"
}
check "the machine's CA bundle, apt and pip settings are not in the image (${#pip_targets[@]} pip mounts)" nothing_of_the_machine

as_runner() { setpriv --reuid "$runner_uid" --regid "$runner_gid" --clear-groups "$@"; }
owned_by_runner() { [ -z "$(find "$@" ! -uid "$runner_uid" -print -quit)" ]; }

# --- 1. `preview-qa demo --plan` as a non-root uid ---------------------------------------------------------------------
install -d -o "$runner_uid" -g "$runner_gid" "$work/demo"
demo_started=$SECONDS
demo() {  # bounded: a run that never exits is a failure, not a hung CI
  "${podman[@]}" run --rm --timeout 600 --network host "${ulimits[@]}" --user "$runner_uid:$runner_gid" \
    --volume "$work/demo:$work/demo" --workdir "$work/demo" "$image" demo --plan --out "$work/demo/results" \
    > "$work/demo.log" 2>&1 || { tail -n 30 "$work/demo.log" >&2; return 1; }
}
check "preview-qa demo --plan passes in the image as uid $runner_uid" demo
check "demo --plan wrote plan.yml" test -s "$work/demo/results/plan.yml"
explore_demo() {  # the demo shop twice, main and a PR that breaks two things: both found, nothing else new (exit 0)
  "${podman[@]}" run --rm --timeout 600 --network host "${ulimits[@]}" --user "$runner_uid:$runner_gid" \
    --volume "$work/demo:$work/demo" --workdir "$work/demo" "$image" demo --explore --out "$work/demo/explored" \
    > "$work/demo-explore.log" 2>&1 || { tail -n 30 "$work/demo-explore.log" >&2; return 1; }
}
check "preview-qa demo --explore finds the two things its PR breaks, in the image" explore_demo
check "demo --explore wrote its findings" test -s "$work/demo/explored/explore/findings.md"
check "the demo's files are owned by uid $runner_uid" owned_by_runner "$work/demo"
say "demo: $((SECONDS - demo_started)) s"

# --- 2. scripts/action.sh as a runner runs it --------------------------------------------------------------------------
# The action as a workflow that pins it by commit uses it: `uses: acme/preview-qa@<commit SHA>` (this checkout's
# commit, else a stand-in), whose image the release pushes under that SHA as well as the version.
commit="$(git -c safe.directory="$root" rev-parse HEAD 2>/dev/null || printf '%040d' 0)"
pinned="ghcr.io/acme/preview-qa:$commit"
"${podman[@]}" tag "$image" "$pinned"
# podman's service plays the docker daemon a runner's user may talk to; `docker` forwards to it (as the runner's
# docker CLI does) with the ulimits this host allows.
"${podman[@]}" system service --time 0 "unix://$work/podman.sock" 9>&- &  # 9>&-: long-lived, never holds the lock
service_pid=$!
timeout 30 bash -c 'until [ -S "$1" ]; do sleep 0.2; done' _ "$work/podman.sock"
chown "$runner_uid:$runner_gid" "$work/podman.sock"
chmod 600 "$work/podman.sock"
mkdir -p "$work/bin" "$work/action/scripts"
cat > "$work/bin/docker" <<SHIM
#!/bin/bash
# docker -> podman's service: \`docker run\` gets this host's ulimits; everything else passes through.
# bash, not sh: dash drops variables such as INPUT_BASE-URL from the environment, which docker forwards.
printf '%s %s\n' "\$1" "\${@: -1}" >> "$work/docker-calls.log"
# No registry here: a pull finds the image the release would have pushed in podman's storage, or fails as a pull does.
if [ "\$1" = pull ]; then exec podman --remote --url "unix://$work/podman.sock" image exists "\${@: -1}"; fi
if [ "\$1" = run ]; then shift; set -- run ${ulimits[*]} "\$@"; fi
exec podman --remote --url "unix://$work/podman.sock" "\$@"
SHIM
chmod 755 "$work/bin/docker"
install -m 644 -o "$runner_uid" -g "$runner_gid" /dev/null "$work/docker-calls.log"
cp scripts/action.sh "$work/action/scripts/action.sh"
for folder in workspace runner-temp home fixtures; do install -d -o "$runner_uid" -g "$runner_gid" "$work/$folder"; done
cp src/preview_qa/demo/qa.yml "$work/workspace/qa.yml"
cat > "$work/workspace/slow.yml" <<'YAML'
version: 1
tests:
  - {name: still running when cancelled, start: /product, task: "[slow] Keep waiting.", max_steps: 60, timeout: 300}
YAML
{ cat src/preview_qa/demo/agent.yml
  printf '%s\n' '- {name: slow, match: "[slow]", turns: [{actions: [{wait: {seconds: 2}}]}]}'; } > "$work/fixtures/agent.yml"
chown -R "$runner_uid:$runner_gid" "$work/workspace" "$work/fixtures"

# The demo site and the scripted LLM, from the image, as the self-test workflow starts them on its runner.
fixtures="$("${podman[@]}" run --detach --network host "${ulimits[@]}" --user "$runner_uid:$runner_gid" \
  --volume "$work/fixtures:$work/fixtures" --entrypoint python3 "$image" \
  -m preview_qa.demo.serve --scenarios "$work/fixtures/agent.yml" --ready-file "$work/fixtures/ready.env" 9>&-)"
timeout 60 bash -c 'until [ -s "$1" ]; do sleep 0.5; done' _ "$work/fixtures/ready.env"
site_url="$(sed -n 's/^site-url=//p' "$work/fixtures/ready.env")"
llm_url="$(sed -n 's/^llm-url=//p' "$work/fixtures/ready.env")"

action() {  # action <manifest> <out> <log>: the action's run step, as the runner's user, in the background
  : > "$work/runner-temp/output-$2"; : > "$work/runner-temp/summary-$2"
  chown "$runner_uid:$runner_gid" "$work/runner-temp/output-$2" "$work/runner-temp/summary-$2"
  (cd "$work/workspace" && exec setpriv --reuid "$runner_uid" --regid "$runner_gid" --clear-groups env -i \
    PATH="$work/bin:/usr/local/bin:/usr/bin:/bin" HOME="$work/home" CI=true GITHUB_ACTIONS=true \
    GITHUB_WORKSPACE="$work/workspace" RUNNER_TEMP="$work/runner-temp" GITHUB_ACTION_PATH="$work/action" \
    GITHUB_OUTPUT="$work/runner-temp/output-$2" GITHUB_STEP_SUMMARY="$work/runner-temp/summary-$2" \
    GITHUB_REPOSITORY=acme/shop GITHUB_RUN_ID=1 GITHUB_SERVER_URL=https://github.com \
    ACTION_REPOSITORY=Acme/Preview-QA ACTION_REF="$commit" DEMO_PASSWORD=demo-pass-123 \
    INPUT_MANIFEST="$1" INPUT_BASE-URL="$site_url" INPUT_LLM-BASE-URL="$llm_url" INPUT_API-KEY=scripted-key-4242 \
    INPUT_PROVIDER=openai INPUT_MODEL=scripted-demo INPUT_OUT="$2" INPUT_WAIT-TIMEOUT=60 INPUT_FAIL-ON=failed \
    INPUT_COMMENT=false INPUT_PROVE=true PREVIEW_QA_NO_CACHE=1 \
    bash "$work/action/scripts/action.sh" > "$3" 2>&1) &
  action_pid=$!
}

finish() {  # finish <seconds>: the step's exit status; past <seconds>, it and its container are killed (status 124)
  timeout "$1" tail --pid "$action_pid" -f /dev/null || true
  if kill -0 "$action_pid" 2>/dev/null; then
    for id in $("${podman[@]}" ps --quiet --no-trunc --filter "ancestor=$image" --filter "ancestor=$pinned"); do
      [ "$id" = "$fixtures" ] || "${podman[@]}" kill "$id" >/dev/null 2>&1 || true
    done
    kill -KILL "$action_pid" 2>/dev/null || true
    wait "$action_pid" 2>/dev/null || true
    return 124
  fi
  local status=0
  wait "$action_pid" || status=$?
  return "$status"
}

action_started=$SECONDS
action qa.yml results "$work/action.log"
action_status=0
finish 300 || action_status=$?
say "action.sh: $((SECONDS - action_started)) s"
check "action.sh exits 1: one demo test fails on purpose (got $action_status)" test "$action_status" = 1
pulled_by_commit() {  # the step asked for the image of the commit the action was pinned at, and built none
  grep -q -x -F "pull $pinned" "$work/docker-calls.log" && ! grep -q '^build ' "$work/docker-calls.log"
}
check "action.sh pulled the image by the commit SHA the action was pinned at, and built none" pulled_by_commit
[ "$action_status" = 1 ] || tail -n 40 "$work/action.log" >&2
check_outputs() {
  python3 - "$work/runner-temp/output-results" results <<'PY'
import re, sys
text, out = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2]  # paths as the `out` input gave them
found = {name: value for name, _, value in re.findall(r"^([\w-]+)<<(ghadelimiter_[0-9a-f]+)\n(.*?)\n\2$", text, re.M | re.S)}
wanted = {"passed": "9", "failed": "1", "errored": "0", "skipped": "0", "total": "10", "vacuous": "1", "unverified": "0",
          "results-path": f"{out}/results.json", "junit-path": f"{out}/junit.xml", "exit-code": "1"}
sys.exit(0 if {name: found.get(name) for name in wanted} == wanted else f"$GITHUB_OUTPUT: {found}, wanted {wanted}")
PY
}
check "\$GITHUB_OUTPUT holds the counts, the paths and the exit code" check_outputs
check "the job summary names the run's status and the failed test" \
  grep -q -e '### ❌ preview-qa: failed' "$work/runner-temp/summary-results"
check "the failed test is in the summary" grep -q -F 'Checkout page works' "$work/runner-temp/summary-results"
check "one error annotation, at the failed test's manifest line" \
  test "$(grep -c -E '^::error file=qa\.yml,line=[0-9]+,title=Checkout page works::' "$work/action.log")" = 1
masked() { grep -q -x -F "::add-mask::$1" "$work/action.log"; }
check "the API key is masked" masked scripted-key-4242
check "the manifest's secret (from the step's environment) is masked" masked demo-pass-123
check "no secret is printed anywhere else" \
  test "$(grep -c -e scripted-key-4242 -e demo-pass-123 "$work/action.log")" = 2
check "results.json, junit.xml and report.html were written" \
  test -s "$work/workspace/results/results.json" -a -s "$work/workspace/results/junit.xml" -a -s "$work/workspace/results/report.html"
check "every file the step wrote is owned by the runner's uid" owned_by_runner "$work/workspace" "$work/runner-temp"

# --- 3. a cancelled job: SIGTERM to the step ends it with 130 within seconds, every time -------------------------------
cancel() {
  local try="$1" out="cancelled-$1" status=0 deadline
  action slow.yml "$out" "$work/cancel-$try.log"
  deadline=$((SECONDS + 120))
  until compgen -G "$work/workspace/$out/tests/*/events.jsonl" >/dev/null; do  # the test's first step is recorded
    if [ $SECONDS -gt $deadline ] || ! kill -0 "$action_pid" 2>/dev/null; then
      say "try $try: the slow test never started"; tail -n 20 "$work/cancel-$try.log" >&2; finish 1 || true; return 1
    fi
    sleep 0.5
  done
  local signalled=$SECONDS
  kill -TERM "$action_pid"
  finish "$cancel_limit_s" || status=$?
  if [ "$status" = 124 ]; then
    say "try $try: still running $cancel_limit_s s after SIGTERM"; tail -n 20 "$work/cancel-$try.log" >&2; return 1
  fi
  say "try $try: exit $status, $((SECONDS - signalled)) s after SIGTERM"
  [ "$status" = 130 ] && grep -q '"notice": "cancelled"' "$work/workspace/$out/results.json" &&
    owned_by_runner "$work/workspace/$out"
}
for try in $(seq "$cancel_tries"); do
  check "cancel $try/$cancel_tries: exit 130 within $cancel_limit_s s, results written as 'cancelled'" cancel "$try"
done

say "image $((size / 1000000)) MB, built in $build_s s; image test took $((SECONDS - started)) s in all"
if [ ${#failures[@]} -gt 0 ]; then
  say "${#failures[@]} check(s) failed:"; printf '  - %s\n' "${failures[@]}" >&2
  exit 1
fi
