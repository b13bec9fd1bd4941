"""The reference's script that can be run again, stopped dead at every step, as a killed
process would be.

    python3 -m tests.crashing FOLDER

Each change to the journal's files (a rename into place, a link, a removal) is a step. For
each step, a forked copy of this process runs the script with its journal in a folder of
its own under FOLDER and ends with os._exit just before or just after that step, with
nothing flushed or cleaned up. Prints a line per run: the folder, the text the script posts, and the exit status. The
origin and CA come from the environment, as for any run.
"""

import os
import re
import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "reference" / "python.md"
STOPPED = 99


def recipe(body: str) -> str:
    """The reference's script that can be run again, with this text."""
    text = REFERENCE.read_text(encoding="utf-8")
    code = re.search(r"A script that can be run again.*?```python\n(.*?)```", text, re.S).group(1)
    return code.replace('"3/5 with greedy decoding."', repr(body))


def run_stopping(code: str, folder: Path, step: int, when: str) -> int:
    """Run ``code`` in a forked child that stops at ``step`` (0: never); its exit status,
    and for a whole run the number of steps it took, as its status."""
    child = os.fork()
    if child == 0:
        os.environ["BENCHMARKS_WIKI_JOURNAL"] = str(folder)
        taken = [0]

        def counted(change):
            def change_counted(*args, **kwargs):
                taken[0] += 1
                if taken[0] == step and when == "before":
                    os._exit(STOPPED)
                result = change(*args, **kwargs)
                if taken[0] == step and when == "after":
                    os._exit(STOPPED)
                return result
            return change_counted

        os.replace, os.link, os.unlink = counted(os.replace), counted(os.link), counted(os.unlink)
        try:
            exec(compile(code, str(REFERENCE), "exec"), {"print": lambda *args: None})
        except BaseException:
            os._exit(1)
        os._exit(taken[0])
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])


def main(root: str) -> None:
    import benchmarks_wiki.client  # noqa: F401 -- loaded once, before the forks
    import benchmarks_wiki.journal  # noqa: F401

    root = Path(root)
    steps = run_stopping(recipe("counting"), root / "counting", 0, "")
    for step in range(1, steps + 1):
        for when in ("before", "after"):
            body = f"crash {step} {when}"
            folder = root / f"{step}-{when}"
            print(folder, body, run_stopping(recipe(body), folder, step, when), sep="\t")


if __name__ == "__main__":
    main(*sys.argv[1:])
