import atexit
import io
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

from benchmarks_wiki import Client, cli  # noqa: E402
from benchmarks_wiki.cli.table import VIEWS  # noqa: E402
from tests.certs import CA_FILE  # noqa: E402
from benchmarks_wiki.sandbox import Catalogue  # noqa: E402
from tests.faults import Portal  # noqa: E402


class FakeTime:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self):
        self.now = 1000.0
        self.slept = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No test sees the caller's settings, proxies or journal, nor writes outside tmp_path."""
    for name in list(os.environ):
        if name.startswith("BENCHMARKS_WIKI_") or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def portal():
    server = Portal(Catalogue.sample()).start()
    yield server
    server.stop()


@pytest.fixture
def fake_time():
    return FakeTime()


@pytest.fixture
def tls():
    return ssl.create_default_context(cafile=CA_FILE)


@pytest.fixture
def client(portal, tls, fake_time):
    with Client(portal.origin, ssl_context=tls, clock=fake_time.clock, sleep=fake_time.sleep) as made:
        yield made


def publishes(portal):
    """The publish requests the portal has seen."""
    return [request for request in portal.requests if request.path == "/api/v1/publish"]


def wait_for(condition, seconds=10, step=0.02):
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(step)


def wait_until_following(portal, seconds=10):
    """Until a follower's first look at the thread has been answered, so that a post made
    now is new to it."""
    import time

    deadline = time.monotonic() + seconds
    while not any(request.path == "/api/v1/activity" and request.status for request in portal.requests):
        assert time.monotonic() < deadline, "the follower never asked"
        time.sleep(0.01)


# A child started from a background job inherits SIGINT ignored, and Python then never turns
# Ctrl-C into KeyboardInterrupt: children meant to receive it restore it first.
_WITH_SIGINT = """
import runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
del sys.argv[0]
if sys.argv[0] == "-m":
    del sys.argv[0]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def interruptible(*argv):
    """The command that runs ``argv`` (a script and its arguments, or ``-m`` and a module)
    so that SIGINT reaches it as Ctrl-C would, however the tests themselves were started."""
    return [sys.executable, "-c", _WITH_SIGINT, *map(str, argv)]


# The scripts the tests start cache their bytecode here, whatever the environment the suite
# was started from says, so that a thousand starts cost the same everywhere and the tree is
# left alone.
BYTECODE = tempfile.mkdtemp(prefix="benchmarks-wiki-bytecode-")
atexit.register(shutil.rmtree, BYTECODE, True)


def script_env(portal=None, **extra):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("BENCHMARKS_WIKI_") and not key.lower().endswith("_proxy")
           and key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = BYTECODE
    env["SSL_CERT_FILE"] = CA_FILE
    env["PYTHONPATH"] = str(SCRIPTS)
    if portal is not None:
        env["BENCHMARKS_WIKI_ORIGIN"] = portal.origin
    env.update(extra)
    return env


# The view of the command line each program is, by the name it runs under.
VIEW_OF = {view.prog: name for name, view in VIEWS.items()}


@pytest.fixture
def run(portal):
    """Run a bundled script (draw.py, post.py, follow.py) or the CLI (``benchmarks-wiki``):
    in this process, as its script would (its arguments, environment, working directory and
    standard streams), since starting Python for each of a thousand runs was most of what the
    suite cost; ``process=True`` starts it as a program of its own, for what only a program
    shows (the script file itself, real standard input). The tests that run the commands the
    tools print, and the concurrent ones, start programs of their own."""

    def run_command(program, *args, input=None, env=None, cwd=None, timeout=60, process=False):
        env = env or script_env(portal)
        if program == "benchmarks-wiki":
            command = [sys.executable, "-m", "benchmarks_wiki", *args]
            argv0 = str(SCRIPTS / "benchmarks_wiki" / "__main__.py")
        else:
            # A path relative to the working directory, or absolute elsewhere.
            argv0 = f"scripts/{program}" if cwd is None else str(SCRIPTS / program)
            command = [sys.executable, argv0, *args]
        if process:
            return subprocess.run(command, input=input, capture_output=True, text=True, env=env,
                                  cwd=cwd or ROOT, timeout=timeout)
        return run_in_process(VIEW_OF[program], [argv0, *map(str, args)], input, env, cwd or ROOT)

    return run_command


def run_in_process(view, argv, input, env, cwd):
    """``cli.main`` as a started script would run it; what it wrote, decoded as a pipe's text is."""
    def stream(data=b""):
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="\n")

    saved = (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr)
    out, err = stream(), stream()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv, sys.stdin, sys.stdout, sys.stderr = argv, stream((input or "").encode("utf-8")), out, err
        try:
            code = cli.main(argv[1:], view=view)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
    finally:
        environ, where, sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(where)
    texts = []
    for written in (out, err):
        written.flush()
        texts.append(written.buffer.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    return subprocess.CompletedProcess(argv, code, *texts)


def rewrite_draft(path, change=None, **changes):
    """Change a draft's record (by ``change``, a function, or to the ``changes`` given) and
    sign it again with its journal's secret, as only that journal could: for tests of what a
    draft holds, past its code."""
    import json

    from benchmarks_wiki.journal import Journal, _code

    record = json.loads(path.read_text(encoding="utf-8"))
    record.update(changes)
    if change:
        change(record)
    record["code"] = _code(record, Journal(path.parent.parent).secret())
    path.write_text(json.dumps(record), encoding="utf-8")


def as_if_killed_before_its_receipt(draft):
    """Put a sent draft back as a run killed between its publish and its receipt leaves it:
    waiting, with no receipt."""
    name = draft.name[: -len(".json")]
    journal = draft.parent.parent
    (journal / "sent" / f"{name}.receipt.json").unlink()
    os.replace(journal / "sent" / draft.name, journal / "waiting" / draft.name)
