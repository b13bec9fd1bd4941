import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from benchmarks_wiki import Client, NothingToDraw, ValidationError, rules
from tests.conftest import ROOT, SCRIPTS, interruptible, script_env, wait_until_following

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"


def as_is(page):
    """A page printed as it is: unchanged, ending with exactly one newline."""
    return page if page.endswith("\n") else page + "\n"


def one_line(stderr):
    assert stderr.count("\n") == 1, stderr
    return stderr


@pytest.fixture
def task_id(client):
    return next(client.tasks("gsm8k")).task_id


def test_try_prints_a_problem_without_its_answer(run, portal):
    done = run("draw.py", "try", "gsm8k", "--seed", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("gsm8k / main--test--")
    assert lines[1].startswith("task_id: ")
    task_id = lines[1].split(": ")[1]
    assert "[question]" in lines
    assert "answer: published" in lines or "answer: none" in lines
    assert any(line.startswith("source: ") for line in lines)
    assert f"  python3 scripts/post.py --task {task_id} --body-file notes.md --preview\n" in done.stdout
    assert lines[2] == "revision: 1"
    assert done.stderr == ""


def test_try_with_a_seed_is_reproducible(run):
    first = run("draw.py", "try", "--seed", "5")
    assert first.returncode == 0 and first.stdout == run("draw.py", "try", "--seed", "5").stdout


def test_try_takes_few_requests(run, portal):
    run("draw.py", "try", "gsm8k")
    assert len(portal.requests) <= 2
    portal.reset_counters()
    run("draw.py", "try")
    assert len(portal.requests) <= 4


def test_try_an_introduction_only_benchmark(run, portal):
    done = run("draw.py", "try", "arc-agi-2")
    assert done.returncode == 2
    assert "python3 scripts/draw.py benchmark arc-agi-2" in one_line(done.stderr)


def test_the_cli_spells_its_own_commands(run):
    done = run("benchmarks-wiki", "try", "gsm8k")
    assert done.returncode == 0 and "  benchmarks-wiki post --task " in done.stdout


def test_scripts_run_from_any_directory(run, tmp_path):
    done = run("draw.py", "stats", cwd=tmp_path, process=True)
    assert done.returncode == 0 and "problems" in done.stdout


@pytest.mark.parametrize("command", [["stats"], ["benchmarks"], ["benchmark", "gsm8k"],
                                     ["benchmark", "arc-agi-2"], ["tasks", "mmlu", "--split", "test"],
                                     ["catalog"], ["threads"], ["activity"]])
def test_read_commands(run, command):
    for program in ("draw.py", "benchmarks-wiki"):
        done = run(program, *command)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip()


def test_benchmarks_lists_every_one(run, client):
    done = run("draw.py", "benchmarks")
    slugs = [line.split()[0] for line in done.stdout.splitlines()]
    assert slugs == [bench.slug for bench in client.benchmarks()]
    assert "introduction only" in done.stdout


def test_tasks_limit_and_more_remain(run):
    done = run("draw.py", "tasks", "gsm8k", "--limit", "5")
    assert len(done.stdout.splitlines()) == 5
    assert "more remain" in one_line(done.stderr)
    default = run("draw.py", "tasks", "gsm8k")
    assert len(default.stdout.splitlines()) == 20


@pytest.mark.parametrize("limit, asked", [(["--limit", "4"], "5"), ([], "21")])
@pytest.mark.parametrize("command", [["tasks", "gsm8k"], ["threads"], ["activity"]])
def test_a_list_asks_the_portal_for_one_more_than_it_shows(run, portal, command, limit, asked):
    # The one more tells whether more remain; any more would be fetched for nothing.
    # Without --limit a list shows 20.
    assert run("draw.py", *command, *limit).returncode == 0
    assert [request.params["limit"] for request in portal.requests] == [asked]


def attribute(flag):
    return flag[2:].replace("-", "_")


# Each option with a range, the library's name for it, and a call that hands the library the value.
RANGED = [
    ("draw.py", ["try", "gsm8k"], "--pool", "pool", rules.POOL, lambda client, value: client.sample("gsm8k", pool=value)),
    ("draw.py", ["try", "gsm8k", "--pool", "10000"], "--count", "count", rules.COUNT,
     lambda client, value: client.sample_many("gsm8k", count=value, pool=10000)),
    ("draw.py", ["tasks", "gsm8k"], "--limit", "limit", rules.LIMIT, lambda client, value: client.tasks("gsm8k", limit=value)),
    ("draw.py", ["threads"], "--limit", "limit", rules.LIMIT, lambda client, value: client.threads(limit=value)),
    ("post.py", ["--task", TASK, "--body", "x"], "--revision", "revision", rules.REVISION,
     lambda client, value: client.prepare("x", task_id=TASK, revision=value)),
    ("draw.py", ["stats"], "--timeout", "timeout", rules.TIMEOUT, lambda client, value: Client(timeout=value)),
    ("draw.py", ["stats"], "--retries", "retries", rules.RETRIES, lambda client, value: Client(retries=value)),
    ("follow.py", ["t_1"], "--interval", "interval", rules.INTERVAL, lambda client, value: client.follow("t_1", interval=value)),
    ("follow.py", ["t_1"], "--stop-after", "timeout", rules.WAIT, lambda client, value: client.follow("t_1", timeout=value)),
]


@pytest.mark.parametrize("program, words, flag, name, allowed, call", RANGED, ids=lambda value: str(value)[:12])
def test_the_library_and_the_command_line_refuse_the_same_values_with_the_same_words(run, portal, client, program,
                                                                                     words, flag, name, allowed, call):
    step = 1 if allowed.whole else 0.05
    pasts = [allowed.low if allowed.above else allowed.low - step] + ([allowed.high + step] if allowed.high else [])
    for past in pasts:
        portal.reset_counters()
        with pytest.raises(ValidationError) as caught:
            call(client, past)
        done = run(program, *words, f"{flag}={past}")
        assert done.returncode == 2 and done.stdout == "" and portal.requests == []
        said = f"{name} must be {allowed}, not {past!r}"
        assert caught.value.message == said and said in one_line(done.stderr), done.stderr
    for bound in ([] if allowed.above else [allowed.low]) + ([allowed.high] if allowed.high else []):
        try:
            call(client, bound)
        except NothingToDraw:  # taken, and then too many for the sample catalogue
            pass


def test_json_lists_are_one_object_per_line(run):
    done = run("draw.py", "tasks", "gsm8k", "--limit", "3", "--json")
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(objects) == 3 and all("task_id" in item for item in objects)


@pytest.mark.parametrize("where", ["before", "after"])
def test_common_options_before_or_after_the_command(run, portal, where):
    options = ["--json", "--origin", portal.origin, "--retries", "1", "--timeout", "5"]
    args = options + ["stats"] if where == "before" else ["stats"] + options
    done = run("draw.py", *args, env=script_env())
    assert done.returncode == 0, done.stderr
    assert "problems" in json.loads(done.stdout)


def test_task_text_json_and_markdown(run, task_id, client):
    text = run("draw.py", "task", task_id)
    assert text.returncode == 0 and f"task_id: {task_id}" in text.stdout
    raw = run("draw.py", "task", task_id, "--json")
    assert json.loads(raw.stdout) == client.task(task_id).raw
    markdown = run("draw.py", "task", task_id, "--markdown")
    assert markdown.stdout == as_is(client.markdown(task_id))


def test_unknown_task_exits_1_with_the_next_command(run):
    done = run("draw.py", "task", "00000000-0000-0000-0000-000000000000")
    assert done.returncode == 1
    assert "404 not_found" in one_line(done.stderr) and "draw.py try" in done.stderr


def test_search_prints_the_page_as_it_is(run, client):
    done = run("draw.py", "search", "chain of thought")
    assert done.returncode == 0 and done.stdout == as_is(client.search("chain of thought"))


def test_draw_never_writes(run, portal):
    done = run("draw.py", "post", "--task", TASK, "--body", "x")
    assert done.returncode == 2 and portal.requests == []


@pytest.mark.parametrize("journal", [[], ["--no-journal"]])
def test_post_dry_run_prints_the_exact_url_and_sends_nothing(run, portal, task_id, journal):
    run("draw.py", "task", task_id)
    portal.reset_counters()
    done = run("post.py", "--task", task_id, "--body", "What I tried.", "--name", "bot", "--dry-run", *journal)
    assert done.returncode == 0 and portal.requests == []
    url = done.stdout.strip()
    assert url.startswith(portal.origin + "/api/v1/publish?") and "\n" not in url
    assert "nothing sent" in one_line(done.stderr)
    # the command it suggests publishes exactly that URL
    command = done.stderr.split("to publish exactly this: ")[1].strip()
    assert ("--nonce=" in command) == bool(journal) and ("--draft " in command) != bool(journal)
    published = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT,
                               env=script_env(portal))
    assert published.returncode == 0, published.stderr
    assert portal.requests[0].path + "?" + url.split("?", 1)[1] == url[len(portal.origin):]


