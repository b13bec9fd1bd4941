"""Faults of the network and the portal, bad input and hostile content, each with its outcome
and the exact number of requests the portal saw."""

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from benchmarks_wiki import ApiError, Client, TransportError, ValidationError
from benchmarks_wiki.errors import ConnectionRefused, HostNotFound, TimedOut
from benchmarks_wiki.transport import MockTransport, NetworkFailure
from tests.conftest import ROOT, interruptible, script_env
from benchmarks_wiki.sandbox import Catalogue
from tests.faults import Portal
from tests.proxy import Proxy
from tests.test_connections import RawServer


@pytest.fixture
def task_id(client, portal):
    task = next(client.tasks("gsm8k")).task_id
    portal.reset_counters()
    return task


def one_line(stderr):
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    return stderr


# -- the network -----------------------------------------------------------------------------

def test_dns_failure_is_not_retried(fake_time):
    # .invalid never resolves (RFC 2606), so the resolver answers at once, with no network.
    with pytest.raises(HostNotFound, match="cannot resolve host portal.invalid") as caught:
        Client("https://portal.invalid", sleep=fake_time.sleep).stats()
    assert isinstance(caught.value, TransportError) and not caught.value.sent and fake_time.slept == []


def test_each_network_failure_is_told_by_its_class(fake_time):
    failures = [(socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "connect", HostNotFound, 1),
                (ConnectionRefusedError(111, "Connection refused"), "connect", ConnectionRefused, 4),
                (socket.timeout("timed out"), "connect", TimedOut, 4),
                (socket.timeout("timed out"), "wait", TimedOut, 4),
                (socket.timeout("timed out"), "read", TimedOut, 4),
                (ConnectionResetError(104, "Connection reset by peer"), "read", TransportError, 4)]
    for cause, phase, kind, attempts in failures:
        sent = []

        def fail(request):
            sent.append(request)
            raise NetworkFailure(cause, phase, "portal.test:443")

        with Client("https://portal.test", transport=MockTransport(fail), sleep=fake_time.sleep) as client:
            with pytest.raises(kind) as caught:
                client.stats()
        assert type(caught.value) is kind and len(sent) == attempts, cause
        assert caught.value.sent == (phase != "connect") and not caught.value.outcome_unknown


@pytest.mark.parametrize("cert, words", [("untrusted", "certificate verification failed"),
                                         ("wrong-host", "certificate verification failed")])
def test_tls_failures_exit_3_and_never_fall_back(run, cert, words):
    with Portal(Catalogue.sample()).start(cert=cert) as bad:
        done = run("draw.py", "stats", env=script_env(bad))
        assert done.returncode == 3
        line = one_line(done.stderr)
        assert words in line and "BENCHMARKS_WIKI_CA_FILE" in line
        assert bad.requests == []
    if cert == "wrong-host":
        assert "127.0.0.1" in line and ("hostname" in line.lower() or "IP address" in line)


@pytest.mark.parametrize("reader", ["stats", "tasks"])
def test_reads_retry_a_truncated_answer(client, portal, reader):
    portal.truncate_next(times=1)
    result = client.stats() if reader == "stats" else list(client.tasks("gsm8k"))
    assert result
    assert len(portal.requests) == 2


def test_publish_retries_a_truncated_answer_with_the_same_nonce(client, portal, task_id):
    portal.truncate_next(times=1)
    result = client.publish("cut off halfway", task_id=task_id)
    assert portal.published == 1 and not result.created
    assert portal.requests[0].params["nonce"] == portal.requests[1].params["nonce"]


def test_publish_drops_exhausting_retries_say_how_to_retry(run, portal, task_id):
    portal.drop_after_record(times=4)
    done = run("post.py", "--task", task_id, "--body", "dropped", "--retries", "1")
    assert done.returncode == 3
    assert "may or may not be posted" in one_line(done.stderr)
    assert portal.published == 1 and len(portal.requests) == 2


