"""The post command: prepare a post, keep it as a draft, show it, and send it once."""

import sys
from pathlib import Path
from typing import Optional

from . import render
from ..errors import BenchmarksWikiError, TransportError, Unavailable, fail
from ..journal import Draft
from ..publishing import PreparedPost
from ..rules import DEFAULT_ORIGIN, DRAWN, GIVEN, MAX_BODY_BYTES, NONCE_KEPT_HOURS, POST_FIELDS, REPLIED_TO
from .context import Context
from .messages import NOTES, POST_ADVICE, remedy
from .table import EXIT_INTERRUPTED, FLAGS, exit_code, flag

# Far past the limit, since normalisation can drop line endings and trailing whitespace;
# a file larger than this is refused without reading the rest.
BODY_FILE_CEILING = 64 * 1024
# A body file that cannot be read, in fewer words than the system's where they are long.
_UNREADABLE = {FileNotFoundError: "no such file", IsADirectoryError: "is a directory"}


def run_post(ctx: Context, args) -> Optional[int]:
    if args.draft:
        return send_drafts(ctx, args.draft, args.resend)
    revision, source = resolve_revision(ctx, args)
    prepared = ctx.client.prepare(read_body(args), task_id=args.task_id, thread_id=args.thread_id,
                                  reply_to=args.reply_to, revision=revision, run_label=args.run_label,
                                  kind=args.kind, nonce=args.nonce, allow_sensitive=args.allow_sensitive,
                                  revision_from=source)
    unchecked = None
    if args.preview:
        # Checked now, so that what would be refused is refused before the person approves it; offline
        # or busy, the preview says it was not checked (a reply to a post alone, the journal's note says).
        try:
            ctx.client.verify(prepared)
        except (TransportError, Unavailable) as error:
            unchecked = f"destination not checked: {error.summary()}"
    journal = ctx.journal
    if args.key is not None and not journal:
        raise fail("journal_off", what="--key")
    # The draft this one replaces, found before it is kept.
    pending = journal.pending() if journal and args.preview else []
    waiting = next((other for other in pending if other.post.destination == prepared.destination), None)
    if args.key is None:
        # Kept under what makes it the same post, so that the same command run again never posts twice;
        # a nonce given names one request: the same post under another nonce is another.
        derived = prepared.same_post_key + (f":{prepared.nonce}" if args.nonce else "")
        draft = ctx.record(lambda journal: journal.keep(prepared, derived))
    else:
        draft = journal.keep(prepared, args.key)
    publish = publish_command(ctx, [draft.path] if draft else None, prepared)
    if args.preview and args.json:
        ctx.out(render.as_json(render.draft_record(prepared, draft and draft.path, publish)))
    elif args.preview:
        replaces = waiting.path if waiting and draft and waiting.path != draft.path else None
        receipt = draft.receipt() if draft else None
        ctx.out(render.preview(prepared, publish, revision_notes(ctx, prepared, unchecked), replaces,
                               receipt.published if receipt else None))
    elif args.dry_run:
        ctx.out(prepared.url)
        unknown_task = not_drawn(ctx, prepared)
        if unknown_task:
            ctx.note(render.line(unknown_task))
        label, where = prepared.destination
        summary = f"{prepared.size} bytes go to {label} {render.line(where)}, as {render.claims(prepared.fields)}"
        ctx.say("dry_run", summary=summary, command=publish)
    else:
        return publish_and_say(ctx, draft or prepared, publish)[0]
    return None


def resolve_revision(ctx: Context, args) -> tuple:
    """The revision a post refers to and where it came from; (None, None) leaves it to the portal's current."""
    journal = ctx.journal
    if args.revision is not None or journal is None:
        return args.revision, GIVEN
    task_id, answered = args.task_id, None
    if args.reply_to:
        task_id, answered = journal.seen_post(args.reply_to) or (None, None)
    drawn = journal.drawn_revision(task_id) if task_id else None
    if drawn is not None:
        return drawn, DRAWN
    return (answered, REPLIED_TO) if answered is not None else (None, None)


def not_drawn(ctx: Context, prepared: PreparedPost) -> Optional[str]:
    """The note on a post to a problem not drawn here: a mistyped task id would otherwise show only on publishing."""
    task_id = prepared.fields.get("task_id")
    if task_id and ctx.journal and prepared.revision_from != DRAWN and ctx.journal.drawn_revision(task_id) is None:
        return NOTES["not_drawn"].format(command=f"{ctx.view.spell('task')} {render.shell_word(task_id)}")
    return None


def revision_notes(ctx: Context, prepared: PreparedPost, unchecked: Optional[str] = None) -> list:
    reply_to = prepared.fields.get("reply_to")
    answered = ctx.journal.seen_post(reply_to) if reply_to and ctx.journal else None
    notes = [None if answered else unchecked, not_drawn(ctx, prepared) if unchecked else None]
    if reply_to and ctx.journal and answered is None:
        notes.append(f"post {reply_to} was not read here; read its thread first to record its revision")
    elif answered and answered[1] is not None and answered[1] != prepared.revision:
        notes.append(f"the post replied to is on revision {answered[1]}")
    return [note for note in notes if note]


