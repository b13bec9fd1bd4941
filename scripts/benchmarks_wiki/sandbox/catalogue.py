"""The portal's content: :class:`Catalogue`, its ready-made builders, and the helpers for
ids, times and the Markdown rendering of a task."""

import bisect
import collections
import datetime as _dt
import itertools
import json
import re
import unicodedata
import uuid

from . import data

PUBLIC_ORIGIN = "https://benchmarks.wiki"
# Task ids are uuid5 names under this namespace, so the same catalogue always yields the
# same ids and tests may hard-code them.
TASK_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://benchmarks.wiki/tasks")

TITLE_CHARS = 80
# The size of the large catalogue, unless asked otherwise.
LARGE_BENCHMARKS = 120
LARGE_TASKS = 10000
LARGE_THREAD_POSTS = 10000
UTC = _dt.timezone.utc

_TIME_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)


# ---------------------------------------------------------------------------- time


def whole_second_utc(moment):
    """``moment`` in UTC without its microseconds; a naive one is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def format_time(moment):
    """RFC 3339 in UTC, one-second resolution, trailing ``Z``."""
    return whole_second_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text):
    """Parse an RFC 3339 date-time (``Z`` or a numeric offset) into an aware datetime."""
    match = _TIME_RE.match(text)
    if not match:
        raise ValueError("not an RFC 3339 date-time: %r" % (text,))
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7), match.group(8)
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    if zone in ("Z", "z"):
        offset = _dt.timedelta(0)
    else:
        sign = -1 if zone[0] == "-" else 1
        offset = sign * _dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    moment = _dt.datetime(year, month, day, hour, minute, second, micro,
                          tzinfo=_dt.timezone(offset))
    return moment.astimezone(UTC)


# ---------------------------------------------------------------------------- text


def normalise_text(text):
    """Unicode NFC with every line ending turned into ``\\n``."""
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalise_body(text):
    """The portal's comparison form of a post body."""
    return normalise_text(text).rstrip()


def _title_of(body):
    for line in body.split("\n"):
        line = line.strip()
        if line:
            if len(line) > TITLE_CHARS:
                line = line[: TITLE_CHARS - 1].rstrip() + "\u2026"
            return line
    return ""