def test_read_timeout_exits_3_within_the_timeout(run, portal):
    portal.stall_next(5, times=4)
    started = time.monotonic()
    done = run("draw.py", "stats", "--timeout", "0.5", "--retries", "0")
    assert done.returncode == 3 and "within 0.5 s" in one_line(done.stderr)
    assert time.monotonic() - started < 0.5 + 2.5  # the process start-up is the margin
    assert len(portal.requests) == 1


def test_429_on_every_request_is_bounded(client, portal, fake_time):
    portal.fail_next(429, times=100, retry_after=20)
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert len(portal.requests) == 4 and fake_time.slept == [20, 20, 20]
    assert "4 attempts" in str(caught.value) and "try again" in str(caught.value)


def test_503_storm_without_retry_after_uses_growing_jittered_waits(portal, tls, fake_time):
    portal.fail_next(503, times=100)
    with Client(portal.origin, ssl_context=tls, sleep=fake_time.sleep, retries=5) as client:
        with pytest.raises(ApiError):
            client.stats()
    assert len(portal.requests) == 6
    assert all(0 <= wait <= 0.5 * 2 ** n for n, wait in enumerate(fake_time.slept))


@pytest.mark.parametrize("body, content_type, words", [
    (b"<html>oops</html>", "text/html", "not JSON (text/html)"),
    (b"", "application/json", "empty body"),
    (b"{not json", "application/json", "not JSON"),
    (b'{"problems": 1}', "application/json", "no 'benchmarks'"),
    (b'[1, 2]', "application/json", "expected a stats object"),
])
def test_unreadable_answers_exit_1_naming_what_was_wrong(run, portal, body, content_type, words):
    portal.raw_next(200, body, content_type)
    done = run("draw.py", "stats")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "200" in line and words in line


@pytest.mark.parametrize("catalog, words", [
    ({"generated_at": "x", "stats": {"problems": 1}, "benchmarks": []}, "the stats object has no 'benchmarks'"),
    ({"generated_at": "x", "stats": {"problems": 1, "benchmarks": 1, "benchmarks_with_problems": 1, "posts": 1},
      "benchmarks": [{"slug": 5}]}, "the benchmark field 'slug' is a int"),
], ids=["stats", "benchmark"])
def test_a_catalog_that_cannot_be_read_names_the_status_it_came_with(run, portal, catalog, words):
    portal.raw_next(200, json.dumps(catalog).encode(), "application/json")
    done = run("draw.py", "catalog")
    assert done.returncode == 1
    said = f"draw.py: error: 200 malformed_answer: unreadable answer from /api/v1/catalog: {words}\n"
    assert one_line(done.stderr) == said


def test_wrong_types_in_a_list_exit_1(run, portal):
    portal.raw_next(200, b'{"items": [{"task_id": 5}], "next_cursor": null}', "application/json")
    done = run("draw.py", "tasks", "gsm8k")
    assert done.returncode == 1 and "task_id" in one_line(done.stderr)


@pytest.mark.parametrize("status", [307, 308])
def test_temporary_and_permanent_redirects_are_followed_for_reads(client, portal, status):
    portal.redirect_next("{origin}{path_qs}", status=status)
    assert client.stats()
    assert [request.status for request in portal.requests] == [status, 200]


def test_redirect_to_another_host_is_followed_for_reads_over_https(client, portal, tls):
    with Portal(Catalogue.sample()).start() as other:
        portal.redirect_next(other.origin.replace("127.0.0.1", "localhost") + "{path_qs}", status=302)
        assert client.stats()
        assert len(other.requests) == 1


def test_an_enormous_answer_is_refused_past_the_limit(client, portal):
    portal.flood_next(size=50 * 1024 * 1024)
    with pytest.raises(ApiError, match="at most 33554432"):
        client.stats()


def test_an_endless_answer_is_refused_past_the_limit(run, portal):
    portal.flood_next()
    done = run("draw.py", "stats")
    assert done.returncode == 1 and "answer_too_large" in one_line(done.stderr)


