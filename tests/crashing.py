"""The reference's script that can be run again, stopping dead at one step as a killed
process would.

    python3 -m tests.crashing TASK_ID BODY STEP WHEN

Each change to the journal's files (a rename into place, a link, a removal) is a step; the
run ends with os._exit just before (WHEN=before) or just after (WHEN=after) step STEP,
with nothing flushed or cleaned up. STEP 0 runs to the end and prints how many steps it
took. The origin, CA and journal folder come from the environment, as for any run.
"""

import os
import re
import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "reference" / "python.md"


def recipe(task_id: str, body: str) -> str:
    """The reference's script that can be run again, for this problem and text."""
    text = REFERENCE.read_text(encoding="utf-8")
    code = re.search(r"A script that can be run again.*?```python\n(.*?)```", text, re.S).group(1)
    return code.replace('"317ef6cc-69a8-59a3-a347-e37d3399eb10"', repr(task_id)).replace(
        '"3/5 with greedy decoding."', repr(body))


def stopping_at(step: int, when: str) -> list:
    taken = [0]

    def counted(change):
        def change_counted(*args, **kwargs):
            taken[0] += 1
            if taken[0] == step and when == "before":
                os._exit(99)
            result = change(*args, **kwargs)
            if taken[0] == step and when == "after":
                os._exit(99)
            return result
        return change_counted

    os.replace, os.link, os.unlink = counted(os.replace), counted(os.link), counted(os.unlink)
    return taken


if __name__ == "__main__":
    task_id, body, step, when = sys.argv[1:]
    code = recipe(task_id, body)
    taken = stopping_at(int(step), when)
    exec(compile(code, str(REFERENCE), "exec"), {})
    print("steps", taken[0])
