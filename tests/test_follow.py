import json

import pytest

from benchmarks_wiki import ApiError, Client, ValidationError
from tests import faults
from tests.faults import Portal
from benchmarks_wiki.transport import MockTransport, Response


def open_thread(client):
    task_id = next(client.tasks("gsm8k")).task_id
    return client.publish("opening", task_id=task_id)


def follower(portal, tls, fake_time, replies, opening):
    """A client whose every sleep lets time pass, then posts the replies scheduled for that poll."""
    writer = Client(portal.origin, ssl_context=tls)

    def sleep(seconds):
        fake_time.sleep(seconds)
        for body in replies.get(len(fake_time.slept), ()):
            writer.reply(opening, body)

    return Client(portal.origin, ssl_context=tls, clock=fake_time.clock, sleep=sleep)


def test_follow_yields_new_posts_once_oldest_first(client, portal, fake_time, tls):
    opening = open_thread(client)
    replies = {2: ["first reply", "second reply"], 4: ["third reply"]}
    with follower(portal, tls, fake_time, replies, opening) as following:
        seen = [post.body for post in following.follow(opening.thread_id, interval=5, timeout=30)]
    assert seen == ["first reply", "second reply", "third reply"]
    # after the last new post (at the 4th sleep), it waited 30 s more in polls of 5 s
    assert fake_time.slept[4:] == [5] * 6


def test_follow_stops_after_timeout_with_no_new_post(client, fake_time):
    opening = open_thread(client)
    assert list(client.follow(opening.thread_id, interval=20, timeout=50)) == []
    assert fake_time.slept == [20, 20, 10]


def test_follow_on_an_older_deployment(client, portal, fake_time, tls):
    opening = open_thread(client)
    portal.legacy = True
    with follower(portal, tls, fake_time, {1: ["reply"]}, opening) as following:
        seen = [post.body for post in following.follow(opening.thread_id, interval=1, timeout=3)]
    assert seen == ["reply"]


def test_a_follow_after_a_post_stopped_midway_resumes_after_the_last_one_given(client, portal, fake_time):
    opening = open_thread(client)
    replies = [client.reply(opening, body) for body in ("one", "two", "three")]
    following = client.follow(opening.thread_id, after=opening.post_id, interval=1, timeout=1)
    assert next(following).body == "one"
    since, seen = following.mark
    resumed = client.follow(opening.thread_id, since=since, seen=seen, interval=1, timeout=1)
    assert [post.post_id for post in resumed] == [reply.post_id for reply in replies[1:]]


def test_follow_on_an_unknown_thread_is_not_found(client, fake_time):
    with pytest.raises(ApiError) as caught:
        next(client.follow("t_000000", interval=1))
    assert caught.value.status == 404 and fake_time.slept == []


def test_an_idle_poll_costs_no_more_on_a_long_thread(tls, fake_time):
    costs = {}
    for posts in (10, 10000):
        with Portal(faults.large_catalogue(benchmarks=2, tasks=5, thread_posts=posts)).start() as portal:
            with Client(portal.origin, ssl_context=tls, clock=fake_time.clock,
                        sleep=fake_time.sleep) as client:
                thread_id = next(client.threads()).thread_id
                assert client.thread(thread_id).post_count == posts
                portal.reset_counters()
                assert list(client.follow(thread_id, interval=1, timeout=3)) == []
            polls = portal.requests[1:]
            assert len(polls) == 3
            costs[posts] = [request.response_bytes for request in polls]
    # The same one post comes back, compressed: its bytes differ only with its ids and time.
    assert all(abs(long - short) <= 16 for long, short in zip(costs[10000], costs[10]))


