"""TOTP seeds: the codes of this run are redacted exactly (not every six-digit number), the seed is checked at load,
the agent's task names the seed by browser-use's 2FA convention, and the replay types a fresh code."""

from __future__ import annotations

import time

import pyotp

from preview_qa.manifest.models import SecretSource
from preview_qa.secrets.redact import Redactor
from preview_qa.secrets.totp import code_now, seed_problem, typed_value
from tests.builders import spec

SEED = "JBSWY3DPEHPK3PXPJBSWY3DP"


def test_the_runs_codes_are_redacted_and_other_numbers_are_not() -> None:
    redactor = Redactor({"otp_bu_2fa_code": SEED})
    now = pyotp.TOTP(SEED).now()
    earlier = pyotp.TOTP(SEED).at(time.time() - 30)
    other = f"{(int(now) + 1) % 1_000_000:06d}"
    text = f"typed {now}, then {earlier}; order {other}; phone 1{now}9"
    assert redactor.text(text) == (
        f"typed <secret>otp_bu_2fa_code</secret>, then <secret>otp_bu_2fa_code</secret>; order {other}; phone 1{now}9"
    )
    assert redactor.find(f"code={now}") == "otp_bu_2fa_code"
    assert now in redactor.values  # what the screenshots mask
    assert redactor.text(f"seed {SEED}") == "seed <secret>otp_bu_2fa_code</secret>"


def test_a_code_from_before_the_run_is_not_redacted() -> None:
    stale = pyotp.TOTP(SEED).at(time.time() - 3600)
    redactor = Redactor({"otp_bu_2fa_code": SEED})
    assert redactor.text(f"old code {stale}") == f"old code {stale}" or stale in redactor.values  # (the same digits)


def test_seed_problem() -> None:
    assert seed_problem(SEED) is None
    assert seed_problem("jbsw y3dp ehpk 3pxp") is None  # as authenticator apps show it
    assert seed_problem("not-base-32!!") is not None


def test_the_agent_and_the_replay_type_a_fresh_code() -> None:
    assert typed_value("otp_bu_2fa_code", SEED) == code_now(SEED) and len(code_now(SEED)) == 6
    assert typed_value("password", SEED) == SEED


def test_the_agent_sees_the_seed_under_browser_uses_2fa_name() -> None:
    test = spec(
        task="type <secret>otp</secret> after <secret>pw</secret>",
        secrets={"otp": SecretSource(env="SEED", totp=True), "pw": "PW"},
    )
    assert test.agent_task == "type <secret>otp_bu_2fa_code</secret> after <secret>pw</secret>"
    assert test.is_totp("otp") and not test.is_totp("pw") and test.secret_env("otp") == "SEED"
    by_name = spec(task="<secret>login_bu_2fa_code</secret>", secrets={"login_bu_2fa_code": "SEED"})
    assert by_name.is_totp("login_bu_2fa_code") and by_name.agent_task == by_name.task
