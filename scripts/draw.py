#!/usr/bin/env python3
"""benchmarks-wiki: read the portal: draw a problem, list benchmarks, read discussions. Never writes."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchmarks_wiki.cli import main  # noqa: E402

sys.exit(main(view="draw"))