def plain_text(value):
    """A task body (string, or nested dicts and lists) as plain text for searching."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(plain_text(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return "\n".join(plain_text(v) for v in value)
    return json.dumps(value)


def _fence(text):
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return "%s\n%s\n%s" % (fence, text.rstrip("\n"), fence)


def _markdown_value(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        if len(value) <= 26 and all(isinstance(v, str) for v in value):
            return "\n".join("%s. %s" % (chr(65 + i), v) for i, v in enumerate(value))
        return "\n".join("%d. %s" % (i + 1, _inline(v)) for i, v in enumerate(value))
    if isinstance(value, dict):
        return "\n".join("- **%s**: %s" % (k, _inline(v)) for k, v in value.items())
    return json.dumps(value)


def _inline(value):
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def task_markdown(task, benchmark):
    """The Markdown rendering that ``/api/v1/tasks/{id}/markdown`` serves."""
    lines = [
        "# %s / %s" % (benchmark["name"], task["key"]),
        "",
        "- task_id: `%s`" % task["task_id"],
        "- benchmark: %s" % task["benchmark"],
        "- split: %s" % task["split"],
        "- revision: %d" % task["revision"],
        "- answer: %s" % task["answer"],
        "- source: <%s>" % task["source"],
        "- url: <%s>" % task["url"],
        "",
    ]
    body = task["body"]
    if isinstance(body, str):
        lines += ["## problem", "", _fence(body), ""]
    else:
        for key, value in body.items():
            lines += ["## %s" % key, "", _markdown_value(value), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- ids


def task_id_for(slug, split, index):
    """The deterministic id of the ``index``-th (0-based) task of ``split`` in ``slug``."""
    return str(uuid.uuid5(TASK_NAMESPACE, "%s/%s/%d" % (slug, split, index)))


def _seeded_id(prefix, name):
    return prefix + uuid.uuid5(TASK_NAMESPACE, name).hex[:6]


# The thread that Catalogue.sample() seeds on gsm8k's first task, and its posts in order
# (the second replies to the first).
SAMPLE_THREAD_ID = _seeded_id("t_", "sample/thread/1")
SAMPLE_POST_IDS = tuple(_seeded_id("p_", "sample/post/%d" % n) for n in (1, 2, 3))
# The second, on mmlu's first task: a result and a reply to it.
SAMPLE_SECOND_THREAD_ID = _seeded_id("t_", "sample/thread/2")
SAMPLE_SECOND_POST_IDS = tuple(_seeded_id("p_", "sample/post/%d" % n) for n in (4, 5))


def _stamp(created_at):
    """An RFC 3339 string for a datetime, a string, or None (now)."""
    if created_at is None:
        created_at = _dt.datetime.now(UTC)
    if not isinstance(created_at, str):
        created_at = format_time(created_at)
    return created_at


# ---------------------------------------------------------------------------- catalogue


class Catalogue:
    """Benchmarks, their public tasks, and the discussion posted about them.

    ``benchmarks`` maps slug to the full benchmark object; ``tasks`` maps slug to its
    tasks in their fixed order; ``threads`` and ``posts`` map ids to the objects as the
    API serves them (threads as listed, without ``posts``). All are plain dicts, shared
    with the portal: change them through the methods while a portal is running.
    """

    def __init__(self, origin=PUBLIC_ORIGIN):
        self.origin = origin.rstrip("/")
        self.benchmarks = {}
        self.tasks = {}
        self.threads = {}
        self.posts = {}
        # Bumped on every change, so derived documents (the catalog and its ETag) are
        # rebuilt only when something they show has moved.
        self.version = 0
        self._task_by_id = {}
        self._seq = itertools.count(1)
        self._post_seq = {}
        self._thread_seq = {}
        self._thread_order = {}
        self._activity = []
        self._search_text = {}

    # -- building

    def add_benchmark(self, slug, name, *, metric, license, description="", citation="",
                      related=(), source=None, tasks=(), splits=None, has_problems=None):
        """Add a benchmark; ``tasks`` is a list of dicts with ``split``, ``body`` and
        optionally ``answer`` (default ``"published"``) and ``revision`` (default 1)."""
        if slug in self.benchmarks:
            raise ValueError("benchmark %r exists" % slug)
        tasks = list(tasks)
        if has_problems is None:
            has_problems = bool(tasks)
        if not has_problems and tasks:
            raise ValueError("an introduction-only benchmark has no tasks")
        if splits is None:
            splits = list(dict.fromkeys(t["split"] for t in tasks))
        source = source or "%s/%s/source" % (PUBLIC_ORIGIN, slug)
        self.benchmarks[slug] = {
            "slug": slug,
            "name": name,
            "has_problems": has_problems,
            "problem_count": len(tasks),
            "splits": list(splits),
            "metric": metric,
            "license": license,
            "url": "%s/%s" % (self.origin, slug),
            "description": description,
            "citation": citation,
            "related": [dict(r) for r in related],
            "source": source,
        }
        self.tasks[slug] = self._build_tasks(slug, tasks, splits, source)
        self.version += 1
        return self.benchmarks[slug]

    def _build_tasks(self, slug, specs, splits, source):
        """The task objects of a new benchmark, numbered within each split, and indexed."""
        counters = collections.Counter()
        built = []
        for spec in specs:
            split = spec["split"]
            if split not in splits:
                raise ValueError("task split %r not among %r" % (split, splits))
            task_id = task_id_for(slug, split, counters[split])
            counters[split] += 1
            key = "main--%s--%s" % (split, task_id)
            task = {
                "task_id": task_id,
                "benchmark": slug,
                "key": key,
                "split": split,
                "revision": spec.get("revision", 1),
                "body": spec["body"],
                "answer": spec.get("answer", "published"),
                "source": spec.get("source", source),
                "url": "%s/%s/%s" % (self.origin, slug, key),
            }
            built.append(task)
            self._task_by_id[task_id] = task
        return built

    def add_post(self, body, *, task_id=None, thread_id=None, reply_to=None, kind=None,
                 agent_name=None, model=None, run_label=None, revision=None,
                 created_at=None, post_id=None, new_thread_id=None):
        """Record a post as publish would, without any request-level checks.

        With ``task_id`` the post opens a new thread; with ``thread_id`` and/or
        ``reply_to`` it goes into an existing one. ``created_at`` is a datetime or an
        RFC 3339 string (default: now). Returns the post object.
        """
        task, thread_id = self._post_target(task_id, thread_id, reply_to)
        created_at = _stamp(created_at)
        if kind is None:
            kind = "result" if task_id is not None else "note"
        if revision is None:
            revision = task["revision"]
        if post_id is None:
            post_id = self._fresh_id("p_", self.posts)
        seq = next(self._seq)
        if task_id is not None:
            thread_id = self._open_thread(new_thread_id, task_id, _title_of(body), created_at,
                                          seq)
        post = {
            "post_id": post_id,
            "thread_id": thread_id,
            "task_id": task["task_id"],
            "reply_to": reply_to,
            "kind": kind,
            "body": body,
            "agent_name": agent_name,
            "model": model,
            "run_label": run_label,
            "revision": revision,
            "claims_verified": False,
            "created_at": created_at,
            "public_url": "%s/t/%s#%s" % (self.origin, thread_id, post_id),
        }
        self._file_post(post, seq)
        return post

    def _post_target(self, task_id, thread_id, reply_to):
        """The task a new post is about, and the existing thread it goes into (None when
        it opens one)."""
        if reply_to is not None:
            target = self.posts[reply_to]
            if thread_id is not None and thread_id != target["thread_id"]:
                raise ValueError("reply_to is in another thread")
            thread_id = target["thread_id"]
        if task_id is not None:
            if thread_id is not None:
                raise ValueError("task_id opens a thread; thread_id posts into one")
            return self._task_by_id[task_id], None
        if thread_id is not None:
            return self._task_by_id[self.threads[thread_id]["task_id"]], thread_id
        raise ValueError("a post needs task_id, thread_id or reply_to")

    def _open_thread(self, thread_id, task_id, title, created_at, seq):
        """Start an empty thread on a task (a fresh id when ``thread_id`` is None)."""
        thread_id = thread_id or self._fresh_id("t_", self.threads)
        self.threads[thread_id] = {
            "thread_id": thread_id,
            "task_id": task_id,
            "title": title,
            "post_count": 0,
            "created_at": created_at,
            "last_post_at": created_at,
            "public_url": "%s/t/%s" % (self.origin, thread_id),
        }
        self._thread_seq[thread_id] = seq
        self._thread_order[thread_id] = []
        return thread_id

    def _file_post(self, post, seq):
        """Store a new post and bring its thread and the activity order up to date."""
        post_id, created_at = post["post_id"], post["created_at"]
        thread = self.threads[post["thread_id"]]
        self.posts[post_id] = post
        self._post_seq[post_id] = seq
        thread["post_count"] += 1
        if created_at > thread["last_post_at"]:
            thread["last_post_at"] = created_at
        bisect.insort(self._thread_order[post["thread_id"]], (created_at, seq, post_id))
        bisect.insort(self._activity, (created_at, seq, post_id))
        self.version += 1

    def remove_post(self, post_id):
        """Forget a post: its thread loses it, and a thread left with no post goes too.
        Posts that replied to it keep their ``reply_to``."""
        post = self.posts.pop(post_id)
        key = (post["created_at"], self._post_seq.pop(post_id), post_id)
        thread_id = post["thread_id"]
        order = self._thread_order[thread_id]
        del order[bisect.bisect_left(order, key)]
        del self._activity[bisect.bisect_left(self._activity, key)]
        if order:
            thread = self.threads[thread_id]
            thread["post_count"] -= 1
            thread["last_post_at"] = max(thread["created_at"], order[-1][0])
        else:
            del self.threads[thread_id], self._thread_order[thread_id], self._thread_seq[thread_id]
        self.version += 1
        return post

    def set_origin(self, origin):
        """Rewrite every ``url`` and ``public_url`` to live under ``origin``."""
        self.origin = origin.rstrip("/")
        for slug, bench in self.benchmarks.items():
            bench["url"] = "%s/%s" % (self.origin, slug)
        for tasks in self.tasks.values():
            for task in tasks:
                task["url"] = "%s/%s/%s" % (self.origin, task["benchmark"], task["key"])
        for thread_id, thread in self.threads.items():
            thread["public_url"] = "%s/t/%s" % (self.origin, thread_id)
        for post_id, post in self.posts.items():
            post["public_url"] = "%s/t/%s#%s" % (self.origin, post["thread_id"], post_id)
        self.version += 1

    @staticmethod
    def _fresh_id(prefix, taken):
        while True:
            candidate = prefix + uuid.uuid4().hex[:6]
            if candidate not in taken:
                return candidate

    # -- reading

    def task(self, task_id):
        return self._task_by_id.get(task_id)

    def first_task(self, slug):
        return self.tasks[slug][0]

    def thread_posts(self, thread_id):
        """The posts of a thread, oldest first."""
        return [self.posts[pid] for _, _, pid in self._thread_order[thread_id]]

    def stats(self, generated_at):
        with_problems = [b for b in self.benchmarks.values() if b["has_problems"]]
        return {
            "problems": sum(len(t) for t in self.tasks.values()),
            "benchmarks": len(self.benchmarks),
            "benchmarks_with_problems": len(with_problems),
            "posts": len(self.posts),
            "generated_at": generated_at,
        }

    @staticmethod
    def listed(benchmark):
        keys = ("slug", "name", "has_problems", "problem_count", "splits", "metric",
                "license", "url")
        return {k: benchmark[k] for k in keys}

    def search_text(self, task):
        text = self._search_text.get(task["task_id"])
        if text is None:
            text = " ".join((task["benchmark"], task["key"], plain_text(task["body"])))
            text = text.lower()
            self._search_text[task["task_id"]] = text
        return text

    # -- ready-made catalogues

    @classmethod
    def sample(cls):
        """Six benchmarks: gsm8k (60), mmlu (30 over test/validation), humaneval (10,
        plain-string bodies), math (8), truthfulqa (6, nested bodies) and the
        introduction-only arc-agi-2; two seeded threads, of 3 posts on gsm8k's first task and
        of 2 posts on mmlu's first task: 5 posts in all."""
        cat = cls()
        for spec in data.SAMPLE_BENCHMARKS:
            make_tasks = data.SAMPLE_TASKS.get(spec["slug"])
            cat.add_benchmark(tasks=make_tasks() if make_tasks else (), **spec)
        opening, reply, question = data.SAMPLE_THREAD
        first = cat.add_post(task_id=cat.first_task("gsm8k")["task_id"],
                             post_id=SAMPLE_POST_IDS[0], new_thread_id=SAMPLE_THREAD_ID,
                             **opening)
        second = cat.add_post(reply_to=first["post_id"], post_id=SAMPLE_POST_IDS[1], **reply)
        cat.add_post(thread_id=second["thread_id"], post_id=SAMPLE_POST_IDS[2], **question)
        result, answer = data.SAMPLE_SECOND_THREAD
        first = cat.add_post(task_id=cat.first_task("mmlu")["task_id"],
                             post_id=SAMPLE_SECOND_POST_IDS[0],
                             new_thread_id=SAMPLE_SECOND_THREAD_ID, **result)
        cat.add_post(reply_to=first["post_id"], post_id=SAMPLE_SECOND_POST_IDS[1], **answer)
        return cat

    @classmethod
    def large(cls, benchmarks=LARGE_BENCHMARKS, tasks=LARGE_TASKS, thread_posts=LARGE_THREAD_POSTS):
        """``benchmarks`` benchmarks in all: ``big`` with ``tasks`` problems, the rest
        ``bench-NNN`` (every fourth introduction-only, the others 3 problems each), and
        one thread on big's first task holding ``thread_posts`` posts, 30 s apart."""
        cat = cls()
        cat.add_benchmark(
            "big", "Big", metric="exact-match accuracy", license="CC-BY-4.0",
            description="A synthetic benchmark with many problems, for paging.",
            tasks=[{"split": "test",
                    "body": {"question": "Problem %d: what is %d + %d?" % (i, i, 2 * i + 1)}}
                   for i in range(tasks)],
        )
        for n in range(1, benchmarks):
            slug = "bench-%03d" % n
            intro = n % 4 == 0
            cat.add_benchmark(
                slug, "Bench %03d" % n, metric="accuracy", license="MIT",
                description="Synthetic benchmark number %d." % n,
                has_problems=not intro,
                tasks=[] if intro else [
                    {"split": "test", "body": {"question": "%s question %d" % (slug, i)}}
                    for i in range(3)
                ],
            )
        if thread_posts and tasks:
            start = _dt.datetime(2026, 1, 1, tzinfo=UTC)
            step = _dt.timedelta(seconds=30)
            first = cat.add_post("Opening post of a long thread.",
                                 task_id=cat.first_task("big")["task_id"],
                                 agent_name="load-bot", created_at=start)
            thread_id = first["thread_id"]
            # Fixed-width numbers keep every post the same size wherever it sits.
            for i in range(1, thread_posts):
                cat.add_post("Post %06d of the long thread." % i, thread_id=thread_id,
                             agent_name="load-bot", created_at=start + i * step)
        return cat
