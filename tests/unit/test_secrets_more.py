"""The secret detector, continued: connection-string keys, passwords in URL queries, tokens split
by invisible characters, PINs and passwords in prose, card numbers and national id numbers.

Every value is made up; card numbers are the networks' published test numbers, and the id
numbers are built to pass their own checks (or, for the negatives, to fail them).
"""

from __future__ import annotations

import pytest

from tinycontext.domain.secret_ids import luhn, verhoeff
from tinycontext.domain.secrets import Redaction, redact

GHP = "ghp_5FWqS0UW13SlKKby36dyp5qaOveMCPvenqsV"
AZURE = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def R(kind: str) -> str:
    return f"[redacted:{kind}]"


POSITIVE = [
    (f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE};"
     "EndpointSuffix=core.windows.net",
     f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={R('azure-storage-key')};"
     "EndpointSuffix=core.windows.net", ["azure-storage-key"]),
    (f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;"
     f"SharedAccessKey={AZURE[:44]}",
     f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;"
     f"SharedAccessKey={R('azure-storage-key')}", ["azure-storage-key"]),
    ("login at https://nas.local/login?user=bob&pass=Hunter22 then",
     f"login at https://nas.local/login?user=bob&pass={R('password')} then", ["password"]),
    ("https://example.com/api?password=s3cret!&page=2",
     f"https://example.com/api?password={R('password')}&page=2", ["password"]),
    ("feed: https://x.example/rss?token=abc123XYZ789qrs.",
     f"feed: https://x.example/rss?token={R('token')}.", ["token"]),
    ("CI pushes with ghp_5FWqS0UW13\u200bSlKKby36dyp5qaOveMCPvenqsV today",
     f"CI pushes with {R('github-token')} today", ["github-token"]),
    (f"token {GHP[:10]}\u2060{GHP[10:20]}\ufeff{GHP[20:]}", f"token {R('github-token')}",
     ["github-token"]),
    ("the pw for the router is Tr0ub4dor&3", f"the pw for the router is {R('password')}",
     ["password"]),
    ("The PIN for the garage door is 4821.", f"The PIN for the garage door is {R('pin')}.",
     ["pin"]),
    ("my passcode is 739104", f"my passcode is {R('password')}", ["password"]),
    ("Bank card PIN: 0712", f"Bank card PIN: {R('pin')}", ["pin"]),
    ("the password for the staging box is Summer2024!",
     f"the password for the staging box is {R('password')}", ["password"]),
    ("Card 4111 1111 1111 1111 expires 12/27", f"Card {R('card-number')} expires 12/27",
     ["card-number"]),
    ("mastercard 5555-5555-5555-4444", f"mastercard {R('card-number')}", ["card-number"]),
    ("amex 3782 822463 10005 on file", f"amex {R('card-number')} on file", ["card-number"]),
    ("pay with 6011111111111117", f"pay with {R('card-number')}", ["card-number"]),
    ("SSN 123-45-6789 on the form", f"SSN {R('us-ssn')} on the form", ["us-ssn"]),
    ("NI number AB 12 34 56 C", f"NI number {R('uk-nino')}", ["uk-nino"]),
    ("NINO: AB123456C.", f"NINO: {R('uk-nino')}.", ["uk-nino"]),
    ("SIN 130 692 007", f"SIN {R('ca-sin')}", ["ca-sin"]),
    ("DNI 12345678Z y NIE X-1234567-L", f"DNI {R('es-dni')} y NIE {R('es-dni')}",
     ["es-dni", "es-dni"]),
    ("CPF 111.444.777-35", f"CPF {R('br-cpf')}", ["br-cpf"]),
    ("Aadhaar 4991 1866 5246", f"Aadhaar {R('in-aadhaar')}", ["in-aadhaar"]),
    ("NIR 1 84 03 76 451 089 96", f"NIR {R('fr-nir')}", ["fr-nir"]),
]


@pytest.mark.parametrize("text,expected,kinds", POSITIVE)
def test_more_secrets_are_replaced(text: str, expected: str, kinds: list[str]) -> None:
    result = redact(text)
    assert result.text == expected
    assert list(result.kinds) == kinds
    assert redact(result.text) == Redaction(result.text)


NEGATIVE = [
    "AccountName=acme;AccountKey=;EndpointSuffix=core.windows.net",
    "AccountKey=<your key> goes in the connection string",
    "https://example.com/search?q=password+reset&page=2",
    "https://example.com/reset?token=&next=/home",
    "the password for the wifi is written on the fridge",
    "the password to the shared drive is in 1Password",
    "the pin for the release is 1.2.3 and we pin numpy to 2.0",
    "PIN codes have 4 digits; the PIN was 12 years old",
    "Pinned the version; pinning helps. Spinning up 4821 workers.",
    "call me on 0151 496 0123 or +1 415 555 0132",
    "order 1234 5678 9012 3456 shipped",  # not an issuer's prefix
    "tracking number 4111111111111111 and order 6011111111111117",  # digits alone, no payment
    "licence 4991-1866-5246 and serial 130 692 007",  # pass their checks, but nothing names them
    "card 4111 1111 1111 1112 was declined",  # fails the Luhn check
    "Visa ending in 1111; the ticket 4111-1111 is closed",
    "build 20240611.3, epoch 1717171717171 ms, amount 1,234,567.89",
    "the meeting is 2024-06-11 10:30-11:45 in room 123-45",
    "part 000-12-3456 and 900-12-3456 and 123-00-4567",  # never-issued SSN ranges
    "GB 12 34 56 A and QQ123456C",  # prefixes never issued
    "SIN-like 123 456 789 fails Luhn",
    "DNI 12345678A with the wrong letter",
    "CPF 111.444.777-36 has the wrong check digits, 000.000.000-00 none",
    "Aadhaar-like 4991 1866 5247 fails Verhoeff",
    "ISBN 978-3-16-148410-0 and phone 555-123-4567",
    "a family emoji \U0001f468\u200d\U0001f469\u200d\U0001f467 and a soft\u00adhyphen",
    "IP 192.168.100.200, version 4.111.1111.1111",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_text_with_numbers_is_left_alone(text: str) -> None:
    assert redact(text) == Redaction(text)


def test_invisible_characters_stay_when_no_secret_hides_behind_them() -> None:
    text = "zero\u200bwidth inside words and ids 550e8400\u200be29b stay as written"
    assert redact(text) == Redaction(text)


def test_the_check_digit_algorithms() -> None:
    assert luhn("79927398713") and not luhn("79927398710")  # the usual worked example
    assert verhoeff("2363") and not verhoeff("2364")  # Verhoeff's worked example
