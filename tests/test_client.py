import random
import re

import pytest

from benchmarks_wiki.errors import NotFound, NothingToDraw
from benchmarks_wiki import (ApiError, Benchmark, BenchmarksWikiError, Client, Draft, Journal, MockTransport, Post,
                             Published, RetryPolicy, Task, Thread, TransportError, ValidationError, new_nonce)
from benchmarks_wiki.sandbox import Catalogue
from tests import faults
from tests.faults import Portal


TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"


def first_task(client, slug="gsm8k"):
    return next(client.tasks(slug))


def test_errors_share_one_base():
    for error in (ApiError, TransportError, ValidationError):
        assert issubclass(error, BenchmarksWikiError)
    from benchmarks_wiki.cli.table import EXIT_CODES

    assert [EXIT_CODES[kind] for kind in (ApiError, ValidationError, TransportError)] == [1, 2, 3]


def test_stats(client):
    stats = client.stats()
    assert stats.problems > 0 and stats.benchmarks >= stats.benchmarks_with_problems > 0
    assert stats.raw["problems"] == stats.problems


def test_benchmarks_include_introduction_only_ones(client):
    listed = list(client.benchmarks())
    assert all(isinstance(bench, Benchmark) for bench in listed)
    assert any(not bench.has_problems for bench in listed)
    assert [bench.slug for bench in listed] == sorted(bench.slug for bench in listed)


def test_benchmark_in_full(client):
    bench = client.benchmark("gsm8k")
    assert bench.has_problems and bench.citation and bench.description
    assert bench.raw["slug"] == "gsm8k"


def test_unknown_benchmark_is_not_found(client):
    with pytest.raises(ApiError) as caught:
        client.benchmark("no-such-benchmark")
    assert (caught.value.status, caught.value.code) == (404, "not_found")


def test_tasks_of_a_split(client):
    tasks = list(client.tasks("mmlu", split="validation"))
    assert tasks and all(task.split == "validation" for task in tasks)
    with pytest.raises(ApiError) as caught:
        list(client.tasks("mmlu", split="nonsense"))
    assert caught.value.status == 400


def test_tasks_follow_next_cursor_on_one_connection(tls):
    with Portal(faults.large_catalogue(benchmarks=3, tasks=1000, thread_posts=10)).start() as portal:
        with Client(portal.origin, ssl_context=tls) as client:
            slug = max(client.benchmarks(), key=lambda bench: bench.problem_count).slug
        portal.reset_counters()
        with Client(portal.origin, ssl_context=tls) as client:
            tasks = list(client.tasks(slug))
        assert len(tasks) == 1000 and len({task.task_id for task in tasks}) == 1000
        assert portal.connections == 1
        assert len(portal.requests) == 10


def test_task_fields_and_raw(client):
    listed = first_task(client)
    task = client.task(listed.task_id)
    assert isinstance(task, Task) and task.raw == listed.raw
    assert isinstance(task.fields, dict) and "question" in task.fields
    assert task.answer in ("published", "none")


def test_plain_text_task_fields(client):
    task = first_task(client, "humaneval")
    assert isinstance(task.raw["body"], str)
    assert task.fields == {"text": task.raw["body"]}


def test_markdown(client):
    task = first_task(client)
    text = client.markdown(task.task_id)
    assert isinstance(text, str) and text.strip()


def test_unknown_task_is_not_found(client):
    with pytest.raises(ApiError) as caught:
        client.task("00000000-0000-0000-0000-000000000000")
    assert caught.value.status == 404


def test_malformed_task_id_is_refused_before_sending(client, portal):
    with pytest.raises(ValidationError):
        client.task("../stats")
    assert portal.requests == []


def test_sample_draws_among_the_first_pool(client):
    first_five = [task.task_id for task in client.tasks("gsm8k", limit=5)]
    drawn = {client.sample("gsm8k", pool=5, rng=random.Random(seed)).task_id for seed in range(20)}
    assert drawn <= set(first_five) and len(drawn) > 1


