"""Behaviour the other files leave unchecked: the library's own refusals, met without the
command line in between; answers only an unusual portal or network gives; the edges of the
check for private data; and what the command line writes from its tables."""

import json
import re
import sys

import pytest

from benchmarks_wiki import ApiError, Client, NotFound, TransportError, UnreadableAnswer, Unavailable, ValidationError
from benchmarks_wiki import cli, transport
from benchmarks_wiki.cli import render
from benchmarks_wiki.sensitive import find_sensitive
from benchmarks_wiki.transport import MockTransport, NetworkFailure, Response
from tests.test_connections import RawServer

TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
ORIGIN = "https://portal.test"
JSON = {"Content-Type": "application/json"}


def answering(*answers):
    """A transport that gives ``answers`` in turn (raising those that are failures), and keeps
    every request it was sent."""
    queue, sent = list(answers), []

    def handle(request):
        sent.append(request)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return MockTransport(handle), sent


def test_following_after_a_post_the_thread_lacks_is_refused_by_the_library(client, fake_time):
    task_id = next(client.tasks("gsm8k")).task_id
    opening = client.publish("opening", task_id=task_id)
    following = client.follow(opening.thread_id, after="p_000000", interval=1, timeout=1)
    with pytest.raises(ValidationError) as caught:
        next(following)
    assert caught.value.reason == "post_not_in_thread"
    assert opening.thread_id in str(caught.value) and "p_000000" in str(caught.value)
    assert fake_time.slept == []


@pytest.mark.parametrize("cursor", [5, "two\nlines", "caf\u00e9", ["c"]], ids=repr)
def test_a_next_cursor_that_is_not_printable_ascii_text_is_an_unreadable_answer(cursor):
    first = Response(200, json.dumps({"items": [], "next_cursor": cursor}).encode(), JSON)
    last = Response(200, b'{"items": [], "next_cursor": null}', JSON)
    network, sent = answering(first, last)
    with Client(ORIGIN, transport=network) as client:
        with pytest.raises(UnreadableAnswer, match="next_cursor"):
            list(client.benchmarks())
    assert len(sent) == 1


# A first attempt whose answer may have been lost after the portal acted on it.
LOST = [Response(502, b"<html>bad gateway</html>", {"Content-Type": "text/html"}),
        NetworkFailure(ConnectionResetError(104, "Connection reset by peer"), "read", "portal.test:443")]


@pytest.mark.parametrize("first", LOST, ids=["gateway 502", "answer cut off"])
def test_a_publish_stays_maybe_posted_when_retries_that_reach_nothing_follow_a_lost_answer(first, fake_time):
    refused = NetworkFailure(ConnectionRefusedError(111, "Connection refused"), "connect", "portal.test:443")
    network, sent = answering(first, refused)
    with Client(ORIGIN, transport=network, sleep=fake_time.sleep) as client:
        with pytest.raises(TransportError) as caught:
            client.publish("a result", task_id=TASK)
    assert len(sent) == 4 and caught.value.reason == "connection_refused"
    # The last attempt never connected, but the first may have left a post behind.
    assert caught.value.sent and caught.value.outcome_unknown
    assert "may or may not be posted" in str(caught.value)


