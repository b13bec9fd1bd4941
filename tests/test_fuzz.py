"""Randomised: thousands of hostile answers against every read command and library method,
and random arguments against the three scripts, with fixed seeds.

The network is replaced in-process through the client's transport, by one that answers each
request with a status, headers and a body made up here. Properties:
no traceback, an exit code in {0, 1, 2, 3}, at most one line on stderr, no raw control
character in any output, and no request at all for arguments the client refuses.
"""

import gzip
import json
import random

import pytest

from benchmarks_wiki import BenchmarksWikiError, Client, cli
from benchmarks_wiki.transport import MockTransport, Response

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
POST = {"post_id": "p_8f2c1a", "thread_id": "t_51d0e9", "task_id": TASK, "reply_to": None, "kind": "result",
        "body": "Reproduced 4/5.", "agent_name": "bot", "model": "m", "run_label": None, "revision": 1,
        "claims_verified": False, "created_at": "2026-11-29T10:15:02Z",
        "public_url": "https://benchmarks.wiki/t/t_51d0e9#p_8f2c1a"}
BENCHMARK = {"slug": "gsm8k", "name": "GSM8K", "has_problems": True, "problem_count": 3, "splits": ["test"],
             "metric": "accuracy", "license": "MIT", "url": "https://benchmarks.wiki/gsm8k",
             "description": "Math.", "citation": "@article{x}", "related": [{"slug": "math", "relation": "harder"}],
             "source": "https://huggingface.co/datasets/openai/gsm8k"}
TASK_OBJECT = {"task_id": TASK, "benchmark": "gsm8k", "key": "main--test--1", "split": "test", "revision": 1,
               "body": {"question": "How many?", "choices": ["a", "b"]}, "answer": "published",
               "source": "https://x", "url": "https://benchmarks.wiki/gsm8k/1"}
THREAD = {"thread_id": "t_51d0e9", "task_id": TASK, "title": "Reproduced", "post_count": 1,
          "created_at": "2026-11-29T10:15:02Z", "last_post_at": "2026-11-29T10:15:02Z",
          "public_url": "https://benchmarks.wiki/t/t_51d0e9"}
STATS = {"problems": 3, "benchmarks": 1, "benchmarks_with_problems": 1, "posts": 1,
         "generated_at": "2026-11-29T10:15:02Z"}


def page(item):
    return {"items": [item, item], "next_cursor": None}


def template(path):
    """The portal's own answer to ``path``, before it is made hostile."""
    routes = [("/api/v1/stats", STATS), ("/api/v1/catalog", {"generated_at": "x", "stats": STATS,
                                                              "benchmarks": [BENCHMARK]}),
              ("/tasks", page(TASK_OBJECT)), ("/markdown", "# Problem\n"), ("/api/v1/tasks/", TASK_OBJECT),
              ("/api/v1/benchmarks/", BENCHMARK), ("/api/v1/benchmarks", page(BENCHMARK)),
              ("/api/v1/threads/", dict(THREAD, posts=[POST], next_cursor=None)),
              ("/api/v1/threads", page(THREAD)), ("/api/v1/activity", page(POST)),
              ("/api/v1/publish", {"created": True, "post": POST}), ("/search", "<html>results</html>")]
    return next((answer for prefix, answer in routes if prefix in path), {})


WEIRD_TEXT = ["", "\x1b[31mred\x1b[0m", "\u202eevil", "a\nb\rc", "\x00", "\ud800", "x" * 3000, "é",
              "\x9b31m", "null", "-1"]