def test_sample_is_reproducible_with_a_seeded_rng(client):
    one = client.sample(rng=random.Random(7))
    two = client.sample(rng=random.Random(7))
    assert one.task_id == two.task_id


def test_sample_of_an_introduction_only_benchmark(client):
    intro = next(bench.slug for bench in client.benchmarks() if not bench.has_problems)
    with pytest.raises(ValidationError) as caught:
        client.sample(intro)
    assert (caught.value.reason, caught.value.facts["slug"]) == ("introduction_only", intro)


def test_sample_of_a_benchmark_that_has_problems_but_lists_none_is_refused(client, portal):
    # The portal says it serves problems yet its listing is empty: nothing to draw, said as such.
    portal.catalogue.add_benchmark("emptied", "Emptied", metric="accuracy", license="MIT")
    portal.catalogue.benchmarks["emptied"]["has_problems"] = True
    with pytest.raises(ValidationError) as caught:
        client.sample("emptied")
    assert (caught.value.reason, caught.value.facts["slug"]) == ("no_problems_listed", "emptied")


def test_sample_without_a_slug_takes_a_benchmark_with_problems(client, portal):
    portal.reset_counters()
    task = client.sample(rng=random.Random(3))
    assert client.benchmark(task.benchmark).has_problems
    assert len(portal.requests) <= 4 + 1


def test_catalog_is_revalidated_with_its_etag(client, portal):
    first = client.catalog()
    assert first["benchmarks"] and "stats" in first
    second = client.catalog()
    assert second == first
    assert portal.requests[-1].status == 304
    assert "If-None-Match" in portal.requests[-1].headers


def test_search_returns_the_html_page(client):
    page = client.search("chain of thought")
    assert "<" in page and "chain of thought" in page


def test_search_results_are_each_list_item_whole_with_its_link(client, portal):
    page = ('<ul><li><a href="/gsm8k">GSM8K</a> \u2014 grade <b>school</b> math</li>\n'
            '<li><a href="/math">MATH</a> \u2014 harder</li></ul>')
    portal.raw_next(200, page.encode("utf-8"), "text/html; charset=utf-8")
    assert [result.raw for result in client.search_results("math")] == [
        {"title": "GSM8K", "url": "/gsm8k", "snippet": "grade school math"},
        {"title": "MATH", "url": "/math", "snippet": "harder"}]


def test_new_nonce():
    nonces = {new_nonce() for _ in range(100)}
    assert len(nonces) == 100
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{16,64}", nonce) for nonce in nonces)


def test_publish_and_replay(client, portal):
    task = first_task(client)
    nonce = new_nonce()
    posted = client.publish("Reproduced 4/5 with self-consistency at k=5.", task_id=task.task_id, nonce=nonce)
    assert isinstance(posted, Published) and posted.created
    assert posted.thread_id.startswith("t_") and posted.public_url
    again = client.publish("Reproduced 4/5 with self-consistency at k=5.", task_id=task.task_id, nonce=nonce)
    assert not again.created and again.post_id == posted.post_id
    assert portal.published == 1


def test_publish_from_another_address_is_a_new_post(client, portal):
    task = first_task(client)
    nonce = new_nonce()
    client.publish("same words", task_id=task.task_id, nonce=nonce)
    portal.client_address = "10.9.8.7"
    assert client.publish("same words", task_id=task.task_id, nonce=nonce).created
    assert portal.published == 2


def test_publish_sends_claims_only_when_given(portal, tls):
    with Client(portal.origin, ssl_context=tls) as anonymous:
        task = first_task(anonymous)
        post = anonymous.publish("no names", task_id=task.task_id).post
    assert (post.agent_name, post.model) == (None, None)
    assert "agent_name" not in portal.requests[-1].params
    with Client(portal.origin, "reproduction-bot", "claude-opus-5", ssl_context=tls) as named:
        post = named.publish("with names", task_id=task.task_id).post
    assert (post.agent_name, post.model) == ("reproduction-bot", "claude-opus-5")


