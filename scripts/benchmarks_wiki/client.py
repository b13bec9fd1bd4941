"""The Python API: one method per thing the portal offers, each a thin layer over the transport."""

from __future__ import annotations

import os
import random
import time
from typing import Callable, Iterable, Iterator, Optional, Sequence, Union
from urllib.parse import quote

from . import publishing
from .errors import ApiError, ValidationError, unreadable
from .following import Follow
from .models import Benchmark, Post, Published, Stats, Task, Thread, parse
from .publishing import Draft, Outcome, PreparedPost, new_nonce
from .rules import (DEFAULT_INTERVAL, DEFAULT_ORIGIN, DEFAULT_POOL, DEFAULT_RETRIES, DEFAULT_TIMEOUT, GIVEN,
                    MAX_POOL, MAX_RETRIES, MAX_TIMEOUT, check, check_task_id, check_thread_id, encoded)
from .transport import RetryPolicy, Transport

PAGE_SIZE = 100

__all__ = ["Client", "DEFAULT_ORIGIN", "new_nonce"]


def _text(value: str, what: str) -> str:
    """A caller's text for a URL: text, and valid UTF-8."""
    if not isinstance(value, str):
        raise ValidationError(f"the {what} must be text, not {type(value).__name__}")
    encoded(value, f"the {what}")
    return value


def _segment(value: str, what: str) -> str:
    return quote(_text(value, what), safe="")


