"""Pure: a Playwright trace.zip with every secret redacted from each text entry (trace events, DOM snapshots, network)."""

from __future__ import annotations

import io
import zipfile

from preview_qa.secrets.redact import Redactor

# Entries Playwright writes as images: screencast frames and screenshots (none in a run with secrets, see
# agent/evidence/tracing.py) and images the page loaded. Every other entry is text and is redacted as such.
IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png", ".webp", ".gif", ".avif", ".ico", ".woff", ".woff2", ".ttf")


def redact_trace(data: bytes, redactor: Redactor) -> bytes:
    """The same trace with each text entry redacted by the run's redactor (raw, percent-, JSON-, HTML- and
    base64-encoded forms alike); binary entries kept as they are."""
    if not redactor.values:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            body = source.read(entry)
            if not entry.filename.lower().endswith(IMAGE_SUFFIXES):
                try:
                    body = redactor.text(body.decode("utf-8")).encode("utf-8")
                except UnicodeDecodeError:  # not UTF-8: emptied if a secret can be read in it at all
                    if redactor.find(body.decode("latin-1")) is not None:
                        body = b""
            target.writestr(entry.filename, body)
    return out.getvalue()