def test_environment_supplies_defaults_and_arguments_win(portal, tls, monkeypatch):
    monkeypatch.setenv("BENCHMARKS_WIKI_ORIGIN", portal.origin)
    monkeypatch.setenv("BENCHMARKS_WIKI_AGENT_NAME", "env-bot")
    monkeypatch.setenv("BENCHMARKS_WIKI_MODEL", "env-model")
    with Client(ssl_context=tls) as client:
        assert client.origin == portal.origin
        assert (client.agent_name, client.model) == ("env-bot", "env-model")
    with Client(agent_name="arg-bot", ssl_context=tls) as client:
        assert (client.agent_name, client.model) == ("arg-bot", "env-model")


def test_body_is_normalised_as_the_portal_does(client, portal):
    task = first_task(client)
    client.publish("Cafe\u0301 result\r\nline two \n\n  ", task_id=task.task_id)
    assert portal.requests[-1].params["body"] == "Caf\u00e9 result\nline two"


def test_reply_goes_into_the_thread(client):
    task = first_task(client)
    opening = client.publish("opening", task_id=task.task_id)
    answer = client.reply(opening, "a reply")
    assert answer.thread_id == opening.thread_id
    assert answer.post.reply_to == opening.post_id
    thread = client.thread(opening.thread_id)
    assert [post.body for post in thread.posts] == ["opening", "a reply"]


def test_publish_into_a_thread(client):
    task = first_task(client)
    opening = client.publish("opening", task_id=task.task_id)
    note = client.publish("more", thread_id=opening.thread_id, kind="note")
    assert note.thread_id == opening.thread_id and note.post.kind == "note"


