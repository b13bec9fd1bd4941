"""Which tests run which lines of the package: a pytest plugin for ``tests.mutants``.

    python3 -m pytest -p tests.lines   (writes the map to the file $LINES_MAP names)

The map holds, for each line of the package that ran, the tests that ran it; lines run
outside any test (at import) are under the test "". The programs a test starts are traced
too, through a ``usercustomize`` that Python loads at start. Listed under "unseen": a test
that started more programs than reported back (one that is not Python, or that was given no
such module), and a test that parses source: it reads the package rather than runs it.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

import pytest

PACKAGE = str(Path(__file__).resolve().parent.parent / "scripts" / "benchmarks_wiki") + os.sep
ROOT = str(Path(__file__).resolve().parent.parent) + os.sep
SPAWN = subprocess.Popen._execute_child.__code__
PARSE = ast.parse.__code__
ran = {"": set()}
spawns = {}
unseen = set()
current = {"test": ""}
CHILDREN = Path(tempfile.mkdtemp(prefix="lines-"))
# Python lines only; a program writes what it ran when it ends, one file each.
IN_A_CHILD = """\
import os, sys
if os.environ.get("LINES_CHILDREN"):
    _ran = set()

    def _calls(frame, event, arg):
        name = frame.f_code.co_filename
        if "/benchmarks_wiki/" in name:
            _ran.add((name, frame.f_lineno))
            return _lines

    def _lines(frame, event, arg):
        if event == "line":
            _ran.add((frame.f_code.co_filename, frame.f_lineno))
        return _lines

    def _write():
        import json
        rows = [["scripts/benchmarks_wiki/" + name.rsplit("/benchmarks_wiki/", 1)[1], line] for name, line in _ran]
        with open(os.path.join(os.environ["LINES_CHILDREN"], str(os.getpid())), "w") as out:
            json.dump(rows, out)

    import atexit
    atexit.register(_write)
    sys.settrace(_calls)
"""


def _calls(frame, event, arg):
    code = frame.f_code
    if code is SPAWN:
        spawns[current["test"]] = spawns.get(current["test"], 0) + 1
    elif code is PARSE:
        unseen.add(current["test"])
    elif code.co_filename.startswith(PACKAGE):
        ran[current["test"]].add((code.co_filename, frame.f_lineno))
        return _lines
    return None


def _lines(frame, event, arg):
    if event == "line":
        ran[current["test"]].add((frame.f_code.co_filename, frame.f_lineno))
    return _lines


# From here, not from pytest_configure: the suite's conftest imports the package before that
# hook, and what runs at import is what a change to a constant or a default meets.
sys.settrace(_calls)
threading.settrace(_calls)


def pytest_configure(config):
    base = CHILDREN / "base"
    site = Path(sysconfig.get_path("purelib", f"{os.name}_user", vars={"userbase": str(base)}))
    site.mkdir(parents=True)
    (site / "usercustomize.py").write_text(IN_A_CHILD, encoding="utf-8")
    os.environ.update(PYTHONUSERBASE=str(base), LINES_CHILDREN=str(CHILDREN))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    current["test"] = item.nodeid
    ran[item.nodeid] = set()
    yield
    current["test"] = ""
    reports = [path for path in CHILDREN.iterdir() if path.is_file()]
    whole = 0
    for report in reports:
        try:  # a program killed while writing leaves half a file: what it ran is unseen
            ran[item.nodeid].update((ROOT + name, line) for name, line in json.loads(report.read_text()))
            whole += 1
        except ValueError:
            pass
        report.unlink()
    if spawns.get(item.nodeid, 0) > whole:
        unseen.add(item.nodeid)


def pytest_sessionfinish(session):
    sys.settrace(None)
    threading.settrace(None)
    shutil.rmtree(CHILDREN, ignore_errors=True)
    tests_of = {}
    for test, lines in ran.items():
        for filename, line in lines:
            tests_of.setdefault(f"{filename[len(ROOT):]}:{line}", []).append(test)
    Path(os.environ["LINES_MAP"]).write_text(
        json.dumps({"lines": tests_of, "unseen": sorted(unseen - {""})}), encoding="utf-8")
