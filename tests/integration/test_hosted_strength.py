"""Hosted settings refuse trusted proxy ranges that trust too much and guessable secrets."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.integration.hosted_support import OPERATOR, SECRET, TOKEN, hosted_env
from tinycontext.domain.entropy import estimated_bits
from tinycontext.hosted.settings import HostedConfigError, load_server_settings

HINT = 'python -c "import secrets; print(secrets.token_urlsafe(48))"'


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tenants"
    folder.mkdir(mode=0o700)
    return folder


def _refusal(env: dict[str, str]) -> str:
    with pytest.raises(HostedConfigError) as caught:
        load_server_settings(env)
    return caught.value.message


def _cidrs(store_dir: Path, cidrs: str, **extra: str) -> list[str]:
    settings = load_server_settings(
        hosted_env(store_dir, TINYCONTEXT_TRUSTED_PROXY_CIDRS=cidrs, **extra))
    return [str(n) for n in settings.networks]


@pytest.mark.parametrize("cidrs", [
    "10.0.0.5/32", "172.20.0.0/16", "172.30.0.10/32", "fd00::5/128", "127.0.0.1/32",
    "10.0.0.5/32, 172.20.0.0/16 ::1/128",
    "10.0.0.0/8",  # exactly the largest private network
    "10.0.0.0/8,10.1.0.0/16",  # overlapping ranges count once
    "172.16.0.0/12,192.168.0.0/16", "fd12:3456:789a::/48",
])
def test_ranges_of_a_private_network_are_accepted(store_dir: Path, cidrs: str) -> None:
    assert _cidrs(store_dir, cidrs)


@pytest.mark.parametrize("cidrs,needle", [
    ("0.0.0.0/1,128.0.0.0/1", "together the ranges trust every IPv4 address"),
    ("0.0.0.0/2,64.0.0.0/2,128.0.0.0/1", "together the ranges trust every IPv4 address"),
    ("::/1,8000::/1", "together the ranges trust every IPv6 address"),
    ("0.0.0.0/1", "trust 2,147,483,648 IPv4 addresses, more than a private network "
                  "(10.0.0.0/8: 16,777,216)"),
    ("10.0.0.0/7", "trust 33,554,432 IPv4 addresses"),
    ("10.0.0.0/8,172.16.0.0/12", "trust 17,825,792 IPv4 addresses"),
    ("fd00::/8", "IPv6 addresses, more than a private network (a /48"),
    ("fd00::/47", "trust 2,417,851,639,229,258,349,412,352 IPv6 addresses"),
    ("::ffff:10.0.0.5/128", "is an IPv4-mapped IPv6 range; write the IPv4 network"),
    ("::ffff:0.0.0.0/96", "is an IPv4-mapped IPv6 range"),
])
def test_ranges_trusting_too_much_are_refused(store_dir: Path, cidrs: str, needle: str) -> None:
    message = _refusal(hosted_env(store_dir, TINYCONTEXT_TRUSTED_PROXY_CIDRS=cidrs))
    assert needle in message, message


def test_broad_ranges_need_the_explicit_switch(store_dir: Path) -> None:
    message = _refusal(hosted_env(store_dir, TINYCONTEXT_TRUSTED_PROXY_CIDRS="0.0.0.0/2"))
    assert "TINYCONTEXT_ALLOW_BROAD_TRUSTED_PROXIES=on" in message
    assert _cidrs(store_dir, "0.0.0.0/2,fd00::/8",
                  TINYCONTEXT_ALLOW_BROAD_TRUSTED_PROXIES="on") == ["0.0.0.0/2", "fd00::/8"]
    # Every address stays refused even with the switch: that is no proxy network at all.
    for every in ("0.0.0.0/1,128.0.0.0/1", "0.0.0.0/0"):
        assert "every" in _refusal(hosted_env(
            store_dir, TINYCONTEXT_TRUSTED_PROXY_CIDRS=every,
            TINYCONTEXT_ALLOW_BROAD_TRUSTED_PROXIES="on"))
    assert "TINYCONTEXT_ALLOW_BROAD_TRUSTED_PROXIES must be on or off" in _refusal(hosted_env(
        store_dir, TINYCONTEXT_ALLOW_BROAD_TRUSTED_PROXIES="maybe"))


WEAK = [
    "s" * 32,
    "s" * 64,
    "tenant-secret-" + "s" * 40,
    "proxy-token-" + "t" * 40,
    "passwordpasswordpasswordpassword",
    "abcdefghijklmnopqrstuvwxyz012345",
    "0123456789012345678901234567890123456789",
    "a1B2c3D4e5F6g7H8a1B2c3D4e5F6g7H8",
    "changeme-changeme-changeme-changeme",
    "01101001010110100101101001011010011010",  # binary: few different characters
]


@pytest.mark.parametrize("key", ["TINYCONTEXT_TENANT_SECRET", "TINYCONTEXT_TRUSTED_PROXY_TOKEN"])
@pytest.mark.parametrize("weak", WEAK)
def test_guessable_secrets_are_refused(store_dir: Path, key: str, weak: str) -> None:
    message = _refusal(hosted_env(store_dir, **{key: weak}))
    assert f"{key} " in message and "guessable" in message and HINT in message, message
    assert weak not in message


@pytest.mark.parametrize("weak", ["operator-token-" + "o" * 24, "x" * 30,
                                  "abcdefghijklmnopqrstuvwxyz"])
def test_guessable_management_tokens_are_refused(store_dir: Path, weak: str) -> None:
    for env in ({"TINYCONTEXT_MANAGEMENT": "on", "TINYCONTEXT_MANAGEMENT_TOKEN": weak},
                hosted_env(store_dir, TINYCONTEXT_MANAGEMENT_TOKEN=weak)):
        message = _refusal(env)
        assert "TINYCONTEXT_MANAGEMENT_TOKEN" in message and "guessable" in message
        assert weak not in message


GOOD = [
    SECRET, TOKEN, OPERATOR,
    "3f8a9c2e71b04d5f9e6a8b7c1d2e3f40",  # 32 hex digits: 128 bits
    "6e1f0c8d3b2a49577a5c1e9d0b8f2a36c4d7e1f09a3b5c7d",
    "Zk3uQp7vN1wX9yR5tB2mC8hJ4gL6fD0s",  # 32 random letters and digits
]


@pytest.mark.parametrize("good", GOOD)
def test_generated_secrets_pass(store_dir: Path, good: str) -> None:
    settings = load_server_settings(hosted_env(
        store_dir, TINYCONTEXT_TENANT_SECRET=good, TINYCONTEXT_TRUSTED_PROXY_TOKEN=TOKEN
        if good != TOKEN else SECRET, TINYCONTEXT_MANAGEMENT_TOKEN=OPERATOR
        if good != OPERATOR else SECRET))
    assert settings.tenant_secret == good.encode()


def test_values_the_hint_generates_always_pass() -> None:
    # token_urlsafe(32) estimates near 256 bits, token_urlsafe(24) (32 characters) near 192,
    # and token_hex(32) near 256: far from the 120-bit floor whatever the draw.
    for _ in range(2000):
        for value in (secrets.token_urlsafe(32), secrets.token_urlsafe(24),
                      secrets.token_hex(32), secrets.token_urlsafe(48)):
            assert estimated_bits(value) >= 160, value


def test_the_switch_is_a_known_environment_name(tmp_path: Path) -> None:
    from tinycontext.config.settings import load_config

    config = load_config({"TINYCONTEXT_ALLOW_BROAD_TRUSTED_PROXIES": "on"},
                         config_file=tmp_path / "none.json")
    assert config.redact_secrets
