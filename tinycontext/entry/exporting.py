"""`tinycontext export` and `tinycontext repair`: a store as JSON Lines, in an owner-only file.

The file holds every memory, so it is created 0600 whatever the umask, as the store is. It
is written under a temporary name in the same folder and renamed into place once complete:
an export that fails (a damaged store, a full disk) leaves no partial file, and a file that
already had that name stays as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tinycontext.domain.errors import StoreError

if TYPE_CHECKING:
    from tinycontext.config.engine import TinyContextConfig

REPAIR_HELP = (
    "Write every readable memory of a damaged SQLite store as JSON Lines, the export format, "
    "reading the file page by page past the damage; load the result with `tinycontext "
    "import` into a fresh store. The damaged store is only read, never changed."
)


@contextmanager
def private_output(target: str) -> Iterator[IO[str]]:
    """Where to write: stdout for "-", else an owner-only file that appears only if the
    block completes (a device or pipe named by path is written directly)."""
    if target == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(target)
    if path.is_dir():
        raise OSError(f"cannot write {target}: {path} is a folder; name a file in it, e.g. "
                      f"-o {path / 'memories.jsonl'}. Nothing was written.")
    if path.exists() and not path.is_file():  # /dev/stdout, a FIFO: nothing to rename
        with path.open("w", encoding="utf-8") as out:
            yield out
        return
    # mkstemp creates the file 0600 (never widened by the umask) with a name nobody else has.
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as exc:  # its message would name the temporary file, not the user's
        raise OSError(f"cannot write {target}: {exc.strerror} (the folder {path.parent} must "
                      "exist and be writable). Nothing was written.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


@contextmanager
def sealed_if(out: IO[str], material: bytes | None) -> Iterator[IO[str]]:
    """`out` itself, or a writer that seals into it (`export --encrypt`)."""
    if material is None:
        yield out
        return
    from tinycontext.app import sealed

    out.flush()
    writer = sealed.text_writer(out.buffer, material)  # type: ignore[attr-defined]
    yield writer
    writer.close()


def export_key(args: argparse.Namespace, config: TinyContextConfig) -> bytes | None:
    """The key material for `--encrypt`; refuses when no key is configured."""
    if not getattr(args, "encrypt", False):
        return None
    from tinycontext.config.keys import EncryptionKeyError, key_material

    material = key_material(config)
    if material is None:
        raise EncryptionKeyError(
            "--encrypt uses the configured encryption key, and none is configured: set "
            "TINYCONTEXT_ENCRYPTION_KEY_FILE (make a key with `tinycontext keygen -o FILE`).")
    return material


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _nothing_written(output: str) -> str:
    if output == "-":
        return "What was written to stdout is incomplete."
    return f"Nothing was written to {output}."


def _driver_error(exc: Exception, store_url: str) -> bool:
    """A raw SQLite error that escaped the store's own translation into coded errors."""
    if store_url:
        return False
    from tinycontext.adapters.sqlite.driver import sqlite_module

    return isinstance(exc, sqlite_module().DatabaseError)


def cmd_export(args: argparse.Namespace, command: str = "export") -> int:
    """`tinycontext export`; also `repair` on an encrypted store that checks out (`command`
    names it in what is printed)."""
    from tinycontext.app.transfer import export_jsonl
    from tinycontext.entry.bootstrap import read_settings
    from tinycontext.entry.container import create_container

    config = read_settings().config
    if not config.store_url and not Path(config.memory_db_path).exists():
        print(f"tinycontext {command}: no store at {config.memory_db_path}; nothing to export.",
              file=sys.stderr)
        return 0
    material = export_key(args, config)
    container = create_container(config)
    store = container.store()
    try:
        if args.session is not None and not store.session_exists(args.session):
            print(f"tinycontext {command}: no memory was ever saved in session {args.session!r} "
                  "(check the name; without --session every memory is exported). "
                  "Nothing was written.", file=sys.stderr)
            return 1
        with private_output(args.output) as plain, sealed_if(plain, material) as out:
            count = export_jsonl(store, out, args.session, not args.no_embeddings,
                                 progress=lambda n: _progress(f"exported {n} memories..."))
    except StoreError as exc:
        print(f"tinycontext {command}: {exc.message} {_nothing_written(args.output)}",
              file=sys.stderr)
        return 1
    except Exception as exc:
        if not _driver_error(exc, config.store_url):
            raise
        print(f"tinycontext {command}: the memory store {config.memory_db_path} could not be "
              f"read ({exc}). {_nothing_written(args.output)} Run `tinycontext doctor` to "
              "check it; if it is damaged, `tinycontext repair -o FILE` writes every readable "
              "memory to FILE for `tinycontext import` into a fresh store.", file=sys.stderr)
        return 1
    finally:
        container.shutdown_resources()
    print(f"tinycontext {command}: {_count(count, 'memory', 'memories')} written.",
          file=sys.stderr)
    return 0


