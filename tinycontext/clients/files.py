"""Reading and writing client config files safely: a backup of the previous file, an atomic
replace (a crash leaves the old file or the new one, never half of one), the file's mode kept,
symlinks written through, new files and folders owner-only."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tinycontext.clients.catalog import Place


def local_place(env: Mapping[str, str]) -> Place:
    """This machine: the user's home, `env` (the caller read it), the system, the cwd."""
    system = {"win32": "windows", "darwin": "darwin"}.get(sys.platform, "linux")
    return Place(Path.home(), dict(env), system, Path.cwd())


class ConfigFileError(OSError):
    """A config file that cannot be read or written; the message names it."""


def target(path: Path) -> Path:
    """The file a path stands for: a symlinked config (dotfiles) is edited where it lives."""
    return path.resolve() if path.is_symlink() else path


def read(path: Path) -> str | None:
    """The file's text, None when it does not exist."""
    try:
        data = target(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{path} is not UTF-8 text (byte {exc.start}); it was left "
                              "unchanged") from None


def backup_path(path: Path, now: float | None = None) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    candidate = path.with_name(f"{path.name}.{stamp}.tinycontext-backup")
    serial = 1
    while candidate.exists():
        serial += 1
        candidate = path.with_name(f"{path.name}.{stamp}-{serial}.tinycontext-backup")
    return candidate


def backup(path: Path) -> Path:
    """An owner-only copy of the file beside it (it may hold tokens: never wider than 0600)."""
    real = target(path)
    copy = backup_path(real)
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out, open(real, "rb") as source:
        shutil.copyfileobj(source, out)
    return copy


def _make_dirs(folder: Path) -> None:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        created.mkdir(mode=0o700)


def _unchanged_since(path: Path, expected: str | None) -> None:
    """Refuse to replace a file that changed after it was read (the client wrote it)."""
    if read(path) != expected:
        raise ConfigFileError(f"{path} changed while setup was working on it (was the client "
                              "writing it?); nothing was written: run setup again")


def write(path: Path, text: str, expected: str | None) -> Path | None:
    """Replace (or create) the file with `text` if it still holds `expected` (None: absent);
    returns the backup made, if any."""
    real = target(path)
    _unchanged_since(real, expected)
    try:
        mode = real.stat().st_mode & 0o7777
        saved: Path | None = backup(real)
    except FileNotFoundError:
        mode, saved = 0o600, None
        _make_dirs(real.parent)
    fd, scratch = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(scratch, mode)
        os.replace(scratch, real)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
    return saved


def remove(path: Path, expected: str) -> Path:
    """Delete the file (ours emptied it) if it still holds `expected`, keeping a backup;
    returns the backup."""
    real = target(path)
    _unchanged_since(real, expected)
    saved = backup(real)
    real.unlink()
    return saved


def local_report(env: Mapping[str, str]) -> tuple[list[str], list[dict[str, Any]]]:
    """`tinycontext doctor`'s client section for this machine (`env`: what the caller read)."""
    from tinycontext.clients.status import doctor_report

    def readable(path: Path) -> str | None:
        try:
            return read(path)
        except ConfigFileError:
            return None

    return doctor_report(local_place(env), readable, lambda p: p.exists())