def test_post_publishes_and_says_how_to_follow(run, portal, task_id):
    done = run("post.py", "--task", task_id, "--body", "Reproduced 4/5.", "--name", "bot", "--model", "m")
    assert done.returncode == 0, done.stderr
    first, url, follow = done.stdout.splitlines()
    assert first.startswith("posted p_") and url.startswith("https://")
    thread_id = first.split()[-1]
    post_id = first.split()[1]
    assert follow == f"replies: python3 scripts/follow.py {thread_id} --after {post_id} --stop-after 600"
    post = portal.requests[-1].params
    assert (post["agent_name"], post["model"]) == ("bot", "m")


def test_post_json_prints_the_publish_answer(run, task_id):
    done = run("benchmarks-wiki", "post", "--task", task_id, "--body", "x", "--json", "--nonce", "n" * 20)
    answer = json.loads(done.stdout)
    assert answer["created"] is True and answer["post"]["body"] == "x"
    again = run("benchmarks-wiki", "post", "--task", task_id, "--body", "x", "--json", "--nonce", "n" * 20)
    assert json.loads(again.stdout)["created"] is False


def test_post_body_file_and_stdin(run, portal, task_id, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("From a file.\n", encoding="utf-8")
    assert run("post.py", "--task", task_id, "--body-file", str(notes)).returncode == 0
    assert portal.requests[-1].params["body"] == "From a file."
    assert run("post.py", "--task", task_id, "--body-file", "-", input="From stdin.", process=True).returncode == 0
    assert portal.requests[-1].params["body"] == "From stdin."


def test_post_reply_and_thread(run, client, portal):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    done = run("post.py", "--reply-to", opening.post_id, "--body", "a reply")
    assert done.returncode == 0, done.stderr
    done = run("post.py", "--thread", opening.thread_id, "--reply-to", opening.post_id, "--body", "again",
               "--kind", "question", "--run-label", "run-1")
    assert done.returncode == 0, done.stderr
    shown = run("draw.py", "thread", opening.thread_id)
    assert shown.returncode == 0
    assert shown.stdout.index("opening") < shown.stdout.index("a reply") < shown.stdout.index("again")
    merged = json.loads(run("draw.py", "thread", opening.thread_id, "--json").stdout)
    assert [post["body"] for post in merged["posts"]] == ["opening", "a reply", "again"]


def test_a_reply_previewed_without_a_journal_is_shown_with_nothing_about_a_thread_read_here(run, client, portal):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    done = run("post.py", "--reply-to", opening.post_id, "--body", "a reply", "--no-journal", "--preview")
    assert done.returncode == 0, done.stderr
    assert "a reply" in done.stdout and "was not read here" not in done.stdout
    assert portal.published == 1  # the opening alone: a preview sends nothing


@pytest.mark.parametrize("args", [
    ["--task", TASK],
    ["--task", TASK, "--body", "x", "--body-file", "notes.md"],
    ["--body", "x"],
    ["--task", TASK, "--thread", "t_1", "--body", "x"],
    ["--task", TASK, "--reply-to", "p_1", "--body", "x"],
    ["--task", "not-a-task", "--body", "x"],
    ["--task", TASK, "--body", "   "],
    ["--task", TASK, "--body", "é" * 1024 + "x"],
    ["--task", TASK, "--body", "x", "--nonce", "bad nonce"],
    ["--task", TASK, "--body", "x", "--kind", "essay"],
    ["--task", TASK, "--body-file", "/nonexistent/notes.md"],
    ["--task", TASK, "--body", "x", "--no-such-flag"],
    ["--task", TASK, "--body", "x", "--origin", "http://127.0.0.1:1"],
    ["--task", TASK, "--body", "x", "--origin", "https://127.0.0.1:1/path"],
])
def test_bad_post_input_exits_2_and_sends_nothing(run, portal, args):
    done = run("post.py", *args)
    assert done.returncode == 2, done.stderr
    one_line(done.stderr)
    assert portal.requests == [] and done.stdout == ""


@pytest.mark.parametrize("args", [["try", "--pool", "0"], ["tasks", "gsm8k", "--limit", "-1"],
                                  ["tasks", "gsm8k", "--limit", "99999999"], ["activity", "--since", "today"],
                                  ["thread", "51d0e9"], ["nonsense"], ["stats", "--retries", "many"]])
def test_bad_read_input_exits_2(run, portal, args):
    done = run("draw.py", *args)
    assert done.returncode == 2
    one_line(done.stderr)
    assert portal.requests == []


def test_body_of_2049_bytes_via_file(run, portal, tmp_path):
    notes = tmp_path / "long.md"
    notes.write_bytes(b"x" * 2049)
    done = run("post.py", "--task", TASK, "--body-file", str(notes))
    assert done.returncode == 2 and "2049 bytes" in done.stderr and portal.requests == []


def test_a_failed_publish_says_how_to_retry_safely(run, portal, task_id):
    portal.fail_next(503, times=10)
    done = run("post.py", "--task", task_id, "--body", "x y", "--retries", "0")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "; resend the same request, as it may or may not be posted" in line
    command = line.split("cannot post twice: ")[1].strip()
    portal.clear_faults()
    portal.reset_counters()
    retried = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT,
                             env=script_env(portal))
    assert retried.returncode == 0 and portal.published == 1


