import pytest

from benchmarks_wiki import ApiError, Client, TransportError, ValidationError
from benchmarks_wiki.transport import HTTPTransport, Request, Response, parse_origin
from tests.certs import CA_FILE
from tests.test_connections import RawServer

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"


def a_task(client):
    return next(client.tasks("gsm8k")).task_id


def test_http_origin_cannot_publish(portal):
    client = Client(portal.origin.replace("https://", "http://"))
    with pytest.raises(ValidationError, match="HTTPS"):
        client.publish("text", task_id=TASK)
    assert portal.connections == 0


def test_body_limit_is_checked_before_sending(client, portal):
    with pytest.raises(ValidationError) as caught:
        client.publish("é" * 1024 + "x", task_id=TASK)
    assert "2049 bytes" in str(caught.value) and "2048" in str(caught.value)
    assert portal.requests == []
    task_id = a_task(client)
    assert client.publish("é" * 1024, task_id=task_id).created


def _url_of_size(client, size):
    """A publish URL of exactly ``size`` bytes, with every field within its own limit."""
    emoji = "\U0001F600"
    base = dict(body=emoji * 512, task_id=TASK, agent_name=emoji * 64, model=emoji * 64, nonce="n" * 16)
    length = len(client.prepare(run_label="a", **base).url) - 1
    missing = size - length
    wide, narrow = divmod(missing, 12)
    assert 1 <= wide + narrow <= 64
    return dict(base, run_label=emoji * wide + "a" * narrow)


def test_url_limit_is_checked_before_sending(client, portal):
    at_limit = _url_of_size(client, 8192)
    assert len(client.prepare(**at_limit).url) == 8192
    over = _url_of_size(client, 8193)
    with pytest.raises(ValidationError) as caught:
        client.publish(**over)
    assert "8193 bytes" in str(caught.value)
    assert portal.requests == []


@pytest.mark.parametrize("name", ["Sec-Fetch-Mode", "sec-fetch-site", " SEC-FETCH-DEST ", "Cookie",
                                  "Authorization"])
def test_browser_and_credential_headers_are_refused(portal, name):
    with pytest.raises(ValidationError):
        Client(portal.origin, headers={name: "x"})
    assert portal.connections == 0


def test_extra_headers_are_sent_and_no_sec_fetch_ever(portal, tls):
    with Client(portal.origin, headers={"X-Run": "7"}, ssl_context=tls) as client:
        client.stats()
    headers = {key.lower(): value for key, value in portal.requests[-1].headers.items()}
    assert headers["x-run"] == "7" and "benchmarks-wiki/" in headers["user-agent"]
    assert not any(key.startswith("sec-fetch-") or key in ("cookie", "authorization") for key in headers)


@pytest.mark.parametrize("origin", ["benchmarks.wiki", "ftp://x.org", "https://user:pw@x.org",
                                    "https://x.org/api", "https://x.org?q=1", "https://x.org#top",
                                    "https://x.org:notaport", "https://"])
def test_origin_must_be_scheme_host_port(origin):
    with pytest.raises(ValidationError):
        Client(origin)


def test_retries_on_503_then_succeeds(client, portal, fake_time):
    portal.fail_next(503, times=2)
    assert client.stats().problems > 0
    assert len(portal.requests) == 3
    assert len(fake_time.slept) == 2
    assert fake_time.slept[0] <= 0.5 and fake_time.slept[1] <= 1.0


def test_retries_are_bounded(client, portal, fake_time):
    portal.fail_next(503, times=10)
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert caught.value.status == 503 and "4 attempts" in str(caught.value)
    assert len(portal.requests) == 4 and len(fake_time.slept) == 3


@pytest.mark.parametrize("status", [429, 502, 504])
def test_other_retry_statuses(client, portal, status):
    portal.fail_next(status, times=1, html=status != 429)
    client.stats()
    assert [request.status for request in portal.requests] == [status, 200]


@pytest.mark.parametrize("given, scheme, port, written", [
    ("https://example.org", "https", 443, "https://example.org"),
    ("https://example.org:443", "https", 443, "https://example.org"),
    ("https://example.org:80", "https", 80, "https://example.org:80"),
    ("http://example.org", "http", 80, "http://example.org"),
    ("http://example.org:80/", "http", 80, "http://example.org"),
    ("http://example.org:443", "http", 443, "http://example.org:443"),
])
def test_an_origin_is_written_with_its_port_only_when_not_its_schemes_default(given, scheme, port, written):
    origin = parse_origin(given)
    assert (origin.scheme, origin.host, origin.port) == (scheme, "example.org", port)
    assert str(origin) == written


def test_an_origin_with_its_default_port_spelled_out_is_the_same_origin():
    assert parse_origin("https://example.org:443") == parse_origin("https://example.org")
    assert parse_origin("http://example.org:80") == parse_origin("http://example.org")
    assert parse_origin("https://example.org:80") != parse_origin("https://example.org")


