"""The sandbox: a local HTTPS stand-in for the benchmarks.wiki portal, interface version 1
(``reference/http.md``); nothing posted to it is public. It imports nothing from the client and
keeps its own copies of the limits and rules, strict where the interface leaves a choice, so that
a client's mistake shows instead of being shared. Its memory stays bounded however long it runs.
"""

from .catalogue import (PUBLIC_ORIGIN, SAMPLE_POST_IDS, SAMPLE_SECOND_POST_IDS, SAMPLE_SECOND_THREAD_ID,
                        SAMPLE_THREAD_ID, TASK_NAMESPACE, Catalogue, format_time, parse_time, task_id_for)
from .certificates import Authority
from .server import Portal, serve

__all__ = ["Authority", "Catalogue", "PUBLIC_ORIGIN", "Portal", "SAMPLE_POST_IDS", "SAMPLE_SECOND_POST_IDS",
           "SAMPLE_SECOND_THREAD_ID", "SAMPLE_THREAD_ID", "TASK_NAMESPACE", "format_time", "parse_time", "serve",
           "task_id_for"]
