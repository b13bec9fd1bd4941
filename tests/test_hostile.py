"""Never a traceback: what a hostile portal or a careless caller sends ends in one line and a
documented exit code, through the scripts and through the library alike."""

import json
import subprocess

import pytest

from benchmarks_wiki import ApiError, BenchmarksWikiError, ValidationError
from benchmarks_wiki.sandbox import Catalogue
from tests.conftest import ROOT, script_env

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
DEEP = "[" * 100000 + "]" * 100000


def one_line(done):
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "\x1b" not in done.stderr and "please report it" not in done.stderr, done.stderr
    return done.stderr


def test_a_retry_after_beyond_the_clock_is_one_line(run, portal):
    portal.fail_next(429, times=2, retry_after=10 ** 30)
    done = run("draw.py", "stats", "--retries", "1")
    assert done.returncode == 1 and "the portal asks to wait" in one_line(done)


@pytest.mark.parametrize("status, body", [(200, DEEP), (500, '{"error": ' + DEEP + "}")], ids=["200", "500"])
def test_json_nested_too_deep_is_an_unreadable_answer(run, portal, client, status, body):
    portal.raw_next(status, body, "application/json", times=5)
    done = run("draw.py", "stats", "--retries", "0")
    assert done.returncode == 1 and (status != 200 or "nested too deep" in one_line(done))
    one_line(done)
    with pytest.raises(ApiError):
        client.stats()


@pytest.mark.parametrize("location", ["https://caf\u00e9.example/", "https://[", "http://[::1"])
def test_a_redirect_to_a_malformed_location_is_an_unreadable_answer(run, portal, client, location):
    portal.raw_next(301, b"", None, times=2, headers={"Location": location})
    done = run("draw.py", "stats")
    assert done.returncode == 1 and "malformed location" in one_line(done)
    with pytest.raises(ApiError):
        client.stats()


WRONG_TYPES = [
    ("benchmark gsm8k", {"slug": "gsm8k", "name": "G", "has_problems": True, "problem_count": 1,
                         "splits": ["test"], "related": 5}),
    ("benchmark gsm8k", {"slug": "gsm8k", "name": "G", "has_problems": True, "problem_count": 1,
                         "splits": ["test"], "description": 5}),
    ("catalog", {"generated_at": "x", "stats": {}, "benchmarks": 5}),
    ("activity", {"items": [{"post_id": "p_1", "thread_id": "t_1", "body": "b",
                             "created_at": "2026-01-01T00:00:00Z", "public_url": 5}], "next_cursor": None}),
    ("benchmark gsm8k", {"slug": "gsm8k", "name": "G", "has_problems": True, "problem_count": 1,
                         "splits": ["test", 5]}),
    ("activity", {"items": [{"post_id": "p_1", "thread_id": "t_1", "body": "b", "created_at": "yesterday"}],
                  "next_cursor": None}),
]


@pytest.mark.parametrize("command, answer", WRONG_TYPES,
                         ids=["related", "description", "catalog", "public_url", "splits", "created_at"])
def test_wrong_types_in_an_answer_are_an_unreadable_answer(run, portal, client, command, answer):
    portal.raw_next(200, json.dumps(answer), "application/json", times=2)
    done = run("draw.py", *command.split())
    assert done.returncode == 1 and "unreadable answer from /api/v1/" in one_line(done)
    call = {"benchmark": lambda: client.benchmark("gsm8k"), "catalog": client.catalog,
            "activity": lambda: list(client.activity())}[command.split()[0]]
    with pytest.raises(ApiError):
        call()


def test_an_empty_draft_path_is_refused(run, portal):
    done = run("post.py", "--draft", "")
    assert done.returncode == 2 and "draft" in one_line(done) and portal.requests == []


@pytest.mark.parametrize("args", [["post.py", "--task", TASK, "--body", "\udcff"],
                                  ["draw.py", "search", "\udcff"], ["draw.py", "benchmark", "\udcff"],
                                  ["draw.py", "journal", "--journal", "j\udc80"]])
