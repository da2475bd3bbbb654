"""The memory browser in a real browser: Debian's Chromium (headless, driven by Playwright,
never a downloaded browser) against a real `tinycontext ui` process on a real SQLite store
with the real embedding model. Checks what the pages show AND what the store holds after."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import cli_env, tinycontext_command

CHROMIUM = Path(os.environ.get("TINYCONTEXT_TEST_CHROMIUM", "/usr/bin/chromium"))
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM}: install it "
                       "with `apt-get install -y chromium` (.ci/run does)"),
]
HOSTILE = [
    "<script>window.pwned = 'script'</script> hostile script note",
    "<img src=x onerror=\"window.pwned = 'img'\"> hostile image note",
    "javascript:window.pwned='link' hostile link note",
]


def _service(db: Path) -> Any:
    from tinycontext import TinyContextConfig, build_service

    return build_service(TinyContextConfig(memory_db_path=str(db)))


def _history(db: Path) -> None:
    """A memory saved on 1 March 2024 and replaced on 1 June 2024, both versions tagged."""
    from datetime import UTC, datetime

    from tinycontext import TinyContextConfig, build_service
    from tinycontext.testing import FixedClock

    clock = FixedClock(datetime(2024, 3, 1, 9, 0, tzinfo=UTC))
    past = build_service(TinyContextConfig(memory_db_path=str(db)), clock=clock)
    saved = past.save([{"content": "The office is in Lisbon.", "tags": ["office"]}])
    clock.advance(92 * 86400)
    past.update(saved.to_dict()["saved"][0]["id"], "The office is in Porto.",
                tags=["office", "moved"])
    past.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("ui")
    db = tmp / "store" / "memories.db"
    _history(db)
    service = _service(db)
    service.save([{"content": "The project stores its state in SQLite."},
                  {"content": "Deploys happen on Fridays after lunch.", "tags": ["ops", "deploy"]}],
                 "work")
    service.save([{"content": "The user drinks green tea every morning."}], "home")
    service.save([{"content": "Call the user Sam.", "kind": "profile"}])
    service.save([{"content": text} for text in HOSTILE], "hostile")
    process = subprocess.Popen(
        [*tinycontext_command(), "ui", "--no-open"],
        env=cli_env(tmp, TINYCONTEXT_MEMORY_DB_PATH=str(db)), stdout=subprocess.PIPE,
        stderr=(tmp / "ui.log").open("w"), text=True)
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert "memory browser: http://127.0.0.1:" in line, (line, process.poll())
        link = line.split(": ", 1)[1].strip()
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                 args=["--no-sandbox"], headless=True)
            yield {"link": link, "base": link.split("?")[0].rstrip("/"), "service": service,
                   "browser": browser, "tmp": tmp}
            browser.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        service.close()


@pytest.fixture
def page(world: dict[str, Any]) -> Iterator[Any]:
    context = world["browser"].new_context(viewport={"width": 1280, "height": 800},
                                           accept_downloads=True)
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.goto(world["link"])
    yield page
    context.close()


def _nav(page: Any, name: str) -> None:
    page.get_by_role("navigation", name="Pages").get_by_role("link", name=name, exact=True).click()


def _id(service: Any, words: str) -> str:
    return str(service.list_page(search=words).to_dict()["memories"][0]["id"])


def test_the_link_signs_in_and_nothing_else_does(world, page):
    assert page.locator("h1").inner_text() == "Overview"
    assert "token=" not in page.url  # the token left the address bar
    stranger = world["browser"].new_context()
    response = stranger.new_page().goto(world["base"] + "/memories")
    assert response.status == 401
    stranger.close()


def test_overview_counts(page):
    cards = page.locator(".cards").inner_text()
    assert "8\nmemories" in cards.replace("\n\n", "\n") or "8 memories" in cards
    assert "Memories saved per month" in page.content()


def test_browse_filter_and_search(page):
    _nav(page, "Memories")
    assert page.locator("table.memories tbody tr").count() == 8
    page.get_by_label("Kind").select_option("profile")  # the script applies it at once
    page.wait_for_url("**kind=profile**")
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 1 and "Call the user Sam." in rows.inner_text()
    page.get_by_role("link", name="Clear").click()
    page.get_by_label("Session").fill("work")
    page.get_by_label("Keywords").fill("depl")
    page.get_by_role("button", name="Apply").click()
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 1 and "Fridays" in rows.inner_text()
    assert page.locator("mark").first.inner_text() == "Deploys"


def test_ask_shows_what_recall_returns(world, page):
    _nav(page, "Ask")
    page.get_by_label("Question").fill("Where does the project keep its state?")
    page.get_by_role("button", name="Ask").click()
    first = page.locator("table.ask tbody tr").first
    assert "SQLite" in first.inner_text()
    assert page.locator("table.ask .label").first.inner_text() in ("high", "medium", "low")
    assert "Call the user Sam." in page.content()  # the profile block
    counts = [m["recall_count"] for m in world["service"].list_page().to_dict()["memories"]]
    assert set(counts) == {0}  # asking here is not a recall


def _ran_nothing(page) -> None:
    # window.pwned starts afresh on every page load: check each page the content appears on.
    assert page.evaluate("window.pwned") is None
    assert page.dialogs == []
    assert page.locator("img").count() == 0


def test_hostile_content_runs_nothing(world, page):
    page.goto(world["base"] + "/memories?session=hostile&q=hostile")
    assert page.locator("table.memories tbody tr").count() == 3
    _ran_nothing(page)
    for text in HOSTILE:
        mid = _id(world["service"], text.split()[-2] + " note")
        page.goto(f"{world['base']}/memory/{mid}")
        assert page.locator("pre.content-full").inner_text() == text  # shown as text
        _ran_nothing(page)
    page.goto(world["base"] + "/ask?q=hostile+note")
    _ran_nothing(page)


def test_edit_then_delete_brings_the_old_version_back(world, page):
    service = world["service"]
    old = _id(service, "green tea")
    page.goto(f"{world['base']}/memory/{old}")
    page.get_by_label("New content").fill("The user drinks black coffee every morning.")
    page.get_by_role("button", name="Save new version").click()
    assert "Saved as a new version" in page.locator(".notice").inner_text()
    assert "black coffee" in page.locator("pre.content-full").inner_text()
    assert service.detail(old).to_dict()["superseded_by"] is not None  # the store changed
    new = _id(service, "black coffee")
    page.get_by_role("link", name="Delete this memory…").click()
    assert "live again" in page.content() and "green tea" in page.content()
    page.get_by_role("button", name="Delete for good").click()
    assert "live again" in page.locator(".notice").inner_text()
    assert service.detail(old).to_dict()["superseded_by"] is None
    with pytest.raises(Exception, match="memory_not_found|No memory"):
        service.detail(new)


def test_tag_chips_and_the_tags_filter(page):
    _nav(page, "Memories")
    page.locator("table.memories tbody tr", has_text="Fridays").get_by_role(
        "link", name="ops").click()
    page.wait_for_url("**tags=ops**")
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 1 and "Fridays" in rows.inner_text()
    page.get_by_role("link", name="Clear").click()
    page.get_by_label("Tags").fill("office, moved")
    page.get_by_role("button", name="Apply").click()
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 1 and "Porto" in rows.inner_text()  # the replaced Lisbon is not live


def test_editing_tags_writes_a_new_version(world, page):
    service = world["service"]
    old = _id(service, "Porto")
    page.goto(f"{world['base']}/memory/{old}")
    page.get_by_label("Tags").fill("office, moved, HQ")
    page.get_by_role("button", name="Save new version").click()
    assert "Saved as a new version" in page.locator(".notice").inner_text()
    assert page.locator("p.tags a.chip").all_inner_texts() == ["office", "moved", "hq"]
    new = service.detail(_id(service, "Porto")).to_dict()  # the store changed
    assert new["id"] != old and new["tags"] == ["office", "moved", "hq"]
    assert service.detail(old).to_dict()["superseded_by"] is not None
    page.get_by_label("Tags").fill("office, not a tag!")
    page.get_by_role("button", name="Save new version").click()
    assert "invalid_request" in page.content()
    assert service.detail(new["id"]).to_dict()["superseded_by"] is None  # nothing stored


def test_as_of_shows_what_was_current_then(world, page):
    _nav(page, "Memories")
    page.get_by_label("As of").fill("2024-04-01")
    page.get_by_role("button", name="Apply").click()
    assert "as they were on 2024-04-01" in page.get_by_role("status").inner_text()
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 1 and "Lisbon" in rows.inner_text()
    page.goto(f"{world['base']}/memory/{_id(world['service'], 'Porto')}")
    page.get_by_label("Show the version current on").fill("2024-04-01")
    page.get_by_role("button", name="Show").click()
    assert "As of 2024-04-01: this is the version that was current then" in page.locator(
        ".notice", has_text="As of").inner_text()
    assert page.locator("pre.content-full").inner_text() == "The office is in Lisbon."


def test_export_downloads_the_store(world, page):
    _nav(page, "Export")
    page.get_by_label("Only this session").fill("work")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download").click()
    lines = Path(info.value.path()).read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert {r["session_id"] for r in records} == {"work"} and len(records) == 2


def test_pages_work_without_javascript(world):
    context = world["browser"].new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(world["link"])
    page.goto(world["base"] + "/memories")
    page.get_by_label("Kind").select_option("profile")
    page.get_by_role("button", name="Apply").click()  # no script: the button applies
    assert page.locator("table.memories tbody tr").count() == 1
    page.locator("table.memories a").first.click()
    assert page.locator("pre.content-full").inner_text() == "Call the user Sam."
    context.close()


def test_cli_prints_a_new_token_each_start(world):
    tmp = world["tmp"]
    links = []
    for _ in range(2):
        process = subprocess.Popen([*tinycontext_command(), "ui", "--no-open"],
                                   env=cli_env(tmp), stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
        started = time.monotonic()
        links.append(process.stdout.readline().strip())  # type: ignore[union-attr]
        assert time.monotonic() - started < 60
        process.terminate()
        process.wait(timeout=15)
    assert links[0] != links[1] and all("?token=" in link for link in links)


PHONE = {"width": 390, "height": 844}


def test_every_page_fits_a_phone_screen(world: dict[str, Any]) -> None:
    context = world["browser"].new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    phone = context.new_page()
    phone.goto(world["link"])
    memory = _id(world["service"], "green tea")
    for path in ("/", "/memories", "/memories?q=deploys", "/ask?q=where+is+the+state+kept",
                 f"/memory/{memory}", f"/memory/{memory}/delete", "/export"):
        phone.goto(world["base"] + path)
        wide = phone.evaluate("document.documentElement.scrollWidth")
        assert wide <= PHONE["width"], f"{path} is {wide} px wide on a {PHONE['width']} px screen"
        # The page's title and every page link are on screen, none cut off at the side.
        for box in [phone.locator("h1").bounding_box()] + [
                link.bounding_box() for link in phone.locator("nav a").all()]:
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= wide
    context.close()
