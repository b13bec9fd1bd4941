"""The post command: prepare a post, keep it as a draft, show it, and send it once.

The work is the library's (``Client.prepare``, ``Journal.keep``, ``Client.send``); this
module reads the arguments, says what happened, and, where the outcome is unknown, prints
the one command that retries the post safely.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

from .. import render
from ..errors import ApiError, BenchmarksWikiError, TransportError, ValidationError
from ..publishing import Draft, Outcome, PreparedPost
from ..rules import DEFAULT_ORIGIN, DRAWN, GIVEN, MAX_BODY_BYTES, POST_FIELDS, REPLIED_TO
from .output import Context
from .table import EXIT_INTERRUPTED, FLAGS

# Far past the limit, since normalisation can drop line endings and trailing whitespace;
# a file larger than this is refused without reading the rest.
BODY_FILE_CEILING = 64 * 1024


def run_post(ctx: Context, args) -> Optional[int]:
    if args.draft:
        return send_drafts(ctx, args.draft, args.resend)
    prepared = prepare(ctx, args)
    replaces = ctx.journal.waiting_for(prepared.destination) if ctx.journal and args.preview else None
    draft = ctx.keep(ctx.journal.keep, prepared) if ctx.journal else None
    publish = publish_command(ctx, [draft.path] if draft else None, prepared)
    if args.preview:
        ctx.out(render.preview(prepared, publish, revision_notes(ctx, prepared), replaces if draft else None))
        return None
    if args.dry_run:
        ctx.out(prepared.url)
        if undrawn(ctx, prepared):
            task_id = prepared.fields["task_id"]
            ctx.note(f"task {task_id} was not drawn here; check the id with: {check_command(ctx, task_id)}")
        ctx.note(f"nothing sent. When published, {render.summary(prepared)}, public at once; "
                 f"to publish exactly this: {publish}")
        return None
    return deliver(ctx, draft or prepared, publish)[0]


def prepare(ctx: Context, args) -> PreparedPost:
    revision, source = resolve_revision(ctx, args)
    return ctx.client.prepare(read_body(args), task_id=args.task_id, thread_id=args.thread_id,
                              reply_to=args.reply_to, revision=revision, run_label=args.run_label,
                              kind=args.kind, nonce=args.nonce, allow_sensitive=args.allow_sensitive,
                              revision_from=source)


def resolve_revision(ctx: Context, args) -> tuple:
    """The revision a post refers to and where it came from: given, as drawn here, or for a
    reply, else that of the post answered; (None, None) leaves it to the portal's current."""
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


def undrawn(ctx: Context, prepared: PreparedPost) -> bool:
    """A preview sends nothing, so a mistyped task id would only show when publishing."""
    task_id = prepared.fields.get("task_id")
    return bool(task_id and ctx.journal and prepared.revision_from != DRAWN
                and ctx.journal.drawn_revision(task_id) is None)


def check_command(ctx: Context, task_id: str) -> str:
    return f"{ctx.command('task')} {shlex.quote(task_id)}"


def revision_notes(ctx: Context, prepared: PreparedPost) -> list:
    """What the person should know about the revision a post records."""
    notes = []
    if undrawn(ctx, prepared):
        notes.append(f"not drawn here; check the id with: {check_command(ctx, prepared.fields['task_id'])}")
    reply_to = prepared.fields.get("reply_to")
    if reply_to and ctx.journal:
        answered = ctx.journal.seen_post(reply_to)
        if answered is None:
            notes.append(f"post {reply_to} was not read here; read its thread first to record its revision")
        elif answered[1] is not None and answered[1] != prepared.revision:
            notes.append(f"the post replied to is on revision {answered[1]}")
    return notes


def send_drafts(ctx: Context, paths: list, resend: bool) -> Optional[int]:
    """Each draft sent once, in order. The first whose outcome is unknown stops the batch,
    naming the command for it and every draft after it; other failures are said, and the
    batch goes on."""
    worst, published = None, []
    for index, path in enumerate(paths):
        code, unknown, post = deliver(ctx, Path(path), publish_command(ctx, paths[index:]), resend)
        if unknown:
            return code
        worst = worst or code
        published += [post] if post else []
    if len(published) > 1 and not ctx.json:
        ctx.out(render.follow_all(published, ctx.command("follow")))
    return worst


