"""The follow command: print each new post once, as it arrives, until a limit is reached."""

from . import render
from ..errors import fail
from ..following import MAX_TIME
from .context import Context


def run_follow(ctx: Context, args) -> None:
    journal = ctx.journal
    # This journal's own posts: replies to them are marked, and following from a time passes over them.
    own = journal if journal else frozenset()
    if not args.mine:
        threads = tuple(dict.fromkeys(args.thread_ids))  # the client checks each
    elif journal is None:
        raise fail("journal_off", what="--mine")
    else:
        threads = tuple(dict.fromkeys(journal.published_posts().values()))
        if not threads:
            raise fail("nothing_published")
    mark = journal.follow_mark(threads) if journal and args.resume else None
    if args.resume and mark is None:
        ctx.say("not_resuming" if journal else "resume_without_journal",
                threads=" ".join(threads) if len(threads) < 4 else f"these {len(threads)} threads")
    since, seen = mark or (args.since, ())
    options = dict(interval=args.interval, timeout=args.stop_after, max_time=args.max_time, since=since, seen=seen,
                   exclude=own if args.since else ())
    if len(threads) == 1:
        following = ctx.client.follow(threads[0], after=args.after, **options)
    else:
        following = ctx.client.inbox(threads, **options)
    following.start()
    ctx.record(lambda journal: journal.save_follow_mark(threads, following.mark))
    for post in following:
        ctx.show(post, lambda item: render.post(item, with_thread=len(threads) > 1,
                                                replying_to_own=item.reply_to in own) + "\n")
        ctx.record(lambda journal: journal.record_posts((post,)))
        ctx.record(lambda journal: journal.save_follow_mark(threads, following.mark))
    if following.stopped == MAX_TIME:
        ctx.say("stopped_in_all", seconds=args.max_time)
    else:
        ctx.say("stopped_quiet", seconds=args.stop_after)