def _repair_encrypted(args: argparse.Namespace, config: TinyContextConfig, db: Path) -> int:
    """An encrypted store: its pages can only be read through SQLCipher with the key, so
    repair checks every page's authentication and, when all pass, writes every memory as
    export does; the page-by-page salvage past damage reads plain SQLite files only."""
    from tinycontext.adapters.sqlite.convert import KEY_DOES_NOT_OPEN, check_pages
    from tinycontext.entry.stores import sqlite_key

    key = sqlite_key(config)
    if key is None:
        print(f"tinycontext repair: {db} is encrypted and no key is configured: set "
              "TINYCONTEXT_ENCRYPTION_KEY_FILE (or TINYCONTEXT_ENCRYPTION_KEY) to its key and "
              "run this again. Nothing was written.", file=sys.stderr)
        return 1
    problems = check_pages(db, key)
    if problems == [KEY_DOES_NOT_OPEN]:
        print(f"tinycontext repair: {db} is encrypted and the configured key does not open "
              "it: not one of its pages authenticates with that key, which is what a "
              "different key gives (damage fails only the pages it reaches), so as far as "
              "repair can tell the store is not damaged. Set TINYCONTEXT_ENCRYPTION_KEY_FILE "
              "(or TINYCONTEXT_ENCRYPTION_KEY) to the key it was encrypted with (after "
              "`tinycontext rekey`, the new one) and run this again. Nothing was written.",
              file=sys.stderr)
        return 1
    if problems:
        print(f"tinycontext repair: {db} is encrypted and {problems[0]}. Salvaging memories "
              "around damaged pages reads plain SQLite files only, so it cannot be done for an "
              "encrypted store: restore the store from a backup or an export. Nothing was "
              "written.", file=sys.stderr)
        return 1
    print(f"tinycontext repair: {db} is encrypted and every page passes SQLCipher's check; "
          "writing every memory as `tinycontext export` does.", file=sys.stderr)
    return cmd_export(args, "repair")


def cmd_repair(args: argparse.Namespace) -> int:
    from tinycontext.adapters.sqlite.pages import UnreadableFileError
    from tinycontext.adapters.sqlite.salvage import salvage_jsonl
    from tinycontext.entry.bootstrap import read_settings

    config = read_settings().config
    if config.store_url:
        print("tinycontext repair: reads a SQLite store file; with store_url set (PostgreSQL) "
              "use the database's own backups, or `tinycontext export`.", file=sys.stderr)
        return 2
    db = Path(config.memory_db_path)
    if not db.is_file():
        print(f"tinycontext repair: no store file at {db}; nothing to salvage.", file=sys.stderr)
        return 1
    from tinycontext.adapters.sqlite.cipher import file_state

    if file_state(db) == "encrypted":
        return _repair_encrypted(args, config, db)
    material = export_key(args, config)
    try:
        with private_output(args.output) as plain, sealed_if(plain, material) as out:
            report = salvage_jsonl(db, out, args.session, not args.no_embeddings, _progress)
    except UnreadableFileError as exc:
        print(f"tinycontext repair: {db} holds no readable SQLite pages ({exc}): nothing can "
              f"be salvaged from it. {_nothing_written(args.output)} Restore it from a backup "
              "or an earlier export.", file=sys.stderr)
        return 1
    lost = []
    if report.bad_pages:
        lost.append(_count(report.bad_pages, "unreadable page") + " of the memories table")
    if report.bad_rows:
        lost.append(_count(report.bad_rows, "unreadable memory", "unreadable memories"))
    if report.unconfirmed:
        lost.append(_count(report.unconfirmed, "row") + " that no index confirms as not "
                    "deleted")
    if report.lost:
        lost.append(f"at least {_count(report.lost, 'memory', 'memories')} could not be read")
    notes = [f"{_count(report.without_embedding, 'memory', 'memories')} without embedding "
             "(import re-embeds them)"] if report.without_embedding else []
    if report.links_fixed:
        notes.append(_count(report.links_fixed, "version link") + " mended around "
                     "unreadable memories")
    where = "stdout" if args.output == "-" else args.output
    summary = (f"tinycontext repair: {_count(report.memories, 'memory', 'memories')} written "
               f"to {where} from {_count(report.pages, 'page')}")
    where = "FILE" if args.output == "-" else args.output
    summary += f"; {'; '.join(lost)}" if lost else "; nothing was unreadable"
    summary += f"; {', '.join(notes)}" if notes else ""
    print(summary + f". Load them into a fresh store with `tinycontext import {where}` (move "
          f"{db} aside first, or point memory_db_path at a new file).", file=sys.stderr)
    return 0
