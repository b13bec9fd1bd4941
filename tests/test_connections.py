"""Connections as real servers and proxies treat them: idle ones closed or reset, answers
compressed, tunnels refused."""

import socket

import pytest

from benchmarks_wiki import ApiError, Client, TransportError
from benchmarks_wiki import transport
from tests.conftest import script_env, wait_for
from tests import faults
from tests.faults import Portal
from tests.proxy import Proxy

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"


def reset_when_idle(portal, how="reset", seconds=5):
    """Reset (or close) the client's kept-alive connection once the server waits on it for a
    request."""
    drop = portal.reset_idle_connections if how == "reset" else portal.close_idle_connections
    wait_for(lambda: drop() > 0, seconds, step=0.005)


@pytest.fixture
def task_id(client):
    return next(client.tasks("gsm8k")).task_id


@pytest.fixture
def strict(portal, tls, fake_time):
    """A client that may not retry: only a resend of a stale connection can save a request."""
    with Client(portal.origin, ssl_context=tls, retries=0, clock=fake_time.clock, sleep=fake_time.sleep) as made:
        yield made


@pytest.mark.parametrize("how", ["reset", "closed"])
@pytest.mark.parametrize("noticed", [True, False], ids=["noticed before sending", "found on use"])
def test_a_connection_the_server_dropped_while_idle_is_reopened(portal, strict, fake_time, monkeypatch, how,
                                                                noticed):
    assert strict.stats()
    if not noticed:  # as if the reset arrived just after the check: it shows on send or on reading
        monkeypatch.setattr(transport, "_dropped", lambda sock: False)
    reset_when_idle(portal, how)
    portal.reset_counters()
    assert strict.stats().problems > 0
    assert fake_time.slept == [] and portal.connections == 1 and len(portal.requests) == 1


def test_paging_and_following_survive_resets_between_requests(tls, fake_time):
    with Portal(faults.large_catalogue(benchmarks=2, tasks=250, thread_posts=3)).start() as portal:
        with Client(portal.origin, ssl_context=tls, retries=0, clock=fake_time.clock,
                    sleep=fake_time.sleep) as strict:
            slug = next(bench.slug for bench in strict.benchmarks() if bench.problem_count == 250)
            paged = 0
            for paged, _ in enumerate(strict.tasks(slug), 1):
                if paged % 100 == 0:  # between one page and the next
                    reset_when_idle(portal)
            assert paged == 250
            thread_id = next(strict.threads()).thread_id
            following = strict.follow(thread_id, interval=1, timeout=2).start()
            reset_when_idle(portal)
            assert list(following) == [] and fake_time.slept == [1, 1]


def test_a_publish_on_a_reset_connection_is_one_post(portal, strict, task_id):
    assert strict.stats()
    reset_when_idle(portal)
    assert strict.publish("after a reset", task_id=task_id).created
    assert portal.published == 1


def test_reads_ask_for_gzip_and_get_the_same_objects(portal, client, tls):
    compressed = client.catalog()
    answer = portal.requests[-1]
    assert answer.headers.get("Accept-Encoding") == "gzip"
    with Client(portal.origin, ssl_context=tls) as plain:
        answer = plain._sender.get("/api/v1/catalog", headers={"Accept-Encoding": "identity"})
        assert "Content-Encoding" not in answer.headers
        assert compressed["benchmarks"] == answer.json()["benchmarks"]
    assert portal.requests[0].response_bytes < portal.requests[-1].response_bytes


def test_a_publish_does_not_ask_for_gzip(portal, client, task_id):
    client.publish("plain", task_id=task_id)
    assert "Accept-Encoding" not in portal.requests[-1].headers or \
        portal.requests[-1].headers["Accept-Encoding"] == "identity"


def test_a_gzip_bomb_is_refused_like_an_oversized_answer(run, portal, client):
    portal.gzip_bomb_next(64 * 1024 * 1024, times=2)
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert caught.value.code == "answer_too_large" and "once inflated" in caught.value.message
    done = run("draw.py", "stats")
    assert done.returncode == 1 and "once inflated" in done.stderr and done.stderr.count("\n") == 1


