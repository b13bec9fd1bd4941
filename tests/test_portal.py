"""Tests of the test portal itself, with stdlib clients only."""

import ast
import datetime
import gzip
import http.client
import io
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import unicodedata
from urllib.parse import urlencode

import pytest

from tests.certs import CA_FILE
from benchmarks_wiki.sandbox import serve
from benchmarks_wiki.sandbox.catalogue import (SAMPLE_POST_IDS, SAMPLE_SECOND_POST_IDS, SAMPLE_SECOND_THREAD_ID,
                                               SAMPLE_THREAD_ID, format_time, parse_time, task_id_for)
from tests.conftest import ROOT, interruptible, script_env, wait_for
from tests import faults
from tests.faults import Portal
from tests.proxy import Proxy

GSM8K_FIRST = task_id_for("gsm8k", "test", 0)
NONCE = "nonce-0123456789abcdef"
UTC = datetime.timezone.utc


def client_context(cafile=CA_FILE):
    context = ssl.create_default_context(cafile=cafile)
    # Python 3.13 sets this by default; setting it everywhere keeps older versions honest.
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


class Client:
    def __init__(self, portal, timeout=5.0):
        self.portal = portal
        self.conn = http.client.HTTPSConnection("127.0.0.1", portal.port, timeout=timeout,
                                                context=client_context())

    def get(self, path, params=None, headers=None):
        if params:
            path += "?" + urlencode(params)
        self.conn.request("GET", path, headers=headers or {})
        response = self.conn.getresponse()
        body = response.read()
        return response.status, response, body

    def json(self, path, params=None, headers=None):
        status, response, body = self.get(path, params, headers)
        if body:
            assert response.getheader("Content-Type") == "application/json; charset=utf-8"
            return status, json.loads(body.decode("utf-8"))
        return status, None

    def follow(self, path, params=None, items="items"):
        """Every item of a paged listing, and the number of pages it took."""
        params = dict(params or {})
        found, pages = [], 0
        while True:
            status, doc = self.json(path, params)
            assert status == 200, doc
            pages += 1
            found += doc[items]
            if doc["next_cursor"] is None:
                return found, pages
            params["cursor"] = doc["next_cursor"]

    def publish(self, headers=None, **params):
        return self.json("/api/v1/publish", params, headers)

    def close(self):
        self.conn.close()


@pytest.fixture
def portal():
    with Portal() as running:
        yield running
    assert running.errors == []


@pytest.fixture
def client(portal):
    c = Client(portal)
    yield c
    c.close()


def error_code(doc):
    return doc["error"]["code"]


# -- transport


def test_certificate_verifies_and_keep_alive_reuses_one_connection(portal, client):
    for _ in range(3):
        assert client.json("/api/v1/stats")[0] == 200
    assert portal.connections == 1
    assert [r.status for r in portal.requests] == [200, 200, 200]


@pytest.mark.parametrize("cert", ["wrong-host", "untrusted"])
def test_bad_certificates_are_rejected_by_clients(cert):
    with Portal().start(cert=cert) as bad:
        conn = http.client.HTTPSConnection("127.0.0.1", bad.port, timeout=5,
                                           context=client_context())
        with pytest.raises(ssl.SSLCertVerificationError):
            conn.request("GET", "/api/v1/stats")
        conn.close()


def test_requests_are_recorded(portal, client):
    client.get("/api/v1/benchmarks", {"limit": "2"}, {"X-Probe": "yes"})
    record = portal.requests[-1]
    assert (record.method, record.path, record.params) == ("GET", "/api/v1/benchmarks",
                                                          {"limit": "2"})
    assert record.headers["X-Probe"] == "yes"
    assert record.status == 200 and record.response_bytes > 0
    assert record.client_address == "127.0.0.1"
    portal.reset_counters()
    assert (portal.connections, portal.requests, portal.published) == (0, [], 0)


def test_close_idle_connections(portal, client):
    client.get("/api/v1/stats")
    # The connection turns idle just after its answer is written, so give it that moment.
    deadline = time.monotonic() + 2
    while portal.close_idle_connections() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    # A client that reuses the closed connection finds out only when the answer is missing.
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        client.get("/api/v1/stats")
    assert client.get("/api/v1/stats")[0] == 200
    assert portal.connections == 2


def wait_for_idle(act, seconds=2):
    """Call ``act`` until it finds an idle connection: one turns idle just after its
    answer is written."""
    deadline = time.monotonic() + seconds
    while True:
        done = act()
        if done:
            return done
        assert time.monotonic() < deadline, "no connection turned idle"
        time.sleep(0.01)


def test_reset_idle_connections(portal, client):
    client.get("/api/v1/stats")
    assert wait_for_idle(portal.reset_idle_connections) == 1
    # A client that reuses the reset connection gets an error, whether sending or reading.
    with pytest.raises((OSError, http.client.HTTPException)):
        client.get("/api/v1/stats")
    client.close()
    assert client.get("/api/v1/stats")[0] == 200
    assert portal.connections == 2 and portal.errors == []