def weird_value(rng, depth=0):
    choice = rng.randrange(10)
    if choice == 0 or depth > 3:
        return rng.choice([None, True, False, 0, -1, 10 ** 400, 1.5, float("nan"), float("inf")])
    if choice < 4:
        return rng.choice(WEIRD_TEXT)
    if choice < 6:
        return [weird_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    if choice < 8:
        return {rng.choice(["slug", "items", "post", "error", "x"]): weird_value(rng, depth + 1)}
    return "p_" + rng.choice(WEIRD_TEXT)


def mutate(rng, value, rate):
    """``value`` with some of its parts deleted, retyped or replaced by hostile text."""
    if rng.random() < rate:
        return weird_value(rng)
    if isinstance(value, dict):
        kept = {key: mutate(rng, item, rate) for key, item in value.items() if rng.random() > rate / 2}
        return kept
    if isinstance(value, list):
        return [mutate(rng, item, rate) for item in value]
    return value


def hostile_body(rng, path):
    kind = rng.randrange(12)
    if kind == 0:
        return rng.choice([b"", b"\xff\xfe", b"<html>502</html>", b"[" * 5000 + b"]" * 5000, b"{", b"nul"])
    answer = mutate(rng, template(path), rng.choice([0.0, 0.05, 0.2, 0.5]))
    if kind == 1:
        answer = {"error": mutate(rng, {"code": "not_found", "message": "no"}, 0.5)}
    if isinstance(answer, str):
        return answer.encode("utf-8", "surrogatepass")
    return json.dumps(answer).encode("utf-8", "surrogatepass")


def hostile_answer(rng, path):
    """An answer to ``path`` whose status, headers and body may each be hostile."""
    status = rng.choice([200] * 8 + [201, 204, 301, 302, 304, 307, 400, 404, 414, 429, 500, 502, 503, 504, 418])
    body = hostile_body(rng, path)
    headers = [("Content-Type", rng.choice(["application/json", "text/html", ""]))]
    if rng.random() < 0.15:
        body = gzip.compress(body) if rng.random() < 0.7 else body
        headers.append(("Content-Encoding", rng.choice(["gzip", "br", "gzip, identity"])))
    if status in (301, 302, 307) or rng.random() < 0.05:
        headers.append(("Location", rng.choice(["/api/v1/stats", "https://[", "http://x/", "https://caf\u00e9/",
                                                "", "//", "https://127.0.0.1:1/x"])))
    if rng.random() < 0.2:
        headers.append(("Retry-After", rng.choice(["1", "-1", "9" * 40, "soon", "Fri, 31 Dec 9999 23:59:59 GMT",
                                                   "Wed, 21 Oct 2015 07:28:00 GMT"])))
    return Response(status, body, headers, reason="Reason")


class Network:
    """The client's network, replaced through its transport: every request is answered by
    ``answer(path)``, and every path asked is kept."""

    def __init__(self):
        self.answer = lambda path: Response(200)
        self.requests = []

    def handle(self, request):
        self.requests.append(request.path)
        return self.answer(request.path)

    def client_options(self):
        clock = iter(range(10 ** 9)).__next__  # each look at the clock is a second later
        return {"transport": MockTransport(self.handle), "sleep": lambda seconds: None, "clock": clock}


@pytest.fixture
def network(monkeypatch):
    monkeypatch.setenv("BENCHMARKS_WIKI_ORIGIN", "https://portal.test")
    return Network()


def clean_output(text):
    return not any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) < 0xa0 for c in text)


def check_run(capsys, argv, view, network):
    code = cli.main(argv, view=view, client_options=network.client_options())
    out, err = capsys.readouterr()
    context = f"{view} {argv!r}: {err!r}"
    assert code in (0, 1, 2, 3), context
    assert "Traceback" not in err and "please report it" not in err, context
    assert err.count("\n") <= 1, context
    assert clean_output(out) and clean_output(err), context
    return code


READS = [["try"], ["try", "gsm8k"], ["stats"], ["benchmarks"], ["benchmark", "gsm8k"], ["tasks", "gsm8k"],
         ["task", TASK], ["task", TASK, "--markdown"], ["catalog"], ["search", "q"], ["threads"],
         ["thread", "t_51d0e9"], ["activity"]]


def test_hostile_answers_to_every_read_command(network, capsys):
    rng = random.Random(20261130)
    network.answer = lambda path: hostile_answer(rng, path)
    for round_ in range(130):
        for command in READS:
            extra = ["--json"] if round_ % 3 == 0 else []
            check_run(capsys, [*command, *extra, "--no-journal", "--retries", "1"], "draw", network)
    check_run(capsys, ["--task", TASK, "--body", "x", "--no-journal"], "post", network)


def test_hostile_answers_to_posts(network, capsys, tmp_path):
    rng = random.Random(7)
    network.answer = lambda path: hostile_answer(rng, path)
    for round_ in range(500):
        journal = ["--journal", str(tmp_path)] if round_ % 2 else ["--no-journal"]
        check_run(capsys, ["--task", TASK, "--body", f"post {round_}", "--retries", "1", *journal], "post", network)


def test_hostile_answers_to_every_library_method(network):
    rng = random.Random(1)
    network.answer = lambda path: hostile_answer(rng, path)
    calls = [lambda c: c.stats(), lambda c: list(c.benchmarks()), lambda c: c.benchmark("gsm8k"),
             lambda c: list(c.tasks("gsm8k")), lambda c: c.task(TASK), lambda c: c.markdown(TASK),
             lambda c: c.sample("gsm8k"), lambda c: c.catalog(), lambda c: c.search("q"),
             lambda c: list(c.threads()), lambda c: c.thread("t_51d0e9"), lambda c: list(c.activity()),
             lambda c: c.publish("x", task_id=TASK), lambda c: list(c.follow("t_51d0e9", interval=1, timeout=2))]
    with Client(retries=1, **network.client_options()) as client:
        for _ in range(400):
            for call in calls:
                try:
                    call(client)
                except BenchmarksWikiError:
                    pass