def test_an_answer_inflating_to_exactly_the_limit_is_read(portal, client):
    portal.gzip_bomb_next(transport.MAX_ANSWER_BYTES)
    assert len(client.markdown(TASK)) == transport.MAX_ANSWER_BYTES
    portal.gzip_bomb_next(transport.MAX_ANSWER_BYTES + 1)
    with pytest.raises(ApiError) as caught:
        client.markdown(TASK)
    assert caught.value.code == "answer_too_large" and "once inflated" in caught.value.message


@pytest.fixture
def refusing_proxy(monkeypatch):
    server = Proxy(refuse_connect=403)
    monkeypatch.setenv("https_proxy", server.url)
    yield server
    server.stop()


def test_a_proxy_that_refuses_the_tunnel_is_not_retried(portal, refusing_proxy, tls, fake_time):
    with pytest.raises(TransportError) as caught:
        Client(portal.origin, ssl_context=tls, sleep=fake_time.sleep).stats()
    assert "refused to open a tunnel (403 Forbidden); nothing was sent to the portal" in str(caught.value)
    assert not caught.value.outcome_unknown and fake_time.slept == [] and portal.requests == []


def test_a_proxy_refusal_is_reported_whole_whatever_colons_it_holds(portal, tls, fake_time, monkeypatch):
    # http.client puts its own "Tunnel connection failed:" before the proxy's status line: all
    # after that first colon is the proxy's, and a proxy's reason may hold colons of its own.
    server = Proxy(refuse_connect=403, refuse_reason="Forbidden: blocked by policy: ask IT")
    monkeypatch.setenv("https_proxy", server.url)
    try:
        with pytest.raises(TransportError) as caught:
            Client(portal.origin, ssl_context=tls, sleep=fake_time.sleep).stats()
    finally:
        server.stop()
    assert "refused to open a tunnel (403 Forbidden: blocked by policy: ask IT); nothing was sent" \
        in str(caught.value)


def test_a_post_through_a_refusing_proxy_says_nothing_was_posted(run, portal, task_id, refusing_proxy):
    done = run("post.py", "--task", task_id, "--body", "x",
               env=script_env(portal, https_proxy=refusing_proxy.url))
    assert done.returncode == 3 and "nothing was posted" in done.stderr and "then send it with: " in done.stderr
    assert "may or may not" not in done.stderr and portal.published == 0


def test_a_post_through_an_unreachable_proxy_says_nothing_was_posted(run, portal, task_id):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run("post.py", "--task", task_id, "--body", "x", "--retries", "0",
               env=script_env(portal, https_proxy=f"http://127.0.0.1:{port}"))
    assert done.returncode == 3 and "connection refused by the proxy" in done.stderr
    assert "nothing was posted" in done.stderr and "may or may not" not in done.stderr


class RawServer:
    """A plain-http server on 127.0.0.1 that answers each connection's request with the bytes
    given, then closes it: answers no real server would send, read by the real transport."""

    def __init__(self, answer: bytes):
        import threading

        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.origin = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except socket.timeout:
                continue
            with connection:
                connection.settimeout(5)
                connection.recv(65536)
                connection.sendall(self.answer)

    def close(self):
        self.stopping.set()
        self.thread.join()
        self.listener.close()


@pytest.mark.parametrize("length, outcome", [("abc", "read to the close"), ("-1", "read to the close"),
                                             ("\u0663", "read to the close"), ("22", "cut off"),
                                             ("14", "one answer")])
def test_a_content_length_no_server_would_send(length, outcome, fake_time):
    body = b'{"problems": 1, "x": 2}'[:17] + b"}"
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    server = RawServer(head.encode("utf-8") + body)
    try:
        with Client(server.origin, retries=0, sleep=fake_time.sleep) as client:
            if outcome == "cut off":
                with pytest.raises(TransportError, match="IncompleteRead"):
                    client.markdown("317ef6cc-69a8-59a3-a347-e37d3399eb10")
            elif outcome == "one answer":
                assert client.markdown("317ef6cc-69a8-59a3-a347-e37d3399eb10") == body[:14].decode()
            else:
                assert client.markdown("317ef6cc-69a8-59a3-a347-e37d3399eb10") == body.decode()
    finally:
        server.close()
