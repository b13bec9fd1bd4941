"""The shape of the code: small functions, no module that holds most of the package, and no
build output in the repository."""

import ast
import subprocess

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "scripts" / "benchmarks_wiki"
MAX_FUNCTION_LINES = 60
MAX_MODULE_SHARE = 0.20


def python_files():
    return sorted(path for folder in ("scripts", "tests") for path in (ROOT / folder).rglob("*.py"))


def test_no_function_is_longer_than_sixty_lines():
    long = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert long == []


def test_no_module_holds_more_than_a_fifth_of_the_package():
    lines = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.rglob("*.py")}
    total = sum(lines.values())
    heavy = {str(path.relative_to(PACKAGE)): count for path, count in lines.items()
             if count > MAX_MODULE_SHARE * total}
    assert heavy == {}, f"of {total} lines"


def test_no_build_output_or_archive_is_committed():
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    built = [name for name in listed.stdout.splitlines()
             if name.endswith((".whl", ".zip", ".tar.gz", ".egg", ".pyc")) or "egg-info" in name]
    assert built == []
