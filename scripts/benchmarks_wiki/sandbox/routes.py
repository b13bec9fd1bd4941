"""Deciding the answer to each route of the interface, publish included.

:class:`Routes` is mixed into :class:`~benchmarks_wiki.sandbox.server.Portal`; it uses the
portal's ``catalogue``, ``legacy``, ``origin``, ``published``, ``_bot``, ``_lock``,
``_note_error()`` and ``_now()``, and keeps the nonces, the published posts'
order and the cursor key itself.
"""

import base64
import bisect
import collections
import datetime as _dt
import hashlib
import hmac
import html
import json
import re
import secrets
import traceback
from urllib.parse import unquote

from .catalogue import (Catalogue, format_time, normalise_body, normalise_text, parse_time,
                        plain_text, task_markdown)
from .replies import JSON_TYPE, Refusal, Reply, error_reply, headers_get, json_reply

MAX_URL_BYTES = 8192
MAX_BODY_BYTES = 2048
MAX_CLAIM_CHARS = 64
DEFAULT_LIMIT = 50
MAX_LIMIT = 100
NONCE_TTL = _dt.timedelta(hours=24)
# Posts published to a portal that it keeps (those of its catalogue are kept apart and
# always): past this, the oldest published ones are forgotten, so that a portal that runs
# for days keeps working in bounded memory.
MAX_POSTS = 10000

