# The image the action runs: Python, Debian's Chromium and preview-qa, installed by the same script CI runs.
FROM python:3.12-slim-bookworm

# HOME-proof: the action runs the image as the runner's uid, which has no home directory here; the browser
# is found through PREVIEW_QA_CHROMIUM, and Playwright (which only drives it over CDP) never looks in HOME.
# IN_DOCKER: the container is the browser's sandbox (Chromium's own needs namespaces seccomp forbids).
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    HOME=/tmp \
    PREVIEW_QA_CHROMIUM=/usr/bin/chromium \
    PLAYWRIGHT_BROWSERS_PATH=/opt/playwright-browsers \
    ANONYMIZED_TELEMETRY=false \
    IN_DOCKER=true

# The one install path, in two layers: first everything but preview-qa (Debian's Chromium, tini, fonts, and the
# locked Python packages), rebuilt only when the script or the lock changes; then preview-qa itself.
COPY scripts/install.sh /opt/preview-qa/scripts/install.sh
COPY requirements /opt/preview-qa/requirements
RUN /opt/preview-qa/scripts/install.sh --deps-only \
    && rm -rf /var/lib/apt/lists/*
COPY . /opt/preview-qa
RUN /opt/preview-qa/scripts/install.sh \
    && rm -rf /opt/preview-qa/build /opt/preview-qa/src/*.egg-info \
    && mkdir -p /opt/playwright-browsers

# tini as PID 1: forwards a cancelled job's SIGTERM to preview-qa and reaps Chromium's orphans.
ENTRYPOINT ["/usr/bin/tini", "--", "preview-qa"]
CMD ["--help"]
