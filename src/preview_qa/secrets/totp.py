"""TOTP seeds as secrets: browser-use's 2FA naming, a fresh code when one is typed, and the run's own codes found in
text (only the exact codes of this run, digit-bounded: redacting every six-digit number would shred outputs)."""

from __future__ import annotations

import binascii
import re
import time

import pyotp

SUFFIX = "bu_2fa_code"  # browser-use types a fresh code for a <secret> whose name ends so (tools/registry/service.py)
DIGITS = 6
STEP_S = 30


def is_totp(name: str) -> bool:
    return name.endswith(SUFFIX)


def totp_name(name: str) -> str:
    """The placeholder name the agent and the replay use for a TOTP seed declared as `name`."""
    return name if is_totp(name) else f"{name}_{SUFFIX}"


def seed_problem(seed: str) -> str | None:
    """Why `seed` is no TOTP seed (base32, as in an otpauth:// URL's secret=), or None."""
    try:
        pyotp.TOTP(normal_seed(seed), digits=DIGITS).now()
    except (binascii.Error, ValueError):
        return "is not a TOTP seed: give the base32 secret of the authenticator set-up (secret=... in its otpauth:// URL)"
    return None


def normal_seed(seed: str) -> str:
    return "".join(seed.split()).upper()


def code_now(seed: str) -> str:
    """The code an authenticator shows now: what the replay types (browser-use's agent does the same)."""
    return pyotp.TOTP(normal_seed(seed), digits=DIGITS).now()


def typed_value(name: str, value: str) -> str:
    """What typing <secret>name</secret> types: a TOTP seed's code of the moment, any other secret's value."""
    return code_now(value) if is_totp(name) else value


class TotpCodes:
    """Every code of one seed from when the run learnt it until a step after now: the codes this run can have typed."""

    def __init__(self, name: str, seed: str, since: float | None = None):
        self.name, self.placeholder = name, f"<secret>{name}</secret>"
        self._totp = pyotp.TOTP(normal_seed(seed), digits=DIGITS)
        self._since = (since if since is not None else time.time()) - STEP_S  # a code typed just before we started

    def codes(self) -> list[str]:
        last = time.time() + STEP_S
        steps = range(int(self._since // STEP_S), int(last // STEP_S) + 1)
        return list(dict.fromkeys(self._totp.at(step * STEP_S) for step in steps))

    def pattern(self) -> re.Pattern[str]:
        return re.compile(r"(?<!\d)(?:" + "|".join(self.codes()) + r")(?!\d)")

    def redact(self, text: str) -> str:
        return self.pattern().sub(self.placeholder, text) if any(c.isdigit() for c in text) else text