@pytest.mark.parametrize("seconds, shape", [(12 * 3600 - 1, r"\d\d:\d\d:\d\d UTC"),
                                            (12 * 3600, r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")])
def test_a_wait_of_half_a_day_or_more_names_the_date_to_try_again(seconds, shape):
    network, _ = answering(Response(429, b"", {"Retry-After": str(seconds)}))
    with Client(ORIGIN, transport=network) as client:
        with pytest.raises(Unavailable) as caught:
            client.stats()
    assert re.search(rf"try again after {shape}\Z", caught.value.hint), caught.value.hint


def test_an_answer_of_unsaid_length_exactly_at_the_limit_is_read_whole():
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/markdown\r\nConnection: close\r\n\r\n"
    server = RawServer(head + b"#" * transport.MAX_ANSWER_BYTES)
    try:
        with Client(server.origin, retries=0) as client:
            assert len(client.markdown(TASK)) == transport.MAX_ANSWER_BYTES
    finally:
        server.close()


@pytest.mark.parametrize("extra", [0, 1])
def test_an_answer_said_to_be_the_limit_is_read_and_one_byte_more_is_refused_unread(extra):
    size = transport.MAX_ANSWER_BYTES + extra
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/markdown\r\nContent-Length: {size}\r\n\r\n".encode()
    server = RawServer(head + b"#" * (1 if extra else size))  # refused on the header alone
    try:
        with Client(server.origin, retries=0) as client:
            if extra:
                with pytest.raises(ApiError) as caught:
                    client.markdown(TASK)
                assert caught.value.code == "answer_too_large"
            else:
                assert len(client.markdown(TASK)) == size
    finally:
        server.close()


@pytest.mark.parametrize("named, route", [("", "/api/v1/stats"), (ORIGIN + "/elsewhere", "/elsewhere")])
def test_a_mock_answer_keeps_the_url_it_names_and_else_takes_the_requests(named, route):
    with Client(ORIGIN, transport=MockTransport(lambda sent: Response(200, b"[1]", url=named))) as client:
        with pytest.raises(UnreadableAnswer, match=f"unreadable answer from {route}:"):
            client.stats()


@pytest.mark.parametrize("body", ["SESSION=gsm8kfewshotbaseline", "session_key: deepseekcoderinstruct"])
def test_a_long_word_with_few_digits_under_a_secret_name_is_not_refused(body):
    assert find_sensitive(body) == []


@pytest.mark.parametrize("body", [
    # Ten different characters, digits scattered among them: random, though short.
    "api_key=k1m2n3p4q5kmnpq1",
    # Long, of many characters, three of them symbols: a Django-style secret key.
    "SECRET_KEY=q7w!e8r@t9y#u0i-o1p2a3s4d5",
])
def test_random_values_at_the_edge_of_the_rules_are_refused(body):
    assert [what for what, _, _ in find_sensitive(body)] == [f"a secret value for {body.split('=')[0]}"]


@pytest.mark.parametrize("starts", [["--after", "p_1", "--since", "2026-01-01"], ["--after", "p_1", "--resume"],
                                    ["--since", "2026-01-01", "--resume"]])
def test_a_follow_is_refused_two_places_to_start_from(capsys, starts):
    network, sent = answering(Response(200, b'{"items": [], "next_cursor": null}', JSON))
    try:
        code = cli.main(["t_51d0e9", *starts, "--stop-after", "1"], view="follow",
                        client_options={"transport": network})
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "give one of --after, --since and --resume" in err
    assert sent == []


def test_the_client_options_given_to_the_command_line_reach_its_client(capsys):
    stats = {"problems": 3, "benchmarks": 1, "benchmarks_with_problems": 1, "posts": 1,
             "generated_at": "2026-11-29T10:15:02Z"}
    network, sent = answering(Response(200, json.dumps(stats).encode(), JSON))
    # A port nothing listens on: only the transport given can answer.
    code = cli.main(["stats", "--origin", "https://127.0.0.1:9", "--retries", "0"], view="draw",
                    client_options={"transport": network})
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and "3 problems" in out
    assert [request.path for request in sent] == ["/api/v1/stats"]

def test_help_keeps_an_argument_on_its_line_while_it_fits_the_column(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"], view="post")
    shown = capsys.readouterr().out
    # Eighteen characters, the widest that leaves two spaces before the column of meanings.
    assert "\n  --thread THREAD_ID  post in this existing thread\n" in shown


@pytest.mark.parametrize("destination, kind, shown", [({"task_id": TASK}, None, "result"),
                                                      ({"thread_id": "t_51d0e9"}, None, "note"),
                                                      ({"task_id": TASK}, "question", "question")])
def test_a_preview_and_its_record_name_the_kind_the_post_will_have(destination, kind, shown):
    with Client(ORIGIN, transport=answering(AssertionError("a preview sends nothing"))[0]) as client:
        prepared = client.prepare("a result", kind=kind, **destination)
    assert f"\nas: unnamed, kind {shown}\n" in render.preview(prepared, "publish")
    assert render.draft_record(prepared, None, "publish")["kind"] == shown


def test_the_reference_pages_are_written_then_checked(tmp_path, monkeypatch, capsys):
    from tests import references as manual

    assert manual.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == "written: " + ", ".join(manual.pages()) + "\n"
    # As run from the command line, with its own arguments.
    monkeypatch.setattr(sys, "argv", ["manual", "--check", str(tmp_path)])
    assert manual.main() == 0 and capsys.readouterr().out == "stale: none\n"
    (tmp_path / "cli.md").write_text("an older page\n", encoding="utf-8")
    assert manual.main(["--check", str(tmp_path)]) == 1
    assert capsys.readouterr().out == "stale: cli.md\n"
    assert (tmp_path / "cli.md").read_text(encoding="utf-8") == "an older page\n"


@pytest.mark.parametrize("feed", ["answers 404", "has no post of it"])
def test_a_thread_neither_the_thread_nor_the_feed_knows_is_not_found(feed):
    missing = Response(404, b'{"error": {"code": "not_found", "message": "no such thread"}}', JSON)

    def handle(request):
        if request.path.startswith("/api/v1/activity") and feed == "has no post of it":
            return Response(200, b'{"items": [], "next_cursor": null}', JSON)
        return missing

    with Client(ORIGIN, transport=MockTransport(handle)) as client:
        with pytest.raises(NotFound):
            client.thread("t_000000")


@pytest.mark.parametrize("address", ["http://proxy.test:99999", "http://proxy.test:port"])
def test_a_proxy_with_a_bad_port_is_refused_in_one_line(address, monkeypatch):
    monkeypatch.setenv("https_proxy", address)
    with pytest.raises(ValidationError) as caught:
        transport.proxy_for(transport.parse_origin(ORIGIN))
    assert caught.value.reason == "bad_proxy" and "has a bad port" in str(caught.value)


def test_an_answer_declaring_more_than_the_limit_is_refused_before_it_is_read(fake_time):
    size = transport.MAX_ANSWER_BYTES + 1
    server = RawServer(f"HTTP/1.1 200 OK\r\nContent-Type: text/markdown\r\nContent-Length: {size}\r\n\r\n#".encode())
    try:
        with Client(server.origin, retries=0, sleep=fake_time.sleep) as client:
            with pytest.raises(ApiError) as caught:
                client.markdown(TASK)
    finally:
        server.close()
    assert caught.value.reason == "answer_too_large" and f"at least {size} bytes" in str(caught.value)


def test_a_receipt_says_whether_its_send_made_the_post(client, tmp_path):
    from benchmarks_wiki import Journal
    from tests.conftest import as_if_killed_before_its_receipt

    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("made by this send", task_id=next(client.tasks("gsm8k")).task_id))
    client.send(draft)
    assert draft.receipt().published.created is True
    as_if_killed_before_its_receipt(draft.path)
    client.send(draft)
    assert draft.receipt().published.created is False


@pytest.mark.parametrize("text, found", [("password = placeholder", False), ("password = hunter", False),
                                         ("password = s3cr3t!x", True)])
def test_a_password_is_a_mixed_value_of_six_or_more_that_names_nothing(text, found):
    assert bool(find_sensitive(text)) is found


def test_a_publish_the_portal_refuses_says_nothing_was_posted(run, portal, client):
    task_id = next(client.tasks("gsm8k")).task_id
    portal.fail_next(400, code="invalid")
    done = run("post.py", "--task", task_id, "--body", "refused", "--retries", "0")
    assert done.returncode == 1 and "nothing was posted" in done.stderr


def test_a_finding_after_a_leading_empty_line_is_on_line_two():
    [(what, line, column)] = find_sensitive("\npassword = s3cr3t!x")
    assert (line, column) == (2, 12)


def test_a_task_asked_in_capitals_is_the_one_answered_in_small_letters_and_another_is_refused(client):
    task = next(client.tasks("gsm8k"))
    for asked, answered in ((task.task_id.upper(), task.task_id), (task.task_id, task.task_id[:-1] + "0")):
        raw = dict(task.raw, task_id=answered)
        network, _ = answering(Response(200, json.dumps(raw).encode(), JSON))
        got = Client("https://portal.test", transport=network)
        if answered.lower() == asked.lower():
            assert got.task(asked).task_id == answered
        else:
            with pytest.raises(UnreadableAnswer, match="the answer is for"):
                got.task(asked)


@pytest.mark.parametrize("headers, said", [({"Content-Type": "text/html"}, "(text/html)"), ({}, "(no content type)")])
def test_an_error_answer_that_is_not_json_names_its_content_type(headers, said):
    network, _ = answering(Response(404, b"<html>gone</html>", headers))
    with pytest.raises(ApiError) as caught:
        Client(ORIGIN, transport=network).stats()
    assert caught.value.code == "http_404" and caught.value.message.endswith(said)
