"""Strength checks of the hosted settings: how much the proxy networks trust, how random the
secrets are. Each check appends plain-language problems; `load_server_settings` (settings.py) lists
them all at once.
"""

from __future__ import annotations

import ipaddress
import re

from tinycontext.config.engine import ENV_PREFIX
from tinycontext.domain.entropy import distinct_characters, estimated_bits

SECRET_HINT = "e.g. `python -c \"import secrets; print(secrets.token_urlsafe(48))\"`"
ALLOW_BROAD = "ALLOW_BROAD_TRUSTED_PROXIES"

# The largest private IPv4 network, 10.0.0.0/8 (RFC 1918), holds 2**24 addresses: a proxy
# lives on a private network, so trusted ranges adding up to more than that reach into
# addresses no one deployment owns. An IPv6 site gets a /48 (RFC 4193 unique local prefixes,
# RFC 6177 assignments); 2**80 addresses is that site's worth.
MAX_TRUSTED = {4: 2**24, 6: 2**80}
PRIVATE_EXAMPLE = {4: "10.0.0.0/8", 6: "a /48"}
ALL_ADDRESSES = {4: 2**32, 6: 2**128}
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# A generated 128-bit value (32 hex digits) estimates at 128 bits less 4 for each character a
# chance run or repeat explains; 120 leaves room for two such characters (measured: 5 in
# 20,000 random 32-hex-digit values fall below), while values a person shapes ("ssss...",
# "name-token-tttt...", repeated words, "abcd...") estimate far lower. token_urlsafe(32)
# estimates at about 256.
MIN_SECRET_BITS = 120
# Fewer different characters than this is no generator's output at these lengths (a random
# 32-hex-digit value shows at least 9 of 16 in 20,000 tries); binary strings and "0101..."
# patterns fall here.
MIN_DISTINCT = 8


def proxy_networks(raw: str, allow_broad: bool, problems: list[str]) -> tuple[Network, ...]:
    """The trusted proxy networks, refusing each bad one and a union that trusts too much."""
    name = ENV_PREFIX + "TRUSTED_PROXY_CIDRS"
    if not raw:
        problems.append(f"{name} is required: the proxy's address or network, e.g. "
                        "10.0.0.5/32 or 172.20.0.0/16 (comma-separated for several).")
        return ()
    found: list[Network] = []
    for item in (part.strip() for part in re.split(r"[,\s]+", raw)):
        if not item:
            continue
        try:
            network = ipaddress.ip_network(item, strict=True)
        except ValueError as exc:
            problems.append(f"{name}: {item!r} is not a valid CIDR ({exc}).")
            continue
        if network.prefixlen == 0:
            problems.append(f"{name}: {item!r} trusts every address; name the proxy's own "
                            "address or network.")
            continue
        if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_MAPPED):
            # Peers are compared as IPv4 (an IPv4-mapped peer counts as its IPv4 address),
            # so this range would never match anything.
            problems.append(f"{name}: {item!r} is an IPv4-mapped IPv6 range; write the IPv4 "
                            "network itself (peers are compared as IPv4 addresses).")
            continue
        found.append(network)
    v4 = [n for n in found if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in found if isinstance(n, ipaddress.IPv6Network)]
    sizes = {4: sum(n.num_addresses for n in ipaddress.collapse_addresses(v4)),
             6: sum(n.num_addresses for n in ipaddress.collapse_addresses(v6))}
    for version, size in sizes.items():
        if size >= ALL_ADDRESSES[version]:
            problems.append(f"{name}: together the ranges trust every IPv{version} address; "
                            "name the proxy's own address or network.")
        elif size > MAX_TRUSTED[version] and not allow_broad:
            problems.append(
                f"{name}: together the ranges trust {size:,} IPv{version} addresses, more "
                f"than a private network ({PRIVATE_EXAMPLE[version]}: "
                f"{MAX_TRUSTED[version]:,}); name the proxy's own address or network, or set "
                f"{ENV_PREFIX}{ALLOW_BROAD}=on if the proxy really may be anywhere in them."
            )
    return tuple(found)


def check_strength(name: str, value: str, problems: list[str]) -> None:
    """Refuse a secret or token that was visibly not generated (never quoting it)."""
    distinct = distinct_characters(value)
    bits = estimated_bits(value)
    if distinct < MIN_DISTINCT:
        problems.append(f"{name} uses only {distinct} different characters: it is guessable. "
                        f"Use a generated value, {SECRET_HINT}.")
    elif bits < MIN_SECRET_BITS:
        problems.append(
            f"{name} looks guessable: about {int(bits)} bits of randomness estimated (repeated "
            f"characters, sequences or a repeated chunk), at least {MIN_SECRET_BITS} needed. "
            f"Use a generated value, {SECRET_HINT}."
        )