def test_ctrl_c_during_post_keeps_the_journal_consistent(portal, task_id, tmp_path, run):
    portal.stall_next(30)
    process = subprocess.Popen(interruptible("scripts/post.py", "--task", task_id, "--body", "stalled"),
                               cwd=ROOT, env=script_env(portal), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while portal.published == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(2)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 130 and "Traceback" not in err
    drafts = list((tmp_path / "state" / "benchmarks-wiki" / "waiting").glob("*.json"))
    assert len(drafts) == 1 and not list(drafts[0].parent.glob("*.tmp"))
    portal.clear_faults()
    assert run("post.py", "--draft", str(drafts[0])).returncode == 0
    assert portal.published == 1


# -- proxies and credentials ---------------------------------------------------------------------

@pytest.fixture
def proxy():
    server = Proxy()
    yield server
    server.stop()


def test_https_proxy_from_the_environment_carries_reads_and_writes(client, portal, proxy, monkeypatch, tls,
                                                                      task_id):
    monkeypatch.setenv("https_proxy", proxy.url)
    with Client(portal.origin, ssl_context=tls) as proxied:
        assert proxied.stats()
        assert proxied.publish("through the proxy", task_id=task_id).created
    assert [method for method, _, _ in proxy.seen] == ["CONNECT"]
    assert proxy.seen[0][1] == f"127.0.0.1:{portal.port}"


def test_no_proxy_is_honoured(portal, proxy, monkeypatch, tls):
    monkeypatch.setenv("https_proxy", proxy.url)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with Client(portal.origin, ssl_context=tls) as direct:
        assert direct.stats()
    assert proxy.seen == []


def test_plain_http_reads_through_a_proxy(proxy, monkeypatch, tls):
    with Portal(Catalogue.sample()).start(plain_http=True) as portal:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.setenv("https_proxy", proxy.url)
        with Client(portal.plain_origin, ssl_context=tls) as client:
            assert client.stats()
        assert proxy.seen[0][0] == "GET" and proxy.seen[0][1].startswith(portal.plain_origin)


def test_proxy_credentials_are_never_sent(portal, monkeypatch, tls):
    monkeypatch.setenv("https_proxy", "http://user:secret@127.0.0.1:9")
    with pytest.raises(ValidationError, match="credentials"):
        Client(portal.origin, ssl_context=tls).stats()
    assert portal.requests == []


def test_credentials_in_the_environment_are_never_sent(run, portal, task_id):
    env = script_env(portal, HTTP_AUTHORIZATION="Bearer x", COOKIE="a=b", NETRC="/dev/null")
    assert run("post.py", "--task", task_id, "--body", "x", env=env).returncode == 0
    assert run("draw.py", "stats", env=env).returncode == 0
    for request in portal.requests:
        names = {name.lower() for name in request.headers}
        assert not names & {"authorization", "cookie", "proxy-authorization"}


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("make, words", [
    (lambda path: path.mkdir(), "is a directory"),
    (lambda path: path.write_bytes(b"caf\xe9"), "not UTF-8"),
    (lambda path: path.write_bytes(b"x" * 100000), "over 65536 bytes"),
    (lambda path: path.write_bytes(b"x" * 2049 + b"\n" * 9000), "2049 bytes"),
    (lambda path: path.write_text("   \n\n"), "empty"),
])
def test_bad_body_files(run, portal, tmp_path, make, words):
    path = tmp_path / "notes.md"
    make(path)
    done = run("post.py", "--task", "317ef6cc-69a8-59a3-a347-e37d3399eb10", "--body-file", str(path))
    assert done.returncode == 2 and words in one_line(done.stderr)
    assert portal.requests == []


def test_a_body_file_under_a_regular_file_is_refused_with_the_systems_reason(run, portal, tmp_path):
    blocker = tmp_path / "notes"
    blocker.write_text("")
    done = run("post.py", "--task", "317ef6cc-69a8-59a3-a347-e37d3399eb10", "--body-file", str(blocker / "notes.md"))
    assert done.returncode == 2 and done.stderr == f"post.py: error: body file {blocker / 'notes.md'}: Not a directory\n"
    assert portal.requests == []


def test_an_unreadable_body_file(portal, tmp_path, monkeypatch, capsys):
    from benchmarks_wiki import cli

    path = tmp_path / "notes.md"
    path.write_text("x")
    real_open = open

    def refusing_open(name, *args, **kwargs):
        if str(name) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing_open)
    code = cli.main(["--task", "317ef6cc-69a8-59a3-a347-e37d3399eb10", "--body-file", str(path)], view="post")
    assert code == 2 and "Permission denied" in one_line(capsys.readouterr().err)
    assert portal.requests == []


