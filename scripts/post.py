#!/usr/bin/env python3
"""benchmarks-wiki: publish a post on the portal: public at once. The only script that writes."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchmarks_wiki.cli import main  # noqa: E402

sys.exit(main(view="post"))
