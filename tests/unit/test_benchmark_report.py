"""docs/benchmarks.md is written by benchmarks/report.py from the JSON in docs/results/: the
page must match the JSON it claims to come from, and a result file gets its section."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import report


def _run(name: str, results: dict[str, object]) -> dict[str, object]:
    return {"benchmark": name, "created": "2026-12-04T22:00:00Z",
            "command": f"benchmark_{name}.py --json-out /tmp/x.json --sizes 10",
            "machine": {"git_revision": "abc1234", "load_average_1_5_15": [0.5, 0.4, 0.3],
                        "cpu": "test cpu", "cores": 2, "python": "3.11.7"},
            "params": {}, "results": results}


def test_committed_report_matches_its_json() -> None:
    assert report.main(["--check"]) == 0, "run: python benchmarks/report.py"


def test_unknown_benchmark_gets_a_generic_section_and_its_notes(tmp_path: Path) -> None:
    (tmp_path / "widgets.json").write_text(json.dumps(_run("widgets", {"a": {"p95_ms": 12.5}})))
    (tmp_path / "widgets.md").write_text("Measured on a quiet machine.")
    text = report.render(tmp_path, tmp_path / "img", tmp_path / "out.md", draw=False)
    assert "## widgets" in text and "`a.p95_ms` | 12.5" in text
    assert "Measured on a quiet machine." in text
    # the JSON's own path is no part of the command a reader re-runs
    assert "--json-out" not in text and "benchmark_widgets.py --sizes 10" in text


def test_check_reports_a_stale_page(tmp_path: Path) -> None:
    (tmp_path / "widgets.json").write_text(json.dumps(_run("widgets", {"n": 3})))
    (tmp_path / "site").mkdir()
    out = tmp_path / "site" / "benchmarks.md"
    out.write_text("# Benchmarks\n\nedited by hand\n")
    args = ["--results", str(tmp_path), "--out", str(out), "--images", str(tmp_path / "img")]
    assert report.main([*args, "--check"]) == 1
    assert report.main(args) == 0
    assert report.main([*args, "--check"]) == 0


def test_commands_name_no_folder_of_the_machine_that_ran_them(tmp_path: Path) -> None:
    run = _run("widgets", {"n": 3})
    run["command"] = ("benchmark_widgets.py --data /work/shared/data/locomo10.json "
                      "--store-dir /tmp/tc-widgets --queries 10")
    (tmp_path / "widgets.json").write_text(json.dumps(run))
    text = report.render(tmp_path, tmp_path / "img", tmp_path / "out.md", draw=False)
    assert "/work/" not in text and "/tmp/" not in text
    assert ("benchmark_widgets.py --data path/to/locomo10.json --store-dir path/to/tc-widgets "
            "--queries 10") in text


def test_a_notes_lab_notes_stay_out_of_the_report(tmp_path: Path) -> None:
    (tmp_path / "widgets.json").write_text(json.dumps(_run("widgets", {"n": 3})))
    (tmp_path / "widgets.md").write_text(
        "# Widgets\n\nCurrent: 3 widgets ([guide](../guide.md)).\n\n## Lab notes\n\n"
        "### Tried first: 2 widgets, not kept\n")
    text = report.render(tmp_path, tmp_path / "img", tmp_path / "site" / "out.md", draw=False)
    assert "Current: 3 widgets ([guide](../../guide.md))" in text  # links follow the page
    assert "# Widgets" not in text and "Tried first" not in text
    assert "[the lab notes](../widgets.md#lab-notes)" in text


def test_the_committed_report_holds_current_results_only() -> None:
    text = report.OUT.read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert [h for h in headings if h.startswith("# ")] == ["# Benchmarks"]
    for word in ("lab notes", "earlier", "not built", "not reached", "before", "tried"):
        assert not [h for h in headings if word in h.lower()], word