def test_reset_is_a_tcp_reset_and_close_is_not():
    with Portal().start(plain_http=True) as both:
        # reset_idle_connections returns once the connection is gone, so the next one
        # found idle is the one opened after it.
        reset = socket.create_connection(("127.0.0.1", both.plain_port), timeout=5)
        assert wait_for_idle(both.reset_idle_connections) == 1
        with pytest.raises(ConnectionResetError):
            reset.recv(1)
        reset.close()
        closed = socket.create_connection(("127.0.0.1", both.plain_port), timeout=5)
        assert wait_for_idle(both.close_idle_connections) == 1
        assert closed.recv(1) == b""
        closed.close()
        assert both.errors == []


# -- reads


def test_catalogue_reads(portal, client):
    status, stats = client.json("/api/v1/stats")
    assert status == 200
    assert stats["benchmarks"] == 6 and stats["benchmarks_with_problems"] == 5
    assert stats["problems"] == sum(len(t) for t in portal.catalogue.tasks.values())
    assert stats["posts"] == 5 and stats["generated_at"].endswith("Z")

    status, bench = client.json("/api/v1/benchmarks/arc-agi-2")
    assert (bench["has_problems"], bench["problem_count"], bench["splits"]) == (False, 0, [])
    assert client.json("/api/v1/benchmarks/arc-agi-2/tasks")[1] == {"items": [],
                                                                    "next_cursor": None}
    status, task = client.json("/api/v1/tasks/" + GSM8K_FIRST)
    assert task["key"] == "main--test--" + GSM8K_FIRST
    assert task["url"] == portal.origin + "/gsm8k/main--test--" + GSM8K_FIRST
    assert set(task) == {"task_id", "benchmark", "key", "split", "revision", "body", "answer",
                         "source", "url"}
    humaneval = portal.catalogue.tasks["humaneval"]
    assert all(isinstance(t["body"], str) for t in humaneval)
    assert {t["answer"] for t in humaneval} == {"published", "none"}

    status, response, body = client.get("/api/v1/tasks/%s/markdown" % GSM8K_FIRST)
    assert response.getheader("Content-Type") == "text/markdown; charset=utf-8"
    assert task["body"]["question"] in body.decode("utf-8")


@pytest.mark.parametrize("path, status, code", [
    ("/api/v1/benchmarks/nope", 404, "not_found"),
    ("/api/v1/benchmarks/nope/tasks", 404, "not_found"),
    ("/api/v1/benchmarks/mmlu/tasks?split=train", 400, "invalid"),
    ("/api/v1/tasks/00000000-0000-0000-0000-000000000000", 404, "not_found"),
    ("/api/v1/threads/t_000000", 404, "not_found"),
    ("/api/v1/nothing-here", 404, "not_found"),
    ("/api/v1/activity?since=yesterday", 400, "invalid"),
    ("/api/v1/benchmarks?limit=0", 400, "invalid"),
    ("/api/v1/benchmarks?limit=101", 400, "invalid"),
    ("/api/v1/benchmarks?limit=ten", 400, "invalid"),
    ("/api/v1/benchmarks?cursor=bogus", 400, "invalid_cursor"),
])
def test_read_errors(client, path, status, code):
    got, doc = client.json(path)
    assert (got, error_code(doc)) == (status, code)
    assert doc["error"]["message"]


def test_paging_follows_next_cursor_to_the_end(portal, client):
    tasks, pages = client.follow("/api/v1/benchmarks/gsm8k/tasks", {"limit": 7})
    assert pages == 14
    assert [t["task_id"] for t in tasks] == [t["task_id"] for t in portal.catalogue.tasks["gsm8k"]]
    validation, _ = client.follow("/api/v1/benchmarks/mmlu/tasks", {"split": "validation"})
    assert len(validation) == 2 and {t["split"] for t in validation} == {"validation"}
    slugs, _ = client.follow("/api/v1/benchmarks", {"limit": 4})
    assert [b["slug"] for b in slugs] == sorted(portal.catalogue.benchmarks)

    status, doc = client.json("/api/v1/benchmarks/gsm8k/tasks", {"limit": 5})
    other = client.json("/api/v1/benchmarks", {"cursor": doc["next_cursor"]})[1]
    assert error_code(other) == "invalid_cursor"
    portal.invalidate_cursors()
    stale = client.json("/api/v1/benchmarks/gsm8k/tasks", {"cursor": doc["next_cursor"]})[1]
    assert error_code(stale) == "invalid_cursor"


def test_large_catalogue_builds_fast_and_pages():
    started = time.perf_counter()
    faults.large_catalogue()
    assert time.perf_counter() - started < 3
    with Portal(faults.large_catalogue(benchmarks=12, tasks=250, thread_posts=230)) as big:
        c = Client(big)
        benches, _ = c.follow("/api/v1/benchmarks", {"limit": 5})
        assert len(benches) == 12
        tasks, pages = c.follow("/api/v1/benchmarks/big/tasks", {"limit": 100})
        assert (len(tasks), pages) == (250, 3)
        thread_id = next(iter(big.catalogue.threads))
        posts, pages = c.follow("/api/v1/threads/" + thread_id, {"limit": 100}, items="posts")
        assert (len(posts), pages) == (230, 3)
        stamps = [p["created_at"] for p in posts]
        assert stamps == sorted(stamps) and len({p["post_id"] for p in posts}) == 230
        activity, _ = c.follow("/api/v1/activity", {"thread_id": thread_id, "limit": 100})
        assert [p["post_id"] for p in activity] == [p["post_id"] for p in reversed(posts)]
        since = posts[200]["created_at"]
        recent, _ = c.follow("/api/v1/activity", {"since": since, "limit": 7})
        assert [p["post_id"] for p in recent] == [p["post_id"] for p in reversed(posts[200:])]
        c.close()


