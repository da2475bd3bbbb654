"""Numbers that pay for things or identify a person: payment cards and national id numbers.

Long numbers fill ordinary memories (phone numbers, order numbers, timestamps, amounts), so a
number is only taken for one of these when it has the published shape of its kind AND passes
that kind's check: the Luhn digit of card numbers (with an issuer's prefix and length) and of
Canadian SINs, the check letter of Spanish DNI/NIE numbers, the two check digits of Brazilian
CPFs, the Verhoeff digit of Indian Aadhaar numbers and the mod-97 key of French NIRs. US
Social Security and UK National Insurance numbers carry no check digit; they are recognised
in the dashed or spaced form people write them in, less the ranges never issued.
"""

from __future__ import annotations

import re

from .secret_rule import Rule

_CARD = (  # 4-4-4-4(-1..3) (one separator kind throughout), Amex 4-6-5, Diners 4-6-4
    r"\d{4}(?P<s1>[ -]?)\d{4}(?P=s1)\d{4}(?P=s1)\d{4}(?:(?P=s1)\d{1,3})?"
    r"|\d{4}(?P<s2>[ -]?)\d{6}(?P=s2)\d{4,5}"
)
_FORMATS = {
    "card": _CARD,
    "ssn": r"\d{3}-\d{2}-\d{4}",
    "nino": r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]",
    "sin": r"\d{3}(?P<s3>[ -])\d{3}(?P=s3)\d{3}",
    "dni": r"[XYZ]?-?\d{7,8}-?[A-HJ-NP-TV-Z]",
    "cpf": r"\d{3}\.\d{3}\.\d{3}-\d{2}",
    "aadhaar": r"[2-9]\d{3}(?P<s4>[ -])\d{4}(?P=s4)\d{4}",
    "nir": r"[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}",
}
_ALTERNATIVES = "|".join(f"(?P<{name}>{body})" for name, body in _FORMATS.items())
_PATTERN = re.compile(  # the lookahead lets the engine skip most positions at once
    r"(?=[\dA-Z])(?<![\w.,/+-])(?:" + _ALTERNATIVES + r")(?![\w-]|[.,/]\d)"
)
_DIGITS = tuple("0123456789")
_GATE = re.compile(r"\d\d[ .-]?\d\d")  # every format has two digit pairs this close
_NON_DIGIT = re.compile(r"\D")


def luhn(digits: str) -> bool:
    """The Luhn check (ISO/IEC 7812) over a string of digits."""
    total = 0
    for position, ch in enumerate(reversed(digits)):
        value = int(ch) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card(digits: str) -> bool:
    """A card number: an issuer's prefix and length, a Luhn digit, not one digit repeated."""
    if len(set(digits)) == 1 or not luhn(digits):
        return False
    size, head = len(digits), int(digits[:6])
    networks = (  # (first six digits from, to, lengths): Visa, Mastercard, Amex, Discover,
        (400000, 499999, (13, 16, 19)), (510000, 559999, (16,)), (222100, 272099, (16,)),
        (340000, 349999, (15,)), (370000, 379999, (15,)), (601100, 601199, (16, 19)),
        (644000, 659999, (16, 19)), (352800, 358999, (16, 19)), (300000, 305999, (14, 16)),
        (360000, 369999, (14, 16)), (380000, 399999, (14, 16)), (620000, 629999, (16, 19)),
    )  # ... JCB, Diners Club, UnionPay
    return any(low <= head <= high and size in sizes for low, high, sizes in networks)


def _ssn(text: str) -> bool:
    area, group, serial = text.split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _nino(text: str) -> bool:
    return text[:2] not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ")


def _sin(digits: str) -> bool:
    return digits[0] not in "08" and luhn(digits)


def _dni(text: str) -> bool:
    body = text.replace("-", "")
    number, letter = body[:-1], body[-1]
    if number[0] in "XYZ":
        number = str("XYZ".index(number[0])) + number[1:]
        if len(number) != 8:
            return False
    elif len(number) != 8:
        return False
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == letter


def _cpf(digits: str) -> bool:
    if len(set(digits)) == 1:
        return False
    values = [int(ch) for ch in digits]
    for size in (9, 10):
        total = sum(v * w for v, w in zip(values[:size], range(size + 1, 1, -1), strict=True))
        if (total * 10) % 11 % 10 != values[size]:
            return False
    return True


# Verhoeff's tables: multiplication in the dihedral group D5, and a permutation applied
# once more at each position (its powers, cycling every eight positions).
_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [list(range(10)), [1, 5, 7, 6, 2, 8, 3, 0, 9, 4]]
for _k in range(2, 8):
    _VERHOEFF_P.append([_VERHOEFF_P[1][v] for v in _VERHOEFF_P[_k - 1]])


def verhoeff(digits: str) -> bool:
    """Verhoeff's check over a string of digits (its last digit the check digit)."""
    check = 0
    for position, ch in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[position % 8][int(ch)]]
    return check == 0


def _nir(text: str) -> bool:
    body = text.replace(" ", "")
    if not 1 <= int(body[3:5]) <= 12:
        return False
    number = body[:13].replace("2A", "19").replace("2B", "18")
    return 97 - int(number) % 97 == int(body[13:])


_CHECKS = {  # format -> (check, on digits only?, placeholder type)
    "card": (_card, True, "card-number"), "ssn": (_ssn, False, "us-ssn"),
    "nino": (_nino, False, "uk-nino"), "sin": (_sin, True, "ca-sin"),
    "dni": (_dni, False, "es-dni"), "cpf": (_cpf, True, "br-cpf"),
    "aadhaar": (verhoeff, True, "in-aadhaar"), "nir": (_nir, False, "fr-nir"),
}


# A check digit alone passes one number in ten: an unbroken run of digits (an order or
# tracking number as often as a card) and the digit groups of SINs and Aadhaar numbers (a
# serial or licence number's shape too) count only after a word that names them.
_CONTEXT = {
    "card": re.compile(
        r"(?i)\b(?:cards?|credit|debit|visa|mastercard|master card|amex|american express|"
        r"discover|jcb|diners|unionpay|cc|pan|pay|paid|payment|charged?|billing)\b"
    ),
    "sin": re.compile(r"(?i)\b(?:sin|nas|social insurance|assurance sociale)\b"),
    "aadhaar": re.compile(r"(?i)\b(?:aadhaa?r|uid|uidai)\b"),
}


def _judge(match: re.Match[str]) -> str | None:
    for name, (check, digits_only, kind) in _CHECKS.items():
        found = match.group(name)
        if found is None:
            continue
        context = _CONTEXT.get(name)
        if context is not None and (name != "card" or found.isdigit()):
            before = match.string[max(0, match.start() - 40):match.start()]
            if context.search(before) is None:
                return None
        return kind if check(_NON_DIGIT.sub("", found) if digits_only else found) else None
    return None


RULES = (Rule(_PATTERN, _DIGITS, _judge, long=False, gate=_GATE),)
