"""Draw docs/img/layers.svg, the picture of the layers in docs/reference/architecture.md, from
the code: the layers contract in pyproject.toml and the real import graph (grimp, which
import-linter uses too).

    python docs/layers.py            # write docs/img/layers.svg
    python docs/layers.py --check    # exit 1 when the committed picture is stale

Each row is a layer, top to bottom as the contract lists them; the grid on the right counts
whether a module of the row's layer imports one of the column's directly. Right of the diagonal
are downward imports, the ones the contract allows; a (red) cell left of it is an upward one.
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "layers.svg"
ROW, GAP, LEFT_W, CELL, TOP = 46, 8, 560, 30, 64


def contract_layers(pyproject: Path) -> tuple[list[list[str]], list[str]]:
    """The layers contract's layers (each a list of sibling packages) and its exceptions."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers" and "containers" not in contract:
            layers = [[p.strip() for p in layer.replace("|", ":").split(":")]
                      for layer in contract["layers"]]
            return layers, list(contract.get("ignore_imports", []))
    raise SystemExit("pyproject.toml has no top-level layers contract")


def import_graph() -> dict[str, set[str]]:
    """Every module of the package as installed and the project modules it imports directly.

    The folders are linked into one tree as the installed package maps them (package-dir),
    and grimp reads it in a child process, so the checkout's own import state plays no part."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    with tempfile.TemporaryDirectory() as tree:
        top = Path(tree) / "tinycontext"
        top.mkdir()
        for entry in (ROOT / mapping["tinycontext"]).iterdir():
            if entry.name != "__pycache__":
                (top / entry.name).symlink_to(entry)
        for package, folder in mapping.items():
            if package != "tinycontext":
                (top / package.split(".", 1)[1]).symlink_to(ROOT / folder)
        code = ("import grimp, json; g = grimp.build_graph('tinycontext', cache_dir=None); "
                "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) "
                "for m in g.modules}))")
        env = dict(os.environ, PYTHONPATH=tree)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=tree, env=env, check=True)
    return {m: set(v) for m, v in json.loads(done.stdout).items()}


def layer_of(module: str, packages: list[str]) -> str | None:
    best = [p for p in packages if module == p or module.startswith(p + ".")]
    return max(best, key=len) if best else None


def short(package: str) -> str:
    return package.removeprefix("tinycontext.") if package != "tinycontext" else package


def summary(package: str, modules: list[str], folder: Path | None) -> str:
    """A package's sub-packages (the adapter families), else its docstring's first sentence."""
    depth = package.count(".") + 1
    children = sorted({m.split(".")[depth] for m in modules if m.count(".") > depth})
    if children:
        return " · ".join(children)
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) \
        if folder is not None and (folder / "__init__.py").exists() else None
    sentence = " ".join((doc or "").split()).split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= 92 else sentence[:90].rsplit(" ", 1)[0] + " …"


def folder_of(package: str, mapping: dict[str, str]) -> Path | None:
    """Where a package's files are in the checkout (package-dir), None for a module."""
    for name in sorted(mapping, key=len, reverse=True):
        if package == name or package.startswith(name + "."):
            rest = package[len(name):].lstrip(".").split(".") if package != name else []
            path = ROOT / mapping[name] / Path(*rest) if rest else ROOT / mapping[name]
            return path if path.is_dir() else None
    return None


def render(layers: list[list[str]], exceptions: list[str], graph: dict[str, set[str]],
           mapping: dict[str, str]) -> str:
    packages = [p for layer in layers for p in layer]
    row_of = {p: i for i, layer in enumerate(layers) for p in layer}
    members: dict[str, list[str]] = {p: [] for p in packages}
    counts: Counter[tuple[int, int]] = Counter()  # direct imports between two layers
    for module, imported in graph.items():
        home = layer_of(module, packages)
        if home is None:
            continue
        members[home].append(module)
        for target in imported:
            there = layer_of(target, packages)
            if there is not None and row_of[there] != row_of[home]:
                counts[(row_of[home], row_of[there])] += 1
    n = len(layers)
    grid_x = LEFT_W + 60
    width = grid_x + n * CELL + 20
    height = TOP + n * (ROW + GAP) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           '<text x="20" y="28" font-size="17" font-weight="bold" fill="#222">'
           'TinyContext layers (top imports bottom), from pyproject.toml and the import graph'
           '</text>',
           f'<text x="{grid_x}" y="{TOP - 22}" font-size="11" fill="#444">row imports '
           'column</text>']
    for j in range(n):
        x = grid_x + j * CELL + CELL // 2
        out.append(f'<text x="{x}" y="{TOP - 6}" font-size="11" text-anchor="middle" '
                   f'fill="#444">{j + 1}</text>')
    for i, layer in enumerate(layers):
        y = TOP + i * (ROW + GAP)
        names = "  |  ".join(short(p) for p in layer)
        details = summary(layer[0], members[layer[0]], folder_of(layer[0], mapping)) \
            if len(layer) == 1 else "independent of each other"
        out += [f'<rect x="20" y="{y}" width="{LEFT_W}" height="{ROW}" rx="6" '
                f'fill="#eef3fb" stroke="#7a93bd"/>',
                f'<text x="32" y="{y + 19}" font-size="14" fill="#1b2a44">{i + 1}. '
                f'{html.escape(names)}</text>',
                f'<text x="32" y="{y + 36}" font-size="11" fill="#4a5a72">'
                f'{html.escape(details)}</text>']
        for j in range(n):
            x, count = grid_x + j * CELL, counts.get((i, j), 0)
            if i == j:
                fill = "#d0d0d0"
            elif count == 0:
                fill = "#f7f7f7"
            else:  # red: an upward import
                fill = "#d9534f" if j < i else "#4f7fc0"
            out.append(f'<rect x="{x}" y="{y + (ROW - CELL + 6) // 2}" width="{CELL - 2}" '
                       f'height="{CELL - 6}" fill="{fill}"/>')
    upward = sum(c for (i, j), c in counts.items() if j < i)
    note = (f"{upward} upward import(s), each listed in the contract's ignore_imports: "
            + "; ".join(exceptions)) if upward else "no upward imports"
    out.append(f'<text x="20" y="{height - 14}" font-size="11" fill="#444">'
               f'{html.escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw docs/img/layers.svg from the code.")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the committed picture differs from the code's")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    layers, exceptions = contract_layers(ROOT / "pyproject.toml")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    picture = render(layers, exceptions, import_graph(),
                     config["tool"]["setuptools"]["package-dir"])
    if args.check:
        if not args.out.exists() or args.out.read_text(encoding="utf-8") != picture:
            print(f"{args.out} is stale: run python docs/layers.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(picture, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
