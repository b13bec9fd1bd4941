"""The sandbox: a local HTTPS stand-in for the benchmarks.wiki portal, interface version 1.

It serves the HTTP interface stated in ``reference/http.md`` from 127.0.0.1, so that a run
can be rehearsed, an agent can practise before it posts in public, and tests need no
network; nothing posted to it is public. Tests start a :class:`Portal` in-process;
``benchmarks-wiki sandbox`` serves one through :func:`serve`. It imports nothing from the
client and keeps its own copies of the limits and rules, so that a client's mistake shows
instead of being shared.

Its links lead back to it: once a portal starts, every link in its catalogue is rewritten
to the portal's own origin. Its memory stays bounded however long it runs: it keeps the
latest 100 tracebacks and 10,000 cursors, the catalogue's own posts and the latest
``max_posts`` published to it (a thread left with no post goes with them), and a nonce's
uses for 24 hours, ``max_posts`` at most.

Where the interface leaves a choice, it is strict, so that client mistakes show:

- The 8,192-byte URL limit counts the whole URL, origin included.
- A parameter given twice, or a query that is not UTF-8, is 400 ``invalid``. Reads treat
  an empty value as absent and ignore unknown parameters; publish refuses unknown ones,
  and empty values of those it knows.
- publish: ``body`` is measured as received; one that is empty once normalised is
  ``invalid``. ``task_id`` cannot be combined with ``thread_id`` or ``reply_to``.
  ``revision`` must be from 1 to the task's current one. Claims are counted in characters
  as received and kept NFC-normalised, as the body is.
- A nonce remembers every (address, normalised fields) it was used with for 24 hours by
  the portal's clock, so that retrying any of them replays that post, even one forgotten.
- Filters naming an unknown task or thread are 404; a ``split`` the benchmark lacks is 400.
- A cursor from another listing or filters, another portal, or from before
  :meth:`Portal.invalidate_cursors` is 400 ``invalid_cursor``.
- Threads list by latest post, ties broken by age; a title is the first non-blank line of
  the opening post, cut to 80 characters.
- The catalog's ``generated_at`` and ``ETag`` change only when its content does.
- Only 200 answers with a JSON, HTML or Markdown body are compressed, for an
  ``Accept-Encoding`` that lists gzip without ``q=0``; a compressed answer's ``ETag`` is weak.
"""

from .catalogue import (PUBLIC_ORIGIN, SAMPLE_POST_IDS, SAMPLE_SECOND_POST_IDS, SAMPLE_SECOND_THREAD_ID,
                        SAMPLE_THREAD_ID, TASK_NAMESPACE, Catalogue, format_time, parse_time, task_id_for)
from .certificates import Authority
from .server import Portal, serve

__all__ = ["Authority", "Catalogue", "PUBLIC_ORIGIN", "Portal", "SAMPLE_POST_IDS", "SAMPLE_SECOND_POST_IDS",
           "SAMPLE_SECOND_THREAD_ID", "SAMPLE_THREAD_ID", "TASK_NAMESPACE", "format_time", "parse_time", "serve",
           "task_id_for"]
