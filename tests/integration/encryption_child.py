"""A child process for the encryption tests: `fill PATH N [START] [PAD]` saves N planted
memories (numbered from START, each with PAD filler words) into an
encrypted store (key material from TINYCONTEXT_ENCRYPTION_KEY), batch by batch, printing each
batch's count; `hold PATH SECONDS` keeps the store open; `count PATH` prints its memories;
`tenant-count PATH` opens a hosted user's file as the hosted server does (the key derived for
its tenant key) and prints its memories."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.encryption_support import planted
from tinycontext import TinyContextConfig, build_service
from tinycontext.testing import HashEmbedder, WordTokenizer


def main() -> None:
    mode, path = sys.argv[1], Path(sys.argv[2])
    if mode == "tenant-count":
        tenant_count(path)
        return
    config = TinyContextConfig(memory_db_path=str(path),
                               encryption_key=os.environ.get("TINYCONTEXT_ENCRYPTION_KEY", ""),
                               recall_late_interaction=False)
    service = build_service(config, embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                            background=False)
    if mode == "fill":
        total, start = int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 0
        pad = " ".join(f"filler{n}" for n in range(int(sys.argv[5]))) if len(sys.argv) > 5 else ""
        for first in range(start, start + total, 50):
            items = []
            for i in range(first, min(first + 50, start + total)):
                content, tag, _ = planted(i)
                items.append({"content": f"note {content} about {i * 7919 % 1000} {pad}",
                              "tags": [tag]})
            service.save(items, session_id=planted(first)[2])
            print(min(first + 50, start + total) - start, flush=True)
    elif mode == "hold":
        service.recall(None)
        print("holding", flush=True)
        time.sleep(float(sys.argv[3]))
    elif mode == "count":
        print(service.list_page(limit=1).to_dict()["total_count"], flush=True)
    service.close()


def tenant_count(path: Path) -> None:
    from tinycontext.adapters.sqlite.driver import use_sqlcipher
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.config.keys import key_material, tenant_store_key

    use_sqlcipher()
    config = TinyContextConfig(encryption_key=os.environ["TINYCONTEXT_ENCRYPTION_KEY"])
    material = key_material(config)
    assert material is not None
    store = SqliteStore(path, key=tenant_store_key(material, path.stem))
    print(len(store.export_page(0, 1000, None)), flush=True)
    store.close()


if __name__ == "__main__":
    main()
