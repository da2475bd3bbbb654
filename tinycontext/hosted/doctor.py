"""`tinycontext doctor` in hosted mode on SQLite: the folder of the per-user stores.

A hosted server never opens the single-user store; what it needs is TINYCONTEXT_TENANT_STORE_DIR:
an existing folder this user owns, private (the server makes it mode 700 at start when it can),
writable, with room for the stores to grow. Read-only: nothing is created or changed.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from tinycontext.config.engine import ENV_PREFIX

NAME = "tenant stores"
STORE_SUFFIX = ".db"
# Below this much free space a save may already fail (`store_full`): a WAL checkpoint, an index
# merge or a batch of new memories needs a few megabytes beyond the data itself.
MIN_FREE_BYTES = 64 * 1024 * 1024


def _mb(size: float) -> str:
    return f"{size / 1e6:,.1f} MB"


def check_tenant_folder(raw: str, min_free_bytes: int = MIN_FREE_BYTES) -> tuple[str, bool, str]:
    """(name, ok, detail) for the tenant store folder named by `raw`."""
    variable = ENV_PREFIX + "TENANT_STORE_DIR"
    if not raw.strip():
        return NAME, False, f"{variable} is not set: name an existing folder for the user stores"
    folder = Path(raw.strip()).expanduser()
    if not folder.exists():
        parent = folder.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        how = (f"create it with `mkdir -m 700 {folder}`" if os.access(parent, os.W_OK | os.X_OK)
               else f"{parent} is not writable by this user: create it as its owner")
        return NAME, False, f"{folder} does not exist; {how} (the server does not create it)"
    if not folder.is_dir():
        return NAME, False, f"{folder} is not a folder"
    notes: list[str] = []
    if os.name == "posix":
        info = folder.stat()
        shared = info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        mode = f"mode {stat.S_IMODE(info.st_mode):o}"
        if info.st_uid != os.getuid():
            if shared:
                return NAME, False, (f"{folder} belongs to another user and others can open it "
                                     f"({mode}); use a folder this user owns")
            notes.append(f"owned by uid {info.st_uid}, {mode}")
        elif shared:
            notes.append(f"{mode}: the server makes it owner-only (700) when it starts")
        else:
            notes.append("owner-only")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tinycontext-doctor-"):
            pass
    except OSError as exc:
        return NAME, False, f"cannot create files in {folder} ({exc.strerror})"
    free = shutil.disk_usage(folder).free
    stores = [p for p in folder.glob(f"*{STORE_SUFFIX}") if p.is_file()]
    used = sum(p.stat().st_size for s in stores for p in (s, Path(f"{s}-wal")) if p.exists())
    facts = (f"{folder}: {', '.join(notes)}, writable, {len(stores)} user stores "
             f"({_mb(used)}), {_mb(free)} free")
    if free < min_free_bytes:
        return NAME, False, (f"{facts}: below {_mb(min_free_bytes)}, saves will fail; free some "
                             "space or move the folder")
    return NAME, True, facts
