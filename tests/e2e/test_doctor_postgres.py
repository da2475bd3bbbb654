"""`tinycontext doctor` with store_url set: it checks PostgreSQL, not a SQLite file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.e2e.servers import run_cli
from tests.pg_fixture import temporary_database

SECRET = "doctor-pw-51d3"


@pytest.fixture
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    with temporary_database(request) as url:
        yield url


def test_doctor_checks_the_postgres_store_and_hides_the_password(
    tmp_path: Path, pg_database: str
) -> None:
    # The test server trusts local connections, so a password in the URL is accepted.
    user = psycopg.conninfo.conninfo_to_dict(pg_database)["user"]
    url = pg_database.replace(f"//{user}@", f"//{user}:{SECRET}@")
    done = run_cli(tmp_path, "doctor", "--json", TINYCONTEXT_STORE_URL=url)
    assert SECRET not in done.stdout + done.stderr
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert {"store", "pgvector", "schema"} <= set(checks) and "sqlite" not in checks
    assert all(checks[n]["ok"] for n in ("store", "pgvector", "schema")), checks
    assert "PostgreSQL" in checks["store"]["detail"]
    assert report["ready"] is True and done.returncode == 0
    assert not (tmp_path / "store").exists()  # no SQLite file was created on the side

    missing = url.replace(url.split("?")[0].rsplit("/", 1)[1], "no_such_database", 1)
    broken = run_cli(tmp_path, "doctor", TINYCONTEXT_STORE_URL=missing)
    assert broken.returncode == 1 and "[FAIL] store" in broken.stdout
    assert SECRET not in broken.stdout + broken.stderr and "Not ready" in broken.stdout
