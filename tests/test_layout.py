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


def imports_of(path):
    """The package's modules that ``path`` imports, anywhere in it, by dotted name."""
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts[:-1] if relative.name == "__init__" else relative.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = parts[: len(parts) - node.level + (1 if path.name == "__init__.py" else 0)]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if not node.module else target)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks_wiki"):
            found.add(node.module)
    return {name for name in found if name != "benchmarks_wiki"}


def test_the_modules_imports_form_no_circle():
    modules = {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): path
               for path in PACKAGE.rglob("*.py")}
    graph = {name: {target for target in imports_of(path) if target in modules} for name, path in modules.items()}
    state = {}

    def visit(name, trail):
        if state.get(name) == "open":
            raise AssertionError(" -> ".join(trail + [name]))
        if state.get(name) != "done":
            state[name] = "open"
            for target in sorted(graph[name]):
                visit(target, trail + [name])
            state[name] = "done"

    for name in sorted(graph):
        visit(name, [])
    assert graph["benchmarks_wiki.cli.posting"] >= {"benchmarks_wiki.publishing", "benchmarks_wiki.cli.render"}