NONCE_RE = re.compile(r"[A-Za-z0-9_-]{16,64}\Z")
DIGITS_RE = re.compile(r"[0-9]{1,9}\Z")
PUBLISH_PARAMS = frozenset(
    ("body", "task_id", "thread_id", "reply_to", "revision", "agent_name", "model",
     "run_label", "kind", "nonce")
)
KINDS = ("result", "note", "question")
CLAIMS = ("agent_name", "model", "run_label")
# What a browser sends when a person types the URL; anything else marks an embedded,
# scripted or cross-site request.
TYPED_FETCH = {
    "sec-fetch-site": "none",
    "sec-fetch-mode": "navigate",
    "sec-fetch-user": "?1",
    "sec-fetch-dest": "document",
}


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Routes:
    """The answers of the interface, for a portal to mix in."""

    def _init_routes(self, max_posts):
        if max_posts < 1:
            raise ValueError("max_posts must be at least 1")
        self.max_posts = max_posts
        # nonce -> its uses, oldest first: (time, address, fields, post). The post object
        # itself is kept, so that a replay still answers with it once it is forgotten.
        self._nonces = {}
        # (time, nonce) of every use, oldest first, so that expired ones go from the front.
        self._nonce_order = collections.deque()
        # Ids of the posts published here, oldest first.
        self._published_ids = collections.deque()
        self._cursor_key = secrets.token_bytes(16)
        self._catalog_doc = None

    def forget_nonces(self):
        """Forget every kept nonce, as if 24 hours had passed."""
        with self._lock:
            self._nonces.clear()
            self._nonce_order.clear()

    def _keep_published(self, post_id):
        """Count a post published here (by a client or the reply bot), and forget the
        oldest ones past ``max_posts``; under the lock."""
        self._published_ids.append(post_id)
        while len(self._published_ids) > self.max_posts:
            oldest = self._published_ids.popleft()
            if oldest in self.catalogue.posts:
                self.catalogue.remove_post(oldest)

    def _remember_nonce(self, nonce, use):
        """Keep a nonce's use for 24 hours, and let go of those older than that; at most
        ``max_posts`` of them, since each made a post."""
        self._nonces.setdefault(nonce, []).append(use)
        order = self._nonce_order
        order.append((use[0], nonce))
        now = use[0]
        while order and (now - order[0][0] >= NONCE_TTL or len(order) > self.max_posts):
            _, old = order.popleft()
            uses = self._nonces[old]
            # Uses of one nonce are kept in the order they were made, as the queue is.
            del uses[0]
            if not uses:
                del self._nonces[old]

    def invalidate_cursors(self):
        """Make every cursor handed out so far stale (400 ``invalid_cursor``)."""
        with self._lock:
            self._cursor_key = secrets.token_bytes(16)

    # -- routing

    def _answer(self, method, raw_path, target, pairs, bad_query, headers, address, scheme):
        """The answer to a request no fault has taken over: a refusal becomes its JSON
        error, and an unexpected exception a 500 whose traceback goes to ``errors``."""
        try:
            return self._route(method, raw_path, target, pairs, bad_query, headers, address,
                               scheme)
        except Refusal as refusal:
            return error_reply(refusal.status, refusal.code, refusal.message, refusal.headers)
        except Exception:
            self._note_error(traceback.format_exc())
            return error_reply(500, "internal", "the sandbox failed; see portal.errors")

    def _route(self, method, raw_path, target, pairs, bad_query, headers, address, scheme):
        if scheme == "http":
            if raw_path == "/api/v1/publish":
                raise Refusal(403, "https_required", "publish is accepted over HTTPS only")
            return Reply(301, b"", [("Location", self.origin + target)])
        self._check_request(method, target, pairs, bad_query)
        segments = [unquote(s) for s in raw_path.split("/")[1:]]
        params = dict(pairs)
        if segments == ["search"]:
            return self._search(params.get("q", ""))
        if segments[:2] != ["api", "v1"] or len(segments) < 3:
            raise Refusal(404, "not_found", "no route %s" % raw_path)
        with self._lock:
            reply = self._api_route(method, segments[2:], params, headers, address)
        if reply is None:
            raise Refusal(404, "not_found", "no route %s" % raw_path)
        return reply

    def _check_request(self, method, target, pairs, bad_query):
        """Refuse what no route answers: an over-long URL, a method other than GET or
        HEAD, a query that is not UTF-8, a parameter given twice."""
        url_bytes = len(self.origin.encode("ascii")) + len(target.encode("latin-1", "replace"))
        if url_bytes > MAX_URL_BYTES:
            raise Refusal(414, "uri_too_long", "the URL is %d bytes; at most %d"
                          % (url_bytes, MAX_URL_BYTES))
        if method not in ("GET", "HEAD"):
            raise Refusal(405, "method_not_allowed", "every route answers GET only",
                          [("Allow", "GET")])
        if bad_query:
            raise Refusal(400, "invalid", "the query string is not valid UTF-8")
        if len(set(name for name, _ in pairs)) != len(pairs):
            seen = collections.Counter(name for name, _ in pairs)
            twice = sorted(name for name, n in seen.items() if n > 1)
            raise Refusal(400, "invalid", "parameter given more than once: %s" % ", ".join(twice))

    def _api_route(self, method, rest, params, headers, address):
        """The answer for the path segments after ``/api/v1``, or None for no route."""
        head, size = rest[0], len(rest)
        if head == "publish" and size == 1:
            if method != "GET":
                raise Refusal(405, "method_not_allowed", "publish is a GET request",
                              [("Allow", "GET")])
            return self._publish(params, headers, address)
        if head == "stats" and size == 1:
            return json_reply(200, self.catalogue.stats(format_time(self._now())))
        if head == "benchmarks" and size == 1:
            return self._benchmarks(params)
        if head == "benchmarks" and size == 2:
            return self._benchmark(rest[1])
        if head == "benchmarks" and size == 3 and rest[2] == "tasks":
            return self._tasks(rest[1], params)
        if head == "tasks" and size == 2:
            return json_reply(200, self._task_or_404(rest[1]))
        if head == "tasks" and size == 3 and rest[2] == "markdown":
            return self._markdown(rest[1])
        if head == "catalog" and size == 1:
            return self._catalog(headers)
        if head == "threads" and size == 1:
            return self._threads_list(params)
        if head == "threads" and size == 2:
            return self._thread(rest[1], params)
        if head == "activity" and size == 1:
            return self._activity(params)
        return None

    # -- paging

    def _limit(self, params):
        raw = params.get("limit", "")
        if raw == "":
            return DEFAULT_LIMIT
        if not DIGITS_RE.match(raw) or not 1 <= int(raw) <= MAX_LIMIT:
            raise Refusal(400, "invalid", "limit must be an integer from 1 to %d" % MAX_LIMIT)
        return int(raw)

    def _make_cursor(self, scope, key):
        payload = json.dumps([scope, key], separators=(",", ":")).encode("utf-8")
        tag = hmac.new(self._cursor_key, payload, hashlib.sha256).digest()[:12]
        return _b64(payload) + "." + _b64(tag)

    def _read_cursor(self, scope, params):
        """The key stored in the request's cursor for this listing, or None without one."""
        token = params.get("cursor", "")
        if token == "":
            return None
        try:
            encoded, _, tag = token.partition(".")
            payload = _unb64(encoded)
            expected = hmac.new(self._cursor_key, payload, hashlib.sha256).digest()[:12]
            if not hmac.compare_digest(expected, _unb64(tag)):
                raise ValueError("bad tag")
            found_scope, key = json.loads(payload.decode("utf-8"))
        except (ValueError, TypeError, UnicodeDecodeError):
            raise Refusal(400, "invalid_cursor", "unknown or stale cursor") from None
        if found_scope != scope:
            raise Refusal(400, "invalid_cursor", "the cursor belongs to another listing")
        return tuple(key) if isinstance(key, list) else key

    # -- reads

    def _benchmarks(self, params):
        limit = self._limit(params)
        after = self._read_cursor("benchmarks", params)
        slugs = sorted(self.catalogue.benchmarks)
        if after is not None:
            slugs = slugs[bisect.bisect_right(slugs, after):]
        page = slugs[:limit]
        items = [Catalogue.listed(self.catalogue.benchmarks[s]) for s in page]
        more = len(slugs) > limit
        return json_reply(200, {"items": items, "next_cursor":
                                 self._make_cursor("benchmarks", page[-1]) if more else None})

    def _benchmark_or_404(self, slug):
        bench = self.catalogue.benchmarks.get(slug)
        if bench is None:
            raise Refusal(404, "not_found", "no benchmark %s" % slug)
        return bench

    def _benchmark(self, slug):
        return json_reply(200, self._benchmark_or_404(slug))

    def _tasks(self, slug, params):
        bench = self._benchmark_or_404(slug)
        split = params.get("split", "")
        if split and split not in bench["splits"]:
            raise Refusal(400, "invalid", "%s has no split %r; its splits: %s"
                           % (slug, split, ", ".join(bench["splits"]) or "none"))
        limit = self._limit(params)
        scope = "tasks/%s/%s" % (slug, split)
        start = self._read_cursor(scope, params) or 0
        if not isinstance(start, int):
            raise Refusal(400, "invalid_cursor", "unknown or stale cursor")
        tasks = self.catalogue.tasks[slug]
        if split:
            tasks = [t for t in tasks if t["split"] == split]
        page = tasks[start:start + limit]
        end = start + len(page)
        return json_reply(200, {"items": page, "next_cursor":
                                 self._make_cursor(scope, end) if end < len(tasks) else None})

    def _task_or_404(self, task_id):
        task = self.catalogue.task(task_id)
        if task is None:
            raise Refusal(404, "not_found", "no task %s" % task_id)
        return task

    def _markdown(self, task_id):
        task = self._task_or_404(task_id)
        text = task_markdown(task, self.catalogue.benchmarks[task["benchmark"]])
        return Reply(200, text.encode("utf-8"), [("Content-Type", "text/markdown; charset=utf-8")])

    def _catalog(self, headers):
        cat = self.catalogue
        cached = self._catalog_doc
        if cached is None or cached[0] != cat.version:
            generated = format_time(self._now())
            doc = {
                "generated_at": generated,
                "stats": cat.stats(generated),
                "benchmarks": [cat.benchmarks[s] for s in sorted(cat.benchmarks)],
            }
            body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            etag = '"%s"' % hashlib.sha256(body).hexdigest()[:32]
            cached = self._catalog_doc = (cat.version, body, etag)
        _, body, etag = cached
        wanted = {tag.strip() for tag in headers_get(headers, "If-None-Match", "").split(",")}
        wanted = {tag[2:] if tag.startswith("W/") else tag for tag in wanted if tag}
        if etag in wanted or "*" in wanted:
            return Reply(304, b"", [("ETag", etag)])
        return Reply(200, body, [("Content-Type", JSON_TYPE), ("ETag", etag)])

    def _search(self, query):
        words = query.lower().split()
        benches, tasks = [], []
        with self._lock:
            cat = self.catalogue
            if words:
                for slug in sorted(cat.benchmarks):
                    bench = cat.benchmarks[slug]
                    text = " ".join((slug, bench["name"], bench["description"])).lower()
                    if all(w in text for w in words):
                        benches.append(bench)
                for slug in sorted(cat.tasks):
                    for task in cat.tasks[slug]:
                        if all(w in cat.search_text(task) for w in words):
                            tasks.append(task)
        shown = tasks[:50]
        esc = html.escape
        out = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            "<title>Search: %s \u00b7 benchmarks.wiki</title></head><body>" % esc(query),
            '<form action="/search" method="get"><input type="search" name="q" value="%s">'
            "<button>Search</button></form>" % esc(query),
            "<h1>Results for <q>%s</q></h1>" % esc(query),
            '<p class="count">%d benchmarks, %d problems</p>' % (len(benches), len(tasks)),
            '<ul class="benchmarks">',
        ]
        for bench in benches:
            out.append('<li><a href="%s">%s</a> \u2014 %s</li>'
                       % (esc(bench["url"]), esc(bench["name"]), esc(bench["description"])))
        out.append('</ul><ul class="tasks">')
        for task in shown:
            snippet = " ".join(plain_text(task["body"]).split())[:160]
            out.append('<li><a href="%s">%s / %s</a><p>%s</p></li>'
                       % (esc(task["url"]), esc(task["benchmark"]), esc(task["key"]),
                          esc(snippet)))
        out.append("</ul></body></html>")
        return Reply(200, "\n".join(out).encode("utf-8"),
                      [("Content-Type", "text/html; charset=utf-8")])

    def _threads_list(self, params):
        task_id = params.get("task_id", "")
        if task_id:
            self._task_or_404(task_id)
        limit = self._limit(params)
        scope = "threads/%s" % task_id
        after = self._read_cursor(scope, params)
        cat = self.catalogue
        keyed = sorted(((t["last_post_at"], cat._thread_seq[tid]), t)
                       for tid, t in cat.threads.items()
                       if not task_id or t["task_id"] == task_id)
        keyed.reverse()
        if after is not None:
            keyed = [(k, t) for k, t in keyed if k < after]
        page = keyed[:limit]
        more = len(keyed) > limit
        return json_reply(200, {"items": [t for _, t in page], "next_cursor":
                                 self._make_cursor(scope, list(page[-1][0])) if more else None})

    def _thread(self, thread_id, params):
        cat = self.catalogue
        if self.legacy or thread_id not in cat.threads:
            raise Refusal(404, "not_found", "no thread %s" % thread_id)
        limit = self._limit(params)
        scope = "thread/%s" % thread_id
        after = self._read_cursor(scope, params)
        order = cat._thread_order[thread_id]
        start = 0 if after is None else bisect.bisect_left(order, (after[0], after[1] + 1))
        page = order[start:start + limit]
        more = start + limit < len(order)
        doc = dict(cat.threads[thread_id])
        doc["posts"] = [cat.posts[pid] for _, _, pid in page]
        doc["next_cursor"] = self._make_cursor(scope, list(page[-1][:2])) if more else None
        return json_reply(200, doc)

    def _activity(self, params):
        cat = self.catalogue
        since_text, thread_id, task_id = (params.get(n, "") for n in ("since", "thread_id", "task_id"))
        since = ""
        if since_text:
            try:
                moment = parse_time(since_text)
            except ValueError:
                raise Refusal(400, "invalid", "since must be an RFC 3339 date-time, "
                               "such as 2026-11-29T10:15:02Z") from None
            if moment.microsecond:
                moment += _dt.timedelta(seconds=1)
            since = format_time(moment)
        if thread_id and thread_id not in cat.threads:
            raise Refusal(404, "not_found", "no thread %s" % thread_id)
        if task_id:
            self._task_or_404(task_id)
        limit = self._limit(params)
        scope = "activity/%s/%s/%s" % (since, thread_id, task_id)
        after = self._read_cursor(scope, params)
        order = cat._thread_order[thread_id] if thread_id else cat._activity
        index = len(order) if after is None else bisect.bisect_left(order, (after[0], after[1]))
        items, last, more = [], None, False
        while index > 0:
            index -= 1
            created, seq, pid = order[index]
            if created < since:
                break
            post = cat.posts[pid]
            if task_id and post["task_id"] != task_id:
                continue
            if len(items) == limit:
                more = True
                break
            items.append(post)
            last = (created, seq)
        return json_reply(200, {"items": items, "next_cursor":
                                 self._make_cursor(scope, list(last)) if more else None})


    # -- the write

    def _publish(self, params, headers, address):
        _check_fetch_metadata(headers)
        post = _read_submission(params)
        task, destination = self._destination(post)
        if post.revision is None:
            post.revision = task["revision"]
        elif post.revision > task["revision"]:
            raise Refusal(400, "invalid", "task %s is at revision %d; there is no revision %d"
                          % (task["task_id"], task["revision"], post.revision))
        if post.kind is None:
            post.kind = "result" if post.task_id is not None else "note"
        claims = post.claims
        fields = (destination, post.revision, claims["agent_name"], claims["model"],
                  claims["run_label"], post.kind, post.reply_to, post.body)
        now = self._now()
        original = self._replayed(post.nonce, address, fields, now)
        if original is not None:
            reply = json_reply(200, {"created": False, "post": original})
        else:
            reply = self._record(post, address, fields, now)
        return reply

    def _destination(self, post):
        """The task a publish is about and where it posts: ``("task", task_id)`` opening a
        thread, or ``("thread", thread_id)``; a reply takes its target's thread."""
        cat = self.catalogue
        if post.task_id is not None:
            return self._task_or_404(post.task_id), ("task", post.task_id)
        if post.thread_id is not None and post.thread_id not in cat.threads:
            raise Refusal(404, "not_found", "no thread %s" % post.thread_id)
        if post.reply_to is not None:
            target = cat.posts.get(post.reply_to)
            if target is None:
                raise Refusal(404, "not_found", "no post %s" % post.reply_to)
            if post.thread_id is not None and post.thread_id != target["thread_id"]:
                raise Refusal(400, "invalid", "post %s is in thread %s, not %s"
                              % (post.reply_to, target["thread_id"], post.thread_id))
            post.thread_id = target["thread_id"]
        task = cat.task(cat.threads[post.thread_id]["task_id"])
        return task, ("thread", post.thread_id)

    def _replayed(self, nonce, address, fields, now):
        """The post an earlier request with this nonce, address and fields made within the
        last 24 hours, or None."""
        if nonce is None:
            return None
        for seen_at, seen_address, seen_fields, post in self._nonces.get(nonce, ()):
            if now - seen_at < NONCE_TTL and seen_address == address and seen_fields == fields:
                return post
        return None

    def _record(self, post, address, fields, now):
        """Add a new post to the catalogue, remember its nonce, and answer 201."""
        made = self.catalogue.add_post(post.body, task_id=post.task_id,
                                       thread_id=post.thread_id, reply_to=post.reply_to,
                                       kind=post.kind, revision=post.revision, created_at=now,
                                       **post.claims)
        self.published += 1
        self._keep_published(made["post_id"])
        if self._bot is not None:
            self._bot.schedule(made["post_id"])
        if post.nonce is not None:
            self._remember_nonce(post.nonce, (now, address, fields, made))
        return json_reply(201, {"created": True, "post": made})


