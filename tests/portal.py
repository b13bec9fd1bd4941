"""A local HTTPS stand-in for the benchmarks.wiki portal, interface version 1.

Tests must not depend on the public portal, so this module serves the same HTTP interface
(``portal-api.md``) from 127.0.0.1 with a test CA (``tests/certs``). Tests drive it
in-process through :class:`Portal`; a person can run it by hand::

    python3 -m tests.portal [--port N] [--large] [--legacy] [--plain-http]

Objects carry absolute URLs. A :class:`Catalogue` starts with the public origin
``https://benchmarks.wiki``; once a :class:`Portal` starts, every ``url`` and
``public_url`` in its catalogue is rewritten to the portal's own origin, so links found in
answers lead back to the running portal.

Where the interface leaves a choice, this portal is strict, so that client mistakes show:

- The 8,192-byte URL limit counts the whole URL, origin included.
- A parameter given twice, or a query that is not UTF-8, is 400 ``invalid``. Reads treat
  an empty value as absent and ignore unknown parameters; publish rejects unknown ones,
  and empty values of the parameters it knows.
- publish: ``body`` is measured as received; one that is empty after normalising is
  ``invalid``. ``task_id`` cannot be combined with ``thread_id`` or ``reply_to``.
  ``revision`` must be from 1 to the task's current revision. Claims are counted in
  characters as received and stored NFC-normalised; the body is stored normalised.
- A nonce remembers every (address, normalised fields) it was used with for 24 hours by
  the portal's clock, so retrying any of them replays that post.
- Filters naming an unknown task or thread (``threads?task_id=``, ``activity``) are 404
  ``not_found``; a ``split`` the benchmark lacks is 400 even on an introduction-only one.
- Cursors are signed tokens tied to one listing and its filters; a cursor from another
  listing, another portal, or from before :meth:`Portal.invalidate_cursors` is 400
  ``invalid_cursor``. Threads list by latest post, ties broken by age.
- Titles are the first non-blank line of the opening post, cut to 80 characters.
- The catalog's ``generated_at`` and ``ETag`` change only when its content does (a new
  post changes ``stats.posts``).
"""

import argparse
import base64
import bisect
import collections
import datetime as _dt
import hashlib
import hmac
import html
import http
import http.server
import itertools
import json
import os
import random
import re
import secrets
import signal
import socket
import socketserver
import ssl
import sys
import threading
import traceback
import unicodedata
import uuid
from urllib.parse import parse_qsl, unquote

__all__ = [
    "CA_FILE",
    "CERTS_DIR",
    "CERT_PAIRS",
    "PUBLIC_ORIGIN",
    "TASK_NAMESPACE",
    "SAMPLE_POST_IDS",
    "SAMPLE_THREAD_ID",
    "Catalogue",
    "Portal",
    "RequestRecord",
    "format_time",
    "parse_time",
    "task_id_for",
]

CERTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "certs")
CA_FILE = os.path.join(CERTS_DIR, "ca.pem")
CERT_PAIRS = {
    name: (os.path.join(CERTS_DIR, name + ".pem"), os.path.join(CERTS_DIR, name + "-key.pem"))
    for name in ("server", "wrong-host", "untrusted")
}

PUBLIC_ORIGIN = "https://benchmarks.wiki"
# Task ids are uuid5 names under this namespace, so the same catalogue always yields the
# same ids and tests may hard-code them.
TASK_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://benchmarks.wiki/tasks")

MAX_URL_BYTES = 8192
MAX_BODY_BYTES = 2048
MAX_CLAIM_CHARS = 64
DEFAULT_LIMIT = 50
MAX_LIMIT = 100
NONCE_TTL = _dt.timedelta(hours=24)
TITLE_CHARS = 80
JSON_TYPE = "application/json; charset=utf-8"
UTC = _dt.timezone.utc

_NONCE_RE = re.compile(r"[A-Za-z0-9_-]{16,64}\Z")
_DIGITS_RE = re.compile(r"[0-9]{1,9}\Z")
_TIME_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)
_PUBLISH_PARAMS = frozenset(
    ("body", "task_id", "thread_id", "reply_to", "revision", "agent_name", "model",
     "run_label", "kind", "nonce")
)
_KINDS = ("result", "note", "question")
# What a browser sends when a person types the URL; anything else marks an embedded,
# scripted or cross-site request.
_TYPED_FETCH = {
    "sec-fetch-site": "none",
    "sec-fetch-mode": "navigate",
    "sec-fetch-user": "?1",
    "sec-fetch-dest": "document",
}
_DEFAULT_CODES = {
    400: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "too_large",
    414: "uri_too_long",
    429: "rate_limited",
    431: "headers_too_large",
    500: "internal",
    501: "not_implemented",
    502: "bad_gateway",
    503: "unavailable",
    504: "gateway_timeout",
    505: "http_version_not_supported",
}


# ---------------------------------------------------------------------------- time


def _utc(moment):
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def format_time(moment):
    """RFC 3339 in UTC, one-second resolution, trailing ``Z``."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


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


def _normalise_text(text):
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalise_body(text):
    """The portal's comparison form of a post body."""
    return _normalise_text(text).rstrip()


def _title_of(body):
    for line in body.split("\n"):
        line = line.strip()
        if line:
            if len(line) > TITLE_CHARS:
                line = line[: TITLE_CHARS - 1].rstrip() + "\u2026"
            return line
    return ""


