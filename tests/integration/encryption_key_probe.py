"""Operations on an encrypted store with every log record (DEBUG, all loggers) and every span
and metric point captured, written as JSON to OUT (tests/integration/test_encryption_key_leaks.py).

    python -m tests.integration.encryption_key_probe FOLDER OUT

FOLDER holds `key` and `other` (key files) and gets the store. Global OpenTelemetry providers
are set once per process and SQLCipher becomes the process's SQLite once, so this runs in a
fresh interpreter: plain SDK providers with in-memory exporters, which see every span and
attribute before any allow-list, as an application's own providers would.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any


def capture_logs() -> io.StringIO:
    """Every log record of the process from now on (DEBUG, all loggers), as text."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG)
    logging.root.addHandler(handler)
    logging.root.setLevel(logging.DEBUG)
    return buffer


def cli(*args: str, **env: str) -> dict[str, Any]:
    """`tinycontext ARGS` in this process, with TINYCONTEXT_ENCRYPTION_* from `env` only."""
    from tinycontext.entry.cli import main

    for name in ("TINYCONTEXT_ENCRYPTION_KEY_FILE", "TINYCONTEXT_ENCRYPTION_KEY"):
        os.environ.pop(name, None)
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return {"args": list(args), "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


class Telemetry:
    """Global SDK providers with in-memory exporters: every span and metric point of the
    process from now on, before any allow-list."""

    def __init__(self) -> None:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        self.spans = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.spans))
        trace.set_tracer_provider(self.provider)
        self.reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[self.reader]))

    def captured(self) -> dict[str, Any]:
        """The finished spans (name, attributes, status, events, resource) and metrics."""
        self.provider.force_flush()
        finished = [{"name": s.name, "attributes": dict(s.attributes or {}),
                     "status": [s.status.status_code.name, s.status.description],
                     "events": [[e.name, dict(e.attributes or {})] for e in s.events],
                     "resource": dict(s.resource.attributes)}
                    for s in self.spans.get_finished_spans()]
        data = self.reader.get_metrics_data()
        return {"spans": finished, "metrics": data.to_json() if data is not None else ""}


def main() -> None:
    folder, target = Path(sys.argv[1]), Path(sys.argv[2])
    logs = capture_logs()
    telemetry = Telemetry()

    from tinycontext import TinyContextConfig, build_service
    from tinycontext.domain.errors import StoreLockedError
    from tinycontext.testing import HashEmbedder, WordTokenizer

    key, other = folder / "key", folder / "other"
    db = folder / "store" / "memories.db"
    os.environ["TINYCONTEXT_MEMORY_DB_PATH"] = str(db)
    steps: list[dict[str, Any]] = []

    def service(key_file: Path) -> Any:
        config = TinyContextConfig(memory_db_path=str(db), encryption_key_file=str(key_file),
                                   recall_late_interaction=False)
        return build_service(config, embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                             background=False)

    mine = service(key)
    saved = mine.save([{"content": f"note {n} about the garden", "tags": ["garden"]}
                       for n in range(20)], session_id="probe").to_dict()
    mine.recall("garden", session_id="probe")
    mine.list_page(tags=["garden"])
    mine.detail(saved["saved"][0]["id"])
    mine.close()
    refused = None
    try:
        refused = service(other)
        refused.recall("garden")
        steps.append({"wrong key": "opened"})
    except StoreLockedError as exc:  # its traceback goes to the log as a caller's would
        steps.append({"wrong key": exc.code, "message": exc.message})
        logging.getLogger("probe").debug("refused open", exc_info=True)
    finally:
        if refused is not None:
            refused.close()
    right = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(key)}
    wrong = {"TINYCONTEXT_ENCRYPTION_KEY": other.read_text().strip()}
    loose = folder / "loose"
    loose.write_text(key.read_text())
    loose.chmod(0o644)
    steps += [
        cli("doctor", "--json", **right),
        cli("doctor", "--json", **wrong),
        cli("export", "-o", str(folder / "out.jsonl"), **wrong),
        cli("export", "--encrypt", "-o", str(folder / "out.sealed"), **right),
        cli("repair", "-o", str(folder / "rescued.jsonl"), **wrong),
        cli("rekey", "--new-key-file", str(loose), **right),
        cli("decrypt", **wrong),
    ]
    target.write_text(json.dumps({
        "logs": logs.getvalue(), "steps": steps, **telemetry.captured(),
    }, default=repr))


if __name__ == "__main__":
    main()