def test_a_response_without_a_reason_gets_its_statuss_standard_one():
    assert Response(404).reason == "Not Found"
    assert Response(503, reason="").reason == "Service Unavailable"


def test_a_response_keeps_the_reason_it_was_given():
    assert Response(404, reason="No Such Thread").reason == "No Such Thread"


def test_retry_after_is_honoured(client, portal, fake_time):
    portal.fail_next(429, times=1, retry_after=7)
    client.stats()
    assert fake_time.slept == [7]


def test_retry_after_beyond_the_cap_ends_the_retries(client, portal, fake_time):
    portal.fail_next(503, times=5, retry_after=3600)
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert "try again after" in str(caught.value)
    assert len(portal.requests) == 1 and fake_time.slept == []


def test_a_retry_after_beyond_a_hundred_years_is_said_as_a_hundred_years(client, portal, fake_time):
    portal.fail_next(503, times=1, retry_after=10 ** 30)
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert caught.value.retry_after == 100 * 365 * 86400
    assert "the portal asks to wait 3.1536e+09 s; try again after " in str(caught.value)
    assert len(portal.requests) == 1 and fake_time.slept == []


def test_other_errors_are_not_retried(client, portal):
    portal.fail_next(400, times=3, code="invalid")
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert (caught.value.status, caught.value.code) == (400, "invalid")
    assert len(portal.requests) == 1


def test_publish_retries_with_the_same_nonce_after_a_dropped_answer(client, portal):
    task_id = a_task(client)
    portal.reset_counters()
    portal.drop_after_record(times=1)
    result = client.publish("recorded, then the connection dropped", task_id=task_id)
    assert portal.published == 1
    assert not result.created
    nonces = [request.params["nonce"] for request in portal.requests]
    assert len(nonces) == 2 and nonces[0] == nonces[1]


def test_publish_retries_on_503_with_the_same_url(client, portal):
    task_id = a_task(client)
    portal.reset_counters()
    portal.fail_next(503, times=2)
    assert client.publish("after a storm", task_id=task_id).created
    assert len({tuple(sorted(request.params.items())) for request in portal.requests}) == 1
    assert portal.published == 1


def test_reads_survive_a_dropped_connection(client, portal):
    portal.drop_before_answer(times=1)
    assert client.stats().problems > 0


def test_unreadable_answers_are_api_errors(client, portal):
    portal.raw_next(200, b"not json", "application/json")
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert caught.value.code == "malformed_answer"
    portal.raw_next(200, b"", "application/json")
    with pytest.raises(ApiError, match="empty"):
        client.stats()
    portal.raw_next(200, b'{"problems": "many"}', "application/json")
    with pytest.raises(ApiError, match="problems"):
        client.stats()


def test_an_html_error_page_names_its_status(client, portal):
    portal.fail_next(502, times=4, html=True)
    with pytest.raises(ApiError) as caught:
        client.stats()
    assert caught.value.status == 502 and "502" in str(caught.value)


def test_redirect_down_to_http_is_refused_after_the_answer(client, portal):
    portal.redirect_next(portal.origin.replace("https://", "http://") + "{path_qs}")
    with pytest.raises(ValidationError, match="plain http"):
        client.stats()
    assert len(portal.requests) == 1


def test_publish_follows_no_redirect(client, portal):
    task_id = a_task(client)
    portal.reset_counters()
    portal.redirect_next(portal.origin + "/elsewhere{path_qs}", status=307)
    with pytest.raises(ValidationError, match="/elsewhere"):
        client.publish("text", task_id=task_id)
    assert len(portal.requests) == 1 and portal.published == 0


def test_reads_follow_redirects_within_https(client, portal):
    portal.redirect_next(portal.origin + "{path_qs}", status=301)
    assert client.stats().problems > 0
    assert [request.status for request in portal.requests] == [301, 200]


def test_redirect_loops_are_bounded(client, portal):
    portal.redirect_next(portal.origin + "{path_qs}", status=302, times=50)
    with pytest.raises(ApiError, match="redirects"):
        client.stats()
    assert len(portal.requests) == 6


