"""The portal's objects as small frozen dataclasses; ``.raw`` is always the portal's own dict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


class Malformed(ValueError):
    """An answer that does not have the shape of the object it should be."""


def _fits(value: Any, types) -> bool:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _require(raw: Any, kind: str, fields: dict) -> dict:
    if not isinstance(raw, dict):
        raise Malformed(f"expected a {kind} object, got {type(raw).__name__}")
    for name, types in fields.items():
        if name not in raw:
            raise Malformed(f"the {kind} object has no {name!r}")
        if not _fits(raw[name], types):
            raise Malformed(f"the {kind} field {name!r} is a {type(raw[name]).__name__}")
    return raw


def parse(model, raw, status: int = 200, **context):
    """``model`` built from the portal's object, or the ApiError that says what was wrong."""
    try:
        return model.from_raw(raw, **context)
    except Malformed as error:
        from .errors import ApiError

        raise ApiError(status, "malformed_answer", f"the portal's answer could not be read: {error}") from None


_OPTIONAL_STR = (str, type(None))


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
        _require(raw, "stats", {"problems": int, "benchmarks": int,
                                "benchmarks_with_problems": int, "posts": int})
        return cls(raw["problems"], raw["benchmarks"], raw["benchmarks_with_problems"],
                   raw["posts"], raw.get("generated_at"), raw)


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
        _require(raw, "benchmark", {"slug": str, "name": str, "has_problems": bool,
                                    "problem_count": int, "splits": list})
        return cls(raw["slug"], raw["name"], raw["has_problems"], raw["problem_count"],
                   tuple(raw["splits"]), raw.get("metric"), raw.get("license"), raw.get("url"),
                   raw.get("description"), raw.get("citation"), tuple(raw.get("related") or ()),
                   raw.get("source"), raw)


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
        _require(raw, "task", {"task_id": str, "benchmark": str, "key": str,
                               "body": (dict, str)})
        return cls(raw["task_id"], raw["benchmark"], raw["key"], raw.get("split"),
                   raw.get("revision"), raw["body"], raw.get("answer"), raw.get("source"),
                   raw.get("url"), raw)


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
        _require(raw, "post", {"post_id": str, "thread_id": str, "body": str, "created_at": str,
                               "agent_name": _OPTIONAL_STR, "model": _OPTIONAL_STR})
        return cls(raw["post_id"], raw["thread_id"], raw.get("task_id"), raw.get("reply_to"),
                   raw.get("kind"), raw["body"], raw.get("agent_name"), raw.get("model"),
                   raw.get("run_label"), raw.get("revision"), raw["created_at"],
                   raw.get("public_url"), raw)


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
        _require(raw, "thread", {"thread_id": str, "title": str, "post_count": int})
        return cls(raw["thread_id"], raw.get("task_id"), raw["title"], raw["post_count"],
                   raw.get("created_at"), raw.get("last_post_at"), raw.get("public_url"),
                   posts, raw)


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
        _require(raw, "publish answer", {"created": bool, "post": dict})
        return cls(raw["created"], Post.from_raw(raw["post"]), raw)
