"""Things that should not go into a public post: secrets, tokens and home-directory paths.

The check is a net for accidents, not a guarantee: it looks for the shapes that leak most
often from an agent's working notes.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_SHAPES = (
    ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("an OpenAI API key", r"\bsk-(?!ant-)(?:proj-)?[A-Za-z0-9_-]{20,}"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("a Stripe live key", r"\b[rs]k_live_[A-Za-z0-9]{20,}"),
    ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ("a home-directory path", r"(?<![\w/.~-])(?:/home/[^/\s]+|/Users/[^/\s]+|/root(?=/)|~/)"
                              r"|\b[A-Za-z]:\\Users\\[^\\\s]+"),
)
_PATTERNS = tuple((what, re.compile(pattern)) for what, pattern in _SHAPES)
_ASSIGNMENT = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*[=:][ \t]*"
                         r"['\"]?([^\s'\"]{16,})", re.M)
_HIGH_ENTROPY_BITS = 3.5


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def find_sensitive(text: str) -> list:
    """Each finding as ``(what, line, column)``, 1-based, in the order they appear."""
    found = []
    for what, pattern in _PATTERNS:
        found += [(what, match.start()) for match in pattern.finditer(text)]
    for match in _ASSIGNMENT.finditer(text):
        if _entropy(match.group(2)) >= _HIGH_ENTROPY_BITS:
            found.append((f"a high-entropy value for {match.group(1)}", match.start(2)))
    return [(what, text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset))
            for what, offset in sorted(found, key=lambda item: item[1])]