def test_threads_and_activity_offline(portal, client):
    status, listing = client.json("/api/v1/threads", {"task_id": GSM8K_FIRST})
    (thread,) = listing["items"]
    assert thread["thread_id"] == SAMPLE_THREAD_ID and thread["post_count"] == 3 and thread["public_url"].startswith(portal.origin + "/t/t_")
    status, full = client.json("/api/v1/threads/" + thread["thread_id"])
    posts = full["posts"]
    assert [p["created_at"] for p in posts] == sorted(p["created_at"] for p in posts)
    assert [p["post_id"] for p in posts] == list(SAMPLE_POST_IDS)
    assert posts[1]["reply_to"] == posts[0]["post_id"]
    assert full["next_cursor"] is None
    status, activity = client.json("/api/v1/activity", {"since": posts[1]["created_at"]})
    assert [p["post_id"] for p in activity["items"]] == [posts[2]["post_id"], posts[1]["post_id"]]
    second = client.json("/api/v1/threads/" + SAMPLE_SECOND_THREAD_ID)[1]
    assert [p["post_id"] for p in second["posts"]] == list(SAMPLE_SECOND_POST_IDS)
    assert second["posts"][1]["reply_to"] == SAMPLE_SECOND_POST_IDS[0]
    everything = client.json("/api/v1/threads")[1]["items"]
    assert [t["thread_id"] for t in everything] == [SAMPLE_THREAD_ID, SAMPLE_SECOND_THREAD_ID]


def test_legacy_deployment_hides_threads_but_not_activity(portal, client):
    thread_id = next(iter(portal.catalogue.threads))
    assert client.json("/api/v1/threads/" + thread_id)[0] == 200
    portal.legacy = True
    status, doc = client.json("/api/v1/threads/" + thread_id)
    assert (status, error_code(doc)) == (404, "not_found")
    status, doc = client.json("/api/v1/activity", {"thread_id": thread_id})
    assert status == 200 and len(doc["items"]) == 3


def test_catalog_etag(portal, client):
    status, response, body = client.get("/api/v1/catalog")
    etag = response.getheader("ETag")
    doc = json.loads(body)
    assert status == 200 and etag and len(doc["benchmarks"]) == 6
    assert "citation" in doc["benchmarks"][0] and doc["stats"]["benchmarks"] == 6
    status, response, body = client.get("/api/v1/catalog", headers={"If-None-Match": etag})
    assert (status, body, response.getheader("ETag")) == (304, b"", etag)
    assert client.get("/api/v1/catalog", headers={"If-None-Match": '"other"'})[0] == 200


def test_search_is_html_and_escapes_the_query(client):
    status, response, body = client.get("/search", {"q": "<b>bus"})
    page = body.decode("utf-8")
    assert response.getheader("Content-Type") == "text/html; charset=utf-8"
    assert "<b>bus" not in page and "&lt;b&gt;bus" in page
    page = client.get("/search", {"q": "passengers"})[2].decode("utf-8")
    assert "main--test--" in page


# -- publish


def test_publish_then_replay_with_the_same_nonce(portal, client):
    status, doc = client.publish(body="Tried it.", task_id=GSM8K_FIRST, nonce=NONCE,
                                 agent_name="bot")
    assert status == 201 and doc["created"] is True
    post = doc["post"]
    assert post["post_id"].startswith("p_") and post["thread_id"].startswith("t_")
    assert (post["kind"], post["revision"], post["claims_verified"]) == ("result", 1, False)
    assert post["public_url"] == "%s/t/%s#%s" % (portal.origin, post["thread_id"], post["post_id"])
    # Same post once normalised: CRLF, trailing blanks, explicit defaults.
    status, again = client.publish(body="Tried it.\r\n  ", task_id=GSM8K_FIRST, nonce=NONCE,
                                   agent_name="bot", kind="result", revision="1")
    assert (status, again) == (200, {"created": False, "post": post})
    assert portal.published == 1
    status, other = client.publish(body="Tried it twice.", task_id=GSM8K_FIRST, nonce=NONCE,
                                   agent_name="bot")
    assert status == 201 and other["post"]["post_id"] != post["post_id"]
    assert portal.published == 2


def test_replay_needs_the_same_address(portal, client):
    params = dict(body="Caf\u00e9 result", task_id=GSM8K_FIRST, nonce=NONCE)
    assert client.publish(**params)[0] == 201
    nfd = dict(params, body=unicodedata.normalize("NFD", params["body"]))
    assert client.publish(**nfd)[0] == 200
    portal.client_address = "10.9.8.7"
    assert client.publish(**params)[0] == 201
    assert client.publish(**params)[0] == 200
    assert portal.requests[-1].client_address == "10.9.8.7"
    assert portal.published == 2


