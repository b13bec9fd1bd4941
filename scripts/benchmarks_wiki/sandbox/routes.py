"""The answer to each route of the interface, apart from how it is sent: :class:`Routes`,
for :class:`~benchmarks_wiki.sandbox.server.Portal` to mix in."""

import collections
import dataclasses
import datetime as _dt
import hashlib
import html
import json
import re
import secrets
import time
from urllib.parse import parse_qsl, unquote

from .catalogue import format_time, normalise_text, parse_time, plain_text, task_markdown

MAX_URL_BYTES = 8192
MAX_BODY_BYTES = 2048
MAX_CLAIM_CHARS = 64
DEFAULT_LIMIT = 50
MAX_LIMIT = 100
NONCE_TTL = _dt.timedelta(hours=24)
# What a portal keeps of the posts published to it, and of its cursors: past these, the
# oldest go, so that a portal that runs for days does so in bounded memory.
MAX_POSTS = 10000
MAX_CURSORS = 10000

NONCE_RE = re.compile(r"[A-Za-z0-9_-]{16,64}\Z")
DIGITS_RE = re.compile(r"[0-9]{1,9}\Z")
PLACES = ("task_id", "thread_id", "reply_to")
KINDS = ("result", "note", "question")
CLAIMS = ("agent_name", "model", "run_label")
PUBLISH_PARAMS = frozenset(("body", "revision", "kind", "nonce") + PLACES + CLAIMS)
LISTED = ("slug", "name", "has_problems", "problem_count", "splits", "metric", "license", "url")
SEARCH_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Search: {query} \u00b7 benchmarks.wiki</title></head>
<body><h1>Results for <q>{query}</q></h1>
<p>{benchmarks} benchmarks, {problems} problems</p>
<ul>
{items}
</ul></body></html>
"""
# What a browser sends when a person types the URL; anything else marks an embedded,
# scripted or cross-site request.
TYPED_FETCH = {"sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-user": "?1",
               "sec-fetch-dest": "document"}
BOT_NAME, BOT_MODEL = "checker-bot", "other-model"
BOT_REPLY = "Thanks. With temperature 0 I get the same; did you try more than one sample?"
JSON_TYPE = "application/json; charset=utf-8"


@dataclasses.dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: list = dataclasses.field(default_factory=list)


class Refusal(Exception):
    """A refusal found deep in a route, with the arguments of :func:`error_reply`."""


def json_reply(status, obj, headers=None):
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Reply(status, body, [("Content-Type", JSON_TYPE)] + list(headers or ()))


def error_reply(status, code, message, headers=None):
    return json_reply(status, {"error": {"code": code, "message": message}}, headers)


def parse_query(query):
    """The query's (name, value) pairs, and whether it was not UTF-8."""
    try:
        return parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="strict"), False
    except UnicodeDecodeError:
        return parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="replace"), True