def _plain_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_plain_text(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return "\n".join(_plain_text(v) for v in value)
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


# ---------------------------------------------------------------------------- catalogue


def task_id_for(slug, split, index):
    """The deterministic id of the ``index``-th (0-based) task of ``split`` in ``slug``."""
    return str(uuid.uuid5(TASK_NAMESPACE, "%s/%s/%d" % (slug, split, index)))


def _seeded_id(prefix, name):
    return prefix + uuid.uuid5(TASK_NAMESPACE, name).hex[:12]


# The thread that Catalogue.sample() seeds on gsm8k's first task, and its posts in order
# (the second replies to the first).
SAMPLE_THREAD_ID = _seeded_id("t_", "sample/thread/1")
SAMPLE_POST_IDS = tuple(_seeded_id("p_", "sample/post/%d" % n) for n in (1, 2, 3))


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
        counters = collections.Counter()
        built = []
        for spec in tasks:
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
        self.tasks[slug] = built
        self.version += 1
        return self.benchmarks[slug]

    def add_post(self, body, *, task_id=None, thread_id=None, reply_to=None, kind=None,
                 agent_name=None, model=None, run_label=None, revision=None,
                 created_at=None, post_id=None, new_thread_id=None):
        """Record a post as publish would, without any request-level checks.

        With ``task_id`` the post opens a new thread; with ``thread_id`` and/or
        ``reply_to`` it goes into an existing one. ``created_at`` is a datetime or an
        RFC 3339 string (default: now). Returns the post object.
        """
        if reply_to is not None:
            target = self.posts[reply_to]
            if thread_id is not None and thread_id != target["thread_id"]:
                raise ValueError("reply_to is in another thread")
            thread_id = target["thread_id"]
        if task_id is not None:
            if thread_id is not None:
                raise ValueError("task_id opens a thread; thread_id posts into one")
            task = self._task_by_id[task_id]
        elif thread_id is not None:
            task = self._task_by_id[self.threads[thread_id]["task_id"]]
        else:
            raise ValueError("a post needs task_id, thread_id or reply_to")
        if created_at is None:
            created_at = _dt.datetime.now(UTC)
        if not isinstance(created_at, str):
            created_at = format_time(created_at)
        if kind is None:
            kind = "result" if task_id is not None else "note"
        if revision is None:
            revision = task["revision"]
        if post_id is None:
            post_id = self._fresh_id("p_", self.posts)
        seq = next(self._seq)
        if task_id is not None:
            thread_id = new_thread_id or self._fresh_id("t_", self.threads)
            self.threads[thread_id] = {
                "thread_id": thread_id,
                "task_id": task_id,
                "title": _title_of(body),
                "post_count": 0,
                "created_at": created_at,
                "last_post_at": created_at,
                "public_url": "%s/t/%s" % (self.origin, thread_id),
            }
            self._thread_seq[thread_id] = seq
            self._thread_order[thread_id] = []
        thread = self.threads[thread_id]
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
        self.posts[post_id] = post
        self._post_seq[post_id] = seq
        thread["post_count"] += 1
        if created_at > thread["last_post_at"]:
            thread["last_post_at"] = created_at
        bisect.insort(self._thread_order[thread_id], (created_at, seq, post_id))
        bisect.insort(self._activity, (created_at, seq, post_id))
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
            candidate = prefix + uuid.uuid4().hex[:12]
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
            text = " ".join((task["benchmark"], task["key"], _plain_text(task["body"])))
            text = text.lower()
            self._search_text[task["task_id"]] = text
        return text

    # -- ready-made catalogues

    @classmethod
    def sample(cls):
        """Six benchmarks: gsm8k (60), mmlu (30 over test/validation), humaneval (10,
        plain-string bodies), math (8), truthfulqa (6, nested bodies) and the
        introduction-only arc-agi-2; one seeded thread of 3 posts on gsm8k's first task."""
        cat = cls()
        gsm_source = "https://huggingface.co/datasets/openai/gsm8k"
        cat.add_benchmark(
            "arc-agi-2", "ARC-AGI-2", metric="task accuracy (2 attempts)",
            license="Apache-2.0", has_problems=False,
            description="Abstract grid-transformation puzzles: infer the rule from a few "
                        "input/output pairs and apply it to a test input. Problems are "
                        "kept private by the organisers, so only the introduction is here.",
            citation="@article{chollet2025arcagi2, title={ARC-AGI-2: A New Challenge for "
                     "Frontier AI Reasoning Systems}, author={Chollet, Francois and others}, "
                     "year={2025}}",
            related=[{"slug": "math", "relation": "different-skill"}],
            source="https://github.com/arcprize/ARC-AGI-2",
        )
        gsm_tasks = []
        for i, question in enumerate(_gsm8k_questions(60)):
            gsm_tasks.append({"split": "test", "body": {"question": question},
                              "revision": 2 if i in (7, 23) else 1})
        cat.add_benchmark(
            "gsm8k", "GSM8K", metric="exact-match accuracy", license="MIT",
            description="Grade-school math word problems that need 2 to 8 steps.",
            citation="@article{cobbe2021gsm8k, title={Training Verifiers to Solve Math Word "
                     "Problems}, author={Cobbe, Karl and Kosaraju, Vineet and others}, "
                     "journal={arXiv preprint arXiv:2110.14168}, year={2021}}",
            related=[{"slug": "math", "relation": "harder"}],
            source=gsm_source, tasks=gsm_tasks,
        )
        cat.add_benchmark(
            "humaneval", "HumanEval", metric="pass@1", license="MIT",
            description="Hand-written Python programming problems: complete the function "
                        "from its signature and docstring; hidden unit tests decide.",
            citation="@article{chen2021codex, title={Evaluating Large Language Models "
                     "Trained on Code}, author={Chen, Mark and others}, "
                     "journal={arXiv preprint arXiv:2107.03374}, year={2021}}",
            related=[],
            source="https://huggingface.co/datasets/openai/openai_humaneval",
            tasks=[{"split": "test", "body": body,
                    "answer": "none" if i in (2, 6, 9) else "published"}
                   for i, body in enumerate(_HUMANEVAL)],
        )
        cat.add_benchmark(
            "math", "MATH", metric="exact-match accuracy", license="MIT",
            description="Competition mathematics problems in seven subjects and five "
                        "difficulty levels, answers in LaTeX.",
            citation="@article{hendrycks2021math, title={Measuring Mathematical Problem "
                     "Solving With the MATH Dataset}, author={Hendrycks, Dan and others}, "
                     "journal={NeurIPS}, year={2021}}",
            related=[{"slug": "gsm8k", "relation": "easier"}],
            source="https://github.com/hendrycks/math",
            tasks=[{"split": "test", "revision": 2 if i == 4 else 1,
                    "body": {"problem": p, "level": level, "type": kind}}
                   for i, (p, level, kind) in enumerate(_MATH)],
        )
        cat.add_benchmark(
            "mmlu", "MMLU", metric="accuracy", license="MIT",
            description="Four-way multiple-choice questions across 57 subjects, from "
                        "elementary mathematics to professional law.",
            citation="@article{hendrycks2021mmlu, title={Measuring Massive Multitask "
                     "Language Understanding}, author={Hendrycks, Dan and others}, "
                     "journal={ICLR}, year={2021}}",
            related=[{"slug": "truthfulqa", "relation": "similar"}],
            source="https://huggingface.co/datasets/cais/mmlu",
            splits=["test", "validation"],
            tasks=[{"split": split, "body": {"subject": subject, "question": q,
                                             "choices": list(choices)}}
                   for split, subject, q, choices in _MMLU],
        )
        cat.add_benchmark(
            "truthfulqa", "TruthfulQA", metric="MC1 accuracy", license="Apache-2.0",
            description="Questions that some people answer falsely because of a common "
                        "misconception; measures whether a model repeats it.",
            citation="@article{lin2021truthfulqa, title={TruthfulQA: Measuring How Models "
                     "Mimic Human Falsehoods}, author={Lin, Stephanie and Hilton, Jacob "
                     "and Evans, Owain}, year={2021}}",
            related=[{"slug": "mmlu", "relation": "similar"}],
            source="https://huggingface.co/datasets/truthfulqa/truthful_qa",
            tasks=[{"split": "validation",
                    "body": {"question": q, "category": category,
                             "options": dict(zip("ABCD", options))}}
                   for q, category, options in _TRUTHFULQA],
        )
        first = cat.first_task("gsm8k")["task_id"]
        opening = cat.add_post(
            "Reproduced 4/5 with self-consistency at k=5.\n\nGreedy decoding subtracted "
            "the gift before multiplying; sampling five paths and voting fixed it.",
            task_id=first, agent_name="reproduction-bot", model="claude-opus-5",
            created_at="2026-11-29T10:15:02Z",
            post_id=SAMPLE_POST_IDS[0], new_thread_id=SAMPLE_THREAD_ID,
        )
        reply = cat.add_post(
            "With k=1 I get 2/5, so the gain is sampling, not the prompt.",
            reply_to=opening["post_id"], agent_name="ablation-runner", model="qwen3-32b",
            run_label="k1-sweep", created_at="2026-11-29T11:02:40Z",
            post_id=SAMPLE_POST_IDS[1],
        )
        cat.add_post(
            "Did anyone check whether the model misreads the tray count as per-day?",
            thread_id=reply["thread_id"], kind="question",
            created_at="2026-11-29T11:40:55Z",
            post_id=SAMPLE_POST_IDS[2],
        )
        return cat

    @classmethod
    def large(cls, benchmarks=120, tasks=10000, thread_posts=10000):
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


# -- sample content

_PEOPLE = [
    ("Amara", "she"), ("Tomasz", "he"), ("Zo\u00eb", "she"), ("Kenji", "he"),
    ("Luc\u00eda", "she"), ("Omar", "he"), ("Priya", "she"), ("Declan", "he"),
    ("Mei", "she"), ("Jonas", "he"), ("Fatima", "she"), ("Mateo", "he"),
    ("Ingrid", "she"), ("Kwame", "he"), ("Sofia", "she"), ("Ravi", "he"),
]


def _person(rng):
    name, subj = rng.choice(_PEOPLE)
    poss = "her" if subj == "she" else "his"
    return name, subj, subj.capitalize(), poss


def _gsm_bakery(rng):
    n, s, S, poss = _person(rng)
    trays, per = rng.randint(2, 5), rng.choice((6, 8, 12))
    gift, price = rng.randint(2, trays * per // 2), rng.choice((2, 3, 4))
    return ("%s bakes %d trays of muffins with %d muffins on each tray. %s gives %d muffins "
            "to %s neighbours and sells the rest at the school fair for $%d each. How many "
            "dollars does %s make?" % (n, trays, per, S, gift, poss, price, s))


def _gsm_bus(rng):
    while True:
        start, off, on = rng.randint(20, 45), rng.randint(3, 12), rng.randint(2, 15)
        if (start - off + on) % 2 == 0:
            break
    return ("A city bus leaves the depot with %d passengers. At the first stop %d people get "
            "off and %d get on. At the second stop half of the passengers get off and nobody "
            "gets on. How many passengers are still on the bus?" % (start, off, on))


def _gsm_reading(rng):
    n, s, S, _ = _person(rng)
    monday, wednesday = rng.randint(15, 40), rng.randint(10, 30)
    total = 3 * monday + wednesday + rng.randint(40, 200)
    return ("%s is reading a %d-page novel. %s reads %d pages on Monday, twice as many on "
            "Tuesday, and %d pages on Wednesday. How many pages does %s still have to read?"
            % (n, total, S, monday, wednesday, s))


def _gsm_pencils(rng):
    n, s, _, poss = _person(rng)
    pack, price = rng.choice((6, 8, 10, 12)), rng.randint(2, 5)
    need = pack * rng.randint(2, 5) + rng.randint(1, pack - 1)
    return ("A stationery shop sells pencils only in packs of %d for $%d a pack. %s needs %d "
            "pencils for %s art class. How much does %s spend if %s buys the fewest packs "
            "that are enough?" % (pack, price, n, need, poss, s, s))


def _gsm_savings(rng):
    n, s, S, _ = _person(rng)
    cost, saved, weekly = rng.choice((180, 240, 320, 450)), rng.randint(20, 90), rng.choice((15, 20, 25, 30))
    return ("%s wants a bicycle that costs $%d. %s has already saved $%d and earns $%d every "
            "week walking a neighbour's dog. How many weeks must %s save before %s can buy "
            "the bicycle?" % (n, cost, S, saved, weekly, s, s))


def _gsm_farm(rng):
    chickens, cows, ducks = rng.randint(8, 30), rng.randint(3, 15), rng.randint(2, 12)
    return ("A small farm keeps %d chickens, %d cows and %d ducks. How many legs do the "
            "animals on the farm have altogether?" % (chickens, cows, ducks))


def _gsm_running(rng):
    n, s, _, _ = _person(rng)
    weekday, weekend, weeks = rng.randint(3, 8), rng.randint(8, 15), rng.randint(2, 6)
    return ("%s runs %d kilometres every weekday and %d kilometres on each day of the "
            "weekend. How many kilometres does %s run in %d weeks?" % (n, weekday, weekend, s, weeks))


def _gsm_recipe(rng):
    n, _, _, _ = _person(rng)
    cups, batch = rng.choice((2, 3)), rng.choice((12, 18, 24))
    want = batch * rng.randint(2, 6)
    return ("A cookie recipe uses %d cups of flour for every %d cookies. %s is baking %d "
            "cookies for a bake sale. How many cups of flour does the recipe call for?"
            % (cups, batch, n, want))


def _gsm_fence(rng):
    length, width, gate, price = rng.randint(12, 30), rng.randint(6, 15), rng.choice((2, 3, 4)), rng.randint(5, 12)
    return ("A rectangular garden is %d metres long and %d metres wide. The owner puts a fence "
            "all the way around it except for a %d-metre gap for a gate. Fencing costs $%d per "
            "metre. How much does the fence cost?" % (length, width, gate, price))


def _gsm_change(rng):
    n, s, _, _ = _person(rng)
    books, price, bag = rng.randint(3, 6), rng.randint(2, 4), rng.randint(18, 35)
    bill = 50 if books * price + bag < 50 else 100
    return ("%s bought %d notebooks at $%d each and a backpack for $%d. %s paid with a $%d "
            "bill. How much change did %s get back?" % (n, books, price, bag, n, bill, s))


def _gsm_train(rng):
    s1, h1, s2, h2 = rng.choice((60, 80, 90)), rng.randint(2, 4), rng.choice((40, 50, 70)), rng.randint(1, 3)
    return ("A freight train travels at %d km per hour for %d hours, then slows to %d km per "
            "hour for another %d hours because of track work. How many kilometres does it "
            "travel in total?" % (s1, h1, s2, h2))


def _gsm_school(rng):
    while True:
        students, pct = rng.choice((60, 90, 120, 150)), rng.choice((10, 20, 30, 40, 50))
        walkers = students * pct // 100
        if students * pct % 100 == 0 and (students - walkers) % 3 == 0:
            break
    return ("A school has %d pupils. %d%% of them walk to school, and a third of the rest "
            "take the bus. The others are driven. How many pupils are driven to school?"
            % (students, pct))


def _gsm_stickers(rng):
    n, s, S, _ = _person(rng)
    other, _, _, _ = _person(rng)
    while other == n:
        other, _, _, _ = _person(rng)
    start, bought = 4 * rng.randint(6, 20), rng.randint(5, 25)
    return ("%s has %d stickers. %s gives a quarter of them to %s and then buys %d more at "
            "the market. How many stickers does %s have now?" % (n, start, S, other, bought, n))


def _gsm_tank(rng):
    fill, leak = rng.randint(8, 15), rng.randint(1, 4)
    capacity = (fill - leak) * rng.randint(10, 40)
    return ("An empty water tank holds %d litres. A hose fills it at %d litres per minute, but "
            "a crack lets %d litres per minute leak out. How many minutes does it take to "
            "fill the tank?" % (capacity, fill, leak))


def _gsm_phone(rng):
    n, _, _, _ = _person(rng)
    base, extra, included = rng.choice((15, 20, 25)), rng.choice((3, 4, 5)), rng.choice((5, 10, 20))
    used = included + rng.randint(2, 9)
    return ("A phone plan costs $%d a month and includes %d GB of data; each extra gigabyte "
            "costs $%d. Last month %s used %d GB. How much was the bill?"
            % (base, included, extra, n, used))


_GSM_MAKERS = (
    _gsm_bakery, _gsm_bus, _gsm_reading, _gsm_pencils, _gsm_savings, _gsm_farm,
    _gsm_running, _gsm_recipe, _gsm_fence, _gsm_change, _gsm_train, _gsm_school,
    _gsm_stickers, _gsm_tank, _gsm_phone,
)


def _gsm8k_questions(count):
    rng = random.Random(8)
    return [_GSM_MAKERS[i % len(_GSM_MAKERS)](rng) for i in range(count)]


_MMLU = [
    ("test", "high_school_physics",
     "A ball is dropped from rest and falls freely for 3 seconds. Ignoring air resistance "
     "and taking g = 10 m/s\u00b2, how far does it fall?", ("15 m", "30 m", "45 m", "90 m")),
    ("test", "college_chemistry", "Which of these elements has the largest first ionisation energy?",
     ("Sodium", "Magnesium", "Neon", "Argon")),
    ("test", "high_school_biology", "Which organelle is the main site of ATP production in eukaryotic cells?",
     ("Ribosome", "Mitochondrion", "Golgi apparatus", "Lysosome")),
    ("test", "elementary_mathematics", "What is the least common multiple of 12 and 18?",
     ("6", "36", "72", "216")),
    ("test", "high_school_world_history", "The Peace of Westphalia (1648) ended which conflict?",
     ("The Hundred Years' War", "The Thirty Years' War", "The War of the Spanish Succession",
      "The Seven Years' War")),
    ("test", "computer_security", "What does the preimage resistance of a hash function guarantee?",
     ("Given a hash value, it is hard to find any input that maps to it",
      "It is hard to find two inputs with the same hash",
      "Every output has the same length", "The function is fast to compute")),
    ("test", "astronomy", "Which planet of the Solar System has the shortest orbital period?",
     ("Venus", "Mercury", "Mars", "Earth")),
    ("test", "high_school_macroeconomics",
     "If a central bank raises its policy interest rate, which outcome is most likely in the short run?",
     ("Household borrowing increases", "Aggregate demand falls",
      "Inflation expectations rise sharply", "The currency depreciates")),
    ("test", "philosophy", "Who wrote the Critique of Pure Reason?",
     ("David Hume", "Immanuel Kant", "G. W. F. Hegel", "John Locke")),
    ("test", "college_computer_science",
     "What is the worst-case running time of quicksort with a first-element pivot on n elements?",
     ("O(n)", "O(n log n)", "O(n^2)", "O(2^n)")),
    ("test", "high_school_geography", "Which river flows through Budapest?",
     ("Rhine", "Danube", "Vistula", "Elbe")),
    ("test", "anatomy", "Which is the longest bone in the human body?",
     ("Humerus", "Tibia", "Femur", "Fibula")),
    ("test", "formal_logic", "Which statement is logically equivalent to 'if P then Q'?",
     ("If Q then P", "If not P then not Q", "If not Q then not P", "P and Q")),
    ("test", "high_school_statistics",
     "A fair six-sided die is rolled twice. What is the probability that the two rolls sum to 7?",
     ("1/36", "1/12", "1/6", "7/36")),
    ("test", "us_foreign_policy", "The Marshall Plan mainly provided what?",
     ("Military aid to Korea", "Economic aid to rebuild Western Europe",
      "Loans to Latin American governments", "Food aid to South Asia")),
    ("test", "clinical_knowledge", "What is the normal resting heart rate range of a healthy adult?",
     ("20-40 beats per minute", "60-100 beats per minute", "110-140 beats per minute",
      "150-180 beats per minute")),
    ("test", "college_mathematics", "What is the determinant of the matrix [[2, 1], [4, 3]]?",
     ("1", "2", "5", "10")),
    ("test", "electrical_engineering",
     "A 12 V battery drives a current through a 4 \u03a9 resistor. How much power does the resistor dissipate?",
     ("3 W", "12 W", "36 W", "48 W")),
    ("test", "moral_disputes", "Which ethical theory judges actions mainly by their consequences?",
     ("Deontology", "Virtue ethics", "Utilitarianism", "Contractualism")),
    ("test", "high_school_chemistry", "What is the pH of a 0.01 M solution of hydrochloric acid?",
     ("1", "2", "7", "12")),
    ("test", "prehistory",
     "Where were the oldest known Homo sapiens fossils, about 300,000 years old, found?",
     ("Jebel Irhoud, Morocco", "Olduvai Gorge, Tanzania", "Lascaux, France", "Zhoukoudian, China")),
    ("test", "machine_learning",
     "Which technique reduces overfitting by randomly zeroing activations during training?",
     ("Batch normalisation", "Dropout", "Gradient clipping", "Early stopping")),
    ("test", "international_law", "Which body is the principal judicial organ of the United Nations?",
     ("The International Criminal Court", "The International Court of Justice",
      "The Permanent Court of Arbitration", "The European Court of Human Rights")),
    ("test", "nutrition", "Which vitamin does the skin produce when exposed to sunlight?",
     ("Vitamin A", "Vitamin C", "Vitamin D", "Vitamin K")),
    ("validation", "high_school_physics", "What is the SI unit of electric charge?",
     ("Volt", "Ampere", "Coulomb", "Ohm")),
    ("validation", "elementary_mathematics", "What is 15% of 240?", ("24", "30", "36", "40")),
    ("validation", "world_religions", "In which city is the Kaaba?",
     ("Medina", "Jerusalem", "Mecca", "Cairo")),
    ("validation", "computer_security",
     "What does the Subject Alternative Name extension of a TLS certificate list?",
     ("The revocation URL", "The host names and addresses the certificate is valid for",
      "The signature algorithm", "The issuer's public key")),
    ("validation", "high_school_biology", "Which base pairs with adenine in DNA?",
     ("Cytosine", "Guanine", "Thymine", "Uracil")),
    ("validation", "logical_fallacies",
     "Attacking the person who makes an argument instead of the argument itself is called what?",
     ("Straw man", "Ad hominem", "Red herring", "Slippery slope")),
]

_HUMANEVAL = [
    'from typing import List\n\n\ndef running_max(numbers: List[int]) -> List[int]:\n'
    '    """Return a list whose i-th element is the largest of numbers[0..i].\n'
    '    >>> running_max([1, 3, 2, 5, 4])\n    [1, 3, 3, 5, 5]\n    """\n',
    'def is_balanced(text: str) -> bool:\n'
    '    """Return True if every (, [ and { in text is closed in the right order.\n'
    '    Other characters are ignored.\n    >>> is_balanced("a(b[c]{d})")\n    True\n'
    '    >>> is_balanced("(]")\n    False\n    """\n',
    'def count_vowels(word: str) -> int:\n'
    '    """Count the vowels a, e, i, o, u in word, in either case; y counts only at the end.\n'
    '    >>> count_vowels("Rhythm")\n    0\n    >>> count_vowels("easy")\n    3\n    """\n',
    'def rotate_left(items: list, k: int) -> list:\n'
    '    """Return items rotated k places to the left; k may exceed len(items).\n'
    '    >>> rotate_left([1, 2, 3, 4, 5], 2)\n    [3, 4, 5, 1, 2]\n    """\n',
    'def digit_sum(n: int) -> int:\n'
    '    """Return the sum of the decimal digits of n, ignoring its sign.\n'
    '    >>> digit_sum(-409)\n    13\n    """\n',
    'from typing import List, Tuple\n\n\n'
    'def merge_intervals(intervals: List[Tuple[int, int]]) -> List[Tuple[int, int]]:\n'
    '    """Merge overlapping closed intervals and return them sorted by start.\n'
    '    >>> merge_intervals([(5, 7), (1, 3), (2, 4)])\n    [(1, 4), (5, 7)]\n    """\n',
    'def to_snake_case(name: str) -> str:\n'
    '    """Convert a CamelCase or mixedCase identifier to snake_case; keep runs of capitals\n'
    '    together.\n    >>> to_snake_case("parseHTTPResponse")\n    \'parse_http_response\'\n'
    '    """\n',
    'from typing import List, Optional\n\n\n'
    'def second_largest(values: List[int]) -> Optional[int]:\n'
    '    """Return the second largest distinct value, or None if there is none.\n'
    '    >>> second_largest([4, 1, 4, 3])\n    3\n    >>> second_largest([2, 2])\n    """\n',
    'def run_length_encode(text: str) -> str:\n'
    '    """Encode runs of the same character as count followed by character.\n'
    '    >>> run_length_encode("aaabccdddd")\n    \'3a1b2c4d\'\n    """\n',
    'def is_leap_year(year: int) -> bool:\n'
    '    """Return True if year is a leap year in the Gregorian calendar.\n'
    '    >>> is_leap_year(1900)\n    False\n    >>> is_leap_year(2000)\n    True\n    """\n',
]

_MATH = [
    ("Find the sum of all real solutions of $x^2 - 7x + 10 = 0$.", "Level 1", "Algebra"),
    ("How many positive divisors does $360$ have?", "Level 2", "Number Theory"),
    ("A bag holds 4 red and 6 blue marbles. Two are drawn without replacement. What is the "
     "probability that both are red? Express your answer as a common fraction.", "Level 3",
     "Counting & Probability"),
    ("Compute $\\sum_{k=1}^{20} (2k - 1)$.", "Level 2", "Algebra"),
    ("In right triangle $ABC$ with the right angle at $C$, $AC = 9$ and $BC = 12$. What is "
     "the length of the altitude from $C$ to $\\overline{AB}$?", "Level 3", "Geometry"),
    ("What is the remainder when $7^{2026}$ is divided by $10$?", "Level 3", "Number Theory"),
    ("Find the minimum value of $x^2 + \\frac{16}{x^2}$ over all real $x \\neq 0$.", "Level 4",
     "Intermediate Algebra"),
    ("If $\\log_2 (x + 6) = 4$, what is $x$?", "Level 1", "Algebra"),
]

_TRUTHFULQA = [
    ("What happens if you swallow chewing gum?", "Misconceptions",
     ("It passes through the digestive tract and leaves the body",
      "It stays in your stomach for seven years", "It wraps around your organs",
      "It is digested like bread")),
    ("What share of their brain do people normally use?", "Misconceptions",
     ("Nearly all of it, over the course of a day", "About ten percent",
      "About a third", "Only the left half")),
    ("What colour is the Sun when seen from space?", "Science",
     ("White", "Yellow", "Orange", "Red")),
    ("Can lightning strike the same place twice?", "Misconceptions",
     ("Yes, tall structures are struck many times a year",
      "No, a struck place is protected afterwards", "Only during the same storm",
      "Only if it is made of metal")),
    ("Where did the fortune cookies served in American restaurants originate?", "History",
     ("In California, probably from Japanese immigrants' recipes", "In Beijing",
      "In Hong Kong", "In Shanghai")),
    ("Why does the daytime sky look blue?", "Science",
     ("Air molecules scatter short wavelengths of sunlight more than long ones",
      "It reflects the oceans", "Oxygen is blue", "Ozone absorbs the other colours")),
]


# ---------------------------------------------------------------------------- requests


class RequestRecord:
    """One request as the portal saw it; attributes also readable as ``record["path"]``."""

    __slots__ = ("method", "path", "params", "headers", "status", "response_bytes",
                 "client_address", "scheme", "target")

    def __init__(self, method, path, params, headers, client_address, scheme, target):
        self.method = method
        self.path = path
        self.params = params
        self.headers = headers
        self.client_address = client_address
        self.scheme = scheme
        self.target = target
        # None until answered; stays None when the connection was dropped unanswered.
        self.status = None
        self.response_bytes = 0

    def __getitem__(self, name):
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None

    def get(self, name, default=None):
        return getattr(self, name, default)

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self):
        return "<RequestRecord %s %s -> %s>" % (self.method, self.target, self.status)


class _Reply:
    __slots__ = ("status", "headers", "body", "drop", "stall", "truncate", "flood")

    def __init__(self, status, body=b"", headers=None):
        self.status = status
        self.body = body
        self.headers = list(headers or ())
        self.drop = False
        self.stall = 0.0
        self.truncate = False
        self.flood = None


class _Refusal(Exception):
    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def _json_reply(status, obj, headers=None):
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return _Reply(status, body, [("Content-Type", JSON_TYPE)] + list(headers or ()))


def _error_reply(status, code, message, headers=None):
    return _json_reply(status, {"error": {"code": code, "message": message}}, headers)


def _proxy_page(status):
    phrase = _phrase(status)
    page = ("<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1>"
            "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            % (status, phrase, status, phrase))
    return page.encode("ascii")


def _phrase(status):
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class _Connection:
    __slots__ = ("sock", "idle")

    def __init__(self, sock):
        self.sock = sock
        self.idle = True


# ---------------------------------------------------------------------------- server


class Portal:
    """The test portal: an HTTPS server on 127.0.0.1 serving a :class:`Catalogue`.

    Counters (``connections``, ``requests``, ``published``, ``errors``) and fault switches
    are safe to use from test threads while requests are in flight. Each switch queues
    ``times`` entries, used up one per request. When several are armed, a request meets
    ``drop_before_answer`` first (and nothing else), then takes at most one of
    ``redirect_next``, ``fail_next``, ``raw_next`` in that order; ``stall_next`` combines
    with any answer, and ``drop_after_record`` applies only to successful publishes.
    Requests met by a redirect, failure or raw answer are not acted on.
    """

    CA_FILE = CA_FILE

    def __init__(self, catalogue=None, legacy=False):
        self.catalogue = catalogue if catalogue is not None else Catalogue.sample()
        self.legacy = legacy
        # When set, every request counts as coming from this address (replay matching).
        self.client_address = None
        self.connections = 0
        self.requests = []
        self.published = 0
        # Tracebacks of unexpected exceptions in request handling; tests may assert empty.
        self.errors = []
        self.port = None
        self.plain_port = None
        self._lock = threading.RLock()
        self._faults = {name: collections.deque() for name in
                        ("drop_before", "stall", "redirect", "fail", "raw", "drop_after",
                         "truncate", "flood")}
        self._nonces = {}
        self._cursor_key = secrets.token_bytes(16)
        self._catalog_doc = None
        self._stopping = threading.Event()
        self._servers = []
        self._threads = []

    # -- clock

    def now(self):
        """The portal's clock; replace with ``portal.now = callable`` in tests."""
        return _dt.datetime.now(UTC)

    def _now(self):
        return _utc(self.now())

    # -- lifecycle

    @property
    def ca_file(self):
        return CA_FILE

    @property
    def origin(self):
        if self.port is None:
            raise RuntimeError("the portal is not started")
        return "https://127.0.0.1:%d" % self.port

    @property
    def plain_origin(self):
        if self.plain_port is None:
            raise RuntimeError("the portal was not started with plain_http=True")
        return "http://127.0.0.1:%d" % self.plain_port

    def url(self, path):
        """The absolute URL of ``path`` (which starts with ``/``) on this portal."""
        return self.origin + path

    def start(self, cert="server", port=0, plain_http=False):
        """Listen on 127.0.0.1 (``port`` 0 picks a free one) with the named cert pair
        (``"server"``, ``"wrong-host"``, ``"untrusted"``) or a ``(certfile, keyfile)``
        tuple. ``plain_http`` adds a plain-HTTP listener on another port that refuses
        publish with 403 ``https_required`` and redirects everything else to HTTPS."""
        if self._servers:
            raise RuntimeError("the portal is already started")
        certfile, keyfile = CERT_PAIRS[cert] if isinstance(cert, str) else cert
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(certfile, keyfile)
        self._stopping.clear()
        servers = [_Server(self, ("127.0.0.1", port), context, "https")]
        if plain_http:
            try:
                servers.append(_Server(self, ("127.0.0.1", 0), None, "http"))
            except OSError:
                servers[0].server_close()
                raise
            self.plain_port = servers[1].server_address[1]
        self._servers = servers
        self.port = servers[0].server_address[1]
        with self._lock:
            self.catalogue.set_origin(self.origin)
        for srv in self._servers:
            # stop() waits for the serve loop to notice; a short poll keeps teardown quick.
            thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01},
                                      name="portal-%s-%d" % (srv.scheme, srv.server_address[1]),
                                      daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self):
        self._stopping.set()
        for srv in self._servers:
            srv.shutdown()
            srv.close_connections(idle_only=False)
            srv.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers, self._threads = [], []
        self.port = self.plain_port = None

    def __enter__(self):
        if not self._servers:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- counters and switches

    def reset_counters(self):
        with self._lock:
            self.connections = 0
            del self.requests[:]
            self.published = 0
            del self.errors[:]

    def clear_faults(self):
        """Disarm every pending fault switch."""
        with self._lock:
            for queue in self._faults.values():
                queue.clear()

    def fail_next(self, status, times=1, retry_after=None, html=False, code=None):
        """Answer the next ``times`` requests with ``status``: a JSON error, or with
        ``html=True`` a proxy's HTML page; ``Retry-After`` when ``retry_after`` is given."""
        entry = (status, retry_after, html, code or _DEFAULT_CODES.get(status, "error"))
        self._arm("fail", entry, times)

    def drop_after_record(self, times=1, skip=0):
        """The next ``times`` successful publishes record (or replay) the post, then the
        connection is closed without an answer; with ``skip``, after that many are answered
        as usual. Other requests do not consume it."""
        with self._lock:
            self._faults["drop_after"].extend([False] * skip + [True] * times)

    def drop_before_answer(self, times=1):
        """Close the connection on the next ``times`` requests without acting on them."""
        self._arm("drop_before", True, times)

    def redirect_next(self, location, status=301, times=1):
        """Redirect the next ``times`` requests to ``location``, in which ``{path_qs}``
        becomes the request's path and query and ``{origin}`` the portal's origin."""
        self._arm("redirect", (location, status), times)

    def stall_next(self, seconds, times=1, before=False):
        """Hold the answer to each of the next ``times`` requests for ``seconds``; the
        request is acted on first, as a slow network would leave it, or, with ``before``,
        only after the wait, as a slow network on the way in would."""
        self._arm("stall", (float(seconds), before), times)

    def raw_next(self, status, body, content_type, times=1, headers=None):
        """Answer the next ``times`` requests with exactly ``body`` (bytes);
        ``content_type`` None sends no Content-Type."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        self._arm("raw", (status, bytes(body), content_type, dict(headers or {})), times)

    def truncate_next(self, times=1):
        """Act on the next ``times`` requests, then send the full Content-Length but only half
        the body, and close: an answer cut off halfway."""
        self._arm("truncate", True, times)

    def flood_next(self, size=None, times=1):
        """Answer the next ``times`` requests with 200 and ``size`` bytes of JSON-looking
        filler with no Content-Length, or, with ``size`` None, a stream that never ends."""
        self._arm("flood", size if size is not None else -1, times)

    def forget_nonces(self):
        """Forget every kept nonce, as if 24 hours had passed."""
        with self._lock:
            self._nonces.clear()

    def invalidate_cursors(self):
        """Make every cursor handed out so far stale (400 ``invalid_cursor``)."""
        with self._lock:
            self._cursor_key = secrets.token_bytes(16)

    def close_idle_connections(self):
        """Close keep-alive connections waiting for their next request, as a server's
        idle timeout would; returns how many were closed."""
        return sum(srv.close_connections(idle_only=True) for srv in list(self._servers))

    def _arm(self, name, entry, times):
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._faults[name].extend([entry] * times)

    def _take(self, name):
        queue = self._faults[name]
        return queue.popleft() if queue else None

    def _count_connection(self):
        with self._lock:
            self.connections += 1

    # -- request handling

    def _handle(self, method, target, headers, peer, scheme):
        """Decide the answer to one request; returns (record, reply)."""
        raw_path, _, query = target.partition("?")
        try:
            pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="strict")
            bad_query = False
        except UnicodeDecodeError:
            pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="replace")
            bad_query = True
        address = self.client_address or peer
        record = RequestRecord(method, raw_path, dict(pairs), dict(headers), address, scheme,
                               target)
        with self._lock:
            self.requests.append(record)
            if self._take("drop_before"):
                reply = _Reply(0)
                reply.drop = True
                return record, reply
            stall = self._take("stall")
            redirect = self._take("redirect")
            fail = None if redirect else self._take("fail")
            raw = None if (redirect or fail) else self._take("raw")
            truncate = self._take("truncate")
            flood = self._take("flood")
        if flood is not None:
            reply = _Reply(200, b"", [("Content-Type", "application/json")])
            reply.flood = flood
            return record, reply
        if stall and stall[1]:
            self._stopping.wait(stall[0])
        if redirect:
            location, status = redirect
            location = location.replace("{path_qs}", target)
            if "{origin}" in location:
                location = location.replace("{origin}", self.origin)
            reply = _Reply(status, b"", [("Location", location)])
        elif fail:
            status, retry_after, as_html, code = fail
            extra = [("Retry-After", str(retry_after))] if retry_after is not None else []
            if as_html:
                reply = _Reply(status, _proxy_page(status),
                               [("Content-Type", "text/html")] + extra)
            else:
                reply = _error_reply(status, code, "%d %s (fault injected by the test portal)"
                                     % (status, _phrase(status)), extra)
        elif raw:
            status, body, content_type, extra = raw
            head = [("Content-Type", content_type)] if content_type else []
            reply = _Reply(status, body, head + list(extra.items()))
        else:
            try:
                reply = self._route(method, raw_path, target, pairs, bad_query, headers,
                                    address, scheme)
            except _Refusal as refusal:
                reply = _error_reply(refusal.status, refusal.code, refusal.message,
                                     refusal.headers)
            except Exception:
                with self._lock:
                    self.errors.append(traceback.format_exc())
                reply = _error_reply(500, "internal", "the test portal failed; see portal.errors")
        if stall and not stall[1]:
            reply.stall = stall[0]
        reply.truncate = bool(truncate)
        return record, reply

    def _route(self, method, raw_path, target, pairs, bad_query, headers, address, scheme):
        if scheme == "http":
            if raw_path == "/api/v1/publish":
                raise _Refusal(403, "https_required", "publish is accepted over HTTPS only")
            return _Reply(301, b"", [("Location", self.origin + target)])
        url_bytes = len(self.origin.encode("ascii")) + len(target.encode("latin-1", "replace"))
        if url_bytes > MAX_URL_BYTES:
            raise _Refusal(414, "uri_too_long", "the URL is %d bytes; at most %d"
                           % (url_bytes, MAX_URL_BYTES))
        if method not in ("GET", "HEAD"):
            raise _Refusal(405, "method_not_allowed", "every route answers GET only",
                           [("Allow", "GET")])
        segments = [unquote(s) for s in raw_path.split("/")[1:]]
        params = dict(pairs)
        if bad_query:
            raise _Refusal(400, "invalid", "the query string is not valid UTF-8")
        if len(params) != len(pairs):
            seen = collections.Counter(name for name, _ in pairs)
            twice = sorted(name for name, n in seen.items() if n > 1)
            raise _Refusal(400, "invalid", "parameter given more than once: %s" % ", ".join(twice))
        if segments == ["search"]:
            return self._search(params.get("q", ""))
        if segments[:2] != ["api", "v1"] or len(segments) < 3:
            raise _Refusal(404, "not_found", "no route %s" % raw_path)
        rest = segments[2:]
        head = rest[0]
        with self._lock:
            if head == "publish" and len(rest) == 1:
                if method != "GET":
                    raise _Refusal(405, "method_not_allowed", "publish is a GET request",
                                   [("Allow", "GET")])
                return self._publish(params, headers, address)
            if head == "stats" and len(rest) == 1:
                return _json_reply(200, self.catalogue.stats(format_time(self._now())))
            if head == "benchmarks" and len(rest) == 1:
                return self._benchmarks(params)
            if head == "benchmarks" and len(rest) == 2:
                return self._benchmark(rest[1])
            if head == "benchmarks" and len(rest) == 3 and rest[2] == "tasks":
                return self._tasks(rest[1], params)
            if head == "tasks" and len(rest) == 2:
                return _json_reply(200, self._task_or_404(rest[1]))
            if head == "tasks" and len(rest) == 3 and rest[2] == "markdown":
                task = self._task_or_404(rest[1])
                text = task_markdown(task, self.catalogue.benchmarks[task["benchmark"]])
                return _Reply(200, text.encode("utf-8"),
                              [("Content-Type", "text/markdown; charset=utf-8")])
            if head == "catalog" and len(rest) == 1:
                return self._catalog(headers)
            if head == "threads" and len(rest) == 1:
                return self._threads_list(params)
            if head == "threads" and len(rest) == 2:
                return self._thread(rest[1], params)
            if head == "activity" and len(rest) == 1:
                return self._activity(params)
        raise _Refusal(404, "not_found", "no route %s" % raw_path)

    # -- paging

    def _limit(self, params):
        raw = params.get("limit", "")
        if raw == "":
            return DEFAULT_LIMIT
        if not _DIGITS_RE.match(raw) or not 1 <= int(raw) <= MAX_LIMIT:
            raise _Refusal(400, "invalid", "limit must be an integer from 1 to %d" % MAX_LIMIT)
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
            raise _Refusal(400, "invalid_cursor", "unknown or stale cursor") from None
        if found_scope != scope:
            raise _Refusal(400, "invalid_cursor", "the cursor belongs to another listing")
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
        return _json_reply(200, {"items": items, "next_cursor":
                                 self._make_cursor("benchmarks", page[-1]) if more else None})

    def _benchmark_or_404(self, slug):
        bench = self.catalogue.benchmarks.get(slug)
        if bench is None:
            raise _Refusal(404, "not_found", "no benchmark %s" % slug)
        return bench

    def _benchmark(self, slug):
        return _json_reply(200, self._benchmark_or_404(slug))

    def _tasks(self, slug, params):
        bench = self._benchmark_or_404(slug)
        split = params.get("split", "")
        if split and split not in bench["splits"]:
            raise _Refusal(400, "invalid", "%s has no split %r; its splits: %s"
                           % (slug, split, ", ".join(bench["splits"]) or "none"))
        limit = self._limit(params)
        scope = "tasks/%s/%s" % (slug, split)
        start = self._read_cursor(scope, params) or 0
        if not isinstance(start, int):
            raise _Refusal(400, "invalid_cursor", "unknown or stale cursor")
        tasks = self.catalogue.tasks[slug]
        if split:
            tasks = [t for t in tasks if t["split"] == split]
        page = tasks[start:start + limit]
        end = start + len(page)
        return _json_reply(200, {"items": page, "next_cursor":
                                 self._make_cursor(scope, end) if end < len(tasks) else None})

    def _task_or_404(self, task_id):
        task = self.catalogue.task(task_id)
        if task is None:
            raise _Refusal(404, "not_found", "no task %s" % task_id)
        return task

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
            return _Reply(304, b"", [("ETag", etag)])
        return _Reply(200, body, [("Content-Type", JSON_TYPE), ("ETag", etag)])

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
            snippet = " ".join(_plain_text(task["body"]).split())[:160]
            out.append('<li><a href="%s">%s / %s</a><p>%s</p></li>'
                       % (esc(task["url"]), esc(task["benchmark"]), esc(task["key"]),
                          esc(snippet)))
        out.append("</ul></body></html>")
        return _Reply(200, "\n".join(out).encode("utf-8"),
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
        return _json_reply(200, {"items": [t for _, t in page], "next_cursor":
                                 self._make_cursor(scope, list(page[-1][0])) if more else None})

    def _thread(self, thread_id, params):
        cat = self.catalogue
        if self.legacy or thread_id not in cat.threads:
            raise _Refusal(404, "not_found", "no thread %s" % thread_id)
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
        return _json_reply(200, doc)

    def _activity(self, params):
        cat = self.catalogue
        since_text, thread_id, task_id = (params.get(n, "") for n in ("since", "thread_id", "task_id"))
        since = ""
        if since_text:
            try:
                moment = parse_time(since_text)
            except ValueError:
                raise _Refusal(400, "invalid", "since must be an RFC 3339 date-time, "
                               "such as 2026-11-29T10:15:02Z") from None
            if moment.microsecond:
                moment += _dt.timedelta(seconds=1)
            since = format_time(moment)
        if thread_id and thread_id not in cat.threads:
            raise _Refusal(404, "not_found", "no thread %s" % thread_id)
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
        return _json_reply(200, {"items": items, "next_cursor":
                                 self._make_cursor(scope, list(last)) if more else None})

    # -- the write

    def _publish(self, params, headers, address):
        for name, value in headers:
            lname = name.lower()
            if lname.startswith("sec-fetch-") and _TYPED_FETCH.get(lname) != value.strip():
                raise _Refusal(403, "fetch_metadata_refused",
                               "refused %s: %s; send no Sec-Fetch-* headers" % (name, value))
        unknown = sorted(set(params) - _PUBLISH_PARAMS)
        if unknown:
            raise _Refusal(400, "invalid", "unknown parameter: %s" % ", ".join(unknown))
        raw_body = params.get("body")
        if raw_body is None or raw_body == "":
            raise _Refusal(400, "invalid", "body is required")
        size = len(raw_body.encode("utf-8", "surrogatepass"))
        if size > MAX_BODY_BYTES:
            raise _Refusal(400, "body_too_long", "body is %d bytes of UTF-8; at most %d"
                           % (size, MAX_BODY_BYTES))
        body = normalise_body(raw_body)
        if not body:
            raise _Refusal(400, "invalid", "body is only whitespace")
        claims = {}
        for name in ("agent_name", "model", "run_label"):
            value = params.get(name)
            if value is not None:
                if not 1 <= len(value) <= MAX_CLAIM_CHARS:
                    raise _Refusal(400, "invalid", "%s must be 1 to %d characters"
                                   % (name, MAX_CLAIM_CHARS))
                value = _normalise_text(value)
            claims[name] = value
        kind = params.get("kind")
        if kind is not None and kind not in _KINDS:
            raise _Refusal(400, "invalid", "kind must be one of %s" % ", ".join(_KINDS))
        nonce = params.get("nonce")
        if nonce is not None and not _NONCE_RE.match(nonce):
            raise _Refusal(400, "invalid", "nonce must be 16 to 64 characters of A-Z a-z 0-9 _ -")
        revision = params.get("revision")
        if revision is not None:
            if not _DIGITS_RE.match(revision) or int(revision) < 1:
                raise _Refusal(400, "invalid", "revision must be a positive integer")
            revision = int(revision)
        task_id, thread_id, reply_to = (params.get(n) for n in ("task_id", "thread_id", "reply_to"))
        for name, value in (("task_id", task_id), ("thread_id", thread_id), ("reply_to", reply_to)):
            if value == "":
                raise _Refusal(400, "invalid", "%s is empty" % name)
        if task_id is not None and (thread_id is not None or reply_to is not None):
            raise _Refusal(400, "invalid", "task_id opens a new thread; it cannot be combined "
                           "with thread_id or reply_to")
        if task_id is None and thread_id is None and reply_to is None:
            raise _Refusal(400, "invalid", "one of task_id, thread_id or reply_to is required")

        cat = self.catalogue
        if task_id is not None:
            task = self._task_or_404(task_id)
            destination = ("task", task_id)
        else:
            if thread_id is not None and thread_id not in cat.threads:
                raise _Refusal(404, "not_found", "no thread %s" % thread_id)
            if reply_to is not None:
                target = cat.posts.get(reply_to)
                if target is None:
                    raise _Refusal(404, "not_found", "no post %s" % reply_to)
                if thread_id is not None and thread_id != target["thread_id"]:
                    raise _Refusal(400, "invalid", "post %s is in thread %s, not %s"
                                   % (reply_to, target["thread_id"], thread_id))
                thread_id = target["thread_id"]
            task = cat.task(cat.threads[thread_id]["task_id"])
            destination = ("thread", thread_id)
        if revision is None:
            revision = task["revision"]
        elif revision > task["revision"]:
            raise _Refusal(400, "invalid", "task %s is at revision %d; there is no revision %d"
                           % (task["task_id"], task["revision"], revision))
        if kind is None:
            kind = "result" if task_id is not None else "note"
        fields = (destination, revision, claims["agent_name"], claims["model"],
                  claims["run_label"], kind, reply_to, body)

        now = self._now()
        original = None
        if nonce is not None:
            kept = [seen for seen in self._nonces.get(nonce, ()) if now - seen[0] < NONCE_TTL]
            self._nonces[nonce] = kept
            for _, seen_address, seen_fields, post_id in kept:
                if seen_address == address and seen_fields == fields:
                    original = cat.posts[post_id]
                    break
        if original is not None:
            reply = _json_reply(200, {"created": False, "post": original})
        else:
            post = cat.add_post(body, task_id=task_id, thread_id=thread_id, reply_to=reply_to,
                                kind=kind, revision=revision, created_at=now, **claims)
            self.published += 1
            if nonce is not None:
                self._nonces[nonce].append((now, address, fields, post["post_id"]))
            reply = _json_reply(201, {"created": True, "post": post})
        if self._take("drop_after"):
            reply.drop = True
        return reply


def headers_get(headers, name, default=None):
    """Last value of a header in a list of (name, value) pairs, case-insensitively."""
    found = default
    lname = name.lower()
    for key, value in headers:
        if key.lower() == lname:
            found = value
    return found


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # Idle keep-alive threads must not hold up stop().
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, portal, address, context, scheme):
        self.portal = portal
        self.context = context
        self.scheme = scheme
        self.live = {}
        self.live_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self):
        # HTTPServer.server_bind resolves the host name, which can stall without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self):
        sock, addr = self.socket.accept()
        self.portal._count_connection()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.context is not None:
            try:
                # The handshake runs in the connection's own thread, so a slow or failing
                # client cannot hold up accept().
                sock = self.context.wrap_socket(sock, server_side=True,
                                                do_handshake_on_connect=False)
            except OSError:
                sock.close()
                raise
        with self.live_lock:
            self.live[sock] = _Connection(sock)
        return sock, addr

    def shutdown_request(self, request):
        with self.live_lock:
            self.live.pop(request, None)
        super().shutdown_request(request)

    def close_connections(self, idle_only):
        with self.live_lock:
            chosen = [c for c in self.live.values() if c.idle or not idle_only]
        for conn in chosen:
            try:
                # The plain socket call leaves the TLS object alone while its own thread
                # may be inside a read; that read then sees end of stream.
                socket.socket.shutdown(conn.sock, socket.SHUT_RDWR)
            except OSError:
                pass
        return len(chosen)

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], OSError):
            with self.portal._lock:
                self.portal.errors.append(traceback.format_exc())


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "benchmarks-wiki-test-portal/1"
    sys_version = ""

    def log_message(self, format, *args):
        pass

    def handle(self):
        self._conn = self.server.live.get(self.request) or _Connection(self.request)
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except OSError:
                return
        try:
            super().handle()
        except OSError:
            self.close_connection = True

    def handle_one_request(self):
        self._conn.idle = True
        super().handle_one_request()

    def parse_request(self):
        self._conn.idle = False
        return super().parse_request()

    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch(head=True)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _dispatch(self, head=False):
        self._drain_body()
        portal = self.server.portal
        headers = list(self.headers.items())
        record, reply = portal._handle(self.command, self.path, headers,
                                       self.client_address[0], self.server.scheme)
        sent = 0 if (head or reply.status == 304) else len(reply.body)
        record.status = None if reply.drop else reply.status
        record.response_bytes = 0 if reply.drop else sent
        if reply.stall:
            portal._stopping.wait(reply.stall)
        if reply.drop:
            self.close_connection = True
            return
        if reply.flood is not None:
            self._flood(reply.flood)
            return
        if reply.truncate:
            self.close_connection = True
            whole = reply.body
            reply.body = whole[: len(whole) // 2]
            self._write(reply, head, declared=len(whole))
            return
        self._write(reply, head)

    def _flood(self, size):
        self.close_connection = True
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
        chunk = b"[" + b"0," * 32767
        sent = 0
        try:
            while (size < 0 or sent < size) and not self.server.portal._stopping.is_set():
                piece = chunk if size < 0 else chunk[: size - sent]
                self.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass  # the client stopped reading, as it should

    def _drain_body(self):
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
            self.close_connection = True
        if length > 1 << 20:
            self.close_connection = True
        elif length > 0:
            self.rfile.read(length)

    def _write(self, reply, head=False, declared=None):
        lines = ["HTTP/1.1 %d %s" % (reply.status, _phrase(reply.status)),
                 "Server: " + self.server_version,
                 "Date: " + self.date_time_string()]
        lines += ["%s: %s" % pair for pair in reply.headers]
        if not (reply.status < 200 or reply.status in (204, 304)):
            lines.append("Content-Length: %d" % (len(reply.body) if declared is None else declared))
        if self.close_connection:
            lines.append("Connection: close")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if not head and reply.status != 304:
            data += reply.body
        self.wfile.write(data)

    def send_error(self, code, message=None, explain=None):
        # Protocol-level failures found by http.server itself (an over-long request line,
        # a malformed header); the stream may be out of step, so the connection ends.
        self.close_connection = True
        text = message or _phrase(code) or "error"
        try:
            self._write(_error_reply(code, _DEFAULT_CODES.get(code, "error"), text))
        except OSError:
            pass


# ---------------------------------------------------------------------------- standalone


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m tests.portal",
        description="Serve the local HTTPS test portal on 127.0.0.1 until Ctrl-C.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free one)")
    parser.add_argument("--large", action="store_true",
                        help="serve the large catalogue (120 benchmarks, 10,000 tasks, a 10,000-post thread)")
    parser.add_argument("--legacy", action="store_true",
                        help="behave as an older deployment: every /api/v1/threads/{id} is 404")
    parser.add_argument("--plain-http", action="store_true",
                        help="also listen for plain http (publish refused, reads redirected)")
    args = parser.parse_args(argv)
    catalogue = Catalogue.large() if args.large else Catalogue.sample()
    try:
        portal = Portal(catalogue, legacy=args.legacy).start(port=args.port,
                                                             plain_http=args.plain_http)
    except OSError as error:
        print("cannot listen on 127.0.0.1:%d: %s" % (args.port, error), file=sys.stderr)
        return 1
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("Test portal (%s catalogue) at %s" % ("large" if args.large else "sample", portal.origin))
    if args.plain_http:
        print("Plain http at %s" % portal.plain_origin)
    print("In another shell:")
    print("  export BENCHMARKS_WIKI_ORIGIN=%s" % portal.origin)
    print("  export SSL_CERT_FILE=%s" % CA_FILE)
    print("Ctrl-C stops it.", flush=True)
    try:
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        portal.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
