#!/usr/bin/env python3
"""Turn this machine's pip settings into build secrets for deploy/Dockerfile.

    python3 deploy/pip-build-secrets.py OUT_DIR

writes OUT_DIR/pip.conf (the index settings a build can use) and, when pip is told to trust a
CA bundle (a re-signing proxy's, say), OUT_DIR/pip-cert, both owner-only, then prints the
`--secret` options for `podman build` / `docker build`, one a line. Nothing is printed when
pip runs on its defaults. Settings naming paths on this machine (find-links folders, file://
indexes, constraint files) are left out: the build cannot see them. The secrets are mounted
only while the install step runs, so neither file nor any credential in an index URL is
stored in an image layer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Settings that only name remote places or tune the network, and mean the same in a build.
PORTABLE = ("index-url", "extra-index-url", "trusted-host", "proxy", "timeout",
            "default-timeout", "retries", "no-index")


# pip's precedence: PIP_* variables (section ":env:") over a command's own section over
# [global]; `pip config list` prints the merged files sorted by key, so rank them here.
RANK = {"global": 0, "install": 1, "download": 1, ":env:": 2}


def pip_settings(python: str) -> dict[str, str]:
    """The values pip's install would use, keyed by option, from `pip config list`."""
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True,
                            text=True, check=True).stdout
    found: dict[str, tuple[int, str]] = {}
    for line in listed.splitlines():
        key, sep, value = line.partition("=")
        section, _, option = key.rpartition(".")
        if not sep or section not in RANK:
            continue
        if option not in found or RANK[section] >= found[option][0]:
            found[option] = (RANK[section], value.strip().strip("'\""))
    return {option: value for option, (_, value) in found.items()}


def remote_only(value: str) -> str:
    """The whitespace-separated URLs of `value` a build can reach (no file:// or paths)."""
    return " ".join(v for v in value.split() if v.startswith(("http://", "https://")))


def build_config(settings: dict[str, str]) -> tuple[str, Path | None]:
    lines = []
    for option in PORTABLE:
        value = settings.get(option)
        if value is None:
            continue
        if option.endswith("index-url"):
            value = remote_only(value)
            if not value:
                continue
        lines.append(f"{option} = {value}")
    cert = settings.get("cert") or os.environ.get("PIP_CERT")
    bundle = Path(cert) if cert and Path(cert).is_file() else None
    text = "[global]\n" + "\n".join(lines) + "\n" if lines else ""
    return text, bundle


def write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    text, bundle = build_config(pip_settings(os.environ.get("PYTHON", sys.executable)))
    options = []
    if text:
        write_private(out / "pip.conf", text.encode())
        options.append(f"--secret=id=pip.conf,src={out / 'pip.conf'}")
    if bundle is not None:
        write_private(out / "pip-cert", bundle.read_bytes())
        options.append(f"--secret=id=pip-cert,src={out / 'pip-cert'}")
    for option in options:
        print(option)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
