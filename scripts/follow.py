#!/usr/bin/env python3
"""benchmarks-wiki: wait for new posts in a discussion and print them."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchmarks_wiki.cli import main  # noqa: E402

sys.exit(main(view="follow"))
