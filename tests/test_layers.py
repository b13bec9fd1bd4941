"""The layers: a library that never imports its command line, one name per job, and a retry
policy that judges each failure by its phase and cause, for reads and publishes alike."""

import ast
import socket

import pytest

from benchmarks_wiki import Client, TransportError
from benchmarks_wiki.transport import MockTransport, NetworkFailure
from tests.test_layout import PACKAGE, imports_of

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"


def package_modules():
    return {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts): path for path in PACKAGE.rglob("*.py")}


def test_no_module_outside_the_command_line_imports_it():
    # __main__ is the command line's own entry: ``python3 -m benchmarks_wiki``.
    outside = {name: path for name, path in package_modules().items()
               if ".cli" not in name and not name.endswith("__main__")}
    leaks = {name: sorted(target for target in imports_of(path) if target.startswith("benchmarks_wiki.cli"))
             for name, path in outside.items()}
    assert {name: targets for name, targets in leaks.items() if targets} == {}


def test_the_sandbox_imports_nothing_of_the_client():
    sandbox = {name: path for name, path in package_modules().items() if ".sandbox" in name}
    leaks = {name: sorted(target for target in imports_of(path) if not target.startswith("benchmarks_wiki.sandbox"))
             for name, path in sandbox.items()}
    assert {name: targets for name, targets in leaks.items() if targets} == {}


@pytest.mark.parametrize("verb", ["send", "prepare", "deliver", "keep"])
def test_each_verb_names_one_job_in_one_layer(verb):
    defined = [f"{path.relative_to(PACKAGE)}:{node.lineno}" for path in PACKAGE.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef) and node.name == verb]
    assert len(defined) <= 1, defined


CAUSES = {"connect": socket.timeout("timed out"), "send": BrokenPipeError(32, "Broken pipe"),
          "wait": socket.timeout("timed out"), "read": ConnectionResetError(104, "Connection reset by peer")}


@pytest.mark.parametrize("phase", sorted(CAUSES))
@pytest.mark.parametrize("write", [False, True], ids=["read", "publish"])
def test_each_phase_of_a_failure_is_retried_with_the_same_request_and_told_apart(phase, write, fake_time):
    sent = []

    def fail(request):
        sent.append(request.url)
        raise NetworkFailure(CAUSES[phase], phase, "portal.test:443")

    with Client("https://portal.test", transport=MockTransport(fail), sleep=fake_time.sleep, retries=2) as client:
        with pytest.raises(TransportError) as caught:
            client.publish("x", task_id=TASK) if write else client.stats()
    assert len(sent) == 3 and len(set(sent)) == 1 and len(fake_time.slept) == 2
    # Only a request that reached the portal can have left a post behind.
    assert caught.value.sent == (phase in ("wait", "read"))
    assert caught.value.outcome_unknown == (write and phase in ("wait", "read"))
    assert (caught.value.reason == "timed_out") == isinstance(CAUSES[phase], socket.timeout)