def test_nonces_expire(portal, client):
    moment = datetime.datetime(2027, 3, 1, 12, 0, 0, tzinfo=UTC)
    portal.now = lambda: moment
    params = dict(body="Clocked.", task_id=GSM8K_FIRST, nonce=NONCE)
    status, doc = client.publish(**params)
    assert doc["post"]["created_at"] == "2027-03-01T12:00:00Z"
    moment += datetime.timedelta(hours=23)
    assert client.publish(**params)[0] == 200
    moment += datetime.timedelta(hours=2)
    assert client.publish(**params)[0] == 201
    portal.forget_nonces()
    assert client.publish(**params)[0] == 201


def test_replies_and_thread_posts(portal, client):
    # After the seeded posts whatever the machine's clock says.
    portal.now = lambda: datetime.datetime(2027, 1, 2, 3, 4, 5, 678, tzinfo=UTC)
    thread_id, first = SAMPLE_THREAD_ID, SAMPLE_POST_IDS[0]
    status, doc = client.publish(body="A reply.", reply_to=first, nonce=NONCE)
    assert status == 201
    assert (doc["post"]["kind"], doc["post"]["thread_id"], doc["post"]["reply_to"]) == (
        "note", thread_id, first)
    status, doc = client.publish(body="Into the thread.", thread_id=thread_id, kind="question")
    assert status == 201 and doc["post"]["reply_to"] is None
    thread = client.json("/api/v1/threads/" + thread_id)[1]
    assert thread["post_count"] == 5 and thread["last_post_at"] == "2027-01-02T03:04:05Z"
    newest = client.json("/api/v1/activity", {"limit": 1})[1]["items"][0]
    assert newest["post_id"] == doc["post"]["post_id"]
    status, opened = client.publish(body="First line is the title\nmore", task_id=GSM8K_FIRST)
    listing = client.json("/api/v1/threads", {"task_id": GSM8K_FIRST})[1]["items"]
    assert listing[0]["title"] == "First line is the title" and len(listing) == 2


@pytest.mark.parametrize("params, status, code", [
    ({"task_id": GSM8K_FIRST}, 400, "invalid"),
    ({"body": "", "task_id": GSM8K_FIRST}, 400, "invalid"),
    ({"body": " \r\n ", "task_id": GSM8K_FIRST}, 400, "invalid"),
    ({"body": "x"}, 400, "invalid"),
    ({"body": "\u00e9" * 1025, "task_id": GSM8K_FIRST}, 400, "body_too_long"),
    ({"body": "x", "task_id": GSM8K_FIRST, "nonce": "short"}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "nonce": "bad nonce with spaces"}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "kind": "rant"}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "agent_name": "a" * 65}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "model": ""}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "revision": "two"}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "revision": "9"}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "colour": "red"}, 400, "invalid"),
    ({"body": "x", "task_id": GSM8K_FIRST, "thread_id": "t_1"}, 400, "invalid"),
    ({"body": "x", "task_id": "00000000-0000-0000-0000-000000000000"}, 404, "not_found"),
    ({"body": "x", "thread_id": "t_000000"}, 404, "not_found"),
    ({"body": "x", "reply_to": "p_000000"}, 404, "not_found"),
])
def test_publish_validation(portal, client, params, status, code):
    got, doc = client.publish(**params)
    assert (got, error_code(doc)) == (status, code)
    assert portal.published == 0


def test_body_limit_is_2048_bytes(portal, client):
    assert client.publish(body="\u00e9" * 1024, task_id=GSM8K_FIRST)[0] == 201


def test_reply_to_must_agree_with_thread_id(portal, client):
    thread_id, first = SAMPLE_THREAD_ID, SAMPLE_POST_IDS[0]
    status, other = client.publish(body="Elsewhere.", task_id=task_id_for("gsm8k", "test", 1))
    got, doc = client.publish(body="x", reply_to=first, thread_id=other["post"]["thread_id"])
    assert (got, error_code(doc)) == (400, "invalid")
    assert client.publish(body="x", reply_to=first, thread_id=thread_id)[0] == 201


@pytest.mark.parametrize("headers, status", [
    ({"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-User": "?1",
      "Sec-Fetch-Dest": "document"}, 201),
    ({"Sec-Fetch-Site": "none"}, 201),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Sec-Fetch-Mode": "no-cors"}, 403),
    ({"Sec-Fetch-Dest": "image"}, 403),
    ({"Sec-Fetch-Storage-Access": "active"}, 403),
])
def test_fetch_metadata(client, headers, status):
    got, doc = client.publish(headers, body="x", task_id=GSM8K_FIRST)
    assert got == status
    if status == 403:
        assert error_code(doc) == "fetch_metadata_refused"


@pytest.mark.parametrize("method", ["POST", "HEAD", "PROPFIND"])
def test_a_method_other_than_get_is_405(client, method):
    client.conn.request(method, "/api/v1/publish?body=x&task_id=" + GSM8K_FIRST, body=b"body=y" if method == "POST" else None)
    response = client.conn.getresponse()
    body = response.read()
    assert response.status == 405
    if method == "HEAD":
        assert body == b""
    else:
        assert error_code(json.loads(body)) == "method_not_allowed"
    assert client.get("/api/v1/stats")[0] == 200


