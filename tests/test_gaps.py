"""Behaviour the other files leave unchecked: the library's own refusals, met without the
command line in between; answers only an unusual portal or network gives; the edges of the
check for private data; and what the command line writes from its tables."""

import json

import pytest

from benchmarks_wiki import Client, UnreadableAnswer, ValidationError
from benchmarks_wiki.transport import MockTransport, Response

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