def deliver(ctx: Context, item, again: str, resend: bool = False) -> tuple:
    """Send a draft (by its path) or a prepared post, and say what happened. Returns the exit
    code (None for success), whether the post may have been recorded though it failed, and
    the post published; an error is one line that says so, and how to retry safely."""
    try:
        item = Draft.load(item) if isinstance(item, Path) else item
        origin = (item.post if isinstance(item, Draft) else item).request.origin
        outcome = ctx.client_for(ctx.args.origin or origin).send(item, resend=resend)
    except KeyboardInterrupt:
        ctx.note(f"{ctx.view.prog}: error: interrupted; {retry_advice(again)}")
        return EXIT_INTERRUPTED, True, None
    except BenchmarksWikiError as error:
        return ctx.fail(error, post_advice(error, again)), error.outcome_unknown, None
    if ctx.journal and outcome.published:
        ctx.keep(ctx.journal.record_posts, (outcome.published.post,))
    show_outcome(ctx, outcome, item.path if isinstance(item, Draft) else None)
    return None, False, outcome.published and outcome.published.post


def post_advice(error: BenchmarksWikiError, again: str) -> Optional[str]:
    if error.outcome_unknown:
        return retry_advice(again)
    if isinstance(error, ApiError) and error.status == 404:
        return "nothing was posted; check the task, thread or post id"
    if isinstance(error, TransportError):
        return f"nothing was posted; to send it when the network is back: {again}"
    return None


def retry_advice(again: str) -> str:
    return f"it may or may not be posted; retry the same post, same nonce, which cannot post twice: {again}"


def show_outcome(ctx: Context, outcome: Outcome, path: Optional[Path]) -> None:
    if outcome.receipt_error is not None:
        ctx.journal_failed(outcome.receipt_error)
        ctx.note(f"the post is published, but no receipt was written beside {render.line(path)}")
    if ctx.json:
        ctx.out(render.as_json(render.outcome_record(outcome)))
    else:
        ctx.out(render.outcome(outcome, ctx.command("follow"), path))


def show_pending(ctx: Context, journal) -> None:
    """Every draft not yet sent, in full, so that one message can show them all."""
    pending = []
    for path in journal.pending():
        try:
            pending.append(Draft.load(path))
        except ValidationError as error:
            ctx.note(ctx.describe(error))
    if not pending:
        ctx.note("no drafts waiting")
    for index, draft in enumerate(pending):
        publish = publish_command(ctx, [draft.path])
        if ctx.json:
            ctx.out(render.as_json({"path": str(draft.path), "url": draft.post.url, "fields": draft.post.fields,
                                    "revision_from": draft.post.revision_from, "publish": publish}))
            continue
        ctx.out(("\n" if index else "") + f"draft {render.line(draft.path)}")
        ctx.out(render.preview(draft.post, publish, revision_notes(ctx, draft.post)))
    if len(pending) > 1 and not ctx.json:
        paths = [draft.path for draft in pending]
        ctx.out(f"\n{len(pending)} drafts; to publish them all, in this order: {publish_command(ctx, paths)}")


def publish_command(ctx: Context, paths: Optional[list], prepared: Optional[PreparedPost] = None) -> str:
    """The command that publishes exactly this: the drafts, or without a journal, the whole
    post with its nonce."""
    if paths:
        return " ".join([ctx.command("post"), *(f"--draft {shlex.quote(str(path))}" for path in paths)])
    return retry_command(ctx, prepared)


def retry_command(ctx: Context, prepared: PreparedPost) -> str:
    """The post command that sends this exact post again, from any shell: every field as
    sent, claims and origin included, values joined with ``=`` so that none reads as a flag."""
    fields = prepared.fields
    words = [ctx.command("post")]
    if prepared.request.origin != DEFAULT_ORIGIN:
        words.append(f"--origin={prepared.request.origin}")
    words += [f"{FLAGS[name]}={shell_word(fields[name])}" for name in POST_FIELDS if name in fields]
    words.append(f"--body={shell_word(fields['body'])}")
    if ctx.args.allow_sensitive:
        words.append("--allow-sensitive")
    words += ["--no-journal", f"--nonce={fields['nonce']}"]
    return " ".join(words)


def shell_word(value: str) -> str:
    """One shell word on one line: $'...' where the value holds a line break or a control."""
    if value.isprintable():
        return shlex.quote(value)
    escaped = []
    for character in value:
        if character in "\\'":
            escaped.append("\\" + character)
        elif character.isprintable():
            escaped.append(character)
        else:  # bash reads \xNN as one byte, so only ASCII goes that way
            code = ord(character)
            escaped.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code <= 0xFFFF
                           else f"\\U{code:08x}")
    return "$'" + "".join(escaped) + "'"


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
    except FileNotFoundError:
        raise ValidationError(f"body file {path}: no such file") from None
    except IsADirectoryError:
        raise ValidationError(f"body file {path}: is a directory") from None
    except OSError as error:
        raise ValidationError(f"body file {path}: {error.strerror or error}") from None
    if len(data) > BODY_FILE_CEILING:
        raise ValidationError(f"body file {path} is over {BODY_FILE_CEILING} bytes; the limit is "
                              f"{MAX_BODY_BYTES} bytes of UTF-8", hint="post the argument and link the long material")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValidationError(f"body file {path} is not UTF-8 (byte {error.start})") from None