def test_untrusted_certificate_is_a_transport_error(portal, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", "/nonexistent")
    with pytest.raises(TransportError) as caught:
        Client(portal.origin).stats()
    assert "certificate" in str(caught.value)
    assert "to trust another CA, set BENCHMARKS_WIKI_CA_FILE to its PEM file" in str(caught.value)
    assert isinstance(caught.value, TransportError)
    assert portal.requests == []


def test_ssl_cert_file_is_honoured(portal, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", CA_FILE)
    assert Client(portal.origin).stats().problems > 0


def test_a_stalled_portal_times_out_and_is_asked_again(portal, tls, fake_time):
    portal.stall_next(2.0, times=2)
    with pytest.raises(TransportError, match="within 0.3 s"):
        Client(portal.origin, ssl_context=tls, timeout=0.3, retries=1, sleep=fake_time.sleep).stats()
    assert len(portal.requests) == 2 and len(fake_time.slept) == 1


def test_connection_refused_is_a_transport_error(tls, fake_time):
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TransportError, match="refused") as caught:
        Client(f"https://127.0.0.1:{port}", ssl_context=tls, sleep=fake_time.sleep).stats()
    assert "4 attempts" in str(caught.value)



@pytest.mark.parametrize("scheme, answer, reason, said", [
    ("https", b"\x00\x01 not a protocol at all\r\n\r\n", "tls_failed", "TLS failed with 127.0.0.1:"),
    ("https", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "wrong_scheme", "127.0.0.1:"),
    ("http", b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{",
     "connection_failed", "the connection to 127.0.0.1:"),
], ids=["tls-failed", "plain-http", "cut-off"])
def test_a_failed_tls_handshake_is_told_from_a_connection_cut_off(scheme, answer, reason, said, tls, fake_time):
    server = RawServer(answer)
    origin = server.origin.replace("http://", f"{scheme}://")
    try:
        with Client(origin, ssl_context=tls, retries=0, sleep=fake_time.sleep) as client:
            with pytest.raises(TransportError) as caught:
                client.stats()
    finally:
        server.close()
    assert caught.value.reason == reason and str(caught.value).startswith(said)
    if reason == "wrong_scheme":
        assert " speaks plain HTTP (http://), not https://; use the origin http://127.0.0.1:" in str(caught.value)


def test_plain_http_to_a_tls_port_says_the_port_speaks_tls_at_once(run, portal, fake_time):
    origin = portal.origin.replace("https://", "http://")
    with Client(origin, sleep=fake_time.sleep) as client:
        with pytest.raises(TransportError) as caught:
            client.stats()
    assert caught.value.reason == "wrong_scheme" and fake_time.slept == [] and len(portal.requests) == 0
    assert str(caught.value) == (f"{origin[len('http://'):]} speaks TLS (https://), not http://; use the origin "
                                 f"{portal.origin}")
    done = run("draw.py", "stats", "--origin", origin)
    assert done.returncode == 3 and done.stderr.endswith(f"; give --origin {portal.origin}\n")


def test_an_answer_got_in_one_exchange_counts_no_lost_answers(portal, tls):
    assert Response(200).lost_answers == 0
    transport = HTTPTransport(ssl_context=tls)
    try:
        answer = transport.handle(Request(portal.origin, "/api/v1/stats"))
    finally:
        transport.close()
    assert answer.status == 200 and answer.lost_answers == 0


@pytest.mark.parametrize("origin", ["https://someone@portal.test", "https://:secret@portal.test",
                                    "https://someone:secret@portal.test"])
def test_an_origin_holding_any_credential_is_refused(origin):
    with pytest.raises(ValidationError) as caught:
        parse_origin(origin)
    assert caught.value.reason == "bad_origin" and "holds credentials" in str(caught.value)


def test_an_answer_past_the_limit_from_any_transport_is_refused_with_its_size():
    from benchmarks_wiki.transport import MAX_ANSWER_BYTES, MockTransport

    # The network transport stops reading at the limit; a transport handed in may not.
    answer = Response(200, b"[" + b" " * MAX_ANSWER_BYTES + b"]", {"Content-Type": "application/json"})
    with Client("https://portal.test", transport=MockTransport(lambda request: answer)) as client:
        with pytest.raises(ApiError) as caught:
            client.stats()
    assert caught.value.code == "answer_too_large" and f"{MAX_ANSWER_BYTES + 2}" in str(caught.value)


def test_a_client_never_closed_closes_its_transport_when_it_is_collected():
    import gc

    from benchmarks_wiki.transport import MockTransport

    class Closing(MockTransport):
        closed = 0

        def close(self):
            Closing.closed += 1

    client = Client("https://portal.test", transport=Closing(lambda request: Response(200, b"{}")))
    del client
    gc.collect()
    assert Closing.closed == 1


def test_the_user_agent_names_the_package_version_and_python_major_and_minor():
    import sys

    from benchmarks_wiki import __version__
    from benchmarks_wiki.transport import MockTransport

    sent = []
    with Client("https://portal.test", transport=MockTransport(
            lambda request: sent.append(dict(request.headers)) or Response(404, b""))) as client:
        with pytest.raises(ApiError):
            client.stats()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert sent[0]["User-Agent"] == f"benchmarks-wiki/{__version__} python/{python}"


def test_a_read_begun_after_the_deadline_times_out_before_it_waits():
    # A byte that arrives just in time leaves the next read starting late: it ends at once, as
    # the timeout it is, rather than waiting on a socket told to wait a negative time.
    import socket
    import time

    from benchmarks_wiki.transport import _TimedReader

    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"late")
        reader = _TimedReader(ours, deadline=time.monotonic() - 1)
        with pytest.raises(socket.timeout, match="longer than the timeout"):
            reader.readinto(bytearray(4))
        reader.close()