class Routes:
    def _init_routes(self, max_posts, reply_after):
        self.max_posts, self.reply_after = max_posts, reply_after
        # (when due, created_at, post_id) of each reply a client's post is owed, oldest first,
        # at most max_posts: made once due, before the answer to the next request is.
        self._replies_due = collections.deque()
        # (nonce, address, fields) -> (time, post) of each use, oldest first. The post
        # itself is kept, so that a replay still answers with it once it is forgotten.
        self._nonces = collections.OrderedDict()
        self._published_ids = collections.deque()
        # token -> (listing, key after which the next page starts), oldest first.
        self._cursors = collections.OrderedDict()
        self._catalog_doc = None

    def _keep_published(self, post_id):
        self._published_ids.append(post_id)
        while len(self._published_ids) > self.max_posts:
            self.catalogue.remove_post(self._published_ids.popleft())

    def _answer(self, request):
        """The portal's own answer; an exception is a 500, its traceback in ``errors``."""
        raw_path, _, query = request.target.partition("?")
        pairs, bad_query = parse_query(query)
        try:
            url_bytes = len(self.origin) + len(request.target.encode("latin-1", "replace"))
            if url_bytes > MAX_URL_BYTES:
                raise Refusal(414, "uri_too_long", "the URL is %d bytes; at most %d" % (url_bytes, MAX_URL_BYTES))
            if request.method != "GET":
                raise Refusal(405, "method_not_allowed", "every route answers GET only", [("Allow", "GET")])
            if bad_query:
                raise Refusal(400, "invalid", "the query string is not valid UTF-8")
            seen = collections.Counter(name for name, _ in pairs)
            twice = sorted(name for name, n in seen.items() if n > 1)
            if twice:
                raise Refusal(400, "invalid", "parameter given more than once: %s" % ", ".join(twice))
            segments = [unquote(s) for s in raw_path.split("/")[1:]]
            with self._lock:
                self._reply_when_due()
                if segments == ["search"]:
                    return self._search(dict(pairs).get("q", ""))
                reply = None
                if segments[:2] == ["api", "v1"]:
                    reply = self._api_route(segments[2:], dict(pairs), request.headers, request.client_address)
            return _found(reply, "route", raw_path)
        except Refusal as refusal:
            return error_reply(*refusal.args)
        except Exception:
            self._note_error()
            return error_reply(500, "internal", "the sandbox failed; see portal.errors")

    def _reply_when_due(self):
        """Make checker-bot's replies now due, ``reply_after`` seconds after each post a client published."""
        while self._replies_due and self._replies_due[0][0] <= time.monotonic():
            _, created_at, post_id = self._replies_due.popleft()
            if post_id in self.catalogue.posts:  # else forgotten past the cap meanwhile
                made = self.catalogue.add_post(BOT_REPLY, reply_to=post_id, kind="note", agent_name=BOT_NAME,
                                               model=BOT_MODEL, created_at=created_at)
                self._keep_published(made["post_id"])

    def _api_route(self, rest, params, headers, address):
        cat, name = self.catalogue, rest[1] if len(rest) > 1 else None
        answers = {
            ("publish",): lambda: self._publish(params, headers, address),
            ("stats",): lambda: json_reply(200, cat.stats(format_time(self._now()))),
            ("benchmarks",): lambda: self._listing("benchmarks", params, [
                (slug, {key: cat.benchmarks[slug][key] for key in LISTED}) for slug in sorted(cat.benchmarks)]),
            ("benchmarks", "*"): lambda: json_reply(200, _found(cat.benchmarks.get(name), "benchmark", name)),
            ("benchmarks", "*", "tasks"): lambda: self._tasks(name, params),
            ("tasks", "*"): lambda: json_reply(200, _found(cat.task(name), "task", name)),
            ("tasks", "*", "markdown"): lambda: self._markdown(name),
            ("catalog",): lambda: self._catalog(headers),
            ("threads",): lambda: self._thread_list(params),
            ("threads", "*"): lambda: self._thread(name, params),
            ("activity",): lambda: self._activity(params),
        }
        # The route's shape: its first segment, "*" for the name that follows, then the rest.
        return answers.get(tuple(rest[:1] + ["*"] * len(rest[1:2]) + rest[2:]), lambda: None)()

    def _listing(self, scope, params, entries, descending=False, name="items", head=()):
        """The page of ``entries``, ``(key, item)`` pairs by rising key (or falling), after the
        cursor's key: keys, not places, so that a post made while a client pages moves nothing."""
        raw = params.get("limit", "")
        if raw and not (DIGITS_RE.match(raw) and 1 <= int(raw) <= MAX_LIMIT):
            raise Refusal(400, "invalid", "limit must be an integer from 1 to %d" % MAX_LIMIT)
        limit = int(raw or DEFAULT_LIMIT)
        if params.get("cursor"):
            found = self._cursors.get(params["cursor"])
            if found is None:
                raise Refusal(400, "invalid_cursor", "unknown or stale cursor")
            if found[0] != scope:
                raise Refusal(400, "invalid_cursor", "the cursor belongs to another listing")
            entries = [entry for entry in entries if (entry[0] < found[1] if descending else entry[0] > found[1])]
        cursor = None
        if len(entries) > limit:
            cursor = secrets.token_urlsafe(12)
            self._cursors[cursor] = (scope, entries[limit - 1][0])
            if len(self._cursors) > MAX_CURSORS:
                self._cursors.popitem(last=False)
        return json_reply(200, {**dict(head), name: [item for _, item in entries[:limit]], "next_cursor": cursor})

    def _tasks(self, slug, params):
        bench = _found(self.catalogue.benchmarks.get(slug), "benchmark", slug)
        split = params.get("split", "")
        if split and split not in bench["splits"]:
            raise Refusal(400, "invalid", "%s has no split %r; its splits: %s"
                          % (slug, split, ", ".join(bench["splits"]) or "none"))
        tasks = [task for task in self.catalogue.tasks[slug] if task["split"] == split or not split]
        return self._listing("tasks/%s/%s" % (slug, split), params, list(enumerate(tasks)))

    def _markdown(self, task_id):
        task = _found(self.catalogue.task(task_id), "task", task_id)
        text = task_markdown(task, self.catalogue.benchmarks[task["benchmark"]])
        return Reply(200, text.encode("utf-8"), [("Content-Type", "text/markdown; charset=utf-8")])

    def _catalog(self, headers):
        cat = self.catalogue
        if self._catalog_doc is None or self._catalog_doc[0] != cat.version:
            generated = format_time(self._now())
            doc = {"generated_at": generated, "stats": cat.stats(generated),
                   "benchmarks": [cat.benchmarks[s] for s in sorted(cat.benchmarks)]}
            body = json_reply(200, doc).body
            self._catalog_doc = (cat.version, body, '"%s"' % hashlib.sha256(body).hexdigest()[:32])
        _, body, etag = self._catalog_doc
        asked = ",".join(headers.get_all("If-None-Match", ()))
        # A weak tag matches as well: the compressed catalog's is the weak form of its own.
        wanted = {tag.strip().removeprefix("W/") for tag in asked.split(",")}
        if etag in wanted or "*" in wanted:
            return Reply(304, b"", [("ETag", etag)])
        return Reply(200, body, [("Content-Type", JSON_TYPE), ("ETag", etag)])

    def _search(self, query):
        words = query.lower().split()

        def found(*texts):
            text = " ".join(texts).lower()
            return words and all(word in text for word in words)

        cat = self.catalogue
        benches = [bench for slug, bench in sorted(cat.benchmarks.items())
                   if found(slug, bench["name"], bench["description"])]
        tasks = [task for slug in sorted(cat.tasks) for task in cat.tasks[slug]
                 if found(slug, task["key"], plain_text(task["body"]))]
        esc = html.escape
        items = ['<li><a href="%s">%s</a> \u2014 %s</li>' % (esc(b["url"]), esc(b["name"]), esc(b["description"]))
                 for b in benches]
        items += ['<li><a href="%s">%s / %s</a><p>%s</p></li>' % (
            esc(t["url"]), esc(t["benchmark"]), esc(t["key"]), esc(" ".join(plain_text(t["body"]).split())[:160]))
            for t in tasks[:50]]
        page = SEARCH_PAGE.format(query=esc(query), benchmarks=len(benches), problems=len(tasks),
                                  items="\n".join(items))
        return Reply(200, page.encode("utf-8"), [("Content-Type", "text/html; charset=utf-8")])

    def _thread_list(self, params):
        cat, task_id = self.catalogue, params.get("task_id", "")
        if task_id:
            _found(cat.task(task_id), "task", task_id)
        # Threads list by their latest post, ties broken by age.
        entries = sorted((((thread["last_post_at"], cat.thread_seq[tid]), thread) for tid, thread in cat.threads.items()
                          if not task_id or thread["task_id"] == task_id), key=lambda e: e[0], reverse=True)
        return self._listing("threads/%s" % task_id, params, entries, descending=True)

    def _thread(self, thread_id, params):
        cat = self.catalogue
        _found(cat.threads.get(thread_id), "thread", thread_id)
        entries = [((created, seq), cat.posts[pid]) for created, seq, pid in cat.thread_order[thread_id]]
        return self._listing("thread/%s" % thread_id, params, entries, name="posts", head=cat.threads[thread_id])

    def _activity(self, params):
        cat = self.catalogue
        since, thread_id, task_id = (params.get(n, "") for n in ("since", "thread_id", "task_id"))
        if since:
            try:
                moment = parse_time(since)
            except ValueError:
                raise Refusal(400, "invalid", "since must be an RFC 3339 date-time, "
                              "such as 2026-11-29T10:15:02Z") from None
            # Times are kept to the second: a fraction keeps the posts of the next one on.
            since = format_time(moment + _dt.timedelta(seconds=1 if moment.microsecond else 0))
        if thread_id:
            _found(cat.threads.get(thread_id), "thread", thread_id)
        if task_id:
            _found(cat.task(task_id), "task", task_id)
        order = cat.thread_order[thread_id] if thread_id else cat.activity
        entries = [((created, seq), cat.posts[pid]) for created, seq, pid in reversed(order)
                   if created >= since and (not task_id or cat.posts[pid]["task_id"] == task_id)]
        return self._listing("activity/%s/%s/%s" % (since, thread_id, task_id), params, entries,
                             descending=True)

    def _publish(self, params, headers, address):
        for name, value in headers.items():
            if name.lower().startswith("sec-fetch-") and TYPED_FETCH.get(name.lower()) != value.strip():
                raise Refusal(403, "fetch_metadata_refused",
                              "refused %s: %s; send no Sec-Fetch-* headers" % (name, value))
        fields = _submission(params)
        nonce = fields.pop("nonce")
        task = self._place(fields)
        if fields["revision"] is None:
            fields["revision"] = task["revision"]
        elif fields["revision"] > task["revision"]:
            raise Refusal(400, "invalid", "task %s is at revision %d; there is no revision %d"
                          % (task["task_id"], task["revision"], fields["revision"]))
        if fields["kind"] is None:
            fields["kind"] = "result" if fields["task_id"] else "note"
        now, use = self._now(), (nonce, address, tuple(sorted(fields.items())))
        # A use without a nonce is never kept.
        seen = self._nonces.get(use)
        if seen is not None and now - seen[0] < NONCE_TTL:
            return json_reply(200, {"created": False, "post": seen[1]})
        made = self.catalogue.add_post(created_at=format_time(now), **fields)
        self._keep_published(made["post_id"])
        if self.reply_after is not None and len(self._replies_due) < self.max_posts:
            created_at = format_time(now + _dt.timedelta(seconds=self.reply_after))
            self._replies_due.append((time.monotonic() + self.reply_after, created_at, made["post_id"]))
        if nonce is not None:
            self._nonces[use] = (now, made)
            self._nonces.move_to_end(use)
            # At most max_posts uses are kept, since each made a post.
            while len(self._nonces) > self.max_posts or now - next(iter(self._nonces.values()))[0] >= NONCE_TTL:
                self._nonces.popitem(last=False)
        return json_reply(201, {"created": True, "post": made})

    def _place(self, fields):
        """The task that ``fields`` post under; a reply's thread is its target's."""
        cat = self.catalogue
        if fields["task_id"] is not None:
            return _found(cat.task(fields["task_id"]), "task", fields["task_id"])
        thread_id, reply_to = fields["thread_id"], fields["reply_to"]
        if thread_id is not None:
            _found(cat.threads.get(thread_id), "thread", thread_id)
        if reply_to is not None:
            target = _found(cat.posts.get(reply_to), "post", reply_to)
            if thread_id not in (None, target["thread_id"]):
                raise Refusal(400, "invalid", "post %s is in thread %s, not %s"
                              % (reply_to, target["thread_id"], thread_id))
            fields["thread_id"] = thread_id = target["thread_id"]
        return cat.task(cat.threads[thread_id]["task_id"])


