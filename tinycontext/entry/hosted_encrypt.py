"""`tinycontext encrypt --hosted-folder DIR`: every user's plain store in a hosted folder,
each encrypted with the key the hosted server derives for that user (the server's key
material and the tenant key that names the file), one crash-safe conversion at a time."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

TENANT_FILE = re.compile(r"[0-9a-f]{64}\.db")  # <tenant key>.db (adapters/hosting)


def encrypt_folder(folder: Path, material: bytes, bar: Callable[[str], Callable[[float], None]],
                   fail: Callable[[str, str, int], int]) -> int:
    from tinycontext.adapters.sqlite import convert
    from tinycontext.adapters.sqlite.cipher import file_state
    from tinycontext.config.keys import tenant_store_key
    from tinycontext.domain.errors import StoreError

    if not folder.is_dir():
        return fail("encrypt", f"{folder} is not a folder: give the hosted server's store "
                    "folder (TINYCONTEXT_TENANT_STORE_DIR).", 2)
    files = sorted(p for p in folder.iterdir() if TENANT_FILE.fullmatch(p.name))
    if not files:
        return fail("encrypt", f"{folder} holds no users' stores (<tenant key>.db files); "
                    "nothing changed.", 1)
    encrypted, skipped, failed = 0, 0, []
    for number, path in enumerate(files, start=1):
        state = file_state(path)
        if state == "damaged":
            failed.append(f"{path.name}: its first page is damaged (run `tinycontext "
                          "doctor` and `tinycontext repair` on it)")
            continue
        if state != "plain":
            skipped += 1
            continue
        try:
            convert.convert(path, None, tenant_store_key(material, path.stem),
                            bar(f"encrypting {number}/{len(files)}"))
        except StoreError as exc:
            failed.append(f"{path.name}: {exc.message}")
            continue
        for copy in folder.glob(f"{path.name}-mirror*"):
            copy.unlink(missing_ok=True)  # plain vector copies: not kept for encrypted stores
        encrypted += 1
    print(f"tinycontext encrypt: {encrypted} of {len(files)} users' stores in {folder} "
          f"encrypted, {skipped} already encrypted "
          "or empty; keep the key file safe (without it no store there can be read).",
          file=sys.stderr)
    for line in failed:
        print(f"tinycontext encrypt: not converted: {line}", file=sys.stderr)
    if failed:
        print("tinycontext encrypt: those stores were left as they were; fix what is said "
              "and run this again (stores done are skipped).", file=sys.stderr)
    return 1 if failed else 0