@pytest.mark.parametrize("args", [
    ["follow.py", "t_1", "--interval", "0"], ["follow.py", "t_1", "--interval", "nan"],
    ["follow.py", "t_1", "--stop-after", "-1"], ["follow.py", "t_1", "--stop-after", "inf"],
    ["draw.py", "try", "--pool", "-3"], ["draw.py", "try", "--pool", "1e9"],
    ["draw.py", "threads", "--limit", "0"], ["draw.py", "stats", "--timeout", "0"],
    ["draw.py", "activity", "--since", "2026-13-45"], ["draw.py", "stats", "--origin", "ftp://x"],
    ["draw.py", "stats", "--origin", "https://u:p@x.org"], ["draw.py", "stats", "--origin", "https://x.org?q"],
    ["post.py", "--thread", "t_1", "--reply-to", "x_1", "--body", "x"],
    ["post.py", "--task", "317ef6cc-69a8-59a3-a347-e37d3399eb10", "--body", "x", "--nonce", "a" * 65],
    ["draw.py", "task", "317ef6cc"], ["draw.py", "thread", "t_"],
])
def test_bad_input_exits_2_with_one_line_and_nothing_sent(run, portal, args):
    done = run(*args)
    assert done.returncode == 2, done.stderr
    one_line(done.stderr)
    assert portal.requests == []


# -- hostile content -----------------------------------------------------------------------------

HOSTILE = "ok \x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \u202eevil\u202c \x08\x08 \r\nforged"


def test_hostile_text_in_every_human_view_is_made_visible(run, portal, client):
    task_id = next(client.tasks("gsm8k")).task_id
    posted = client.publish(HOSTILE, task_id=task_id, agent_name="name\x1b[2J", model="m\u2066x")
    for args in (["draw.py", "thread", posted.thread_id], ["draw.py", "threads"],
                 ["draw.py", "activity"], ["draw.py", "search", HOSTILE[:20]]):
        done = run(*args)
        assert done.returncode == 0, done.stderr
        for bad in ("\x1b", "\x07", "\x08", "\u202e", "\u2066", "\r"):
            assert bad not in done.stdout, (args, bad)
    shown = run("draw.py", "thread", posted.thread_id).stdout
    assert "\\x1b[31mred" in shown and "\\u202eevil" in shown and "name\\x1b[2J" in shown


def test_json_output_is_exact_and_ascii(run, portal, client):
    posted = client.publish(HOSTILE, task_id=next(client.tasks("gsm8k")).task_id)
    done = run("draw.py", "activity", "--json", "--limit", "1")
    assert done.stdout.isascii() and "\x1b" not in done.stdout
    import json
    assert json.loads(done.stdout)["body"] == posted.post.body


@pytest.mark.parametrize("body, what", [
    ("key AKIAABCDEFGHIJKLMNOP", "an AWS access key id at line 1, column 5"),
    ("ran it\n-----BEGIN RSA PRIVATE KEY-----", "a private key block at line 2, column 1"),
    ("log in /home/alice/run.log", "a home-directory path at line 1, column 8"),
    ("OPENAI_API_KEY=sk-proj-Zx81Lq0pV2nR7sT4wY6uB9", "an OpenAI API key"),
    ("DB_PASSWORD=Xk29fLq0pV2nR7sT", "a secret value for DB_PASSWORD"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "a GitHub token"),
])
def test_secrets_are_refused_before_anything_is_published(run, portal, task_id, body, what):
    done = run("post.py", "--task", task_id, "--body", body)
    assert done.returncode == 2 and what in one_line(done.stderr) and "--allow-sensitive" in done.stderr
    assert portal.requests == []