def _found(value, what, name):
    if value is None:
        raise Refusal(404, "not_found", "no %s %s" % (what, name))
    return value


def _submission(params):
    """Publish's parameters, normalised, checked in a fixed order: the first problem is reported."""
    unknown = sorted(set(params) - PUBLISH_PARAMS)
    if unknown:
        raise Refusal(400, "invalid", "unknown parameter: %s" % ", ".join(unknown))
    raw = params.get("body") or ""
    if not raw:
        raise Refusal(400, "invalid", "body is required")
    size = len(raw.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY_BYTES:
        raise Refusal(400, "body_too_long", "body is %d bytes of UTF-8; at most %d" % (size, MAX_BODY_BYTES))
    fields = {"body": normalise_text(raw).rstrip()}
    if not fields["body"]:
        raise Refusal(400, "invalid", "body is only whitespace")
    for name in CLAIMS:
        value = params.get(name)
        if value is not None and not 1 <= len(value) <= MAX_CLAIM_CHARS:
            raise Refusal(400, "invalid", "%s must be 1 to %d characters" % (name, MAX_CLAIM_CHARS))
        fields[name] = None if value is None else normalise_text(value)
    fields["kind"] = params.get("kind")
    if fields["kind"] not in (None,) + KINDS:
        raise Refusal(400, "invalid", "kind must be one of %s" % ", ".join(KINDS))
    fields["nonce"] = params.get("nonce")
    if fields["nonce"] is not None and not NONCE_RE.match(fields["nonce"]):
        raise Refusal(400, "invalid", "nonce must be 16 to 64 characters of A-Z a-z 0-9 _ -")
    revision = params.get("revision")
    if revision is not None and not (DIGITS_RE.match(revision) and int(revision) >= 1):
        raise Refusal(400, "invalid", "revision must be a positive integer")
    fields["revision"] = None if revision is None else int(revision)
    for name in PLACES:
        if params.get(name) == "":
            raise Refusal(400, "invalid", "%s is empty" % name)
        fields[name] = params.get(name)
    if fields["task_id"] is not None and (fields["thread_id"] is not None or fields["reply_to"] is not None):
        raise Refusal(400, "invalid", "task_id opens a new thread; it cannot be combined "
                      "with thread_id or reply_to")
    if all(fields[name] is None for name in PLACES):
        raise Refusal(400, "invalid", "one of task_id, thread_id or reply_to is required")
    return fields

