"""Exactly once on every path: the same command run twice never posts twice."""

import pytest

from tests.conftest import publishes, script_env


@pytest.fixture
def task_id(client, portal):
    task = next(client.tasks("gsm8k")).task_id
    portal.reset_counters()
    return task


@pytest.mark.parametrize("program, words", [("post.py", []), ("benchmarks-wiki", ["post"])])
def test_a_publish_at_once_run_twice_posts_once(run, portal, task_id, program, words):
    command = [*words, "--task", task_id, "--body", "One-shot result: 42."]
    first = run(program, *command)
    assert first.returncode == 0 and first.stdout.startswith("posted p_"), first.stderr
    again = run(program, *command)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("already published ") and "; nothing sent" in again.stdout.splitlines()[0]
    assert first.stdout.split()[1] == again.stdout.split()[2]
    assert portal.published == 1 and len(publishes(portal)) == 1


def test_a_publish_at_once_whose_answer_was_lost_is_one_post_when_run_again(run, portal, task_id):
    command = ["--task", task_id, "--body", "One-shot result: 42.", "--retries", "0"]
    portal.drop_after_record()
    lost = run("post.py", *command)
    assert lost.returncode == 3 and "may or may not be posted" in lost.stderr
    again = run("post.py", *command)
    assert again.returncode == 0 and again.stdout.startswith("already published "), again.stdout + again.stderr
    third = run("post.py", *command)
    assert third.stdout.startswith("already published ") and "nothing sent" in third.stdout
    assert portal.published == 1 and len(publishes(portal)) == 2


def test_the_same_text_under_a_new_key_is_a_second_post(run, portal, task_id):
    command = ["--task", task_id, "--body", "Same words, posted twice on purpose."]
    assert run("post.py", *command).stdout.startswith("posted ")
    assert run("post.py", *command, "--key", "second").stdout.startswith("posted ")
    assert run("post.py", *command, "--key", "second").stdout.startswith("already published ")
    assert portal.published == 2


@pytest.mark.parametrize("change", [["--kind", "note"], ["--name", "bot"], ["--model", "m"], ["--run-label", "r"],
                                    ["--revision", "1"]])
def test_a_post_that_differs_in_any_field_is_another_post(run, portal, task_id, change):
    command = ["--task", task_id, "--body", "Differs in one field."]
    assert run("post.py", *command).stdout.startswith("posted ")
    assert run("post.py", *command, *change).stdout.startswith("posted ")
    assert portal.published == 2


def test_the_same_post_is_the_same_whatever_the_portal_would_normalise(run, portal, task_id):
    assert run("post.py", "--task", task_id, "--body", "Trailing space.  \r\n").stdout.startswith("posted ")
    assert run("post.py", "--task", task_id, "--body", "Trailing space.", "--kind", "result").stdout \
        .startswith("already published ")
    assert portal.published == 1


def test_a_name_from_the_environment_is_part_of_the_post(run, portal, task_id):
    command = ["post.py", "--task", task_id, "--body", "Named by the environment."]
    assert run(*command).stdout.startswith("posted ")
    named = run(*command, env=script_env(portal, BENCHMARKS_WIKI_AGENT_NAME="bot"))
    assert named.stdout.startswith("posted ") and portal.published == 2


def test_a_preview_of_a_post_already_published_says_so(run, portal, task_id):
    command = ["--task", task_id, "--body", "Previewed after it went out."]
    posted = run("post.py", *command)
    preview = run("post.py", *command, "--preview")
    post_id, thread_id = posted.stdout.split()[1], posted.stdout.split()[3]
    assert f"already published as {post_id} in {thread_id}; the same post again needs a --key of its own" \
        in preview.stdout
    assert portal.published == 1


def test_a_nonce_given_sends_that_request_and_the_same_command_again_sends_nothing(run, portal, task_id):
    command = ["--task", task_id, "--body", "With a nonce of my own."]
    assert run("post.py", *command, "--nonce", "A" * 20).stdout.startswith("posted ")
    assert run("post.py", *command, "--nonce", "A" * 20).stdout.startswith("already published ")
    assert [request.params["nonce"] for request in publishes(portal)] == ["A" * 20]


@pytest.mark.parametrize("argv", [["try", "gsm8"], ["benchmark", "gsm8"], ["tasks", "gsm8"]])
def test_an_unknown_benchmark_names_the_nearest_slugs(run, portal, argv):
    done = run("draw.py", *argv)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert done.stderr.endswith("; did you mean gsm8k? see every one with: python3 scripts/draw.py benchmarks\n")
    far = run("draw.py", argv[0], "zzzzzz")
    assert far.returncode == 1 and "did you mean" not in far.stderr