def test_arguments_that_are_not_utf8_are_refused(portal, args, tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT, script_env

    argv = [arg.encode("utf-8", "surrogateescape") for arg in args]
    done = subprocess.run([sys.executable.encode(), b"scripts/" + argv[0], *argv[1:]], capture_output=True,
                          cwd=ROOT, env=script_env(portal))
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 2 and stderr.count("\n") == 1 and "not valid UTF-8" in stderr
    assert portal.requests == []


@pytest.mark.parametrize("program, args, position", [("draw.py", ["caf\udce9"], 1), ("draw.py", ["search", "\udcff"], 2),
                                                     ("post.py", ["--task", TASK, "--body", "\udcff"], 4)])
def test_an_argument_that_is_not_utf8_is_named_by_its_place_counting_from_one(run, portal, program, args, position):
    done = run(program, *args)
    assert done.returncode == 2 and f"argument {position} is not valid UTF-8" in one_line(done)
    assert portal.requests == []

@pytest.mark.parametrize("junk", ["--no\nsuch", "--no\x1b[31msuch", "--bidi\u202eflag"])
def test_an_unknown_argument_is_echoed_harmlessly(run, junk):
    done = run("draw.py", "stats", junk)
    assert done.returncode == 2 and "\\x" in one_line(done) or "\\u202e" in done.stderr


def test_the_library_raises_its_own_errors_for_bad_text(client):
    with pytest.raises(ValidationError):
        client.prepare("\udcff", task_id=TASK)
    with pytest.raises(ValidationError):
        client.prepare("fine", task_id=TASK, agent_name="\udcff")
    for call in (client.task, client.benchmark, client.tasks, client.search, client.markdown):
        with pytest.raises(BenchmarksWikiError):
            call("\udcff")


@pytest.mark.parametrize("arguments", [{"headers": {"X-Run": "a\nb"}}, {"headers": {"Bad Name": "x"}},
                                       {"headers": {"X-Run": 5}}, {"origin": 123}])
def test_bad_client_arguments_are_refused_at_once(arguments):
    from benchmarks_wiki import Client

    with pytest.raises(ValidationError):
        Client(**arguments)


def test_a_hostile_thread_id_to_follow_is_refused_harmlessly(run, portal, tmp_path):
    done = run("follow.py", "t_\x1b[31m/../../x", "--resume", "--stop-after", "0.1")
    assert done.returncode == 2 and "\\x1b" in one_line(done) and portal.requests == []
    assert not list(tmp_path.rglob("x.json"))


def test_a_damaged_follow_mark_starts_afresh(run, portal, client, tmp_path):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    marks = tmp_path / "state" / "benchmarks-wiki" / "follows"
    marks.mkdir(parents=True)
    (marks / f"{opening.thread_id}.json").write_text(json.dumps({"since": "x", "seen": [[1]]}))
    done = run("follow.py", opening.thread_id, "--resume", "--stop-after", "0.2", "--interval", "0.1")
    assert done.returncode == 0 and "no record of following" in done.stderr


def test_an_unexpected_failure_is_one_line_naming_the_command(monkeypatch, capsys):
    from benchmarks_wiki import cli
    from benchmarks_wiki.cli import reading

    def broken(ctx, args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(reading, "run_stats", broken)
    assert cli.main(["stats"], view="draw") == 70
    err = capsys.readouterr().err
    assert err == ("draw.py: error: unexpected ZeroDivisionError in draw.py stats: a bug; please report it "
                   "(BENCHMARKS_WIKI_DEBUG=1 shows the traceback)\n")
    monkeypatch.setenv("BENCHMARKS_WIKI_DEBUG", "1")
    assert cli.main(["stats"], view="draw") == 70
    assert "Traceback" in capsys.readouterr().err


def test_a_journal_folder_with_a_control_character_is_echoed_as_a_command_that_pastes(run, portal, tmp_path):
    folder = tmp_path / "j\x1b[2J"
    task = Catalogue.sample().tasks["gsm8k"][0]["task_id"]
    done = run("post.py", "--task", task, "--body", "a result", "--preview", "--journal", str(folder))
    assert done.returncode == 0, done.stderr
    command = done.stdout.rsplit("to publish exactly this: ", 1)[1].strip()
    assert "\x1b" not in done.stdout and "$'" in command
    sent = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=script_env(portal), cwd=ROOT)
    assert sent.returncode == 0 and sent.stdout.startswith("posted "), sent.stderr
