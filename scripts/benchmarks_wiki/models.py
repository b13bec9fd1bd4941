"""The portal's objects as small frozen dataclasses; ``.raw`` is always the portal's own dict. Each field
is read and checked as its class declares it, so that an answer of the wrong shape is refused here, once."""

from __future__ import annotations  # from_raw reads each field's type as its text

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Optional

from .errors import fail, unreadable
from .rules import is_a

# The JSON types each declared type is read from, compared exactly, so that true is never
# taken for a number; a tuple is read from a list.
_JSON_TYPES = {"str": (str,), "int": (int,), "bool": (bool,), "tuple": (list,), "Any": (dict, str), "dict": (dict,)}


@dataclass(frozen=True)
class _FromPortal:
    raw: dict = field(repr=False, compare=False)
    # Fields that hold an id or a time, by the shape (rules.is_a) each must have: the portal's
    # ids go into printed commands and file names, so an id of any other shape is malformed.
    _shapes: ClassVar[dict] = {}

    @classmethod
    def from_raw(cls, raw: Any, **given):
        """The object read from the portal's ``raw``; a field with a default is given, not read."""
        kind = cls.__name__.lower()
        if type(raw) is not dict:
            raise ValueError(f"expected a {kind} object, got {type(raw).__name__}")
        values = dict(given)
        for declared in fields(cls):
            if declared.name == "raw" or declared.default is not MISSING:
                continue
            optional = declared.type.startswith("Optional[")
            typed = declared.type[len("Optional["):-1] if optional else declared.type
            value = raw.get(declared.name)
            if value is None and not optional:
                raise ValueError(f"the {kind} object has no {declared.name!r}")
            if value is not None and type(value) not in _JSON_TYPES[typed]:
                raise ValueError(f"the {kind} field {declared.name!r} is a {type(value).__name__}")
            shape = cls._shapes.get(declared.name)
            if value is not None and shape and not is_a(shape, value):
                raise ValueError(f"the {kind} field {declared.name!r} is not a {shape}: {value!r}")
            values[declared.name] = tuple(value) if typed == "tuple" and value is not None else value
        return cls(**values, raw=raw)


def parse(model, raw, response=None, route: str = "the portal", **given):
    """``model`` built from the portal's object, or the ApiError saying what was wrong with the answer."""
    try:
        return model.from_raw(raw, **given)
    except ValueError as error:
        if response is None:
            raise fail("unreadable", status=200, code="malformed_answer", route=route, problem=str(error)) from None
        raise unreadable(response, str(error)) from None


@dataclass(frozen=True)
class Stats(_FromPortal):
    problems: int
    benchmarks: int
    benchmarks_with_problems: int
    posts: int
    generated_at: Optional[str]


@dataclass(frozen=True)
class Benchmark(_FromPortal):
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
    related: Optional[tuple]
    source: Optional[str]
    _shapes = {"slug": "benchmark slug"}

    def __post_init__(self):
        if not all(isinstance(split, str) for split in self.splits):
            raise ValueError("the benchmark's splits are not all text")
        object.__setattr__(self, "related", tuple(item for item in self.related or () if isinstance(item, dict)))


@dataclass(frozen=True)
class Task(_FromPortal):
    task_id: str
    benchmark: str
    key: str
    split: Optional[str]
    revision: Optional[int]
    body: Any
    answer: Optional[str]
    source: Optional[str]
    url: Optional[str]
    _shapes = {"task_id": "task id", "benchmark": "benchmark slug"}

    @property
    def fields(self) -> dict:
        """The body as a dict: a plain-text body becomes ``{"text": body}``."""
        return dict(self.body) if isinstance(self.body, dict) else {"text": self.body}


@dataclass(frozen=True)
class Post(_FromPortal):
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
    # Following asks for the posts since the newest one seen: its time must be one.
    _shapes = {"post_id": "post id", "thread_id": "thread id", "task_id": "task id", "reply_to": "post id",
               "created_at": "timestamp"}


@dataclass(frozen=True)
class Thread(_FromPortal):
    thread_id: str
    task_id: Optional[str]
    title: str
    post_count: int
    created_at: Optional[str]
    last_post_at: Optional[str]
    public_url: Optional[str]
    posts: tuple = ()
    _shapes = {"thread_id": "thread id", "task_id": "task id"}


@dataclass(frozen=True)
class Published(_FromPortal):
    """What publish returns: the post, and whether it is new (False for a replay by nonce)."""

    created: bool
    post: dict

    def __post_init__(self):
        object.__setattr__(self, "post", Post.from_raw(self.post))

    @property
    def post_id(self) -> str:
        return self.post.post_id

    @property
    def thread_id(self) -> str:
        return self.post.thread_id

    @property
    def public_url(self) -> Optional[str]:
        return self.post.public_url


@dataclass(frozen=True)
class SearchResult:
    """One result of the portal's search page, as the page shows it; ``raw`` holds the three as a dict."""

    title: str
    url: Optional[str]
    snippet: str
    raw: dict = field(repr=False, compare=False)


def search_results(page: str) -> list:
    """The results listed on the portal's search page: each list item with a link."""
    from html.parser import HTMLParser  # here: only a parsed search needs it

    class Items(HTMLParser):
        def __init__(self):
            super().__init__()
            self.results, self._item, self._in_link = [], None, False

        def handle_starttag(self, tag, attrs):
            if tag == "li":
                self._item = {"title": [], "url": None, "snippet": []}
            elif tag == "a" and self._item is not None and self._item["url"] is None:
                self._item["url"], self._in_link = dict(attrs).get("href"), True

        def handle_endtag(self, tag):
            if tag == "a":
                self._in_link = False
            elif tag == "li" and self._item is not None:
                item, self._item = self._item, None
                if item["url"] is not None:
                    raw = {"title": " ".join("".join(item["title"]).split()), "url": item["url"],
                           "snippet": " ".join("".join(item["snippet"]).split()).lstrip("\u2014- ").strip()}
                    self.results.append(SearchResult(**raw, raw=raw))

        def handle_data(self, data):
            if self._item is not None:  # pieces joined once: a page of many pieces costs its size
                self._item["title" if self._in_link else "snippet"].append(data)

    parser = Items()
    parser.feed(page)
    parser.close()
    return parser.results