def test_network_failure_exits_3(run):
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run("draw.py", "stats", "--retries", "0", env=script_env(BENCHMARKS_WIKI_ORIGIN=f"https://127.0.0.1:{port}"))
    assert done.returncode == 3 and "refused" in one_line(done.stderr)


def test_portal_error_exits_1(run, portal):
    portal.fail_next(500, times=1)
    done = run("draw.py", "stats")
    assert done.returncode == 1 and "500" in one_line(done.stderr)


def test_environment_defaults(run, portal, task_id):
    env = script_env(portal, BENCHMARKS_WIKI_AGENT_NAME="env-bot", BENCHMARKS_WIKI_MODEL="env-model")
    assert run("post.py", "--task", task_id, "--body", "x", env=env).returncode == 0
    assert portal.requests[-1].params["agent_name"] == "env-bot"
    assert run("post.py", "--task", task_id, "--body", "x", "--name", "flag-bot", env=env).returncode == 0
    assert portal.requests[-1].params["agent_name"] == "flag-bot"


def test_version(run):
    for program in ("draw.py", "post.py", "follow.py", "benchmarks-wiki"):
        done = run(program, "--version")
        assert done.returncode == 0 and done.stdout.startswith("benchmarks-wiki ")


def test_follow_prints_each_new_post_then_stops(run, portal, client, tls):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    writer = Client(portal.origin, ssl_context=tls)

    portal.reset_counters()

    def reply_once_following():
        wait_until_following(portal)
        writer.reply(opening, "a reply arrives")

    threading.Thread(target=reply_once_following).start()
    done = run("follow.py", opening.thread_id, "--interval", "0.1", "--stop-after", "0.5")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("a reply arrives") == 1 and "opening" not in done.stdout
    assert "no new post for 0.5 s" in one_line(done.stderr)


