"""The secret detector: exact outputs for secrets of each shape, and ordinary text left alone.

Every credential below is made up (random characters in the public format of its kind).
"""

from __future__ import annotations

import pytest

from tinycontext.domain.secrets import Redaction, redact

GHP = "ghp_5FWqS0UW13SlKKby36dyp5qaOveMCPvenqsV"
GHO = "gho_WRkz9wuO8RVYmhQjzgAh7yEGTle3SORsusMm"
GH_PAT = ("github_pat_4bsHQXGxF6C0HeuqrAFYEB_ePstkuqiVxbpJ7BiBIeSlM7Jvt7esSnpWOxR7tTh7II2PrV4"
          "cRQ7no8BDku")
GLPAT = "glpat-1eoJAmHZLyjeCZ6gCuef"
SLACK = "xoxb-650840977724-4543011527698-RIHfEq65dDl6bFjfD7x2X7wG"
STRIPE = "sk_live_2jaqzlAjl9teKoOzWsVMi0HQ"
STRIPE_R = "rk_live_RXHxN2bLJx7Attz6uBcL8UEg"
OPENAI_PROJ = "sk-proj-Td96I-qBHh_bNTEFxejyr0-C020BXmUUUEd3iQLjv7t9kYxgv24B6Upq9dGPEAcp"
OPENAI = "sk-BSRBOQM0NpSMVxR3E2ZFk4R5BRzjkuvOaLoLZqeADvXTQU6g"
ANTHROPIC = ("sk-ant-api03-6-063k_yZoMaByeAAAWuJd_Nm2CGfxfWlEPa1xcslfg4ESIj1mCk697sz5G9NLP3vrRY5_"
             "qMNKDV0xtNAA")
AWS_ID = "AKIA5JN4BM27NIIMXPKR"
AWS_SECRET = "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"
GOOGLE = "AIzaqCCcQCPTbj6xrb8dN9xFm7psY3esHuk6Pdh"
RANDOM24 = "7q7bVzyiI0QezKwpK1PovZZI"
HEX32 = "fb3c44970005808f5d76490b5e909719"
NPM = "npm_ufkZGymCMt3Byw11jaqr4MMEZgKBEa5bvM8R"
HF = "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"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
       "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"


def R(kind: str) -> str:
    return f"[redacted:{kind}]"


