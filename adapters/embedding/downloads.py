"""The explicit download of a downloadable preset (never run on its own: no network use
unless a caller asks for it)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from .presets import PRESETS, QUALITY_BASE_URL, ModelNotAvailableError


def download_preset(
    name: str,
    models_dir: Path,
    base_url: str | None = None,
    *,
    sha256: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetches a downloadable preset into `models_dir/<model>/`; only ever called explicitly.

    Each file goes to a temporary file in the target folder and is renamed into place once
    complete (and its sha256 checked, when one is pinned or given in `sha256`), so a failed or
    interrupted download never leaves a partial model behind. Returns the model folder.
    """
    import urllib.parse  # network modules load only for an explicit download

    preset = PRESETS.get(name)
    if preset is None or not preset.downloads:
        downloadable = [p.name for p in PRESETS.values() if p.downloads]
        raise ModelNotAvailableError(
            f"preset {name!r} cannot be downloaded; downloadable: {', '.join(downloadable)}"
        )
    base = (base_url or QUALITY_BASE_URL).rstrip("/")
    if urllib.parse.urlsplit(base).scheme not in ("http", "https"):
        raise ModelNotAvailableError(f"download base URL must be http(s): {base}")
    folder = Path(models_dir) / preset.model_name
    folder.mkdir(parents=True, exist_ok=True)
    for local, (remote, pinned) in preset.downloads.items():
        expected = (sha256 or {}).get(local) or pinned
        _fetch(f"{base}/{remote}", folder / local, expected, timeout)
    return folder


def _fetch(url: str, target: Path, expected_sha256: str | None, timeout: float) -> None:
    import tempfile
    import urllib.error
    import urllib.request

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
        if expected_sha256 and digest.hexdigest() != expected_sha256.lower():
            raise ModelNotAvailableError(
                f"download of {url} failed verification: sha256 {digest.hexdigest()}, "
                f"expected {expected_sha256}"
            )
        os.replace(tmp, target)
    except (urllib.error.URLError, OSError) as exc:
        raise ModelNotAvailableError(f"download of {url} failed: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
