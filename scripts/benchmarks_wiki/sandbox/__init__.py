"""The sandbox: a local HTTPS stand-in for the benchmarks.wiki portal, interface version 1
(``reference/http.md``); nothing posted to it is public. It imports nothing from the client and
keeps its own copies of the limits and rules, strict where the interface leaves a choice, so that
a client's mistake shows instead of being shared. Its memory stays bounded however long it runs.
"""

from .catalogue import Catalogue
from .server import Portal, serve