def test_posts_of_the_newest_second_at_the_start_are_not_new(client, portal, fake_time, tls):
    import datetime
    second = datetime.datetime(2026, 11, 29, 12, 0, 0, tzinfo=datetime.timezone.utc)
    portal.now = lambda: second
    opening = open_thread(client)
    for body in ("same second 1", "same second 2"):
        client.reply(opening, body)
    later = {1: ["a second later"]}

    def tick_then_post(seconds):
        portal.now = lambda: second + datetime.timedelta(seconds=1)
        fake_time.sleep(seconds)
        for body in later.get(len(fake_time.slept), ()):
            client.reply(opening, body)

    with Client(portal.origin, ssl_context=tls, clock=fake_time.clock, sleep=tick_then_post) as following:
        seen = [post.body for post in following.follow(opening.thread_id, interval=1, timeout=2)]
    assert seen == ["a second later"]


def test_following_where_nothing_was_posted_yet_yields_every_post_to_come(fake_time):
    """An empty feed is no error: the first poll after it brings everything posted since."""
    post = {"post_id": "p_1", "thread_id": "t_1", "body": "the first post", "created_at": "2026-12-01T09:00:00Z"}
    feeds = [[], [post]]
    asked = []

    def handle(request):
        asked.append(request.fields)
        items = feeds.pop(0) if len(feeds) > 1 else feeds[0]
        return Response(200, json.dumps({"items": items, "next_cursor": None}).encode())

    with Client("https://portal.test", transport=MockTransport(handle), clock=fake_time.clock,
                sleep=fake_time.sleep) as client:
        for following in (client.follow("t_1", interval=1, timeout=2), client.inbox(["t_1", "t_2"], interval=1,
                                                                                     timeout=2)):
            feeds[:] = [[], [post]]
            assert [seen.body for seen in following] == ["the first post"] and following.stopped == "stop_after"
    assert "since" not in asked[1] and asked[2]["since"] == "2026-12-01T09:00:00Z"


def test_an_inbox_of_no_threads_is_refused_before_sending(client, portal):
    portal.reset_counters()
    with pytest.raises(ValidationError, match="no threads to follow"):
        client.inbox([])
    assert portal.requests == []


def test_a_follow_after_a_post_yields_every_newer_post_oldest_first(client):
    opening = open_thread(client)
    replies = [client.reply(opening, body) for body in ("one", "two", "three", "four")]
    following = client.follow(opening.thread_id, after=opening.post_id, interval=1, timeout=1)
    assert [post.post_id for post in following] == [reply.post_id for reply in replies]


def test_a_follow_after_a_post_passes_over_the_older_posts_of_its_second(client, portal):
    import datetime
    second = datetime.datetime(2026, 11, 29, 12, 0, 0, tzinfo=datetime.timezone.utc)
    portal.now = lambda: second
    opening = open_thread(client)
    older, named, newer = (client.reply(opening, body) for body in ("older", "named", "newer"))
    following = client.follow(opening.thread_id, after=named.post_id, interval=1, timeout=2)
    assert [post.body for post in following] == ["newer"]
    assert following.mark == ("2026-11-29T12:00:00Z", {opening.post_id, older.post_id, named.post_id, newer.post_id})


@pytest.mark.parametrize("in_newest_second, asked_again", [(9, False), (10, True)])
def test_a_follow_from_now_asks_for_the_ten_newest_and_again_by_time_when_they_share_a_second(
        client, portal, in_newest_second, asked_again):
    task_id = next(client.tasks("gsm8k")).task_id
    opening = portal.catalogue.add_post("opening", task_id=task_id, created_at="2026-11-29T12:00:00Z")
    newest = {portal.catalogue.add_post("reply", thread_id=opening["thread_id"],
                                        created_at="2026-11-29T12:00:01Z")["post_id"]
              for _ in range(in_newest_second)}
    portal.reset_counters()
    following = client.follow(opening["thread_id"], interval=1, timeout=1).start()
    asked = [request.params for request in portal.requests if request.path == "/api/v1/activity"]
    assert asked[0]["limit"] == "10"
    # Only a second look by time can tell whether more posts share the newest second.
    assert [ask.get("since") for ask in asked[1:]] == (["2026-11-29T12:00:01Z"] if asked_again else [])
    assert following.mark == ("2026-11-29T12:00:01Z", newest)
