"""One installed import package, `trainbench`, built from the user's folders `plugin/` and
`reference_models/`; imports inside it relative; domain packages free of pytest and argparse."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONTS = {"cli", "pytest_plugin"}  # the only packages that may import argparse / pytest


def _modules() -> list[tuple[Path, str]]:
    """(file, dotted package part) of every module in the installed package's source folders."""
    out = []
    for top, prefix in ((ROOT / "plugin", ()), (ROOT / "reference_models", ("models",))):
        for path in sorted(top.rglob("*.py")):
            parts = prefix + path.relative_to(top).with_suffix("").parts
            out.append((path, ".".join(parts)))
    return out


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """(level, module, line) of every import statement in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(0, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", node.lineno))
    return found


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {"trainbench"} | {"trainbench.models"}
    for top, prefix in ((ROOT / "plugin", "trainbench"), (ROOT / "reference_models", "trainbench.models")):
        for init in top.rglob("__init__.py"):
            rel = init.parent.relative_to(top).parts
            on_disk.add(".".join((prefix, *rel)) if rel else prefix)
    assert on_disk == listed


def test_imports_inside_the_package_are_relative():
    absolute = [f"{path.relative_to(ROOT)}:{line} imports {mod}" for path, _ in _modules()
                for level, mod, line in _imports(path)
                if level == 0 and mod.split(".")[0] in ("trainbench", "plugin", "reference_models")]
    assert not absolute, "\n".join(absolute)


def test_domain_packages_import_neither_pytest_nor_argparse():
    bad = []
    for path, dotted in _modules():
        if dotted.split(".")[0] in FRONTS:
            continue
        for level, mod, line in _imports(path):
            root = mod.split(".")[0]
            if level == 0 and root in ("pytest", "_pytest", "argparse"):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod}")
            if level > 0 and any(part in FRONTS for part in mod.split(".")):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports the front end .{mod}")
    assert not bad, "\n".join(bad)


def test_wheel_holds_exactly_one_import_package(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("pytest_trainbench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"trainbench"}, sorted(tops)
    assert "trainbench/models/llama.py" in names or "trainbench/models/gpt.py" in names
    assert "trainbench/catalog/gpus.csv" in names and "trainbench/preflight/cuda_min_driver.csv" in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry).decode()
    assert "trainbench = trainbench.cli:main" in text and "trainbench = trainbench.pytest_plugin.hooks" in text


@pytest.mark.parametrize("folder", ["plugin", "reference_models"])
def test_a_users_own_package_of_the_same_name_is_theirs(pytester, folder):
    pytester.mkpydir(folder).joinpath("__init__.py").write_text("OWNER = 'user'\n")
    pytester.makepyfile(test_user=f"""
        import {folder}

        def test_their_package():
            assert {folder}.OWNER == "user"
        """)
    result = pytester.runpytest_subprocess("--gpu=cpu", "-p", "no:cacheprovider",
                                           "--trainbench-results", str(pytester.path / "r.json"))
    result.assert_outcomes(passed=1)
    assert "pytest-trainbench" in "".join(pytester.runpytest_subprocess("--help").outlines)