def test_a_secret_is_refused_by_a_dry_run_too_and_sent_only_when_allowed(run, portal, task_id):
    body = "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    dry = run("post.py", "--task", task_id, "--body", body, "--dry-run")
    assert dry.returncode == 2 and dry.stdout == "" and portal.requests == []
    allowed = run("post.py", "--task", task_id, "--body", body, "--allow-sensitive")
    assert allowed.returncode == 0 and portal.published == 1


def test_ordinary_results_are_not_mistaken_for_secrets(run, portal, task_id):
    body = ("Reproduced 4/5 with self-consistency at k=5 (temperature=0.7).\n"
            "RESULT=accuracy_0.80\nSee https://example.org/home/notes for the prompts.")
    assert run("post.py", "--task", task_id, "--body", body).returncode == 0


def test_publish_dropped_before_it_was_read_is_sent_again_once(client, portal, task_id):
    portal.drop_before_answer(times=1)
    assert client.publish("dropped on the way in", task_id=task_id).created
    assert portal.published == 1 and len(portal.requests) == 2


def test_a_refusing_proxy_is_named(portal, monkeypatch, tls, fake_time):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{port}")
    with pytest.raises(TransportError, match=f"refused by the proxy 127.0.0.1:{port} \\(for 127.0.0.1:"):
        Client(portal.origin, ssl_context=tls, sleep=fake_time.sleep).stats()


def test_a_body_file_that_normalises_under_the_limit_is_accepted(run, portal, task_id, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"result\r\n" + b"\n" * 9000)
    assert run("post.py", "--task", task_id, "--body-file", str(notes)).returncode == 0
    assert portal.requests[-1].params["body"] == "result"


def test_a_body_file_of_64_kib_is_read_and_one_byte_more_is_refused(run, portal, task_id, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"result\n" + b"\n" * (64 * 1024 - 7))
    assert run("post.py", "--task", task_id, "--body-file", str(notes)).returncode == 0
    assert portal.requests[-1].params["body"] == "result"
    notes.write_bytes(b"result\n" + b"\n" * (64 * 1024 - 6))
    done = run("post.py", "--task", task_id, "--body-file", str(notes))
    assert done.returncode == 2 and "is over 65536 bytes" in one_line(done.stderr) and portal.published == 1


@pytest.mark.parametrize("where", ["-", "fifo"])
def test_a_stream_past_64_kib_is_refused_before_it_ends(portal, tmp_path, monkeypatch, capsys, where):
    # The writer stays open, as a program still printing would: the refusal must not wait for it.
    from benchmarks_wiki import cli

    stdin = None
    if where == "-":
        reading, writing = os.pipe()
        stdin = io.TextIOWrapper(os.fdopen(reading, "rb"))
        monkeypatch.setattr(sys, "stdin", stdin)
        opened = lambda: os.fdopen(writing, "wb")  # noqa: E731
    else:
        where = str(tmp_path / "fifo")
        os.mkfifo(where)
        opened = lambda: open(where, "wb")  # noqa: E731
    monkeypatch.setenv("BENCHMARKS_WIKI_ORIGIN", portal.origin)
    writer = {}

    def write():
        writer["stream"] = opened()
        writer["stream"].write(b"x" * (64 * 1024 + 1))
        writer["stream"].flush()

    threading.Thread(target=write, daemon=True).start()
    codes = []
    post = threading.Thread(target=lambda: codes.append(
        cli.main(["--task", "317ef6cc-69a8-59a3-a347-e37d3399eb10", "--body-file", where], view="post")), daemon=True)
    post.start()
    post.join(timeout=10)
    refused_while_open = not post.is_alive()
    writer["stream"].close()
    post.join(timeout=10)
    if stdin is not None:
        stdin.close()
    assert refused_while_open and codes == [2] and "is over 65536 bytes" in capsys.readouterr().err
    assert portal.requests == []


