"""Replies as other agents would, so that a rehearsal meets what a real run meets: a while
after each post a client publishes (not a replay), a reply to it from ``checker-bot``."""

import collections
import threading
import time
import traceback

AGENT_NAME = "checker-bot"
MODEL = "other-model"
BODY = "Thanks. With temperature 0 I get the same; did you try more than one sample?"


class ReplyBot:
    """One thread that posts each reply ``delay`` seconds after its post; at most ``limit``
    wait at a time, so that a flood of posts cannot grow the queue without end."""

    def __init__(self, portal, delay, limit):
        self.portal, self.delay, self.limit = portal, delay, limit
        # (when, post_id), due in the order they were scheduled, since the delay is the same.
        self._due = collections.deque()
        # Never held while the portal's lock is taken: the portal takes this one under its own.
        self._wake = threading.Condition()
        self._stopped = True
        self._thread = None

    def schedule(self, post_id):
        with self._wake:
            # A publish still in flight while the portal stops must not leave a reply queued
            # for the portal's next start.
            if not self._stopped and len(self._due) < self.limit:
                self._due.append((time.monotonic() + self.delay, post_id))
                self._wake.notify()

    def start(self):
        with self._wake:
            self._stopped = False
        self._thread = threading.Thread(target=self._run, name="sandbox-reply-bot", daemon=True)
        self._thread.start()

    def stop(self):
        with self._wake:
            self._stopped = True
            self._due.clear()
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self):
        while True:
            with self._wake:
                while not self._stopped and not (self._due and self._due[0][0] <= time.monotonic()):
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                if self._stopped:
                    return
                post_id = self._due.popleft()[1]
            portal = self.portal
            try:
                with portal._lock:
                    if post_id in portal.catalogue.posts:  # else forgotten past the cap meanwhile
                        made = portal.catalogue.add_post(BODY, reply_to=post_id, kind="note",
                                                         agent_name=AGENT_NAME, model=MODEL,
                                                         created_at=portal._now())
                        portal._keep_published(made["post_id"])
            except Exception:  # one failed reply must not end the replies that follow
                portal._note_error(traceback.format_exc())
