"""The portal's content, :class:`Catalogue`, with the ids, times and text rules that the
interface fixes."""

import bisect
import collections
import copy
import datetime as _dt
import itertools
import json
import re
import unicodedata
import uuid

from . import data

PUBLIC_ORIGIN = "https://benchmarks.wiki"
# Task ids are uuid5 names under it: the same catalogue always yields the same ids, which tests hard-code.
TASK_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://benchmarks.wiki/tasks")
TITLE_CHARS = 80
UTC = _dt.timezone.utc

_TIME_RE = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


def format_time(moment):
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text):
    match = _TIME_RE.match(text)
    if not match:
        raise ValueError("not an RFC 3339 date-time: %r" % (text,))
    day, clock, fraction, zone = match.groups()
    # fromisoformat takes neither Z nor fractions of any length before Python 3.11.
    moment = _dt.datetime.fromisoformat("%sT%s%s" % (day, clock, "+00:00" if zone in "Zz" else zone))
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    return moment.replace(microsecond=micro).astimezone(UTC)


def normalise_text(text):
    return unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")


def plain_text(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return "\n".join(plain_text(item) for item in value)
    return value if isinstance(value, str) else json.dumps(value)


def task_markdown(task, benchmark):
    lines = ["# %s / %s" % (benchmark["name"], task["key"]), "", "- task_id: `%s`" % task["task_id"]]
    lines += ["- %s: %s" % (name, task[name]) for name in ("benchmark", "split", "revision", "answer")]
    lines += ["- source: <%s>" % task["source"], "- url: <%s>" % task["url"], ""]
    body = task["body"]
    if isinstance(body, str):
        # A fence longer than any run of backticks in the text, so that code stays code.
        fence = "`" * max([3] + [len(run) + 1 for run in re.findall(r"`+", body)])
        return "\n".join(lines + ["## problem", "", fence, body.rstrip("\n"), fence, ""])
    for key, value in body.items():
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            value = "\n".join("%s. %s" % (chr(65 + i), item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            value = "\n".join("- **%s**: %s" % pair for pair in value.items())
        elif not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False)
        lines += ["## %s" % key, "", value, ""]
    return "\n".join(lines)


def task_id_for(slug, split, index):
    return str(uuid.uuid5(TASK_NAMESPACE, "%s/%s/%d" % (slug, split, index)))


def _seeded_id(prefix, name):
    return prefix + uuid.uuid5(TASK_NAMESPACE, name).hex[:6]


SAMPLE_THREAD_ID = _seeded_id("t_", "sample/thread/1")
SAMPLE_POST_IDS = tuple(_seeded_id("p_", "sample/post/%d" % n) for n in (1, 2, 3))
SAMPLE_SECOND_THREAD_ID = _seeded_id("t_", "sample/thread/2")
SAMPLE_SECOND_POST_IDS = tuple(_seeded_id("p_", "sample/post/%d" % n) for n in (4, 5))


class Catalogue:
    """Benchmarks, their tasks, threads and posts, as the plain dicts the API serves; they
    change only through the methods, which keep the orders that the answers are cut from."""

    def __init__(self):
        self.origin = PUBLIC_ORIGIN
        self.benchmarks, self.tasks, self.threads, self.posts = {}, {}, {}, {}
        # Bumped on every change, so that the catalog and its ETag change only with it.
        self.version = 0
        self._task_by_id = {}
        self._seq = itertools.count(1)
        # Sort keys: (created_at, seq, post_id) of each post, kept in order per thread and
        # over all, so that pages are cut without sorting; a thread's seq breaks its ties.
        self._post_key, self.thread_seq, self.thread_order, self.activity = {}, {}, {}, []

    def add_benchmark(self, slug, name, *, metric, license, description="", citation="",
                      related=(), source=None, tasks=()):
        """Add a benchmark; ``tasks`` are dicts of ``split``, ``body`` and optionally
        ``answer`` and ``revision``."""
        source = source or "%s/%s/source" % (PUBLIC_ORIGIN, slug)
        self.benchmarks[slug] = {
            "slug": slug, "name": name, "has_problems": bool(tasks), "problem_count": len(tasks),
            "splits": list(dict.fromkeys(t["split"] for t in tasks)), "metric": metric, "license": license,
            "url": "%s/%s" % (self.origin, slug), "description": description, "citation": citation,
            "related": list(related), "source": source,
        }
        numbered = collections.Counter()
        self.tasks[slug] = []
        for spec in tasks:
            split = spec["split"]
            task_id = task_id_for(slug, split, numbered[split])
            numbered[split] += 1
            key = "main--%s--%s" % (split, task_id)
            # Its own copy of the body: the sample's specs are module data shared by every catalogue.
            task = {"task_id": task_id, "benchmark": slug, "key": key, "split": split,
                    "revision": spec.get("revision", 1), "body": copy.deepcopy(spec["body"]),
                    "answer": spec.get("answer", "published"),
                    "source": source, "url": "%s/%s/%s" % (self.origin, slug, key)}
            self.tasks[slug].append(task)
            self._task_by_id[task_id] = task
        self.version += 1

    def add_post(self, body, *, created_at, task_id=None, thread_id=None, reply_to=None, kind=None,
                 agent_name=None, model=None, run_label=None, revision=None, post_id=None):
        """Record a post as publish would, without its checks: with ``task_id`` it opens a
        thread (named ``thread_id`` if given), else it goes into ``thread_id`` or ``reply_to``'s."""
        if reply_to is not None:
            thread_id = self.posts[reply_to]["thread_id"]
        task = self._task_by_id[task_id or self.threads[thread_id]["task_id"]]
        seq = next(self._seq)
        if task_id is not None:
            thread_id = thread_id or self._fresh_id("t_", self.threads)
            title = next((line.strip() for line in body.split("\n") if line.strip()), "")
            self.threads[thread_id] = {
                "thread_id": thread_id, "task_id": task_id,
                "title": title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS - 1].rstrip() + "\u2026",
                "post_count": 0, "created_at": created_at, "last_post_at": created_at,
                "public_url": "%s/t/%s" % (self.origin, thread_id),
            }
            self.thread_seq[thread_id] = seq
            self.thread_order[thread_id] = []
        post_id = post_id or self._fresh_id("p_", self.posts)
        post = {
            "post_id": post_id, "thread_id": thread_id, "task_id": task["task_id"],
            "reply_to": reply_to, "kind": kind or ("result" if task_id else "note"),
            "body": body, "agent_name": agent_name, "model": model, "run_label": run_label,
            "revision": revision or task["revision"], "claims_verified": False,
            "created_at": created_at, "public_url": "%s/t/%s#%s" % (self.origin, thread_id, post_id),
        }
        thread = self.threads[thread_id]
        thread["post_count"] += 1
        thread["last_post_at"] = max(thread["last_post_at"], created_at)
        self.posts[post_id] = post
        self._post_key[post_id] = key = (created_at, seq, post_id)
        bisect.insort(self.thread_order[thread_id], key)
        bisect.insort(self.activity, key)
        self.version += 1
        return post

    def remove_post(self, post_id):
        """Forget a post: its thread loses it, and a thread left with no post goes too.
        Posts that replied to it keep their ``reply_to``."""
        thread_id = self.posts.pop(post_id)["thread_id"]
        key = self._post_key.pop(post_id)
        order = self.thread_order[thread_id]
        del order[bisect.bisect_left(order, key)]
        del self.activity[bisect.bisect_left(self.activity, key)]
        if order:
            thread = self.threads[thread_id]
            thread["post_count"] -= 1
            thread["last_post_at"] = max(thread["created_at"], order[-1][0])
        else:
            del self.threads[thread_id], self.thread_order[thread_id], self.thread_seq[thread_id]
        self.version += 1

    def set_origin(self, origin):
        """Every link under ``origin``, the portal's that serves them."""
        for item in itertools.chain(self.benchmarks.values(), *self.tasks.values()):
            item["url"] = origin + item["url"][len(self.origin):]
        for item in itertools.chain(self.threads.values(), self.posts.values()):
            item["public_url"] = origin + item["public_url"][len(self.origin):]
        self.origin = origin
        self.version += 1

    @staticmethod
    def _fresh_id(prefix, taken):
        while True:
            candidate = prefix + uuid.uuid4().hex[:6]
            if candidate not in taken:
                return candidate

    def task(self, task_id):
        return self._task_by_id.get(task_id)

    def stats(self, generated_at):
        return {
            "problems": sum(len(t) for t in self.tasks.values()),
            "benchmarks": len(self.benchmarks),
            "benchmarks_with_problems": sum(b["has_problems"] for b in self.benchmarks.values()),
            "posts": len(self.posts),
            "generated_at": generated_at,
        }

    @classmethod
    def sample(cls):
        """Six benchmarks with 114 problems (95 of them gsm8k's), one introduction-only, and
        two threads of 5 posts in all, on gsm8k's and mmlu's first tasks."""
        cat = cls()
        for spec in data.SAMPLE_BENCHMARKS:
            cat.add_benchmark(**spec)
        seeded = (("gsm8k", SAMPLE_THREAD_ID, SAMPLE_POST_IDS, data.SAMPLE_THREAD),
                  ("mmlu", SAMPLE_SECOND_THREAD_ID, SAMPLE_SECOND_POST_IDS, data.SAMPLE_SECOND_THREAD))
        for slug, thread_id, post_ids, posts in seeded:
            opening = cat.add_post(task_id=cat.tasks[slug][0]["task_id"], post_id=post_ids[0],
                                   thread_id=thread_id, **posts[0])
            cat.add_post(reply_to=opening["post_id"], post_id=post_ids[1], **posts[1])
            for post_id, post in zip(post_ids[2:], posts[2:]):
                cat.add_post(thread_id=thread_id, post_id=post_id, **post)
        return cat