class _Submission:
    """A publish request's parameters, checked and normalised."""

    __slots__ = ("body", "claims", "kind", "nonce", "revision", "task_id", "thread_id",
                 "reply_to")


def _check_fetch_metadata(headers):
    for name, value in headers:
        lname = name.lower()
        if lname.startswith("sec-fetch-") and TYPED_FETCH.get(lname) != value.strip():
            raise Refusal(403, "fetch_metadata_refused",
                          "refused %s: %s; send no Sec-Fetch-* headers" % (name, value))


def _read_submission(params):
    """Check publish's parameters one by one, in a fixed order so that the first problem
    is the one reported; nothing here looks at the catalogue."""
    unknown = sorted(set(params) - PUBLISH_PARAMS)
    if unknown:
        raise Refusal(400, "invalid", "unknown parameter: %s" % ", ".join(unknown))
    post = _Submission()
    post.body = _read_body(params.get("body"))
    post.claims = {name: _read_claim(name, params.get(name)) for name in CLAIMS}
    post.kind = params.get("kind")
    if post.kind is not None and post.kind not in KINDS:
        raise Refusal(400, "invalid", "kind must be one of %s" % ", ".join(KINDS))
    post.nonce = params.get("nonce")
    if post.nonce is not None and not NONCE_RE.match(post.nonce):
        raise Refusal(400, "invalid", "nonce must be 16 to 64 characters of A-Z a-z 0-9 _ -")
    post.revision = params.get("revision")
    if post.revision is not None:
        if not DIGITS_RE.match(post.revision) or int(post.revision) < 1:
            raise Refusal(400, "invalid", "revision must be a positive integer")
        post.revision = int(post.revision)
    post.task_id, post.thread_id, post.reply_to = _read_place(params)
    return post