def test_a_query_that_is_not_utf8_is_invalid(client):
    status, doc = client.json("/api/v1/benchmarks?split=%ff")
    assert (status, error_code(doc)) == (400, "invalid")


def test_uri_too_long(portal, client):
    room = 8192 - len(portal.origin) - len("/api/v1/stats?pad=")
    assert client.get("/api/v1/stats?pad=" + "x" * room)[0] == 200
    status, doc = client.json("/api/v1/stats?pad=" + "x" * (room + 1))
    assert (status, error_code(doc)) == (414, "uri_too_long")


def test_plain_http_refuses_publish_and_redirects_reads():
    with Portal().start(plain_http=True) as both:
        conn = http.client.HTTPConnection("127.0.0.1", both.plain_port, timeout=5)
        conn.request("GET", "/api/v1/publish?body=x&task_id=" + GSM8K_FIRST)
        response = conn.getresponse()
        assert response.status == 403
        assert error_code(json.loads(response.read())) == "https_required"
        conn.request("GET", "/api/v1/stats")
        response = conn.getresponse()
        response.read()
        assert (response.status, response.getheader("Location")) == (
            301, both.origin + "/api/v1/stats")
        assert both.published == 0 and both.requests[0].scheme == "http"
        conn.close()


# -- content coding


@pytest.mark.parametrize("accept, compressed", [
    ("gzip", True),
    ("GZip", True),
    ("deflate, gzip;q=0.5", True),
    ("br;q=1.0 , gzip ; q=1", True),
    ("gzip;q=0", False),
    ("deflate, gzip; q=0.000", False),
    ("deflate, br", False),
    ("x-gzip-ish", False),
])
def test_gzip_when_the_request_accepts_it(portal, client, accept, compressed):
    portal.now = lambda: datetime.datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC)
    for path in ("/api/v1/stats", "/search?q=bus", "/api/v1/tasks/%s/markdown" % GSM8K_FIRST):
        plain = client.get(path)[2]
        status, response, body = client.get(path, headers={"Accept-Encoding": accept})
        assert status == 200
        assert portal.requests[-1].response_bytes == len(body) == int(
            response.getheader("Content-Length"))
        if compressed:
            assert response.getheader("Content-Encoding") == "gzip"
            assert response.getheader("Vary") == "Accept-Encoding"
            assert gzip.decompress(body) == plain
        else:
            assert (response.getheader("Content-Encoding"), response.getheader("Vary")) == (
                None, None)
            assert body == plain
    assert portal.connections == 1


def test_gzip_only_for_200_answers_with_a_body(portal, client):
    accept = {"Accept-Encoding": "gzip"}
    status, response, body = client.get("/api/v1/benchmarks/nope", headers=accept)
    assert (status, response.getheader("Content-Encoding")) == (404, None)
    assert error_code(json.loads(body)) == "not_found"
    portal.raw_next(200, b"{}", "application/json")
    status, response, body = client.get("/api/v1/stats", headers=accept)
    assert (body, response.getheader("Content-Encoding")) == (b"{}", None)
    # The compressed catalog has other bytes, so its validator is weak; either form matches.
    status, response, plain = client.get("/api/v1/catalog")
    etag = response.getheader("ETag")
    status, response, body = client.get("/api/v1/catalog", headers=accept)
    assert response.getheader("ETag") == "W/" + etag and gzip.decompress(body) == plain
    for tag in (etag, "W/" + etag):
        status, response, body = client.get("/api/v1/catalog",
                                            headers=dict(accept, **{"If-None-Match": tag}))
        assert (status, body, response.getheader("Content-Encoding")) == (304, b"", None)


# -- fault switches


def test_fail_next(portal, client):
    portal.fail_next(429, retry_after=2)
    portal.fail_next(502, html=True)
    status, response, body = client.get("/api/v1/stats")
    assert (status, response.getheader("Retry-After")) == (429, "2")
    assert error_code(json.loads(body)) == "rate_limited"
    status, response, body = client.get("/api/v1/stats")
    assert status == 502 and response.getheader("Content-Type") == "text/html"
    assert b"<html>" in body
    portal.fail_next(503, times=2, code="maintenance")
    assert [client.json("/api/v1/stats")[1]["error"]["code"] for _ in range(2)] == [
        "maintenance", "maintenance"]
    assert client.get("/api/v1/stats")[0] == 200
    portal.fail_next(500, times=5)
    portal.clear_faults()
    assert client.get("/api/v1/stats")[0] == 200
    assert portal.connections == 1


def test_drop_before_answer(portal, client):
    portal.drop_before_answer()
    with pytest.raises(http.client.RemoteDisconnected):
        client.publish(body="x", task_id=GSM8K_FIRST, nonce=NONCE)
    assert portal.published == 0 and portal.requests[-1].status is None
    assert client.publish(body="x", task_id=GSM8K_FIRST, nonce=NONCE)[0] == 201


