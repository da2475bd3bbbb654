"""`tinycontext keygen`, `encrypt`, `decrypt` and `rekey`: keys and converting a store in place.

The key comes from TINYCONTEXT_ENCRYPTION_KEY_FILE / TINYCONTEXT_ENCRYPTION_KEY (never from
the command line, where other users could read it in the process list); `rekey` reads the
new key from a file. Conversions are crash-safe (adapters/sqlite/convert.py) and show a
progress bar on a terminal, plain lines otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

NAMES = ("keygen", "encrypt", "decrypt", "rekey")
KEY_HINT = ("set TINYCONTEXT_ENCRYPTION_KEY_FILE to a key file (make one with `tinycontext "
            "keygen -o FILE`) or TINYCONTEXT_ENCRYPTION_KEY")


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keygen = sub.add_parser(
        "keygen", help="write a new encryption key file (0600)",
        description="Write 32 random bytes (64 hex characters) to a new owner-only file, for "
        "TINYCONTEXT_ENCRYPTION_KEY_FILE. An existing file is never overwritten. Keep a copy "
        "somewhere safe: without the key an encrypted store cannot be read.")
    keygen.add_argument("-o", "--output", required=True, help="the key file to create")
    for name, text in (
        ("encrypt", "Encrypt the plain store at memory_db_path with the configured key "
         "(TINYCONTEXT_ENCRYPTION_KEY_FILE or TINYCONTEXT_ENCRYPTION_KEY)."),
        ("decrypt", "Turn the encrypted store back into a plain SQLite file; needs its key "
         "configured as for serving. Afterwards unset the key variables."),
        ("rekey", "Re-encrypt the store with the key in --new-key-file; the configured key "
         "must open it. Afterwards point TINYCONTEXT_ENCRYPTION_KEY_FILE at the new file."),
    ):
        p = sub.add_parser(name, help=text.split(";")[0].split(" with ")[0].lower(),
                           description=text + " The store is rewritten into a new file in the "
                           "same folder and swapped in atomically: a crash leaves the old or the "
                           "new store whole. Stop every server and client using it first "
                           "(a store in use is refused).")
        if name == "rekey":
            p.add_argument("--new-key-file", required=True,
                           help="the new key file (tinycontext keygen -o FILE)")
        if name == "encrypt":
            p.add_argument("--hosted-folder", metavar="DIR",
                           help="encrypt every user's plain store in a hosted folder "
                           "(TINYCONTEXT_TENANT_STORE_DIR's <tenant key>.db files), each with "
                           "its own key derived from the configured one, as the hosted server "
                           "opens them; stores already encrypted are left as they are")


def _bar(label: str) -> Callable[[float], None]:
    """A progress bar on a terminal, a line every few seconds otherwise."""
    terminal = sys.stderr.isatty()
    last = [0.0, -1]

    def show(done: float) -> None:
        percent = int(done * 100)
        now = time.monotonic()
        if terminal:
            if percent != last[1]:
                filled = percent * 30 // 100
                sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {percent:3d}%")
                sys.stderr.flush()
                last[1] = percent
            if done >= 1.0:
                sys.stderr.write("\n")
        elif now - last[0] >= 2.0 or (done >= 1.0 and last[1] != 100):
            print(f"{label}: {percent}%", file=sys.stderr, flush=True)
            last[0], last[1] = now, percent
    return show


def _fail(name: str, message: str, code: int = 1) -> int:
    print(f"tinycontext {name}: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    if args.command == "keygen":
        return _keygen(Path(args.output))
    return _convert(args)


def _keygen(path: Path) -> int:
    from tinycontext.config.keys import write_key_file

    try:
        write_key_file(path)
    except FileExistsError:
        return _fail("keygen", f"{path} already exists; it was left unchanged (choose another "
                     "name, or remove it first if it holds no key you still need).")
    print(f"tinycontext keygen: wrote a new key to {path} (owner-only). Use it with "
          f"TINYCONTEXT_ENCRYPTION_KEY_FILE={path}, and keep a backup copy somewhere safe: "
          "without it an encrypted store cannot be read.", file=sys.stderr)
    return 0


def _convert(args: argparse.Namespace) -> int:
    from tinycontext.adapters.sqlite import convert
    from tinycontext.adapters.sqlite.cipher import file_state
    from tinycontext.config.keys import read_key_file, store_key
    from tinycontext.entry.bootstrap import read_settings
    from tinycontext.entry.stores import sqlite_key_material

    name = args.command
    config = read_settings().config
    if config.store_url:
        return _fail(name, "works on a SQLite store; encryption at rest in PostgreSQL is the "
                     "database server's and its disk's job (see docs/guides/postgres.md).", 2)
    material = sqlite_key_material(config)
    if material is None:
        return _fail(name, f"no encryption key is configured: {KEY_HINT}.", 2)
    if getattr(args, "hosted_folder", None):
        from tinycontext.entry.hosted_encrypt import encrypt_folder

        return encrypt_folder(Path(args.hosted_folder), material, _bar, _fail)
    path = Path(config.memory_db_path)
    state = file_state(path)
    if state in ("missing", "empty"):
        return _fail(name, f"no store at {path} yet; nothing to convert (a new store is "
                     "created encrypted when a key is configured).")
    if state == "damaged":
        return _fail(name, f"the first page of {path} is damaged, so it was not converted: run "
                     "`tinycontext doctor`, then `tinycontext repair`.")
    key = store_key(material)
    wanted = {"encrypt": "plain", "decrypt": "encrypted", "rekey": "encrypted"}[name]
    if state != wanted:
        already = ("is already encrypted (to change its key use `tinycontext rekey`)"
                   if name == "encrypt" else "is not encrypted (use `tinycontext encrypt`)")
        return _fail(name, f"the store {path} {already}; nothing changed.")
    old, new = {"encrypt": (None, key), "decrypt": (key, None)}.get(name, (key, None))
    if name == "rekey":
        new = store_key(read_key_file(Path(args.new_key_file)))
        if new == key:
            return _fail(name, "the new key file holds the configured key; nothing changed.")
    from tinycontext.domain.errors import StoreError

    try:
        done = convert.convert(path, old, new, _bar(f"{name}ing {path.name}"))
    except StoreError as exc:
        return _fail(name, exc.message)
    if name == "encrypt":
        for copy in path.parent.glob(f"{path.name}-mirror*"):
            copy.unlink(missing_ok=True)  # plain vector copies: not kept for encrypted stores
    after = {"encrypt": "encrypted: keep the key file safe (without it the store cannot "
             "be read)", "decrypt": "plain again: unset TINYCONTEXT_ENCRYPTION_KEY_FILE / "
             "_KEY before serving it",
             "rekey": "re-keyed: point TINYCONTEXT_ENCRYPTION_KEY_FILE at "
             f"{getattr(args, 'new_key_file', '')} now (the old key no longer opens it)"}[name]
    count = f"{done.memories} memor{'y' if done.memories == 1 else 'ies'}"
    print(f"tinycontext {name}: {count}; {path} is {after}.", file=sys.stderr)
    return 0
