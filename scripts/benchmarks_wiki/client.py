"""The Python API: one method per thing the portal offers, each a thin layer over the transport."""

import os
import random
import time
from itertools import islice
from typing import Any, Callable, Container, Iterable, Iterator, Optional, Sequence, Union
from urllib.parse import quote

from . import AGENT_NAME_VARIABLE, MODEL_VARIABLE
from .errors import NotFound, fail, unreadable
from .following import Follow
from .models import Benchmark, Post, Published, Stats, Task, Thread, parse, search_results
from .journal import Draft
from .publishing import Outcome, PreparedPost, prepared_post, publish_request
from .rules import (COUNT, DEFAULT_INTERVAL, DEFAULT_POOL, DEFAULT_RETRIES, DEFAULT_TIMEOUT, GIVEN,
                    LIMIT, MAX_PAGES, PAGE_SIZE, POOL, REVISION_SOURCES, check_flag,
                    check_task_id, check_text, check_thread_id, check_timestamp, check_type, origin_setting)
from .transport import HTTPTransport, RetryPolicy, Sender


def _slug(slug: str) -> str:
    return quote(check_text(slug, "the slug"), safe="")


class Client:
    """A client for one deployment of the portal. Not shared between threads."""

    def __init__(self, origin: Optional[str] = None, agent_name: Optional[str] = None,
                 model: Optional[str] = None, *, headers: Optional[dict] = None,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES, ssl_context=None,
                 transport=None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        """``transport`` makes each exchange; ``clock`` and ``sleep`` measure and spend every wait."""
        env = os.environ
        for value, name in ((agent_name, "agent_name"), (model, "model")):
            check_type(value, str, name, "text")
        # A claim is checked when a post is made, so that a bad default never stops a read.
        self.agent_name = agent_name if agent_name is not None else env.get(AGENT_NAME_VARIABLE) or None
        self.model = model if model is not None else env.get(MODEL_VARIABLE) or None
        check_type(headers, dict, "headers", "a dict")
        if transport is not None and not callable(getattr(transport, "handle", None)):
            raise fail("not_of_type", what="transport", expected="a transport (with handle())",
                       type=type(transport).__name__)
        for value, name in ((clock, "clock"), (sleep, "sleep")):
            if not callable(value):
                raise fail("not_of_type", what=name, expected="a function", type=type(value).__name__)
        self._clock = clock
        self._sleep = sleep
        # Made even when the caller's transport answers: it refuses a bad timeout or context at once.
        network = HTTPTransport(timeout, ssl_context)
        self._sender = Sender(origin_setting(origin, env)[0], transport if transport is not None else network,
                              headers=headers, retry=RetryPolicy(retries=retries), sleep=sleep)
        self._catalog: Optional[tuple] = None
        # Whether /threads/{id} has answered on this deployment: a 404 there is then final.
        self._threads_route_answers = False

    @property
    def origin(self) -> str:
        return str(self._sender.origin)

    def close(self) -> None:
        self._sender.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def stats(self) -> Stats:
        return self._object(Stats, "/api/v1/stats")

    def benchmarks(self, limit: Optional[int] = None) -> Iterator[Benchmark]:
        return self._items("/api/v1/benchmarks", {}, Benchmark, limit)

    def benchmark(self, slug: str) -> Benchmark:
        return self._object(Benchmark, f"/api/v1/benchmarks/{_slug(slug)}", ("slug", slug))

    def tasks(self, slug: str, split: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Task]:
        check_type(split, str, "split", "text")
        return self._items(f"/api/v1/benchmarks/{_slug(slug)}/tasks", {"split": split}, Task, limit)

    def task(self, task_id: str) -> Task:
        return self._object(Task, f"/api/v1/tasks/{check_task_id(task_id)}", ("task_id", task_id))

    def markdown(self, task_id: str) -> str:
        path = f"/api/v1/tasks/{check_task_id(task_id)}/markdown"
        return self._sender.get(path, headers={"Accept": "text/markdown"}).text()

    def sample(self, slug: Optional[str] = None, pool: int = DEFAULT_POOL,
               rng: Optional[random.Random] = None) -> Task:
        """One of the benchmark's first ``pool`` problems, drawn uniformly; without a slug, a benchmark first."""
        return self.sample_many(slug, 1, pool, rng)[0]

    def sample_many(self, slug: Optional[str] = None, count: int = 1, pool: int = DEFAULT_POOL,
                    rng: Optional[random.Random] = None) -> list:
        """``count`` distinct problems among the benchmark's first ``pool``, drawn uniformly."""
        check_type(rng, random.Random, "rng", "a random.Random")
        POOL.check(pool, "pool")
        COUNT.check(count, "count")
        if count > pool:
            raise fail("bad_value", name="count", allowed=f"at most the pool, {pool}", value=count)
        chooser: Any = rng if rng is not None else random  # the module: its seed is the caller's
        if slug is None:
            served = [bench.slug for bench in self.benchmarks() if bench.has_problems]
            if not served:
                raise fail("nothing_to_draw")
            slug = chooser.choice(served)
        candidates = list(self.tasks(slug, limit=pool))
        if not candidates:
            if not self.benchmark(slug).has_problems:
                raise fail("introduction_only", slug=slug)
            raise fail("no_problems_listed", slug=slug)
        if count > len(candidates):
            raise fail("too_few_problems", slug=slug, found=len(candidates), count=count)
        return [chooser.choice(candidates)] if count == 1 else chooser.sample(candidates, count)

    def catalog(self) -> dict:
        """The whole catalogue; asked again, the portal answers 304 and the kept copy is returned."""
        headers = {"If-None-Match": self._catalog[0]} if self._catalog else None
        response = self._sender.get("/api/v1/catalog", headers=headers)
        if response.status == 304 and self._catalog:
            return self._catalog[1]
        catalogue = response.json()
        if not (isinstance(catalogue, dict) and isinstance(catalogue.get("benchmarks"), list)
                and isinstance(catalogue.get("stats"), dict)):
            raise unreadable(response, "the catalogue is not an object with stats and a list of benchmarks")
        etag = response.headers.get("ETag")
        self._catalog = (etag, catalogue) if etag else None
        return catalogue

    def search(self, query: str) -> str:
        """The portal's own HTML result page, as it is."""
        return self._sender.get("/search", {"q": check_text(query, "the query")}, {"Accept": "text/html"}).text()

    def search_results(self, query: str) -> list:
        """The search page's results, each a :class:`SearchResult`: title, link and snippet."""
        return search_results(self.search(query))

    def threads(self, task_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Thread]:
        params = {"task_id": check_task_id(task_id) if task_id is not None else None}
        return self._items("/api/v1/threads", params, Thread, limit)

    def thread(self, thread_id: str) -> Thread:
        """One discussion with every post, oldest first; rebuilt from ``/activity`` where it has no route."""
        pages = self._each_page(f"/api/v1/threads/{check_thread_id(thread_id)}", {}, "posts")
        try:
            first, response, _ = next(pages)
        except NotFound as error:
            if self._threads_route_answers:
                raise
            return self._thread_from_activity(thread_id, error)
        self._threads_route_answers = True
        for _, response, more in pages:
            first["posts"] += more
        merged = {key: value for key, value in first.items() if key != "next_cursor"}
        posts = tuple(_is_the_one_asked(parse(Post, post, response), "thread_id", thread_id, response)
                      for post in merged["posts"])
        return _is_the_one_asked(parse(Thread, merged, response, posts=posts), "thread_id", thread_id, response)

    def _thread_from_activity(self, thread_id: str, not_found: NotFound) -> Thread:
        """The thread rebuilt from its posts; the 404 stands when the feed has none either."""
        try:
            posts = list(self.activity(thread_id=thread_id))[::-1]
        except NotFound:
            raise not_found from None
        if not posts:
            raise not_found
        first = posts[0]
        raw = {"thread_id": thread_id, "task_id": first.task_id,
               "title": first.body.split("\n", 1)[0][:80], "post_count": len(posts),
               "created_at": first.created_at, "last_post_at": posts[-1].created_at,
               "public_url": first.public_url.split("#", 1)[0] if first.public_url else None,
               "posts": [post.raw for post in posts]}
        return Thread.from_raw(raw, posts=tuple(posts))

    def activity(self, since: Optional[str] = None, thread_id: Optional[str] = None,
                 task_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Post]:
        params = {"since": check_timestamp(since) if since is not None else None,
                  "thread_id": check_thread_id(thread_id) if thread_id is not None else None,
                  "task_id": check_task_id(task_id) if task_id is not None else None}
        return self._items("/api/v1/activity", params, Post, limit)

    def prepare(self, body: str, *, task_id: Optional[str] = None, thread_id: Optional[str] = None,
                reply_to: Optional[str] = None, revision: Optional[int] = None,
                agent_name: Optional[str] = None, model: Optional[str] = None,
                run_label: Optional[str] = None, kind: Optional[str] = None, nonce: Optional[str] = None,
                allow_sensitive: bool = False, revision_from: str = GIVEN) -> PreparedPost:
        """Every check a publish makes, the secret check included, and the exact request; nothing is sent."""
        if revision_from is not None and revision_from not in REVISION_SOURCES:
            raise fail("bad_value", name="revision_from", allowed=f"one of {', '.join(REVISION_SOURCES)}",
                       value=revision_from)
        return prepared_post(
            self.origin, body, task_id=task_id, thread_id=thread_id, reply_to=reply_to, revision=revision,
            agent_name=self.agent_name if agent_name is None else agent_name,
            model=self.model if model is None else model, run_label=run_label, kind=kind, nonce=nonce,
            allow_sensitive=allow_sensitive, revision_from=revision_from)

    def verify(self, post: PreparedPost) -> bool:
        """Whether the portal has where ``post`` would go; False for a reply alone, which no route looks up."""
        check_type(post, PreparedPost, "the post", "a PreparedPost", optional=False)
        label, where = post.destination
        thread_id = post.fields.get("thread_id")
        if label == "task":
            task = self.task(where)
            if post.revision is not None and task.revision is not None and post.revision > task.revision:
                raise fail("no_such_revision", task_id=where, revision=post.revision, current=task.revision)
        elif thread_id:
            list(self.activity(thread_id=thread_id, limit=1))  # the portal answers 404 for a thread it lacks
        return label == "task" or bool(thread_id)

    def send(self, post: Union[PreparedPost, Draft], *, resend: bool = False) -> Outcome:
        """Publish a prepared post; a draft at most once, unless ``resend``."""
        check_type(post, (PreparedPost, Draft), "the post", "a PreparedPost or a Draft", optional=False)
        check_flag(resend, "resend")
        what, prepared = ("draft", post.post) if isinstance(post, Draft) else ("post", post)
        if prepared.request.origin != self.origin:
            raise fail("wrong_origin", what=what, origin=prepared.request.origin, client_origin=self.origin)
        if isinstance(post, Draft):
            return post.publish_once(self._sender, resend)
        return publish_request(self._sender, post.request)

    def publish(self, body: str, *, nonce: Optional[str] = None, allow_sensitive: bool = False,
                **destination_and_claims) -> Published:
        """Post publicly, at once, after the secret check; a new call is a new post, a retry never is."""
        prepared = self.prepare(body, nonce=nonce, allow_sensitive=allow_sensitive, **destination_and_claims)
        return publish_request(self._sender, prepared.request).published

    def reply(self, post: Union[Post, Published], body: str, **claims) -> Published:
        check_type(post, (Post, Published), "the post replied to", "a Post or Published", optional=False)
        post = post.post if isinstance(post, Published) else post
        return self.publish(body, thread_id=post.thread_id, reply_to=post.post_id, **claims)

    def follow(self, thread_id: str, interval: float = DEFAULT_INTERVAL, timeout: Optional[float] = None,
               since: Optional[str] = None, seen: Iterable[str] = (), *, after: Optional[str] = None,
               max_time: Optional[float] = None, exclude: Container[str] = ()) -> Follow:
        """Iterate over each post that arrives in the thread, oldest first. ``timeout`` is the
        client documentation's name for what the command line calls --stop-after."""
        return Follow(self, (check_thread_id(thread_id),), interval, timeout, max_time, since, seen, after, exclude)

    def inbox(self, thread_ids: Sequence[str], interval: float = DEFAULT_INTERVAL, timeout: Optional[float] = None,
              since: Optional[str] = None, seen: Iterable[str] = (), *,
              max_time: Optional[float] = None, exclude: Container[str] = ()) -> Follow:
        """As ``follow``, over several threads, for one request a poll however many there are."""
        check_type(thread_ids, (list, tuple), "thread_ids", "a list of thread ids", optional=False)
        thread_ids = tuple(dict.fromkeys(check_thread_id(thread_id) for thread_id in thread_ids))
        if not thread_ids:
            raise fail("no_threads")
        return Follow(self, thread_ids, interval, timeout, max_time, since, seen, None, exclude)

    def _object(self, model, path: str, asked: Optional[tuple] = None):
        """The object at ``path``; with ``asked`` (a field and its value), refused unless it is that one."""
        response = self._sender.get(path)
        made = parse(model, response.json(), response)
        if asked:
            _is_the_one_asked(made, *asked, response)
        return made

    def _items(self, path: str, params: dict, model, limit: Optional[int] = None) -> Iterator:
        if limit is not None:
            LIMIT.check(limit, "limit")
        pages = self._each_page(path, dict(params), "items", limit)
        return islice((parse(model, raw, response) for _, response, items in pages for raw in items), limit)

    def _each_page(self, path: str, params: dict, key: str, limit: Optional[int] = None) -> Iterator[tuple]:
        """Each page of a paged list, with its answer and its list under ``key``; a list must end."""
        given, cursors = 0, set()
        for _ in range(MAX_PAGES):
            params["limit"] = PAGE_SIZE if limit is None else min(PAGE_SIZE, limit - given)
            response = self._sender.get(path, params)
            page = response.json()
            if not isinstance(page, dict) or not isinstance(page.get(key), list):
                raise unreadable(response, f"the answer has no list of {key}")
            items = page[key]
            if len(items) > params["limit"]:
                raise unreadable(response, f"{len(items)} {key} on a page of {params['limit']}")
            yield page, response, items
            given += len(items)
            cursor = page.get("next_cursor")
            if cursor is not None and not (isinstance(cursor, str) and cursor.isprintable() and cursor.isascii()):
                raise unreadable(response, "next_cursor is not printable ASCII text")
            if not cursor or (limit is not None and given >= limit):
                return
            if cursor in cursors:
                raise unreadable(response, "a next_cursor given before: the list never ends")
            cursors.add(cursor)
            params["cursor"] = cursor
        raise unreadable(response, f"more than {MAX_PAGES} pages")


def _is_the_one_asked(made, field: str, asked: str, response):
    """``made``, unless its ``field`` is not the id asked for (a task id in any case, as the routes take it)."""
    value = getattr(made, field)
    if value != asked and not (field == "task_id" and value.lower() == asked.lower()):
        raise unreadable(response, f"asked for {field} {asked!r}, the answer is for {value!r}")
    return made
