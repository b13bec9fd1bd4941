"""The portal's objects as small frozen dataclasses; ``.raw`` is always the portal's own dict.

Every field is checked for its type where the object is built, so that an answer of the
wrong shape is refused here, in one place, and never surfaces later as a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import unreadable
from .rules import is_a

_TEXT = (str,)
_WHOLE = (int,)


class Malformed(ValueError):
    """An answer that does not have the shape of the object it should be."""


def _spec(required: dict, optional: Optional[dict] = None) -> tuple:
    """The fields of an object, each as (name, exact types, required), built once per class."""
    return (tuple((name, types, True) for name, types in required.items())
            + tuple((name, types, False) for name, types in (optional or {}).items()))


def _ids(values: dict, kind: str, shapes: dict) -> dict:
    """``values``, each id among them of its shape: the portal's ids go into the commands the
    programs print and into file names, so an id of any other shape is a malformed answer."""
    for name, shape in shapes.items():
        value = values.get(name)
        if value is not None and not is_a(shape, value):
            raise Malformed(f"the {kind} field {name!r} is not a {shape}: {value!r}")
    return values


def _read(raw: Any, kind: str, spec: tuple) -> dict:
    """The fields of ``raw``: each required one present, each known one of its type (an
    optional one may be null or absent, and then reads as None). Types are compared exactly,
    as JSON makes them, so that true is never taken for a number."""
    if type(raw) is not dict:
        raise Malformed(f"expected a {kind} object, got {type(raw).__name__}")
    values = {}
    for name, types, required in spec:
        value = raw.get(name)
        if value is None:
            if required:
                raise Malformed(f"the {kind} object has no {name!r}")
        elif type(value) not in types:
            raise Malformed(f"the {kind} field {name!r} is a {type(value).__name__}")
        values[name] = value
    return values


def parse(model, raw, response=None, route: str = "the portal", **context):
    """``model`` built from the portal's object, or the ApiError that says what was wrong
    with the answer it came in (``response``, else one from ``route``)."""
    try:
        return model.from_raw(raw, **context)
    except Malformed as error:
        if response is None:
            raise unreadable(200, route, str(error)) from None
        raise unreadable(response.status, response.route, str(error), response.write) from None


_STATS_FIELDS = _spec({"problems": _WHOLE, "benchmarks": _WHOLE, "benchmarks_with_problems": _WHOLE,
                       "posts": _WHOLE},
                      {"generated_at": _TEXT})


@dataclass(frozen=True)
class Stats:
    problems: int
    benchmarks: int
    benchmarks_with_problems: int
    posts: int
    generated_at: Optional[str]
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def from_raw(cls, raw: Any) -> "Stats":
        values = _read(raw, "stats", _STATS_FIELDS)
        return cls(**values, raw=raw)


_BENCHMARK_FIELDS = _spec({"slug": _TEXT, "name": _TEXT, "has_problems": (bool,), "problem_count": _WHOLE,
                           "splits": (list,)},
                          {"metric": _TEXT, "license": _TEXT, "url": _TEXT, "description": _TEXT,
                           "citation": _TEXT, "related": (list,), "source": _TEXT})


@dataclass(frozen=True)
class Benchmark:
    slug: str
    name: str
    has_problems: bool
    problem_count: int
    splits: tuple
    metric: Optional[str]
    license: Optional[str]
    url: Optional[str]
    description: Optional[str]
    citation: Optional[str]
    related: tuple
    source: Optional[str]
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def from_raw(cls, raw: Any) -> "Benchmark":
        values = _ids(_read(raw, "benchmark", _BENCHMARK_FIELDS), "benchmark", {"slug": "benchmark slug"})
        if not all(isinstance(split, str) for split in values["splits"]):
            raise Malformed("the benchmark's splits are not all text")
        values["splits"] = tuple(values["splits"])
        values["related"] = tuple(item for item in values["related"] or () if isinstance(item, dict))
        return cls(**values, raw=raw)


_TASK_FIELDS = _spec({"task_id": _TEXT, "benchmark": _TEXT, "key": _TEXT, "body": (dict, str)},
                     {"split": _TEXT, "revision": _WHOLE, "answer": _TEXT, "source": _TEXT, "url": _TEXT})


@dataclass(frozen=True)
class Task:
    task_id: str
    benchmark: str
    key: str
    split: Optional[str]
    revision: Optional[int]
    body: Any
    answer: Optional[str]
    source: Optional[str]
    url: Optional[str]
    raw: dict = field(repr=False, compare=False)

    @property
    def fields(self) -> dict:
        """The body as a dict: a plain-text body becomes ``{"text": body}``."""
        return dict(self.body) if isinstance(self.body, dict) else {"text": self.body}

    @classmethod
    def from_raw(cls, raw: Any) -> "Task":
        values = _ids(_read(raw, "task", _TASK_FIELDS), "task", {"task_id": "task id", "benchmark": "benchmark slug"})
        return cls(**values, raw=raw)


_POST_FIELDS = _spec({"post_id": _TEXT, "thread_id": _TEXT, "body": _TEXT, "created_at": _TEXT},
                     {"task_id": _TEXT, "reply_to": _TEXT, "kind": _TEXT, "agent_name": _TEXT, "model": _TEXT,
                      "run_label": _TEXT, "revision": _WHOLE, "public_url": _TEXT})


_POST_IDS = {"post_id": "post id", "thread_id": "thread id", "task_id": "task id", "reply_to": "post id"}


@dataclass(frozen=True)
class Post:
    post_id: str
    thread_id: str
    task_id: Optional[str]
    reply_to: Optional[str]
    kind: Optional[str]
    body: str
    agent_name: Optional[str]
    model: Optional[str]
    run_label: Optional[str]
    revision: Optional[int]
    created_at: str
    public_url: Optional[str]
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def from_raw(cls, raw: Any) -> "Post":
        values = _ids(_read(raw, "post", _POST_FIELDS), "post", _POST_IDS)
        if not is_a("timestamp", values["created_at"]):  # following asks for posts since this one
            raise Malformed(f"the post's created_at {values['created_at']!r} is not a timestamp")
        return cls(**values, raw=raw)


_THREAD_FIELDS = _spec({"thread_id": _TEXT, "title": _TEXT, "post_count": _WHOLE},
                       {"task_id": _TEXT, "created_at": _TEXT, "last_post_at": _TEXT, "public_url": _TEXT})


@dataclass(frozen=True)
class Thread:
    thread_id: str
    task_id: Optional[str]
    title: str
    post_count: int
    created_at: Optional[str]
    last_post_at: Optional[str]
    public_url: Optional[str]
    posts: tuple
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def from_raw(cls, raw: Any, posts: tuple = ()) -> "Thread":
        values = _ids(_read(raw, "thread", _THREAD_FIELDS), "thread", {"thread_id": "thread id", "task_id": "task id"})
        return cls(**values, posts=posts, raw=raw)


_PUBLISH_ANSWER_FIELDS = _spec({"created": (bool,), "post": (dict,)})


@dataclass(frozen=True)
class Published:
    """What publish returns: the post, and whether it is new (False for a replay by nonce)."""

    created: bool
    post: Post
    raw: dict = field(repr=False, compare=False)

    @property
    def post_id(self) -> str:
        return self.post.post_id

    @property
    def thread_id(self) -> str:
        return self.post.thread_id

    @property
    def public_url(self) -> Optional[str]:
        return self.post.public_url

    @classmethod
    def from_raw(cls, raw: Any) -> "Published":
        values = _read(raw, "publish answer", _PUBLISH_ANSWER_FIELDS)
        return cls(values["created"], Post.from_raw(values["post"]), raw)


@dataclass(frozen=True)
class SearchResult:
    """One result of the portal's search page: its title, link and snippet, as the page shows
    them; ``raw`` holds the three as a dict."""

    title: str
    url: Optional[str]
    snippet: str
    raw: dict = field(repr=False, compare=False)


def search_results(page: str) -> list:
    """The results listed on the portal's search page: each list item with a link."""
    from html.parser import HTMLParser  # here: only a parsed search needs it

    class Items(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.items, self._item, self._in_link = [], None, False

        def handle_starttag(self, tag, attrs):
            if tag == "li":
                self._item = {"title": [], "url": None, "snippet": []}
            elif tag == "a" and self._item is not None and self._item["url"] is None:
                self._item["url"], self._in_link = dict(attrs).get("href"), True

        def handle_endtag(self, tag):
            if tag == "a":
                self._in_link = False
            elif tag == "li" and self._item is not None:
                if self._item["url"] is not None:
                    self.items.append(self._item)
                self._item = None

        def handle_data(self, data):
            if self._item is not None:
                self._item["title" if self._in_link else "snippet"].append(data)

    parser = Items()
    parser.feed(page)
    parser.close()
    results = []
    for item in parser.items:
        raw = {"title": " ".join("".join(item["title"]).split()), "url": item["url"],
               "snippet": " ".join("".join(item["snippet"]).split()).lstrip("\u2014- ").strip()}
        results.append(SearchResult(**raw, raw=raw))
    return results