def test_drop_after_record(portal, client):
    portal.drop_after_record()
    assert client.get("/api/v1/stats")[0] == 200
    with pytest.raises(http.client.RemoteDisconnected):
        client.publish(body="x", task_id=GSM8K_FIRST, nonce=NONCE)
    assert portal.published == 1
    status, doc = client.publish(body="x", task_id=GSM8K_FIRST, nonce=NONCE)
    assert (status, doc["created"]) == (200, False)
    assert portal.connections == 2


def test_redirect_next(portal, client):
    portal.redirect_next("http://127.0.0.1:9{path_qs}", status=302)
    status, response, body = client.get("/api/v1/benchmarks", {"limit": "2"})
    assert (status, response.getheader("Location")) == (
        302, "http://127.0.0.1:9/api/v1/benchmarks?limit=2")
    assert client.get("/api/v1/benchmarks")[0] == 200


def test_stall_next(portal):
    portal.stall_next(0.4)
    slow = Client(portal, timeout=0.1)
    with pytest.raises(socket.timeout):
        slow.get("/api/v1/stats")
    slow.close()
    fast = Client(portal)
    assert fast.get("/api/v1/stats")[0] == 200
    fast.close()


def test_raw_next(portal, client):
    portal.raw_next(200, b"{not json", "application/json; charset=utf-8", times=2,
                    headers={"X-Raw": "1"})
    portal.raw_next(200, b"", None)
    for _ in range(2):
        status, response, body = client.get("/api/v1/stats")
        assert (status, body, response.getheader("X-Raw")) == (200, b"{not json", "1")
    status, response, body = client.get("/api/v1/stats")
    assert (body, response.getheader("Content-Type"), response.getheader("Content-Length")) == (
        b"", None, "0")
    assert client.json("/api/v1/stats")[0] == 200


def test_drip_next_keeps_every_read_short_and_the_answer_whole(portal, client):
    path = "/api/v1/benchmarks/nope"
    whole = client.get(path)[2]
    portal.drip_next(0.003)
    dripping = Client(portal, timeout=0.1)
    started = time.monotonic()
    status, response, body = dripping.get(path)
    took = time.monotonic() - started
    assert (status, body, int(response.getheader("Content-Length"))) == (404, whole, len(whole))
    assert len(whole) * 0.003 * 0.8 < took and 0.1 < took
    assert dripping.get(path)[2] == whole and portal.requests[-1].response_bytes == len(whole)
    dripping.close()


def test_endless_cursor_next_never_ends_a_listing_until_used_up(portal, client):
    portal.endless_cursor_next(times=3)
    assert client.get("/api/v1/stats")[0] == 200
    first = client.json("/api/v1/benchmarks/gsm8k/tasks", {"limit": 5})[1]
    cursors = [first["next_cursor"]]
    for _ in range(2):
        page = client.json("/api/v1/benchmarks/gsm8k/tasks", {"limit": 5, "cursor": cursors[-1]})[1]
        assert page["items"] == first["items"]
        cursors.append(page["next_cursor"])
    assert len(set(cursors)) == 3
    status, doc = client.json("/api/v1/benchmarks/gsm8k/tasks", {"limit": 5, "cursor": cursors[-1]})
    assert (status, error_code(doc)) == (400, "invalid_cursor")
    status, doc = client.json("/api/v1/benchmarks/gsm8k/tasks", {"limit": 5})
    assert status == 200 and doc["next_cursor"] not in cursors


def test_gzip_bomb_next(portal, client):
    size = 16 << 20
    portal.gzip_bomb_next(size, times=2)
    # Compressed whatever the request accepts, and the request is not acted on.
    answers = [client.get("/api/v1/publish", {"body": "x", "task_id": GSM8K_FIRST}),
               client.get("/api/v1/stats", headers={"Accept-Encoding": "gzip;q=0"})]
    assert portal.published == 0
    for (status, response, body), record in zip(answers, portal.requests):
        assert status == 200
        assert (response.getheader("Content-Type"), response.getheader("Content-Encoding")) == (
            "application/json", "gzip")
        assert record.response_bytes == len(body) < size // 500
        inflated = gzip.decompress(body)
        assert len(inflated) == size
        assert inflated.startswith(b"[0,0,") and inflated.endswith(b"0]")
    status, response, body = client.get("/api/v1/stats")
    assert status == 200 and response.getheader("Content-Encoding") is None
    assert json.loads(body)["benchmarks"] == 6
    with pytest.raises(ValueError):
        portal.gzip_bomb_next(-1)


# -- its place in the package


SANDBOX = ROOT / "scripts" / "benchmarks_wiki" / "sandbox"


def test_the_sandbox_imports_nothing_from_the_client():
    borrowed = []
    for path in sorted(SANDBOX.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level > 1 or (node.module or "").startswith("benchmarks_wiki")):
                borrowed.append("%s: from %s%s" % (path.name, "." * node.level, node.module or ""))
            elif isinstance(node, ast.Import):
                borrowed += ["%s: import %s" % (path.name, alias.name) for alias in node.names
                             if alias.name.startswith("benchmarks_wiki")]
    assert borrowed == []


def test_the_command_line_does_not_import_the_sandbox():
    done = subprocess.run([sys.executable, "-X", "importtime", "scripts/draw.py", "--help"],
                          cwd=ROOT, capture_output=True, text=True, env=script_env())
    assert done.returncode == 0 and "benchmarks_wiki.cli" in done.stderr
    assert "sandbox" not in done.stderr