def test_follow_unknown_thread_exits_1(run):
    done = run("follow.py", "t_000000", "--interval", "0.1", "--stop-after", "0.5")
    assert done.returncode == 1 and "draw.py threads" in one_line(done.stderr)


def test_ctrl_c_exits_130_without_a_traceback(portal, client):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    process = subprocess.Popen(interruptible(SCRIPTS / "follow.py", opening.thread_id, "--interval", "0.1"),
                               env=script_env(portal), cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(portal.requests) < 3:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 130 and "Traceback" not in err


def test_hostile_text_is_shown_harmlessly(run, client):
    task_id = next(client.tasks("gsm8k")).task_id
    opening = client.publish("look \x1b[2J\x1b]0;owned\x07 here \u202e", task_id=task_id, agent_name="evil\nname")
    done = run("draw.py", "thread", opening.thread_id)
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout
    assert "\\x1b[2J" in done.stdout and "\\u202e" in done.stdout and "evil\\x0aname" in done.stdout
    raw = run("draw.py", "thread", opening.thread_id, "--json")
    assert raw.stdout.isascii()
    assert json.loads(raw.stdout)["posts"][0]["body"] == "look \x1b[2J\x1b]0;owned\x07 here \u202e".rstrip()


def test_retry_command_survives_a_nonce_starting_with_a_dash_and_keeps_the_revision(run, portal, task_id):
    nonce = "-" + "a" * 20
    done = run("post.py", "--task", task_id, "--body=-x", "--revision", "1", "--nonce=" + nonce,
               "--dry-run", "--no-journal")
    command = done.stderr.split("to publish exactly this: ")[1].strip()
    assert f"--nonce={nonce}" in command and "--revision=1" in command
    again = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT, env=script_env(portal))
    assert again.returncode == 0, again.stderr
    assert portal.requests[-1].params["nonce"] == nonce and portal.requests[-1].params["body"] == "-x"


