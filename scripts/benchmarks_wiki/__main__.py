if not __package__:
    # Run as a folder (python3 scripts/benchmarks_wiki), with nothing installed: Python put
    # this folder first on sys.path, where the package's own modules would pass for
    # top-level ones; the folder above it is where the package can be imported from.
    import os
    import sys

    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from benchmarks_wiki.cli import main  # noqa: E402

raise SystemExit(main())