class Client:
    """A client for one deployment of the portal. Not shared between threads."""

    def __init__(self, origin: Optional[str] = None, agent_name: Optional[str] = None,
                 model: Optional[str] = None, *, headers: Optional[dict] = None,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES, ssl_context=None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        env = os.environ
        # Claims are checked when a post is made, so that a bad default never stops a read.
        self.agent_name = agent_name if agent_name is not None else env.get("BENCHMARKS_WIKI_AGENT_NAME") or None
        self.model = model if model is not None else env.get("BENCHMARKS_WIKI_MODEL") or None
        if not (isinstance(retries, int) and 0 <= retries <= MAX_RETRIES):
            raise ValidationError(f"retries must be 0 to {MAX_RETRIES}, not {retries!r}")
        if not (isinstance(timeout, (int, float)) and 0 < timeout <= MAX_TIMEOUT):
            raise ValidationError(f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds, not {timeout!r}")
        self._clock = clock
        self._sleep = sleep
        self._transport = Transport(origin or env.get("BENCHMARKS_WIKI_ORIGIN") or DEFAULT_ORIGIN,
                                    headers=headers, timeout=timeout, retry=RetryPolicy(retries=retries),
                                    ssl_context=ssl_context, sleep=sleep)
        self._catalog: Optional[tuple] = None

    @property
    def origin(self) -> str:
        return str(self._transport.origin)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    def stats(self) -> Stats:
        return self._object(Stats, "/api/v1/stats")

    def benchmarks(self, limit: Optional[int] = None) -> Iterator[Benchmark]:
        return self._items("/api/v1/benchmarks", {}, Benchmark, limit)

    def benchmark(self, slug: str) -> Benchmark:
        return self._object(Benchmark, f"/api/v1/benchmarks/{_segment(slug, 'slug')}")

    def tasks(self, slug: str, split: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Task]:
        return self._items(f"/api/v1/benchmarks/{_segment(slug, 'slug')}/tasks", {"split": split}, Task, limit)

    def task(self, task_id: str) -> Task:
        return self._object(Task, f"/api/v1/tasks/{check_task_id(task_id)}")

    def markdown(self, task_id: str) -> str:
        path = f"/api/v1/tasks/{check_task_id(task_id)}/markdown"
        return self._transport.get(path, accept="text/markdown").text()

    def sample(self, slug: Optional[str] = None, pool: int = DEFAULT_POOL,
               rng: Optional[random.Random] = None) -> Task:
        """One of the benchmark's first ``pool`` problems, drawn uniformly.

        Without a slug, the benchmark is drawn first, uniformly among those with problems.
        """
        return self.sample_many(slug, 1, pool, rng)[0]

    def sample_many(self, slug: Optional[str] = None, count: int = 1, pool: int = DEFAULT_POOL,
                    rng: Optional[random.Random] = None) -> list:
        """``count`` distinct problems among the benchmark's first ``pool``, drawn uniformly."""
        if not (isinstance(pool, int) and 1 <= pool <= MAX_POOL):
            raise ValidationError(f"pool must be 1 to {MAX_POOL}, not {pool!r}")
        if not (isinstance(count, int) and 1 <= count <= pool):
            raise ValidationError(f"count must be 1 to the pool ({pool}), not {count!r}")
        rng = rng or random
        if slug is None:
            served = [bench.slug for bench in self.benchmarks() if bench.has_problems]
            if not served:
                raise ApiError(200, "empty", "no benchmark has problems to draw")
            slug = rng.choice(served)
        candidates = list(self.tasks(slug, limit=pool))
        if not candidates:
            if not self.benchmark(slug).has_problems:
                raise ValidationError(f"{slug} is introduction-only: its problems are not served",
                                      "read its introduction with Client.benchmark()",
                                      reason="introduction_only", subject=slug)
            raise ApiError(200, "empty", f"{slug} lists no problems")
        if count > len(candidates):
            raise ValidationError(f"{slug} has {len(candidates)} problems to draw from, fewer than {count}")
        return [rng.choice(candidates)] if count == 1 else rng.sample(candidates, count)

    def catalog(self) -> dict:
        """The whole catalogue; asked again, the portal answers 304 and the kept copy is returned."""
        headers = {"If-None-Match": self._catalog[0]} if self._catalog else None
        response = self._transport.get("/api/v1/catalog", headers=headers)
        if response.status == 304 and self._catalog:
            return self._catalog[1]
        catalogue = response.json()
        if not (isinstance(catalogue, dict) and isinstance(catalogue.get("benchmarks"), list)
                and isinstance(catalogue.get("stats"), dict)):
            raise unreadable(response.status, response.route, "the catalogue is not an object with "
                             "stats and a list of benchmarks")
        etag = response.headers.get("ETag")
        self._catalog = (etag, catalogue) if etag else None
        return catalogue

    def search(self, query: str) -> str:
        """The portal's own HTML result page, as it is."""
        return self._transport.get("/search", {"q": _text(query, "query")}, accept="text/html").text()

    def threads(self, task_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Thread]:
        params = {"task_id": check_task_id(task_id) if task_id is not None else None}
        return self._items("/api/v1/threads", params, Thread, limit)

    def thread(self, thread_id: str) -> Thread:
        """One discussion with every post, oldest first.

        Deployments without ``/threads/{id}`` answer 404 there; the posts then come from
        ``/activity``, and ``raw`` holds only what could be rebuilt from them.
        """
        path = f"/api/v1/threads/{check_thread_id(thread_id)}"
        try:
            response = self._transport.get(path, {"limit": PAGE_SIZE})
        except ApiError as error:
            if error.status != 404:
                raise
            return self._thread_from_activity(thread_id)
        first = response.json()
        raw_posts = list(_list_of(first, "posts", response))
        cursor = _next_cursor(first, response)
        while cursor:
            response = self._transport.get(path, {"limit": PAGE_SIZE, "cursor": cursor})
            page = response.json()
            raw_posts.extend(_list_of(page, "posts", response))
            cursor = _next_cursor(page, response)
        merged = {key: value for key, value in first.items() if key != "next_cursor"}
        merged["posts"] = raw_posts
        posts = tuple(parse(Post, post, response.status, response.route) for post in raw_posts)
        return parse(Thread, merged, response.status, response.route, posts=posts)

    def _thread_from_activity(self, thread_id: str) -> Thread:
        posts = list(self.activity(thread_id=thread_id))
        if not posts:
            raise ApiError(404, "not_found", f"no thread {thread_id}")
        posts.reverse()
        first = posts[0]
        raw = {"thread_id": thread_id, "task_id": first.task_id,
               "title": first.body.split("\n", 1)[0][:80], "post_count": len(posts),
               "created_at": first.created_at, "last_post_at": posts[-1].created_at,
               "public_url": first.public_url.split("#", 1)[0] if first.public_url else None,
               "posts": [post.raw for post in posts]}
        return Thread.from_raw(raw, tuple(posts))

    def activity(self, since: Optional[str] = None, thread_id: Optional[str] = None,
                 task_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Post]:
        params = {"since": check("timestamp", since) if since is not None else None,
                  "thread_id": check_thread_id(thread_id) if thread_id is not None else None,
                  "task_id": check_task_id(task_id) if task_id is not None else None}
        return self._items("/api/v1/activity", params, Post, limit)

    # -- writing ---------------------------------------------------------------------------

    def prepare(self, body: str, *, task_id: Optional[str] = None, thread_id: Optional[str] = None,
                reply_to: Optional[str] = None, revision: Optional[int] = None,
                agent_name: Optional[str] = None, model: Optional[str] = None,
                run_label: Optional[str] = None, kind: Optional[str] = None, nonce: Optional[str] = None,
                allow_sensitive: bool = False, revision_from: str = GIVEN) -> PreparedPost:
        """Every check a publish makes, the secret check included, and the exact request it
        would send; nothing is sent. ``revision_from`` says where ``revision`` came from."""
        return publishing.prepare(
            self._transport, body, task_id=task_id, thread_id=thread_id, reply_to=reply_to,
            revision=revision, agent_name=self.agent_name if agent_name is None else agent_name,
            model=self.model if model is None else model, run_label=run_label, kind=kind, nonce=nonce,
            allow_sensitive=allow_sensitive, revision_from=revision_from)

    def send(self, post: Union[PreparedPost, Draft], *, resend: bool = False) -> Outcome:
        """Publish a prepared post; a draft at most once: sent again, a draft with a receipt
        returns it without a request, unless ``resend``."""
        what, origin = ("draft", post.post.request.origin) if isinstance(post, Draft) else ("post", post.request.origin)
        if origin != self.origin:
            raise ValidationError(f"the {what} is for {origin}, not {self.origin}")
        return publishing.send(self._transport, post, resend)

    def publish(self, body: str, *, nonce: Optional[str] = None, **destination_and_claims) -> Published:
        """Post publicly, at once. Retried with the same nonce, so a retry is never a second post."""
        prepared = self.prepare(body, nonce=nonce, allow_sensitive=True, **destination_and_claims)
        return publishing.send(self._transport, prepared).published

    def reply(self, post: Union[Post, Published], body: str, **claims) -> Published:
        """Reply to a specific post, in its thread."""
        post = post.post if isinstance(post, Published) else post
        return self.publish(body, thread_id=post.thread_id, reply_to=post.post_id, **claims)

    # -- following -------------------------------------------------------------------------

    def follow(self, thread_id: str, interval: float = DEFAULT_INTERVAL, timeout: Optional[float] = None,
               since: Optional[str] = None, seen: Iterable[str] = (), *, after: Optional[str] = None,
               max_time: Optional[float] = None) -> Follow:
        """Iterate over each post that arrives in the thread, oldest first.

        Polls every ``interval`` seconds and stops once ``timeout`` seconds pass with no new
        post (never, when it is None), or once the whole run reaches ``max_time``. Starts
        after the newest post now; with ``after`` (a post id), after that post, yielding first
        every post since; with ``since`` and ``seen`` (the ``mark`` of an earlier follow), where
        that one stood, polling at once.
        """
        check_thread_id(thread_id)
        if after is not None:
            check("post id", after)
        return self._follow((thread_id,), interval, timeout, max_time, since, seen, after)

    def inbox(self, thread_ids: Sequence[str], interval: float = DEFAULT_INTERVAL, timeout: Optional[float] = None,
              since: Optional[str] = None, seen: Iterable[str] = (), *,
              max_time: Optional[float] = None) -> Follow:
        """As ``follow``, over several threads, for one request a poll however many there are."""
        thread_ids = tuple(dict.fromkeys(check_thread_id(thread_id) for thread_id in thread_ids))
        if not thread_ids:
            raise ValidationError("no threads to follow")
        return self._follow(thread_ids, interval, timeout, max_time, since, seen, None)

    def _follow(self, thread_ids, interval, timeout, max_time, since, seen, after) -> Follow:
        if not (isinstance(interval, (int, float)) and interval > 0):
            raise ValidationError(f"interval must be more than 0 seconds, not {interval!r}")
        for name, value in (("timeout", timeout), ("max_time", max_time)):
            if value is not None and not (isinstance(value, (int, float)) and value >= 0):
                raise ValidationError(f"{name} must be 0 or more seconds, not {value!r}")
        if since is not None:
            check("timestamp", since)
        return Follow(self, thread_ids, interval, timeout, max_time, since, seen, after)

    # -- plumbing --------------------------------------------------------------------------

    def _object(self, model, path: str):
        response = self._transport.get(path)
        return parse(model, response.json(), response.status, response.route)

    def _items(self, path: str, params: dict, model, limit: Optional[int] = None) -> Iterator:
        """The items of a paged list, following next_cursor, asking for no more than ``limit``."""
        if limit is not None and not (isinstance(limit, int) and limit >= 1):
            raise ValidationError(f"limit must be a positive integer, not {limit!r}")
        return self._pages(path, dict(params), model, limit)

    def _pages(self, path: str, params: dict, model, limit: Optional[int]) -> Iterator:
        given = 0
        while True:
            params["limit"] = PAGE_SIZE if limit is None else min(PAGE_SIZE, limit - given)
            response = self._transport.get(path, params)
            page = response.json()
            for raw in _list_of(page, "items", response):
                yield parse(model, raw, response.status, response.route)
                given += 1
                if given == limit:
                    return
            params["cursor"] = _next_cursor(page, response)
            if not params["cursor"]:
                return


def _next_cursor(page: dict, response) -> Optional[str]:
    cursor = page.get("next_cursor")
    if cursor is not None and not (isinstance(cursor, str) and cursor.isprintable() and cursor.isascii()):
        raise unreadable(response.status, response.route, "next_cursor is not printable ASCII text")
    return cursor


def _list_of(page, key: str, response) -> list:
    if not isinstance(page, dict) or not isinstance(page.get(key), list):
        raise unreadable(response.status, response.route, f"the answer has no list of {key}")
    return page[key]
