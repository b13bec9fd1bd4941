"""The doctor command: what is in effect, and one timed read of the portal, so that a person or
an agent sees why a command does what it does."""

import os
import platform
import re
import sys
import time
from typing import Optional

from .. import CA_FILE_VARIABLE, CA_VARIABLES, __version__
from . import render
from .table import exit_code
from ..errors import BenchmarksWikiError
from ..rules import SETTING_DEFAULT, SETTING_GIVEN, origin_setting
from .context import Context


def run_doctor(ctx: Context, args) -> Optional[int]:
    facts, error = settings(args), None
    started = time.monotonic()  # one timed read of /stats
    try:
        stats = ctx.client.stats()
    except BenchmarksWikiError as failed:
        error, facts["portal"] = failed, f"no answer: {ctx.describe(failed)}"
    else:
        took = (time.monotonic() - started) * 1000
        facts["portal"] = f"answered in {took:.0f} ms: {render.stats(stats)}"
    if args.deep and not error:
        error = every_route(ctx, facts)
    if args.json:
        ctx.out(render.as_json(facts))
    else:
        for name, value in facts.items():
            ctx.out(render.line(f"{name}: {value}"))
    return exit_code(error) if error else None


def settings(args) -> dict:
    import ssl

    from ..journal import located
    from ..transport import ca_file_problem, parse_origin, proxy_for

    origin, source = origin_setting(args.origin, os.environ)
    named = next((name for name in CA_VARIABLES if os.environ.get(name)), None)
    if named:
        trusted = f"{os.environ[named]} ({came_from(named, named)})"
    else:
        paths = ssl.get_default_verify_paths()
        trusted = f"{paths.cafile or paths.capath} (the system's)"
    if os.environ.get(CA_FILE_VARIABLE):
        trusted += f", and {os.environ[CA_FILE_VARIABLE]} ({came_from(CA_FILE_VARIABLE, CA_FILE_VARIABLE)})"
    problem = ca_file_problem(os.environ)
    facts = {"origin": f"{origin} ({came_from(source, '--origin')})",
             "ca_file": f"{trusted}; but {problem}" if problem else trusted}
    try:
        facts["proxy"] = str(proxy_for(parse_origin(origin)) or "none")
    except BenchmarksWikiError as error:
        facts["proxy"] = f"unusable: {error.summary()}"
    if args.no_journal:
        facts["journal"] = "off (--no-journal)"
    else:
        folder, named = located(args.journal)
        existing = folder  # the journal's folder, or its nearest existing parent, takes the files
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        state = "writable" if os.access(existing, os.W_OK | os.X_OK) else "cannot be written"
        facts["journal"] = f"{folder} ({came_from(named, '--journal')}; {state})"
    facts["python"] = f"{platform.python_version()} ({sys.executable})"
    facts["version"] = __version__
    return facts


def came_from(source: str, option: str) -> str:
    """Where a setting came from: ``option``, the default, or the environment variable ``source`` names."""
    if source == SETTING_GIVEN:
        return f"from {option}"
    if source == SETTING_DEFAULT:
        return "the default"
    return f"from %{source}%" if os.name == "nt" else f"from ${source}"


def every_route(ctx: Context, lines: dict) -> Optional[BenchmarksWikiError]:
    """Each read route, read once in the order the next needs, a line a route in ``lines``; the first error.
    A route whose input an earlier one could not give is not read."""
    client, found, first = ctx.client, {}, None

    def benchmarks():
        served = [bench for bench in client.benchmarks() if bench.has_problems]
        found["slug"] = served[0].slug if served else None
        return f"{len(served)} with problems"

    def keep_first(name: str, items) -> str:
        listed = list(items)
        found[name] = getattr(listed[0], name) if listed else None
        return f"{len(listed)} read"

    def thread():
        posts = len(client.thread(found["thread_id"]).posts)
        return f"{posts} posts" if client._threads_route_answers else "404, as an older deployment: read from /activity"

    def catalog():
        client.catalog()
        again = client.catalog()
        return f"{len(again['benchmarks'])} benchmarks, " + ("with an ETag" if client._catalog else "no ETag")

    routes = (("/api/v1/benchmarks", benchmarks),
              ("/api/v1/benchmarks/{slug}", lambda: client.benchmark(found["slug"]).name),
              ("/api/v1/benchmarks/{slug}/tasks", lambda: keep_first("task_id", client.tasks(found["slug"], limit=1))),
              ("/api/v1/tasks/{task_id}", lambda: client.task(found["task_id"]).key),
              ("/api/v1/tasks/{task_id}/markdown", lambda: f"{len(client.markdown(found['task_id']))} characters"),
              ("/api/v1/threads", lambda: keep_first("thread_id", client.threads(limit=1))),
              ("/api/v1/threads/{thread_id}", thread),
              ("/api/v1/activity", lambda: f"{len(list(client.activity(limit=5)))} read"),
              ("/api/v1/catalog", catalog), ("/search", lambda: f"{len(client.search_results('a'))} results"))
    for route, read in routes:
        missing = [need for need in re.findall(r"{(\w+)}", route) if not found.get(need)]
        if missing:
            lines["GET " + route] = f"not read: no {missing[0].replace('_', ' ')} to read it with"
            continue
        name = "GET " + route.format(**found)
        try:
            lines[name] = f"fine ({read()})"
        except BenchmarksWikiError as error:
            first = first or error
            lines[name] = f"differs: {error.summary()}"
    return first
