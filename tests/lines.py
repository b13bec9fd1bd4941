"""Which tests run which lines of the package: a pytest plugin for ``tests.mutants``.

    python3 -m pytest -p tests.lines   (writes the map to the file $LINES_MAP names)

The map holds, for each line of the package that ran, the tests that ran it in this process;
lines run outside any test (at import) are under the test "". A test that started a program
of its own is listed under "spawned": what the program ran is not seen from here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

PACKAGE = str(Path(__file__).resolve().parent.parent / "scripts" / "benchmarks_wiki") + os.sep
ROOT = str(Path(__file__).resolve().parent.parent) + os.sep
SPAWN = subprocess.Popen._execute_child.__code__
ran = {"": set()}
spawned = set()
current = {"test": ""}


def _calls(frame, event, arg):
    code = frame.f_code
    if code is SPAWN:
        spawned.add(current["test"])
    elif code.co_filename.startswith(PACKAGE):
        ran[current["test"]].add((code.co_filename, frame.f_lineno))
        return _lines
    return None


def _lines(frame, event, arg):
    if event == "line":
        ran[current["test"]].add((frame.f_code.co_filename, frame.f_lineno))
    return _lines


def pytest_configure(config):
    sys.settrace(_calls)
    threading.settrace(_calls)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    current["test"] = item.nodeid
    ran[item.nodeid] = set()
    yield
    current["test"] = ""


def pytest_sessionfinish(session):
    sys.settrace(None)
    threading.settrace(None)
    tests_of = {}
    for test, lines in ran.items():
        for filename, line in lines:
            tests_of.setdefault(f"{filename[len(ROOT):]}:{line}", []).append(test)
    Path(os.environ["LINES_MAP"]).write_text(
        json.dumps({"lines": tests_of, "spawned": sorted(spawned - {""})}), encoding="utf-8")