FLAGS = ["--json", "--origin", "--retries", "--timeout", "--journal", "--no-journal", "--limit", "--pool",
         "--seed", "--count", "--task", "--thread", "--reply-to", "--body", "--body-file", "--name", "--model",
         "--run-label", "--kind", "--revision", "--nonce", "--preview", "--dry-run", "--draft", "--resend",
         "--allow-sensitive", "--stop-after", "--max-time", "--interval", "--resume", "--after", "--mine",
         "--markdown", "--split", "--since", "--pending", "-h"]
WORDS = ["try", "stats", "task", "thread", "gsm8k", TASK, "t_51d0e9", "p_8f2c1a", "0", "-1", "1e9", "nan",
         "https://portal.test", "http://x", "", "-", "--", "x" * 300, "\udcff", "a\nb", "\x1b[2J", "\u202e",
         "2026-01-01T00:00:00Z", "/nonexistent", "n" * 20]


def test_random_arguments_to_the_three_scripts(network, capsys, tmp_path, monkeypatch):
    rng = random.Random(42)
    network.answer = lambda path: Response(200, json.dumps(template(path)).encode())
    monkeypatch.setenv("BENCHMARKS_WIKI_JOURNAL", str(tmp_path))
    for _ in range(1500):
        view = rng.choice(["draw"] * 7 + ["post"] * 7 + ["benchmarks-wiki"] * 5 + ["follow"])
        argv = [rng.choice(FLAGS + WORDS) for _ in range(rng.randrange(6))]
        if view == "follow":  # bounded, since each poll is answered at once
            argv += ["--stop-after", "0.1", "--interval", "0.1", "--max-time", "0.1"]
        network.requests.clear()
        try:
            code = check_run(capsys, argv, view, network)
        except SystemExit as exit_:  # the parser's own refusals, --help and --version
            out, err = capsys.readouterr()
            code = exit_.code
            assert code in (0, 2) and err.count("\n") <= 1 and clean_output(out + err), (argv, err)
        if code == 2:
            assert network.requests == [], argv


# -- answers that would hold a command without end -----------------------------------------------


def test_a_gzip_answer_of_many_members_ends_at_the_cap_in_one_clear_line(network, capsys):
    member = gzip.compress(b" ")
    network.answer = lambda path: Response(200, member * 33000, {"Content-Encoding": "gzip"})
    assert check_run(capsys, ["stats", "--retries", "0", "--no-journal"], "draw", network) == 1
    network.answer = lambda path: Response(200, gzip.compress(json.dumps(STATS).encode()) * 2,
                                           {"Content-Encoding": "gzip"})
    with Client(retries=0, **network.client_options()) as client:
        with pytest.raises(BenchmarksWikiError, match="a body that is not JSON"):
            client.stats()  # two whole members inflate, one after the other, to what is not one object
    network.answer = lambda path: Response(200, member * 33000, {"Content-Encoding": "gzip"})
    with Client(retries=0, **network.client_options()) as client:
        with pytest.raises(BenchmarksWikiError, match="a gzip body of more than 64 members"):
            client.stats()


def test_a_listing_that_never_ends_is_refused_in_one_clear_line(network, capsys):
    pages = iter(range(10 ** 6))

    def endless(path):
        return Response(200, json.dumps({"items": [POST], "next_cursor": f"c{next(pages)}"}).encode())

    network.answer = endless
    assert check_run(capsys, ["activity", "--limit", "99999", "--no-journal"], "draw", network) == 1
    assert len(network.requests) == 1000
    network.requests.clear()
    network.answer = lambda path: Response(200, json.dumps({**THREAD, "posts": [POST], "next_cursor": "same"}).encode())
    with Client(retries=0, **network.client_options()) as client:
        with pytest.raises(BenchmarksWikiError, match="a next_cursor given before: the list never ends"):
            client.thread("t_51d0e9")
    assert len(network.requests) == 2


def test_a_slow_drip_under_a_declared_length_ends_at_the_timeout(fake_time):
    import socket
    import threading
    import time

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip():
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
            while not stop.is_set():  # a byte at a time, each well within the timeout
                connection.sendall(b" ")
                stop.wait(0.02)

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        with Client(f"http://127.0.0.1:{listener.getsockname()[1]}", retries=0, timeout=0.3,
                    sleep=fake_time.sleep) as client:
            with pytest.raises(BenchmarksWikiError, match=r"no whole answer from 127\.0\.0\.1:\d+ within 0\.3 s"):
                client.stats()
        assert time.monotonic() - started < 5  # bounded by the timeout, not by the drip
    finally:
        stop.set()
        thread.join()
        listener.close()
