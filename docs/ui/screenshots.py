"""Save a screenshot of each memory browser page (1280x800 PNG) into docs/ui/.

Builds a small demo store in a temporary folder with the real embedding model, starts a real
`tinycontext ui --no-open` on it and photographs the pages with Debian's Chromium (headless,
Playwright; never a downloaded browser). Needs the `server` and `test` extras.

    python docs/ui/screenshots.py            # writes docs/ui/*.png
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("TINYCONTEXT_TEST_CHROMIUM", "/usr/bin/chromium")
DEMO = [
    ("project-a", "The project stores its state in one SQLite file under ~/.local/share."),
    ("project-a", "Deploys happen on Fridays after lunch; never on a holiday week."),
    ("project-a", "The staging database is refreshed from production every Monday at 06:00."),
    ("project-a", "Use ruff and mypy --strict before every commit; CI fails otherwise."),
    ("project-a", "The API keeps backwards compatibility for two minor versions."),
    ("home", "The user drinks green tea in the morning and coffee after lunch."),
    ("home", "The user's sister Anna lives in Berlin and visits in March."),
    ("home", "Book the dentist appointment for the second week of May."),
    ("travel", "Flight to Lisbon on 12 June, seat 14A, booking ref in the email."),
    ("travel", "The hotel in Lisbon is near Praça do Comércio; check-in after 15:00."),
]


def build_store(db: Path) -> str:
    """The demo memories; returns the id of one that has an older version."""
    sys.path.insert(0, str(HERE.parent.parent))
    from tinycontext import TinyContextConfig, build_service

    service = build_service(TinyContextConfig(memory_db_path=str(db)))
    for session, text in DEMO:
        service.save([{"content": text}], session)
    service.save([{"content": "Call the user Sam; they prefer short answers.",
                   "kind": "profile"}])
    old = service.list_page(search="deploys").to_dict()["memories"][0]["id"]
    new = service.update(old, "Deploys happen on Thursdays after lunch; never on a "
                         "holiday week.").to_dict()["id"]
    for question in ("When do we deploy?", "Where is the state stored?", "Who is Anna?"):
        service.recall(question)
    service.close()
    return str(new)


def main() -> int:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="tinycontext-shots-") as folder:
        db = Path(folder) / "memories.db"
        updated = build_store(db)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TINYCONTEXT_")}
        env.update(TINYCONTEXT_CONFIG_FILE=str(Path(folder) / "none.json"),
                   TINYCONTEXT_MEMORY_DB_PATH=str(db))
        server = subprocess.Popen([sys.executable, "-m", "tinycontext", "ui", "--no-open"],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        try:
            link = server.stdout.readline().split(": ", 1)[1].strip()  # type: ignore[union-attr]
            base = link.split("?")[0].rstrip("/")
            pages = {
                "overview": "/",
                "memories": "/memories?q=lunch",
                "ask": "/ask?q=When+do+we+deploy%3F&max_tokens=60",
                "detail": f"/memory/{updated}",
                "delete": f"/memory/{updated}/delete",
                "export": "/export",
            }
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                     args=["--no-sandbox"], headless=True)
                for scheme in ("light", "dark"):
                    context = browser.new_context(viewport={"width": 1280, "height": 800},
                                                  color_scheme=scheme)
                    page = context.new_page()
                    page.goto(link)
                    for name, path in pages.items():
                        if scheme == "dark" and name not in ("overview", "ask"):
                            continue
                        page.goto(base + path)
                        suffix = "" if scheme == "light" else "-dark"
                        page.screenshot(path=str(HERE / f"{name}{suffix}.png"))
                        print(f"wrote docs/ui/{name}{suffix}.png")
                    context.close()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
