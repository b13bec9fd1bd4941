"""The commands that read: each asks the client and prints what came back."""

import contextlib
import random

from . import render
from ..errors import NotFound, fail
from ..models import Benchmark, Stats, parse
from ..rules import LIMIT
from .context import Context
from .table import FLAGS, NOTES_FILE
from .posting import show_pending


def _more(limit):
    """One more than will be shown, to learn whether more remain."""
    return None if limit is None else LIMIT.check(limit, "limit") + 1


@contextlib.contextmanager
def nearest_benchmark(ctx: Context, slug):
    """A benchmark the portal does not know, refused naming the nearest ones it does."""
    try:
        yield
    except NotFound as error:
        if not slug:
            raise
        import difflib

        nearest = difflib.get_close_matches(slug, [bench.slug for bench in ctx.client.benchmarks()], n=3, cutoff=0.5)
        if not nearest:
            raise
        raise fail("no_such_benchmark", status=error.status, code=error.code, message=error.message,
                   nearest=" or ".join(nearest)) from None


def run_try(ctx: Context, args) -> None:
    rng = random.Random(args.seed) if args.seed is not None else None
    with nearest_benchmark(ctx, args.benchmark):
        drawn = ctx.client.sample_many(args.benchmark, count=args.count, pool=args.pool, rng=rng)
    for index, task in enumerate(drawn, 1):
        if index > 1 and not args.json:
            ctx.out("")
        # Several problems, several posts: each its own notes file (notes-2.md), so none overwrites another.
        show_drawn(ctx, task, NOTES_FILE.replace(".", f"-{index}.") if len(drawn) > 1 else NOTES_FILE)


def show_drawn(ctx: Context, task, notes: str = NOTES_FILE) -> None:
    ctx.record(lambda journal: journal.record_draw(task))
    # The claims a post would make, as the client takes them from the environment.
    client = ctx.client
    claims = "".join(f" {FLAGS[name]} {render.shell_word(value)}"
                     for name, value in (("agent_name", client.agent_name), ("model", client.model)) if value)
    ctx.show(task, lambda item: render.task(item, ctx.view.spell("post") + claims, bool(ctx.view.script_of), notes))


def run_stats(ctx: Context, args) -> None:
    ctx.show(ctx.client.stats(), render.stats)


def run_benchmarks(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.benchmarks(), render.benchmark_line, None, "benchmarks")


def run_benchmark(ctx: Context, args) -> None:
    with nearest_benchmark(ctx, args.slug):
        ctx.show(ctx.client.benchmark(args.slug), render.benchmark)


def run_tasks(ctx: Context, args) -> None:
    with nearest_benchmark(ctx, args.slug):
        ctx.show_list(ctx.client.tasks(args.slug, split=args.split, limit=_more(args.limit)),
                      render.task_line, args.limit, "problems")


def run_task(ctx: Context, args) -> None:
    if args.markdown:
        ctx.out(render.text(ctx.client.markdown(args.task_id).removesuffix("\n")))
        return
    show_drawn(ctx, ctx.client.task(args.task_id))


def run_catalog(ctx: Context, args) -> None:
    catalogue = ctx.client.catalog()
    if args.json:
        ctx.out(render.as_json(catalogue))
        return
    rows = [render.stats(parse(Stats, catalogue["stats"], route="/api/v1/catalog"))]
    rows += [render.benchmark_line(parse(Benchmark, raw, route="/api/v1/catalog"))
             for raw in catalogue["benchmarks"]]
    ctx.out("\n".join(rows))


def run_search(ctx: Context, args) -> None:
    if not args.list:
        ctx.out(render.text(ctx.client.search(args.query).removesuffix("\n")))
        return
    ctx.show_list(ctx.client.search_results(args.query), render.search_result, None, "results")


def run_threads(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.threads(task_id=args.task_id, limit=_more(args.limit)),
                  render.thread_line, args.limit, "threads")


def run_thread(ctx: Context, args) -> None:
    thread = ctx.client.thread(args.thread_id)
    ctx.record(lambda journal: journal.record_posts(thread.posts))
    ctx.show(thread, render.thread)


def run_activity(ctx: Context, args) -> None:
    posts = ctx.client.activity(since=args.since, limit=_more(args.limit))
    ctx.show_list(posts, lambda post: render.post(post, with_thread=True) + "\n", args.limit, "posts")


def run_journal(ctx: Context, args) -> None:
    journal = ctx.journal
    if journal is None:
        raise fail("journal_off", what="the journal command")
    if args.pending:
        show_pending(ctx, journal)
    elif args.discard:
        ctx.say("discarded", path=journal.discard(args.discard).path)
    else:
        limit = None if args.all or args.since else args.limit  # the journal checks the time given
        entries = journal.entries(limit=_more(limit), since=args.since or None)
        ctx.show_list(entries, render.journal_entry, limit, "entries")