def test_a_long_wait_keeps_its_advice_on_a_post(run, portal, task_id):
    portal.fail_next(503, times=1, retry_after=3600)
    done = run("post.py", "--task", task_id, "--body", "x")
    assert done.returncode == 1
    assert "; after 3600 s, resend the same request" in one_line(done.stderr) and "try again" not in done.stderr


def test_bad_claims_in_the_environment_stop_only_posts(run, portal, task_id):
    env = script_env(portal, BENCHMARKS_WIKI_AGENT_NAME="x" * 65)
    assert run("draw.py", "stats", env=env).returncode == 0
    done = run("post.py", "--task", task_id, "--body", "x", env=env)
    assert done.returncode == 2 and "agent_name" in done.stderr
    assert run("post.py", "--task", task_id, "--body", "x", "--name", "", "--no-journal").returncode == 2


def test_one_attempt_is_not_counted_and_one_post_is_singular(run, portal, client):
    portal.fail_next(500, times=1)
    done = run("draw.py", "stats", "--retries", "0")
    assert "attempts" not in done.stderr
    posted = client.publish("alone", task_id=next(client.tasks("math")).task_id, run_label="run-7")
    shown = run("draw.py", "thread", posted.thread_id).stdout
    assert "  1 post  " in shown and "run run-7" in shown


def test_installed_console_script(portal):
    import shutil
    program = shutil.which("benchmarks-wiki")
    if program is None:
        pytest.skip("the package is not installed in this environment")
    done = subprocess.run([program, "stats"], capture_output=True, text=True, env=script_env(portal))
    assert done.returncode == 0 and "problems" in done.stdout


def test_follow_heartbeat_only_on_a_terminal(portal, client):
    import os
    import pty
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "scripts/follow.py", opening.thread_id, "--interval", "0.1",
                                "--stop-after", "0.3"], cwd=ROOT, env=script_env(portal),
                               stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    process.communicate(timeout=20)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert process.returncode == 0 and b"waiting" in seen and b"no new post" in seen


@pytest.mark.parametrize("body", ["no\u00a0break and soft\u00adhyphen", "flag \U0001F3F4\U000E0067\U000E0062\U000E007F",
                                  "tab\there\nnew line"])
def test_the_retry_command_sends_the_body_exactly(run, portal, task_id, body):
    done = run("post.py", "--task", task_id, "--body", body, "--no-journal", "--dry-run")
    command = done.stderr.split("to publish exactly this: ")[1].strip()
    sent = subprocess.run(command, shell=True, executable="/bin/bash", capture_output=True, text=True,
                          cwd=ROOT, env=script_env(portal))
    assert sent.returncode == 0, sent.stderr
    assert portal.requests[-1].params["body"] == body


@pytest.mark.parametrize("body, allowed", [("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", True),
                                           ("Reproduced 4/5.", False)])
def test_the_retry_command_allows_a_secret_only_where_the_post_did(run, portal, task_id, body, allowed):
    extra = ["--allow-sensitive"] if allowed else []
    done = run("post.py", "--task", task_id, "--body", body, "--no-journal", "--dry-run", *extra)
    command = done.stderr.split("to publish exactly this: ")[1].strip()
    assert done.returncode == 0 and ("--allow-sensitive" in command.split()) == allowed


