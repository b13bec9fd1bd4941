"""Waiting for new posts: each poll asks the activity feed only for posts since the newest seen.
Several threads are filtered here from one feed of the whole site, so a poll stays one request."""

from itertools import takewhile
from typing import Container, Iterable, Iterator, Optional

from .errors import fail
from .models import Post
from .rules import INTERVAL, WAIT, check_post_id, check_timestamp, check_type

# Enough to hold every post of the newest second, almost always, in one request.
START_PAGE = 10
# Why a follow stopped: no new post for ``stop_after`` seconds, or ``max_time`` in all.
STOP_AFTER, MAX_TIME = "stop_after", "max_time"


class Follow:
    """The iterator ``Client.follow`` and ``Client.inbox`` return. ``mark`` is where it stands: the
    creation time of the newest post seen and the ids seen at that time, to resume from."""

    def __init__(self, client, thread_ids: tuple, interval: float, stop_after: Optional[float],
                 max_time: Optional[float] = None, since: Optional[str] = None, seen: Iterable[str] = (),
                 after: Optional[str] = None, exclude: Container[str] = ()):
        INTERVAL.check(interval, "interval")
        for name, value in (("timeout", stop_after), ("max_time", max_time)):
            if value is not None:
                WAIT.check(value, name)
        since = check_timestamp(since) if since is not None else None
        after = check_post_id(after) if after is not None else None
        check_type(seen, (list, tuple, set, frozenset), "seen", "post ids", optional=False)
        for post_id in seen:
            check_post_id(post_id)
        if not hasattr(exclude, "__contains__") or isinstance(exclude, str):
            raise fail("not_of_type", what="exclude", expected="post ids", type=type(exclude).__name__)
        self._client = client
        self.thread_ids = frozenset(thread_ids)
        self._only = thread_ids[0] if len(thread_ids) == 1 else None
        self._interval = interval
        self._stop_after = stop_after
        self._max_time = max_time
        self._after = after
        # Any container, asked as it is: a journal's own posts answer one id at a time.
        self._exclude = exclude
        self._resuming = since is not None
        self.mark: Optional[tuple] = (since, frozenset(seen)) if since is not None else None
        self.stopped: Optional[str] = None
        self._started = False
        self._backlog: list = []
        self._posts = self._run()  # a generator: nothing runs before the first post is asked for

    def start(self) -> "Follow":
        """Find where to start, if not resuming: the newest post now, or the post ``after`` names."""
        if self._started:
            return self
        self._started = True
        if self.mark is None and self._after is not None:
            # Stand at the post named, keeping the newer posts to yield first; those of its second
            # listed after it are older, and count as seen with it.
            listing = iter(self._client.activity(thread_id=self._only))
            newer = []
            for post in listing:
                if post.post_id == self._after:
                    break
                newer.append(post)
            else:
                raise fail("post_not_in_thread", post_id=self._after, thread_id=self._only)
            same_second = takewhile(lambda older: older.created_at == post.created_at, listing)
            self.mark = (post.created_at, frozenset([post.post_id, *(older.post_id for older in same_second)]))
            self._backlog = newer[::-1]
        elif self.mark is None:
            recent = list(self._client.activity(thread_id=self._only, limit=START_PAGE))
            if not recent:
                return self
            newest_at = recent[0].created_at
            if len(recent) == START_PAGE and recent[-1].created_at == newest_at:
                recent = list(self._client.activity(since=newest_at, thread_id=self._only))
            # Every post of the newest second is already there: none of them is new.
            self.mark = (newest_at, frozenset(post.post_id for post in recent if post.created_at == newest_at))
        return self

    def __iter__(self) -> "Follow":
        return self

    def __next__(self) -> Post:
        return next(self._posts)

    def _run(self) -> Iterator[Post]:
        self.start()
        started = quiet_since = self._client._clock()
        yield from self._advance(self._backlog)
        while self._resuming or self._slept(started, quiet_since):
            self._resuming = False  # a resumed follow polls at once, then sleeps between polls
            since = self.mark[0] if self.mark else None
            for post in self._advance(list(self._client.activity(since=since, thread_id=self._only))[::-1]):
                quiet_since = self._client._clock()
                yield post

    def _slept(self, started: float, quiet_since: float) -> bool:
        """Whether it slept until the next poll; False once a limit is reached (said in ``stopped``)."""
        now = self._client._clock()
        waits = [self._interval]
        for limit, since, reason in ((self._stop_after, quiet_since, STOP_AFTER), (self._max_time, started, MAX_TIME)):
            if limit is not None:
                left = limit - (now - since)
                if left <= 0:
                    self.stopped = reason
                    return False
                waits.append(left)
        self._client._sleep(min(waits))
        return True

    def _advance(self, oldest_first: list) -> Iterator[Post]:
        """Each post not yet seen, ``mark`` moved past it before it is given out: a mark saved then resumes after it."""
        since, seen = self.mark or (None, frozenset())
        for index, post in enumerate(oldest_first):
            if post.post_id in seen:
                continue
            same_time = {other.post_id for other in oldest_first[:index + 1]
                         if other.created_at == post.created_at}
            if post.created_at == since:
                same_time |= seen
            self.mark = (post.created_at, frozenset(same_time))
            if post.thread_id in self.thread_ids and post.post_id not in self._exclude:
                yield post