@pytest.mark.parametrize("arguments", [
    {},
    {"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "thread_id": "t_1"},
    {"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "reply_to": "p_1"},
    {"task_id": "not-a-uuid"},
    {"thread_id": "51d0e9"},
    {"reply_to": "8f2c1a"},
    {"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "nonce": "short"},
    {"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "kind": "essay"},
    {"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "agent_name": "x" * 65},
    {"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "revision": 0},
])
def test_bad_publish_arguments_are_refused_before_sending(client, portal, arguments):
    with pytest.raises(ValidationError):
        client.publish("text", **arguments)
    assert portal.requests == []


@pytest.mark.parametrize("body", ["", "   \n\t ", "\r\n"])
def test_empty_bodies_are_refused(client, portal, body):
    with pytest.raises(ValidationError, match="empty"):
        client.publish(body, task_id="317ef6cc-69a8-59a3-a347-e37d3399eb10")
    assert portal.requests == []


def test_threads_and_thread(client):
    task = first_task(client)
    opening = client.publish("opening", task_id=task.task_id)
    listed = list(client.threads(task_id=task.task_id))
    assert any(thread.thread_id == opening.thread_id for thread in listed)
    assert all(isinstance(thread, Thread) for thread in listed)
    thread = client.thread(opening.thread_id)
    assert thread.raw["posts"][0]["post_id"] == opening.post_id
    assert isinstance(thread.posts[0], Post)


def test_thread_merges_every_page_of_posts(tls):
    with Portal(faults.large_catalogue(benchmarks=2, tasks=10, thread_posts=250)).start() as portal:
        with Client(portal.origin, ssl_context=tls) as client:
            thread_id = next(client.threads()).thread_id
            thread = client.thread(thread_id)
        assert len(thread.posts) == 250 == len(thread.raw["posts"])
        times = [post.created_at for post in thread.posts]
        assert times == sorted(times)
        assert "next_cursor" not in thread.raw


def test_thread_on_an_older_deployment_comes_from_activity(client, portal):
    task = first_task(client)
    opening = client.publish("opening", task_id=task.task_id)
    client.reply(opening, "second")
    portal.legacy = True
    thread = client.thread(opening.thread_id)
    assert [post.body for post in thread.posts] == ["opening", "second"]
    assert thread.post_count == 2


@pytest.mark.parametrize("legacy", [False, True])
def test_unknown_thread_is_not_found(client, portal, legacy):
    portal.legacy = legacy
    with pytest.raises(ApiError) as caught:
        client.thread("t_000000")
    assert caught.value.status == 404


def test_activity_since(client):
    task = first_task(client)
    client.publish("recent", task_id=task.task_id)
    everything = list(client.activity())
    newest = everything[0]
    assert newest.body == "recent"
    since = list(client.activity(since=newest.created_at))
    assert newest.post_id in {post.post_id for post in since}
    assert all(post.created_at >= newest.created_at for post in since)
    with pytest.raises(ValidationError):
        list(client.activity(since="yesterday"))


def test_lists_are_lazy_iterators(client, portal):
    tasks = client.tasks("gsm8k")
    assert portal.requests == []
    next(tasks)
    assert len(portal.requests) == 1


def test_rebuilt_thread_keeps_the_portal_title_length_and_link(client, portal, tls):
    task = first_task(client)
    opening = client.publish("A first line that runs on well past eighty characters, as first lines sometimes do.",
                             task_id=task.task_id)
    expected = client.thread(opening.thread_id)
    portal.legacy = True
    with Client(portal.origin, ssl_context=tls) as older:
        rebuilt = older.thread(opening.thread_id)
    # The contract leaves a title's length open; the rebuilt one is the first line, cut to 80.
    assert opening.post.body.startswith(rebuilt.title) and len(rebuilt.title) == 80
    assert rebuilt.public_url == expected.public_url


@pytest.mark.parametrize("options", [dict(count=0), dict(count=6, pool=5), dict(pool=0), dict(pool=10001),
                                     dict(count=True), dict(pool=2.0)])
def test_the_library_checks_how_many_to_draw_itself(client, portal, options):
    portal.reset_counters()
    with pytest.raises(ValidationError, match="must be"):
        client.sample_many("gsm8k", **options)
    assert portal.requests == []


def test_drawing_more_problems_than_there_are_is_refused_after_one_read(client, portal):
    available = len(list(client.tasks("gsm8k")))
    portal.reset_counters()
    with pytest.raises(NothingToDraw, match=f"gsm8k has {available} problems to draw from, fewer than "
                                            f"{available + 1}"):
        client.sample_many("gsm8k", count=available + 1, pool=available + 5)
    assert len(portal.requests) == 1
    assert len(client.sample_many("gsm8k", count=available, pool=available + 5)) == available


def test_once_threads_answer_on_a_deployment_an_unknown_one_costs_one_request(client, portal):
    task = first_task(client)
    opening = client.publish("opening", task_id=task.task_id)
    client.thread(opening.thread_id)
    portal.reset_counters()
    with pytest.raises(NotFound):
        client.thread("t_000000")
    assert [request.path for request in portal.requests] == ["/api/v1/threads/t_000000"]


def test_a_pool_of_one_draws_the_first_problem(client):
    first = first_task(client).task_id
    assert client.sample("gsm8k", pool=1).task_id == first
    assert [task.task_id for task in client.sample_many("gsm8k", pool=1)] == [first]


def test_sample_many_draws_one_problem_unless_told_how_many(client):
    assert len(client.sample_many("gsm8k")) == 1


def test_drawing_from_a_catalogue_without_problems_is_refused(tls):
    catalogue = Catalogue()
    catalogue.add_benchmark("intro", "Introduction", metric="accuracy", license="MIT")
    with Portal(catalogue).start() as portal, Client(portal.origin, ssl_context=tls) as client:
        with pytest.raises(NothingToDraw) as caught:
            client.sample()
    assert caught.value.reason == "nothing_to_draw"


def test_verify_says_whether_it_checked_the_destination(client):
    task = first_task(client)
    opening = client.publish("opening", task_id=task.task_id)
    assert client.verify(client.prepare("on the task", task_id=task.task_id)) is True
    assert client.verify(client.prepare("in the thread", thread_id=opening.thread_id)) is True
    assert client.verify(client.prepare("a reply", reply_to=opening.post_id)) is False


def test_verify_of_a_thread_asks_the_feed_for_one_post(client, portal):
    opening = client.publish("opening", task_id=first_task(client).task_id)
    client.reply(opening, "second")
    portal.reset_counters()
    client.verify(client.prepare("in the thread", thread_id=opening.thread_id))
    assert [(request.path, request.params.get("limit")) for request in portal.requests] == [("/api/v1/activity", "1")]


@pytest.mark.parametrize("timeout", [0, -1, 601])
def test_a_timeout_out_of_range_is_refused_saying_it_must_be_more_than_zero(timeout):
    with pytest.raises(ValidationError) as caught:
        Client("https://portal.test", timeout=timeout)
    assert "more than 0 and at most 600" in str(caught.value)


@pytest.mark.parametrize("settings", [{"timeout": 0}, {"ssl_context": "x"}])
def test_bad_network_settings_are_refused_at_once_even_beside_a_transport_of_ones_own(settings):
    with pytest.raises(ValidationError):
        Client("https://portal.test", transport=MockTransport(lambda request: None), **settings)


WRONG_TYPES = [
    ("Client(headers=['a'])", lambda client: Client(headers=["a"])),
    ("Client(agent_name=5)", lambda client: Client(agent_name=5)),
    ("Client(timeout='5')", lambda client: Client(timeout="5")),
    ("Client(retries=True)", lambda client: Client(retries=True)),
    ("Client(ssl_context='x')", lambda client: Client(ssl_context="x")),
    ("Client(transport=5)", lambda client: Client(transport=5)),
    ("Client(sleep=5)", lambda client: Client(sleep=5)),
    ("send('not a draft')", lambda client: client.send("not a draft")),
    ("send(draft, resend='yes')", lambda client: client.send(client.prepare("x", task_id=TASK), resend="yes")),
    ("prepare(allow_sensitive='yes')", lambda client: client.prepare("x", task_id=TASK, allow_sensitive="yes")),
    ("publish(allow_sensitive=1)", lambda client: client.publish("x", task_id=TASK, allow_sensitive=1)),
    ("prepare(body=5)", lambda client: client.prepare(5, task_id=TASK)),
    ("prepare(kind=5)", lambda client: client.prepare("x", task_id=TASK, kind=5)),
    ("prepare(revision='2')", lambda client: client.prepare("x", task_id=TASK, revision="2")),
    ("prepare(agent_name=5)", lambda client: client.prepare("x", task_id=TASK, agent_name=5)),
    ("verify('x')", lambda client: client.verify("x")),
    ("reply('p_1', 'x')", lambda client: client.reply("p_1", "x")),
    ("tasks(split=5)", lambda client: list(client.tasks("gsm8k", split=5))),
    ("tasks(limit='5')", lambda client: list(client.tasks("gsm8k", limit="5"))),
    ("task(5)", lambda client: client.task(5)),
    ("benchmark(None)", lambda client: client.benchmark(None)),
    ("sample(rng=5)", lambda client: client.sample("gsm8k", rng=5)),
    ("sample(slug=5)", lambda client: client.sample(5)),
    ("search(5)", lambda client: client.search(5)),
    ("activity(since=5)", lambda client: list(client.activity(since=5))),
    ("follow(seen='p_1')", lambda client: client.follow("t_1", seen="p_1")),
    ("follow(exclude='p_1')", lambda client: client.follow("t_1", exclude="p_1")),
    ("inbox('t_1')", lambda client: client.inbox("t_1")),
    ("Journal.open(5)", lambda client: Journal.open(5)),
    ("Journal.keep('x')", lambda client: Journal.open(client._journal_folder).keep("x")),
    ("Journal.entries(since=5)", lambda client: list(Journal.open(client._journal_folder).entries(since=5))),
    ("Draft.load(5)", lambda client: Draft.load(5)),
    ("MockTransport(5)", lambda client: MockTransport(5)),
    ("RetryPolicy(retries='3')", lambda client: RetryPolicy(retries="3")),
]


@pytest.mark.parametrize("call", [call for _, call in WRONG_TYPES], ids=[name for name, _ in WRONG_TYPES])
def test_every_public_call_refuses_an_argument_of_the_wrong_type_as_a_validation_error(client, portal, tmp_path, call):
    client._journal_folder = tmp_path / "journal"
    portal.reset_counters()
    with pytest.raises(ValidationError):
        call(client)
    assert portal.requests == []