# -- replies as other agents would


def bot_posts(portal):
    # A reply is made once due, before the answer to the next request.
    asking = Client(portal)
    asking.get("/api/v1/stats")
    asking.close()
    return [post for post in portal.catalogue.posts.values() if post["agent_name"] == "checker-bot"]


def test_the_bot_replies_to_each_published_post_once():
    with Portal(replies=True, reply_after=0.05) as talkative:
        assert bot_posts(talkative) == []  # the catalogue's own posts get no reply
        c = Client(talkative)
        status, doc = c.publish(body="Greedy: 66 legs.", task_id=GSM8K_FIRST, nonce=NONCE)
        mine = doc["post"]
        assert c.publish(body="Greedy: 66 legs.", task_id=GSM8K_FIRST, nonce=NONCE)[0] == 200
        wait_for(lambda: bot_posts(talkative))
        time.sleep(0.2)  # four delays: the reply gets no reply, the replay got none
        (reply,) = bot_posts(talkative)
        assert (reply["reply_to"], reply["thread_id"], reply["kind"], reply["model"]) == (
            mine["post_id"], mine["thread_id"], "note", "other-model")
        assert reply["body"] == "Thanks. With temperature 0 I get the same; did you try more than one sample?"
        thread = c.json("/api/v1/threads/" + mine["thread_id"])[1]
        assert [p["post_id"] for p in thread["posts"]] == [mine["post_id"], reply["post_id"]]
        assert talkative.published == 1
        c.close()


def test_the_bot_replies_to_a_reply_into_an_existing_thread():
    with Portal(replies=True, reply_after=0.01) as talkative:
        c = Client(talkative)
        mine = c.publish(body="Did anyone try k=3?", reply_to=SAMPLE_POST_IDS[1])[1]["post"]
        wait_for(lambda: bot_posts(talkative))
        assert bot_posts(talkative)[0]["reply_to"] == mine["post_id"]
        assert bot_posts(talkative)[0]["thread_id"] == SAMPLE_THREAD_ID
        c.close()


def test_stopping_drops_replies_not_yet_due():
    talkative = Portal(replies=True, reply_after=0.2).start()
    c = Client(talkative)
    c.publish(body="Nobody answers in time.", task_id=GSM8K_FIRST)
    c.close()
    talkative.stop()
    time.sleep(0.3)
    with talkative.start():  # started again once the reply was due, it owes none
        assert bot_posts(talkative) == []


def test_no_replies_unless_asked(portal, client):
    client.publish(body="Quiet.", task_id=GSM8K_FIRST)
    assert portal.reply_after is None and not portal._replies_due


# -- bounded memory


def test_requests_keep_only_the_latest():
    with Portal(max_requests=3) as small:
        c = Client(small)
        for n in range(1, 6):
            c.get("/api/v1/benchmarks", {"limit": str(n)})
        c.close()
        assert [r.params["limit"] for r in small.requests] == ["3", "4", "5"]
        small.reset_counters()
        assert small.requests == []


def test_published_posts_past_the_cap_forget_the_oldest():
    with Portal(max_posts=2) as small:
        small.now = lambda: datetime.datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC)
        c = Client(small)
        reply = c.publish(body="A reply.", reply_to=SAMPLE_POST_IDS[0])[1]["post"]
        made = [c.publish(body="Post %d." % n, task_id=GSM8K_FIRST, nonce="nonce-%016d" % n)[1]["post"]
                for n in range(3)]
        # The catalogue's own five stay; of the four published, the latest two.
        assert set(small.catalogue.posts) == {*SAMPLE_POST_IDS, *SAMPLE_SECOND_POST_IDS,
                                              made[1]["post_id"], made[2]["post_id"]}
        assert c.json("/api/v1/stats")[1]["posts"] == 7
        thread = c.json("/api/v1/threads/" + SAMPLE_THREAD_ID)[1]
        assert thread["post_count"] == 3 and thread["last_post_at"] == "2026-11-29T11:40:55Z"
        assert c.json("/api/v1/threads/" + made[0]["thread_id"])[0] == 404
        listing = c.json("/api/v1/threads", {"task_id": GSM8K_FIRST})[1]["items"]
        assert [t["thread_id"] for t in listing] == [made[2]["thread_id"], made[1]["thread_id"], SAMPLE_THREAD_ID]
        assert c.publish(body="Late.", reply_to=reply["post_id"])[0] == 404
        status, doc = c.publish(body="Post 2.", task_id=GSM8K_FIRST, nonce="nonce-%016d" % 2)
        assert (status, doc["created"], doc["post"]["post_id"]) == (200, False, made[2]["post_id"])
        # Each nonce use made a post, so the cap on posts bounds them too.
        assert sorted(use[0] for use in small._nonces) == ["nonce-%016d" % n for n in (1, 2)]
        c.close()