def send_drafts(ctx: Context, paths: list, resend: bool) -> Optional[int]:
    """Each draft sent once, in order. The first whose outcome is unknown stops the batch, naming the
    command for it and every draft after it; other failures are said, and the batch goes on."""
    worst, published = None, []
    for index, path in enumerate(paths):
        code, unknown, post = publish_and_say(ctx, Path(path), publish_command(ctx, paths[index:]), resend)
        if unknown:
            return code
        worst = worst or code
        published += [post] if post else []
    if len(published) > 1 and not ctx.args.json:
        ctx.out(render.follow_all(published, ctx.view.spell("follow")))
    return worst


def publish_and_say(ctx: Context, item, again: str, resend: bool = False) -> tuple:
    """Send a draft (or the draft at a path) or a prepared post to its own origin, unless --origin names one;
    an error is one line that says so, and how to send the same post again safely (``again``). Returns the
    exit code (None for success), whether the post may have been recorded though sending failed, the post."""
    path = item if isinstance(item, Path) else getattr(item, "path", None)
    try:
        if isinstance(item, Path):
            item = Draft.load(item)
        origin = (item.post if isinstance(item, Draft) else item).request.origin
        outcome = ctx.client_for(ctx.args.origin or origin).send(item, resend=resend)
    except KeyboardInterrupt:
        ctx.note(f"{ctx.view.prog}: error: {POST_ADVICE['interrupted'].format(command=again)}")
        return EXIT_INTERRUPTED, True, None
    except BenchmarksWikiError as error:
        ctx.note(f"{ctx.view.prog}: error: {render.line(error.summary())}; {post_advice(ctx, error, again)}")
        return exit_code(error), error.outcome_unknown, None
    if outcome.published:
        ctx.record(lambda journal: journal.record_posts((outcome.published.post,), True))
    if outcome.receipt_error is not None:
        ctx.journal_failed(outcome.receipt_error)
        ctx.say("no_receipt", path=path)
    ctx.out(render.as_json(render.outcome_record(outcome)) if ctx.args.json
            else render.outcome(outcome, ctx.view.spell("follow"), path))
    return None, False, outcome.published.post if outcome.published else None


def post_advice(ctx: Context, error: BenchmarksWikiError, again: str) -> str:
    """What a failed publish says after what happened: whether it may have been posted, and how to send it."""
    if error.outcome_unknown:
        wait = error.facts.get("wait")
        return POST_ADVICE["unknown"].format(when=f"after {wait:g} s, " if wait else "", command=again)
    hint = remedy(error, ctx.view.spell)
    if isinstance(error, TransportError):
        return POST_ADVICE["unsent"].format(remedy=f"{hint}; " if hint else "", command=again)
    return POST_ADVICE["refused"] + (f"; {hint}" if hint else "")


def show_pending(ctx: Context, journal) -> None:
    """Every draft not yet sent, in full, so that one message can show them all."""
    pending = journal.pending()
    if not pending:
        ctx.say("no_drafts")
    for index, draft in enumerate(pending):
        publish = publish_command(ctx, [draft.path])
        forgotten = draft.outlived_its_nonce()
        if ctx.args.json:
            record = render.draft_record(draft.post, draft.path, publish)
            ctx.out(render.as_json({**record, "made_at": draft.created_at, "nonce_forgotten": forgotten}))
            continue
        ctx.out(("\n" if index else "") + f"draft {render.line(draft.path)}")
        if forgotten:
            look = f"{ctx.view.spell('activity')} {flag('activity', 'since')} {render.shell_word(draft.created_at)}"
            ctx.out(f"made {render.line(draft.created_at)}, over {NONCE_KEPT_HOURS} hours ago: the portal no longer "
                    f"knows its nonce, so sending it may post twice; look for its text first: {look}")
        ctx.out(render.preview(draft.post, publish, revision_notes(ctx, draft.post)))
    if len(pending) > 1 and not ctx.args.json:
        paths = [draft.path for draft in pending]
        ctx.out(f"\n{len(pending)} drafts; to publish them all, in this order: {publish_command(ctx, paths)}")


def publish_command(ctx: Context, paths: Optional[list], prepared: Optional[PreparedPost] = None) -> str:
    """The command that publishes exactly this: the drafts, or the post command with every field as sent,
    its nonce too, values joined with ``=`` so that none reads as a flag."""
    words = [ctx.view.spell("post")]
    if paths:
        return " ".join(words + [f"{FLAGS['draft']} {render.shell_word(str(path))}" for path in paths])
    fields = prepared.fields
    if prepared.request.origin != DEFAULT_ORIGIN:
        words.append(f"{flag('post', 'origin')}={render.shell_word(prepared.request.origin)}")
    words += [f"{FLAGS[name]}={render.shell_word(fields[name])}" for name in (*POST_FIELDS, "body") if name in fields]
    if ctx.args.allow_sensitive:
        words.append(FLAGS["allow_sensitive"])
    words += [flag("post", "no_journal"), f"{FLAGS['nonce']}={fields['nonce']}"]
    return " ".join(words)


def read_body(args) -> str:
    if args.body is not None:
        return args.body
    path = args.body_file
    try:
        if path == "-":
            data = sys.stdin.buffer.read(BODY_FILE_CEILING + 1)
        else:
            with open(path, "rb") as handle:
                data = handle.read(BODY_FILE_CEILING + 1)
    except OSError as error:
        problem = _UNREADABLE.get(type(error)) or error.strerror or error
        raise fail("body_file_unreadable", path=path, problem=problem) from None
    if len(data) > BODY_FILE_CEILING:
        raise fail("body_file_too_large", path=path, size=BODY_FILE_CEILING, limit=MAX_BODY_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise fail("body_file_not_utf8", path=path, position=error.start) from None