POSITIVE = [
    (f"Deploy with GITHUB_TOKEN={GHP} please", f"Deploy with GITHUB_TOKEN={R('github-token')} "
     "please", ["github-token"]),
    (f"oauth {GHO}", f"oauth {R('github-token')}", ["github-token"]),
    (f"fine-grained PAT {GH_PAT}.", f"fine-grained PAT {R('github-token')}.", ["github-token"]),
    (f"GitLab: {GLPAT}", f"GitLab: {R('gitlab-token')}", ["gitlab-token"]),
    (f"slack bot {SLACK} for #ops", f"slack bot {R('slack-token')} for #ops", ["slack-token"]),
    (f"stripe {STRIPE} and restricted {STRIPE_R}",
     f"stripe {R('stripe-key')} and restricted {R('stripe-key')}", ["stripe-key", "stripe-key"]),
    (f"OPENAI_API_KEY={OPENAI_PROJ}", f"OPENAI_API_KEY={R('openai-key')}", ["openai-key"]),
    (f"old key {OPENAI} revoked", f"old key {R('openai-key')} revoked", ["openai-key"]),
    (f"claude: {ANTHROPIC}", f"claude: {R('anthropic-key')}", ["anthropic-key"]),
    (f"AWS key {AWS_ID} secret {AWS_SECRET}",
     f"AWS key {R('aws-access-key-id')} secret {R('aws-secret-key')}",
     ["aws-access-key-id", "aws-secret-key"]),
    (f"AWS key {AWS_ID} and secret {AWS_SECRET}",
     f"AWS key {R('aws-access-key-id')} and secret {R('aws-secret-key')}",
     ["aws-access-key-id", "aws-secret-key"]),
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {R('aws-secret-key')}",
     ["aws-secret-key"]),
    (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
     f"export AWS_SECRET_ACCESS_KEY={R('aws-secret-key')}", ["aws-secret-key"]),
    (f"maps key {GOOGLE}", f"maps key {R('google-api-key')}", ["google-api-key"]),
    (f"publish with {NPM}", f"publish with {R('npm-token')}", ["npm-token"]),
    (f"hub {HF}", f"hub {R('huggingface-token')}", ["huggingface-token"]),
    (f"session cookie {JWT}", f"session cookie {R('jwt')}", ["jwt"]),
    (f"key:\n{PEM}\nthanks", f"key:\n{R('private-key')}\nthanks", ["private-key"]),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAA\\n-----END OPENSSH PRIVATE "
     "KEY----- ok", f"{R('private-key')} ok", ["private-key"]),
    (f"cut off: -----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n\nNext paragraph here.",
     f"cut off: {R('private-key')}\n\nNext paragraph here.", ["private-key"]),
    ("db at postgresql://app:Sup3r-S3cret@db.internal:5432/app",
     f"db at postgresql://app:{R('password')}@db.internal:5432/app", ["password"]),
    ("cache redis://:p4ssw0rd@cache:6379/0", f"cache redis://:{R('password')}@cache:6379/0",
     ["password"]),
    ("password=hunter2", f"password={R('password')}", ["password"]),
    ("DB_PASSWORD: s3cr3t!", f"DB_PASSWORD: {R('password')}", ["password"]),
    ('{"user": "bob", "password": "correct horse"}',
     f'{{"user": "bob", "password": "{R("password")}"}}', ["password"]),
    ("passwd: Tr0ub4dor&3", f"passwd: {R('password')}", ["password"]),
    ("mysql -u root --password s3cretPW1 shop", f"mysql -u root --password {R('password')} shop",
     ["password"]),
    ("the wifi password is Summer2024!", f"the wifi password is {R('password')}", ["password"]),
    ("I set the password to C0rrect-Horse.", f"I set the password to {R('password')}.",
     ["password"]),
    (f"api_key={RANDOM24}", f"api_key={R('api-key')}", ["api-key"]),
    ("(password: hunter2).", f"(password: {R('password')}).", ["password"]),
    ("- password: `sunshine`", f"- password: `{R('password')}`", ["password"]),
    ('He said the password is "open sesame"', f'He said the password is "{R("password")}"',
     ["password"]),
    (f"client_secret: '{RANDOM24}'", f"client_secret: '{R('secret')}'", ["secret"]),
    (f"token: {RANDOM24}", f"token: {R('token')}", ["token"]),
    (f"SECRET_KEY = \"django-insecure-{RANDOM24}\"", f"SECRET_KEY = \"{R('api-key')}\"",
     ["api-key"]),
    (f"my api key is {RANDOM24}", f"my api key is {R('api-key')}", ["api-key"]),
    ("my api key is LpxpWMummHNtRSDmOFbnYHNs", f"my api key is {R('api-key')}", ["api-key"]),
    (f"The staging secret {HEX32} expires Friday",
     f"The staging secret {R('secret')} expires Friday", ["secret"]),
    (f"Authorization: Bearer {RANDOM24}", f"Authorization: Bearer {R('bearer-token')}",
     ["bearer-token"]),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Authorization: Basic {R('basic-auth')}",
     ["basic-auth"]),
    (f"https://hooks.slack.com/services/T024BE7LD/B01ABCDEF/{RANDOM24}", R("slack-webhook"),
     ["slack-webhook"]),
]


@pytest.mark.parametrize("text,expected,kinds", POSITIVE)
def test_secrets_are_replaced_by_typed_placeholders(text: str, expected: str,
                                                    kinds: list[str]) -> None:
    result = redact(text)
    assert result.text == expected
    assert list(result.kinds) == kinds
    assert redact(result.text) == Redaction(result.text)  # placeholders are never matched again