def test_an_unknown_benchmark_names_three_nearest_slugs_at_most(run, portal):
    for slug in ("gsm8a", "gsm8b", "gsm8c"):
        portal.catalogue.add_benchmark(slug, slug, metric="accuracy", license="MIT")
    done = run("draw.py", "benchmark", "gsm8")
    assert done.returncode == 1 and done.stderr.split("did you mean ")[1].split("?")[0].count(" or ") == 2


def test_doctor_deep_reads_each_route_once_and_says_each_is_fine(run, portal):
    portal.reset_counters()
    done = run("draw.py", "doctor", "--deep")
    assert done.returncode == 0, done.stderr
    routes = [line for line in done.stdout.splitlines() if line.startswith("GET ")]
    assert len(routes) == 10 and all(": fine (" in line for line in routes), routes
    assert {request.path.split("/")[3] if request.path.startswith("/api/") else request.path
            for request in portal.requests} >= {"stats", "benchmarks", "tasks", "threads", "activity", "catalog",
                                                "/search"}
    assert publishes(portal) == []


def test_doctor_deep_says_what_differs_in_the_portals_own_words(portal, tls, capsys, monkeypatch):
    import json

    from benchmarks_wiki import cli
    from benchmarks_wiki.transport import HTTPTransport, Response

    real = HTTPTransport(ssl_context=tls)

    def handle(request):
        if request.path.startswith("/api/v1/tasks/") and not request.path.endswith("/markdown"):
            return Response(200, json.dumps({"task_id": request.path.split("/")[-1]}).encode())
        return real.handle(request)

    monkeypatch.setenv("BENCHMARKS_WIKI_ORIGIN", portal.origin)
    code = cli.main(["doctor", "--deep", "--no-journal"], view="draw",
                    client_options={"transport": type("Mixed", (), {"handle": staticmethod(handle),
                                                                    "close": real.close, "timeout": 30})()})
    out = capsys.readouterr().out
    assert code == 1
    [differs] = [line for line in out.splitlines() if "differs" in line]
    route = differs.split()[1][:-1]
    assert route.startswith("/api/v1/tasks/") and differs == (
        f"GET {route}: differs: 200 malformed_answer: unreadable answer from {route}: the task object has no "
        "'benchmark'")
    assert sum(": fine (" in line for line in out.splitlines()) == 9


def write_failures():
    """Every way a publish can fail, as a transport acts it out: (name, answer or failure)."""
    import socket
    import ssl

    from benchmarks_wiki.transport import NetworkFailure, Response

    def raising(cause, phase):
        def fail(request):
            raise NetworkFailure(cause, phase, "portal.test:443")
        return fail

    def answering(status, body=b'{"error": {"code": "c", "message": "m"}}', **headers):
        return lambda request: Response(status, body, headers)

    return [("connect refused", raising(ConnectionRefusedError(111, "refused"), "connect")),
            ("connect timeout", raising(socket.timeout("timed out"), "connect")),
            ("dns", raising(socket.gaierror(-2, "Name or service not known"), "connect")),
            ("certificate", raising(ssl.SSLCertVerificationError("bad"), "connect")),
            ("send", raising(BrokenPipeError(32, "broken pipe"), "send")),
            ("wait timeout", raising(socket.timeout("timed out"), "wait")),
            ("read reset", raising(ConnectionResetError(104, "reset"), "read")),
            ("429", answering(429, **{"Retry-After": "30"})), ("500", answering(500)), ("502", answering(502)),
            ("503", answering(503)), ("400", answering(400)), ("404", answering(404)),
            ("unreadable", answering(201, b"not json")),
            ("redirect", answering(302, b"", Location="https://elsewhere.test/x")),
            ("redirect down", answering(302, b"", Location="http://portal.test/x"))]


@pytest.mark.parametrize("name, handle", write_failures(), ids=[name for name, _ in write_failures()])
def test_every_write_failure_says_first_what_to_run_and_never_a_generic_try_again(name, handle, tmp_path,
                                                                                   monkeypatch, capsys):
    from benchmarks_wiki import cli
    from benchmarks_wiki.transport import MockTransport

    monkeypatch.chdir(tmp_path)
    code = cli.main(["--task", "317ef6cc-69a8-59a3-a347-e37d3399eb10", "--body", "x", "--retries", "0",
                     "--origin", "https://portal.test"], view="post",
                    client_options={"transport": MockTransport(handle), "sleep": lambda seconds: None})
    err = capsys.readouterr().err
    assert code in (1, 2, 3) and err.count("\n") == 1 and "try again" not in err, err
    advice = err.split("; ", 1)[1] if "; " in err else ""
    if "may or may not be posted" in err:
        assert advice.startswith(("resend the same request", "after 30 s, resend the same request")), err
        assert "cannot post twice: python3 " in err and "--draft " in err
    else:
        assert "nothing was posted" in advice, err