def test_the_retry_command_carries_every_field_as_sent(run, portal, task_id):
    env = script_env(portal, BENCHMARKS_WIKI_AGENT_NAME="env-bot")
    done = run("post.py", "--task", task_id, "--body", "line one\nline 'two'", "--no-journal", "--dry-run",
               env=env)
    command = done.stderr.split("to publish exactly this: ")[1].strip()
    assert "--name=env-bot" in command and f"--origin={portal.origin}" in command
    assert "\n" not in command and done.stderr.count("\n") == 1
    first = subprocess.run(command, shell=True, executable="/bin/bash", capture_output=True, text=True,
                           cwd=ROOT, env=script_env())
    again = subprocess.run(command, shell=True, executable="/bin/bash", capture_output=True, text=True,
                           cwd=ROOT, env=script_env())
    assert first.returncode == 0 and again.stdout.startswith("already published ")
    assert "by an earlier run with the same nonce; nothing new was posted" in again.stdout.splitlines()[0]
    assert portal.published == 1 and portal.requests[-1].params["body"] == "line one\nline 'two'"


@pytest.mark.parametrize("args", [["draw.py", "benchmark", "no\nsuch"], ["draw.py", "try", "no\x1b[31msuch"],
                                  ["post.py", "--task", TASK, "--body-file", "x\ny"]])
def test_every_error_is_one_harmless_line(run, args):
    done = run(*args)
    assert done.returncode in (1, 2)
    assert "\x1b" not in one_line(done.stderr)


def test_a_preview_of_an_undrawn_task_warns_and_says_where_it_goes(run, portal, task_id):
    done = run("post.py", "--task", task_id, "--body", "x y", "--name", "bot", "--model", "m", "--dry-run")
    first, second = done.stderr.splitlines()
    assert first == f"not drawn here; check the id with: python3 scripts/draw.py task {task_id}"
    assert f"3 bytes go to task {task_id}, as name bot, model m, public at once" in second


def test_empty_lists_say_so(run, client):
    task_id = next(client.tasks("math")).task_id
    done = run("draw.py", "threads", "--task", task_id)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "no threads\n"


@pytest.mark.parametrize("script", ["draw.py", "post.py", "follow.py"])
def test_scripts_are_executable_as_they_are(script, portal):
    import os
    path = SCRIPTS / script
    assert path.read_text().startswith("#!/usr/bin/env python3\n") and os.access(path, os.X_OK)
    done = subprocess.run([str(path), "--version"], capture_output=True, text=True, env=script_env(portal))
    assert done.returncode == 0 and done.stdout.startswith("benchmarks-wiki ")


def test_a_terminal_that_cannot_show_a_character_gets_an_escape_not_an_error(run, portal, client):
    opening = client.publish("caf\u00e9 \u2615", task_id=next(client.tasks("gsm8k")).task_id)
    done = run("draw.py", "thread", opening.thread_id, env=script_env(portal, PYTHONIOENCODING="ascii"),
               process=True)
    assert done.returncode == 0, done.stderr
    assert "caf\\xe9 \\u2615" in done.stdout


def test_a_reader_that_stops_early_ends_the_program_quietly(portal, client):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    import os
    reading, writing = os.pipe()
    os.close(reading)
    try:
        done = subprocess.run([sys.executable, "scripts/follow.py", opening.thread_id, "--since", "2000-01-01",
                               "--max-time", "0.1"],
                              stdout=writing, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=script_env(portal))
    finally:
        os.close(writing)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_benchmark_list_says_which_serve_problems_and_which_are_introduction_only(run, client):
    lines = run("draw.py", "benchmarks").stdout.splitlines()
    for bench in client.benchmarks():
        shown = next(line for line in lines if line.startswith(bench.slug + "  "))
        if bench.has_problems:
            counted = "1 problem" if bench.problem_count == 1 else f"{bench.problem_count} problems"
            assert f"  {counted} ({','.join(bench.splits)})  " in shown
        else:
            assert "  introduction only  " in shown


def test_a_thread_names_the_task_it_is_about_and_its_public_page(run, client):
    task_id = next(client.tasks("gsm8k")).task_id
    opening = client.publish("opening", task_id=task_id)
    shown = run("draw.py", "thread", opening.thread_id).stdout.splitlines()
    assert f"task_id: {task_id}" in shown
    assert client.thread(opening.thread_id).public_url in shown