def test_ctrl_c_during_a_post_without_journal_says_how_to_retry(portal, task_id):
    portal.stall_next(30)
    process = subprocess.Popen(interruptible("scripts/post.py", "--task", task_id, "--body", "x", "--no-journal"),
                               cwd=ROOT, env=script_env(portal),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while portal.published == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(2)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 130
    assert "interrupted; resend the same request, as it may or may not be posted" in one_line(err)
    assert "--nonce=" in err


def test_a_304_with_a_content_length_is_not_a_failure(client, portal):
    first = client.catalog()
    portal.raw_next(304, b"", None, headers={"Content-Length": "52", "ETag": "x"})
    assert client.catalog() == first
    assert len(portal.requests) == 2


def test_a_strange_retry_after_is_ignored(client, portal, fake_time):
    portal.fail_next(503, times=1, retry_after="\u00b2")
    assert client.stats()
    assert len(fake_time.slept) == 1 and fake_time.slept[0] <= 0.5


def test_a_malformed_catalogue_in_text_exits_1(run, portal):
    portal.raw_next(200, b'{"stats": {"problems": 1}, "benchmarks": []}', "application/json")
    done = run("draw.py", "catalog")
    assert done.returncode == 1 and "malformed_answer" in one_line(done.stderr)


def test_a_bad_proxy_refuses_the_post_before_anything_is_sent(run, portal, task_id):
    env = script_env(portal, https_proxy="socks5://127.0.0.1:1080")
    for extra in ([], ["--dry-run"]):
        done = run("post.py", "--task", task_id, "--body", "x", *extra, env=env)
        assert done.returncode == 2 and "may or may not" not in one_line(done.stderr)
    assert portal.requests == []


def test_the_clients_own_ca_variable_trusts_a_ca_besides_the_systems(run, portal, tmp_path):
    from tests.certs import CA_FILE

    env = {name: value for name, value in script_env(portal).items() if name not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    done = run("draw.py", "stats", env={**env, "BENCHMARKS_WIKI_CA_FILE": CA_FILE})
    assert done.returncode == 0, done.stderr
    doctor = run("draw.py", "doctor", env={**env, "BENCHMARKS_WIKI_CA_FILE": CA_FILE}).stdout
    assert f"and {CA_FILE} (from $BENCHMARKS_WIKI_CA_FILE)" in doctor and "(the system's)" in doctor
    portal.reset_counters()
    missing = run("draw.py", "stats", env={**env, "BENCHMARKS_WIKI_CA_FILE": str(tmp_path / "none.pem")})
    assert missing.returncode == 2 and portal.requests == []
    assert "BENCHMARKS_WIKI_CA_FILE names " in one_line(missing.stderr) and "none.pem" in missing.stderr


def test_a_missing_ssl_cert_file_is_said_in_the_error_and_in_doctor(run, portal, tmp_path):
    gone = str(tmp_path / "gone.pem")
    done = run("draw.py", "stats", env=script_env(portal, SSL_CERT_FILE=gone))
    assert done.returncode == 3
    assert f"SSL_CERT_FILE names {gone}, which does not exist or cannot be read" in one_line(done.stderr)
    doctor = run("draw.py", "doctor", env=script_env(portal, SSL_CERT_FILE=gone)).stdout
    assert f"ca_file: {gone} (from $SSL_CERT_FILE); but SSL_CERT_FILE names {gone}, which does not exist" in doctor


def test_through_a_proxy_a_failed_handshake_is_said_without_a_look_around_it(proxy, monkeypatch, tls, fake_time):
    # Asking the port directly which scheme it speaks would reach past the proxy the environment names.
    server = RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    monkeypatch.setenv("https_proxy", proxy.url)
    try:
        with Client(server.origin.replace("http://", "https://"), ssl_context=tls, retries=0,
                    sleep=fake_time.sleep) as client:
            with pytest.raises(TransportError) as caught:
                client.stats()
    finally:
        server.close()
    assert caught.value.reason == "tls_failed" and [method for method, _, _ in proxy.seen] == ["CONNECT"]
