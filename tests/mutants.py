"""How much of the package the suite would notice changing: small random changes, each run
against the whole suite in a copy of the checkout.

    python3 -m tests.mutants [--count 80] [--seed 1] [--jobs 2]
    python3 -m tests.mutants --every --module journal.py --quick

Each change is one of: a comparison flipped (< and <=, == and !=, in and not in, is and is
not), a whole number moved by one, `and` and `or` swapped, a condition negated, a `raise`
removed. The sandbox, the suite's own portal, is left alone. A change is killed when the
suite fails; the survivors are listed with where they are, to be read: some change nothing
a caller could see.

`--quick` first maps which tests run each line (`tests.lines`), then runs on each change only
the tests that run its line, then, if they all pass, the tests whose view of the package the
map lacks (a program that is not Python, a parse of the source); a change to what runs at
import meets the whole suite. No other test can notice the change, so the verdicts are the
whole suite's, in a fraction of its time.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scripts" / "benchmarks_wiki"
FLIPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
# Where a change is made (columns count UTF-8 bytes, as ast does), the text put there, what
# kind of change it is, and the lines a tracer sees run when the changed code runs.
Site = namedtuple("Site", "line column end_line end_column text kind runs_on")
ORDER = ["test_errors.py", "test_render.py", "test_publishing.py", "test_client.py", "test_transport.py",
         "test_follow.py", "test_contract.py", "test_layout.py", "test_help.py", "test_fuzz.py"]


def sites(path: Path) -> list:
    """Every change that can be made in ``path``, as a Site."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in FLIPS:
            flipped = ast.Compare(node.left, [FLIPS[type(node.ops[0])]()] + node.ops[1:], node.comparators)
            found.append((node, f"({ast.unparse(flipped)})", "comparison flipped"))
        elif isinstance(node, ast.Constant) and type(node.value) is int and id(node) not in docstrings:
            found.append((node, str(node.value + 1), "number moved by one"))
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            found.append((node, f"({ast.unparse(ast.BoolOp(other, node.values))})", "and/or swapped"))
        elif isinstance(node, (ast.If, ast.While)):
            found.append((node.test, f"(not ({ast.unparse(node.test)}))", "condition negated"))
        elif isinstance(node, ast.Raise):
            found.append((node, "pass", "raise removed"))
    statement_of = {id(child): node for node in ast.walk(tree) if isinstance(node, ast.stmt)
                    for child in ast.walk(node) if not isinstance(child, ast.stmt) or child is node}
    # The line a tracer sees run for a node is its own or its statement's first.
    return [Site(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset, text, kind,
                 sorted({statement_of[id(n)].lineno, *range(n.lineno, n.end_lineno + 1)}))
            for n, text, kind in found]


def mutated(source: str, site: Site) -> str:
    lines = source.splitlines(keepends=True)
    return (source[:_offset(lines, site.line, site.column)] + site.text
            + source[_offset(lines, site.end_line, site.end_column):])


def _offset(lines: list, line: int, column: int) -> int:
    """Where a node's (line, column) is in the source: the column counts bytes of UTF-8."""
    return sum(len(row) for row in lines[: line - 1]) + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8"))


def whole_suite() -> list:
    """Every test file, the quick ones first, so that a change one of them notices costs seconds."""
    return [f"tests/{name}" for name in ORDER] + sorted(
        f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py") if p.name not in ORDER)


def line_map(work: Path) -> tuple:
    """({"path:line": tests that run it}, tests the map cannot see into), from one traced run of the suite."""
    written = work / "lines.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.lines", "-p", "no:cacheprovider"],
                          cwd=ROOT, env={**os.environ, "LINES_MAP": str(written)}, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the suite fails unchanged; mutants mean nothing until it passes:\n{done.stdout[-2000:]}")
    found = json.loads(written.read_text(encoding="utf-8"))
    return found["lines"], found["unseen"]


def rounds(path: Path, site: Site, lines: dict, unseen: list) -> list:
    """The runs of tests that can notice a change, in order: the tests that run its line, then
    those the map cannot see into; the whole suite for a line that runs at import."""
    relative = path.relative_to(ROOT).as_posix()
    tests = sorted({test for line in site.runs_on for test in lines.get(f"{relative}:{line}", ())})
    if "" in tests:
        return [whole_suite()]
    # An empty list would make pytest run every test it finds.
    return [run for run in (tests, unseen) if run]


def run_one(site_of: tuple, work: Path, runs: list) -> tuple:
    """Run each list of tests on one change in its own copy until one fails; (killed, seconds)."""
    path, site = site_of
    copy = Path(tempfile.mkdtemp(prefix="mutant-", dir=work))
    shutil.copytree(ROOT, copy / "tree", ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info"))
    target = copy / "tree" / path.relative_to(ROOT)
    target.write_text(mutated(path.read_text(encoding="utf-8"), site), encoding="utf-8")
    started = time.monotonic()
    killed = False
    for tests in runs:
        try:
            done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                                  cwd=copy / "tree", capture_output=True, text=True, timeout=600)
            killed = done.returncode != 0
        except subprocess.TimeoutExpired:
            killed = True
        if killed:
            break
    shutil.rmtree(copy, ignore_errors=True)
    return killed, time.monotonic() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.mutants")
    parser.add_argument("--count", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--every", action="store_true", help="every change, not a sample of --count")
    parser.add_argument("--module", action="append", help="only the files whose path holds this text (repeatable)")
    parser.add_argument("--quick", action="store_true", help="only the tests that can notice each change")
    args = parser.parse_args(argv)
    every = [(path, site) for path in sorted(PACKAGE.rglob("*.py")) if "sandbox" not in path.parts
             for site in sites(path)]
    chosen = [item for item in every
              if any(text in item[0].relative_to(ROOT).as_posix() for text in args.module or [""])]
    if not args.every:
        chosen = random.Random(args.seed).sample(chosen, min(args.count, len(chosen)))
    work = Path(tempfile.mkdtemp(prefix="mutants-"))
    lines, unseen = line_map(work) if args.quick else ({}, [])
    survivors = []
    # Each survivor is printed as soon as it is known: a run of an hour may be cut short.
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = {pool.submit(run_one, item, work, rounds(*item, lines, unseen) if args.quick else [whole_suite()]):
                item for item in chosen}
        for done in as_completed(runs):
            if not done.result()[0]:
                path, site = runs[done]
                survivors.append(runs[done])
                print(f"survived: {path.relative_to(ROOT)}:{site.line} {site.kind}: {site.text[:80]}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    killed = len(chosen) - len(survivors)
    print(f"{killed} of {len(chosen)} killed ({100 * killed / len(chosen):.1f}%), of {len(every)} possible; "
          f"seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
