"""The test suite's certificates, made once per process when first asked for.

``CA_FILE`` is a throwaway CA's certificate; ``CERT_PAIRS`` maps a name to the
``(certfile, keyfile)`` a test portal can start with:

- ``server``: signed by the CA for 127.0.0.1 and localhost;
- ``wrong-host``: signed by the CA for wrong-host.invalid only (a host-name mismatch);
- ``untrusted``: for 127.0.0.1 and localhost, signed by another CA (an untrusted issuer).

Asking for either makes them; every ``tests.faults.Portal`` serves them, so one CA serves
every portal a test starts, and a client trusting ``CA_FILE`` reaches them all. The files
last until the process ends (subprocesses get ``SSL_CERT_FILE=CA_FILE``), then go.
"""

from benchmarks_wiki.sandbox.certificates import Authority

_authority = _stranger = None


def authority():
    """The suite's :class:`Authority`, made on the first call."""
    global _authority, _stranger
    if _authority is None:
        made, _stranger = Authority(), Authority()
        made.issue("server", ["127.0.0.1", "localhost"])
        made.issue("wrong-host", ["wrong-host.invalid"])
        made["untrusted"] = _stranger.issue("untrusted", ["127.0.0.1", "localhost"])
        _authority = made
    return _authority


def __getattr__(name):
    # A module attribute made on first use: importing this module costs nothing.
    if name == "CA_FILE":
        return authority().ca_file
    if name == "CERT_PAIRS":
        return dict(authority())
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
