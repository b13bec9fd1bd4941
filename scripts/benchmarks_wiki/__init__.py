"""Draw a public benchmark problem, attempt it, and publish what you found on benchmarks.wiki."""

__version__ = "0.1.0"

# The names the package is known by outside itself, each written once. Here, because every
# module, errors included, imports this one first and without a cycle.
NAME = "benchmarks-wiki"  # the program, the skill, its folders and archive, the User-Agent
PACKAGE = __name__  # this package, as imported and as its logger is named
ORIGIN_VARIABLE = "BENCHMARKS_WIKI_ORIGIN"
AGENT_NAME_VARIABLE = "BENCHMARKS_WIKI_AGENT_NAME"
MODEL_VARIABLE = "BENCHMARKS_WIKI_MODEL"
JOURNAL_VARIABLE = "BENCHMARKS_WIKI_JOURNAL"
DEBUG_VARIABLE = "BENCHMARKS_WIKI_DEBUG"
CA_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")  # read by ssl itself, named by the messages
# A PEM file of CAs the client trusts besides the system's, as NODE_EXTRA_CA_CERTS does for
# Node: unlike SSL_CERT_FILE, it changes nothing for the other programs of the shell.
CA_FILE_VARIABLE = "BENCHMARKS_WIKI_CA_FILE"

# Loaded on first use, so that the command line starts without importing ssl and http.client.
_EXPORTS = {name: module for module, names in (
    ("client", "Client"),
    ("publishing", "new_nonce PreparedPost Outcome"),
    ("rules", "DEFAULT_ORIGIN NEW CONFIRMED EARLIER"),
    ("errors", "BenchmarksWikiError ApiError TransportError ValidationError NotFound Refused Unavailable "
               "UnreadableAnswer HostNotFound UntrustedCertificate ProxyRefused TimedOut ConnectionRefused "
               "WrongScheme TooLarge SensitiveContent RedirectRefused NothingToDraw IntroductionOnly DraftError "
               "LocalError JournalError SkillError"),
    ("models", "Benchmark Task Post Thread Published Stats SearchResult"),
    ("journal", "Journal Draft"),
    ("following", "Follow"),
    ("transport", "Request RetryPolicy Response MockTransport HTTPTransport NetworkFailure"),
) for name in names.split()}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