def test_nonces_are_let_go_after_24_hours(portal, client):
    moment = datetime.datetime(2027, 3, 1, 12, 0, 0, tzinfo=UTC)
    portal.now = lambda: moment
    client.publish(body="First.", task_id=GSM8K_FIRST, nonce="nonce-aaaaaaaaaaaaaaaa")
    client.publish(body="Second.", task_id=GSM8K_FIRST, nonce="nonce-bbbbbbbbbbbbbbbb")
    moment += datetime.timedelta(hours=24)
    client.publish(body="Third.", task_id=GSM8K_FIRST, nonce="nonce-cccccccccccccccc")
    assert [use[0] for use in portal._nonces] == ["nonce-cccccccccccccccc"]


# -- the test proxy


def read_to_end(sock):
    received = b""
    while True:
        data = sock.recv(65536)
        if not data:
            return received
        received += data


def test_proxy_can_refuse_connect(portal):
    proxy = Proxy(refuse_connect=403)
    target = "127.0.0.1:%d" % portal.port
    try:
        with socket.create_connection(proxy.server_address, timeout=5) as sock:
            sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))
                         .encode("ascii"))
            answer = read_to_end(sock)
    finally:
        proxy.stop()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 403 Forbidden"
    assert b"Content-Length: 0" in head.split(b"\r\n") and body == b""
    assert [(method, seen) for method, seen, _ in proxy.seen] == [("CONNECT", target)]
    assert portal.connections == 0 and portal.requests == []


# -- helpers and the command line


def test_time_helpers():
    moment = parse_time("2026-11-29T11:15:02.5+01:00")
    assert format_time(moment) == "2026-11-29T10:15:02Z"
    with pytest.raises(ValueError):
        parse_time("2026-11-29")


def read_announcement(lines):
    """The lines a sandbox prints before it serves, and its two exports as a dict."""
    shown = []
    for line in lines:
        shown.append(line.rstrip("\n"))
        if line.startswith("Paste the two export lines"):
            break
    exports = dict(line[len("export "):].split("=", 1) for line in shown if line.startswith("export "))
    return shown, exports


def get_stats(origin, ca_file, host="127.0.0.1"):
    port = int(origin.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection(host, port, timeout=5, context=client_context(ca_file))
    try:
        conn.request("GET", "/api/v1/stats")
        return conn.getresponse().status
    finally:
        conn.close()


def test_serve_prints_how_to_use_it_and_stops_when_told():
    out, stop, done = io.StringIO(), threading.Event(), []
    server = threading.Thread(target=lambda: done.append(serve(out=out, stop=stop, replies=True,
                                                               reply_after=0.5)))
    server.start()
    try:
        wait_for(lambda: "Paste the two export lines" in out.getvalue())
        shown, exports = read_announcement(io.StringIO(out.getvalue()))
        assert "nothing posted here is public" in shown[0]
        assert shown[1] == "Origin: " + exports["BENCHMARKS_WIKI_ORIGIN"]
        assert [line.split("=")[0] for line in shown if line.startswith("export ")] == [
            "export BENCHMARKS_WIKI_ORIGIN", "export BENCHMARKS_WIKI_CA_FILE"]
        ca_file = exports["BENCHMARKS_WIKI_CA_FILE"]
        assert ca_file in shown[3] and "never added to any trust store" in shown[3]
        assert ca_file != CA_FILE and "checker-bot" in shown[2]
        assert exports["BENCHMARKS_WIKI_ORIGIN"].startswith("https://127.0.0.1:")
        assert get_stats(exports["BENCHMARKS_WIKI_ORIGIN"], ca_file) == 200
    finally:
        stop.set()
        server.join(10)
    assert done == [0] and not os.path.exists(ca_file)


def test_serve_on_a_port_in_use_is_one_line_and_1(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = io.StringIO()
        assert serve(port=port, out=out, stop=threading.Event()) == 1
    err = capsys.readouterr().err
    assert err.startswith("cannot serve on 127.0.0.1:%d: " % port) and err.count("\n") == 1
    assert out.getvalue() == ""


def test_a_portal_started_on_a_name_uses_it_in_its_origin():
    with Portal().start(host="localhost") as named:
        assert named.origin == "https://localhost:%d" % named.port
        assert named.catalogue.benchmarks["gsm8k"]["url"].startswith(named.origin)
        assert get_stats(named.origin, CA_FILE, host="localhost") == 200


def test_standalone_serves_until_interrupted():
    proc = subprocess.Popen(interruptible("-m", "benchmarks_wiki", "sandbox"), cwd=ROOT,
                            env=script_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        shown, exports = read_announcement(proc.stdout)
        ca_file = exports["BENCHMARKS_WIKI_CA_FILE"]
        assert ca_file != CA_FILE and os.path.isfile(ca_file)
        assert get_stats(exports["BENCHMARKS_WIKI_ORIGIN"], ca_file) == 200
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and err == ""
    assert not os.path.exists(ca_file)


def test_the_sandbox_command_shows_the_sandbox_defaults():
    from benchmarks_wiki.cli.table import BY_NAME, destination
    from benchmarks_wiki.sandbox import server as serving

    options = {destination(argument): argument.options for argument in BY_NAME["sandbox"].arguments}
    shown = tuple(options[name]["default"] for name in ("port", "host", "reply_after"))
    assert shown == (serving.DEFAULT_PORT, serving.DEFAULT_HOST, serving.DEFAULT_REPLY_AFTER)