NEGATIVE = [
    "I forgot my password again",
    "Password: reset it via the admin panel",
    "password reset link sent to bob@example.com",
    "The password policy needs at least 12 characters",
    "passwords must rotate every 90 days; password: see the vault",
    "secret: always test first",
    "It's no secret that Bob likes green tea",
    "the secret is out, the token is expired",
    "max_tokens=2000, token_count: 12, tokens: 512",
    "The tokenizer is o200k_base and the token budget is 2000",
    "commit 3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c fixed the bug",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the empty file",
    f"ticket {HEX32} was closed",
    "memory 550e8400-e29b-41d4-a716-446655440000 (ref 550e8400e29b) was updated",
    "hello world in base64 is aGVsbG8gd29ybGQ= and the fox is "
    "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==",
    "Pneumonoultramicroscopicsilicovolcanoconiosis and internationalization are long words",
    "/home/bob/projects/tinycontext/domain/secrets.py and ~/.config/gh/hosts.yml",
    "https://github.com/org/repo/blob/main/README.md and ssh://git@github.com:22/org/repo.git",
    "https://bob@example.com/login has no password",
    "version 1.2.3-beta.4+build.567 on Python 3.11.9 with claude-3-5-sonnet-20241022",
    "Context is 128k tokens; model id claude-3-5-sonnet-20241022",
    "The API key lives in 1Password under Stripe prod",
    "the api_key parameter is required",
    "scikit-learn is not sk-learn-is-a-python-library, it is risk-free",
    "ghp_ tokens are personal access tokens; AKIA starts AWS key ids",
    "eyJhbGciOi is how a JWT header starts",
    "password: ${DB_PASSWORD}",
    "password=<your password>",
    "password = os.environ['DB_PASSWORD']",
    "password: ********",
    "password=None, api_key: null, secret: true",
    "Bearer tokens expire after an hour",
    "monkey business, keyboard shortcuts and the keynote",
    "PRIVATE KEY files are described in RFC 7468",
    "Caroline met Melanie at 10:30 on 2024-05-01 near Gate B-12 of Terminal 2",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl bob@laptop",
    "the key to success is practice, and the secret ingredient is love",
    "random id 7q7bVzyiI0QezKwpK1PovZZI in the log",  # random-looking, but no word names it
    "User keeps API keys in 1Password; never paste tokens into chat",
    "The deploy token expires on 2025-01-31; rotate the Stripe secret key every 90 days",
    "GitHub token scopes: repo, workflow, read:org",
    "the --password flag is deprecated; use --password-file instead",
    "Set OPENAI_API_KEY in your shell profile; SECRET_KEY is required by Django",
    "run gh auth login --with-token < token.txt",
    "PGPASSWORD: ${TINYCONTEXT_DB_PASSWORD:?set it}",
    "token = settings.management_token; PROXY_TOKEN = \"X-TinyContext-Proxy-Token\"",
    "headers = {\"api_key\": TOKEN}).status_code",
    "the token getAccessTokenFromCacheOrRefresh and secret ThisIsAVeryLongCamelCaseName",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == Redaction(text)


def test_several_secrets_and_the_notice() -> None:
    result = redact(f"ci uses {GHP}, db postgres://u:pw12345@h/db and {GHO}")
    assert result.text == (f"ci uses {R('github-token')}, db postgres://u:{R('password')}@h/db "
                           f"and {R('github-token')}")
    assert result.notice == (
        "3 secrets (2 github-token, 1 password) were replaced by [redacted:<type>] before "
        "saving: memories never hold credentials. Keep secrets in a secret manager and save "
        "where they live instead."
    )
    assert GHP not in (result.notice or "") and "pw12345" not in (result.notice or "")
    single = redact(f"token {GHP}")
    assert single.notice is not None and single.notice.startswith("1 secret (1 github-token) was")
    assert redact("nothing here").notice is None


@pytest.mark.parametrize("text", [
    "-----BEGIN PRIVATE KEY-----" * 8000,  # every BEGIN without an END: was quadratic
    "password=x " * 20000, "token " * 30000, "a_" * 100000 + "password=1", "x" * 200000,
    "http://u:p@" * 20000, "Bearer " + "a" * 200000, "secret is a " * 20000,
])
def test_adversarial_text_stays_linear(text: str) -> None:
    import time

    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 3.0  # linear work finishes far below this