def _read_body(raw_body):
    if raw_body is None or raw_body == "":
        raise Refusal(400, "invalid", "body is required")
    size = len(raw_body.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY_BYTES:
        raise Refusal(400, "body_too_long", "body is %d bytes of UTF-8; at most %d"
                      % (size, MAX_BODY_BYTES))
    body = normalise_body(raw_body)
    if not body:
        raise Refusal(400, "invalid", "body is only whitespace")
    return body


def _read_claim(name, value):
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_CLAIM_CHARS:
        raise Refusal(400, "invalid", "%s must be 1 to %d characters" % (name, MAX_CLAIM_CHARS))
    return normalise_text(value)


def _read_place(params):
    """``task_id``, ``thread_id`` and ``reply_to``: one way of saying where the post goes."""
    names = ("task_id", "thread_id", "reply_to")
    task_id, thread_id, reply_to = (params.get(name) for name in names)
    for name, value in zip(names, (task_id, thread_id, reply_to)):
        if value == "":
            raise Refusal(400, "invalid", "%s is empty" % name)
    if task_id is not None and (thread_id is not None or reply_to is not None):
        raise Refusal(400, "invalid", "task_id opens a new thread; it cannot be combined "
                      "with thread_id or reply_to")
    if task_id is None and thread_id is None and reply_to is None:
        raise Refusal(400, "invalid", "one of task_id, thread_id or reply_to is required")
    return task_id, thread_id, reply_to
