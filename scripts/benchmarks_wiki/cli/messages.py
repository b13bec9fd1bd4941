"""Every word the command line says of its own, each once; the troubleshooting reference is
written from these tables and the library's."""

import os
import re
from typing import Callable, Optional

from .safe import shell_word

PUBLISH_EXACTLY = "to publish exactly this"

USAGE = {
    "draft_with_fields": "--draft holds the whole post; drop {flags}",
    "resend_without_draft": "--resend goes with --draft",
    "body_and_file": "give exactly one of --body and --body-file",
    "preview_and_dry_run": "give one of --preview and --dry-run",
    "threads_or_mine": "give THREAD_ID (one or more), or --mine",
    "one_journal_action": "give one of --pending and --discard",
    "all_or_since": "give one of --all and --since",
    "after_one_thread": "--after goes with exactly one THREAD_ID",
    "one_start": "give one of --after, --since and --resume",
    "skill_install_needs_dest": "skill install needs --dest DIR, the skills folder to install into: {folders}; "
                                "give one",
    "no_command": "give a command: {commands}",
    "unknown_command": "{prog} has no command {name!r}{suggestion}",
    "elsewhere": "{name} is not {prog}'s; use: {command}",
    "unknown_option": "no option {name}{suggestion}",
    "option_elsewhere": "{name} is not an option of this command",
    "value_like_a_flag": "{flag} takes a value; one that starts with - is written {flag}=VALUE",
    "not_a_number": "{flag} takes {kind}, not {value!r}",
    "argument_not_utf8": "argument {position} is not valid UTF-8",
}

# Every line a command writes to stderr that is not an error, by name.
NOTES = {
    "journal_unwritable": "journal off: cannot write {path} ({problem})",
    "journal_failed": "journal: cannot write in {path} ({problem}); going on without it",
    "journal_exposed": "journal: {path} can be read by other users (mode {mode:o}), and a waiting draft holds its "
                       "nonce; make it private: chmod -R go= {folder}",
    "more_remain": "{limit} shown, more remain: add --limit N to see more",
    "none_listed": "no {what}",
    "no_drafts": "no drafts waiting",
    "discarded": "discarded {path}; it is never sent",
    "stopped_quiet": "stopped: no new post for {seconds:g} s",
    "stopped_in_all": "stopped: {seconds:g} s in all, after printing every post so far",
    "not_resuming": "no record of following {threads}; starting from the newest post",
    "resume_without_journal": "the journal is off; not resuming {threads}; starting from the newest post",
    "no_receipt": "the post is published, but no receipt was written for {path}",
    "not_drawn": "not drawn here; check the id with: {command}",
    "dry_run": f"nothing sent. When published, {{summary}}, public at once; {PUBLISH_EXACTLY}: {{command}}",
}

# Said only where the sandbox is installed: the skill's archive leaves it out.
OFFLINE = "; to try it offline: {command[sandbox]}"
SANDBOX_HERE = os.path.isdir(os.path.join(os.path.dirname(os.path.dirname(__file__)), "sandbox"))

# The command line's remedy for an error, where its words differ from the library's hint:
# ``{command[NAME]}`` is a command spelled for the program run (``when_missing``: the one that
# shows what exists), ``{value!q}`` a value quoted for the shell.
ADVICE = {
    "no_such_revision": "give --revision from 1 to {current}, or none for the current one",
    "sensitive": "remove it, or add --allow-sensitive if it is meant to be public",
    "wrong_origin": "drop --origin: a draft goes where it was previewed",
    "post_not_in_thread": "see its posts with: {command[thread]} {thread_id!q}",
    "no_problems_listed": "see the others with: {command[benchmarks]}",
    "too_few_problems": "draw fewer with --count",
    "introduction_only": "read its introduction with: {command[benchmark]} {slug!q}",
    "no_draft_file": "see the drafts waiting with: {command[journal]} --pending",
    "not_a_draft": "make a new draft with --preview",
    "damaged_draft": "make a new draft with --preview",
    "changed_draft": "to change a post, make a new draft with --preview",
    "journal_without_secret": "make a new draft with --preview",
    "refused_draft": "fix it with a new preview, or add --resend to send it anyway",
    "discarded_draft": "make a new draft with --preview",
    "key_taken": "give this post a --key of its own, or publish that draft with: {command[post]} --draft {path!q}",
    "journal_off": "drop --no-journal, or give --journal DIR",
    "nothing_published": "follow a thread by its id: {command[follow]} THREAD_ID",
    "not_found": "check the id; see what exists with: {command[when_missing]}",
    "no_such_benchmark": "did you mean {nearest}? see every one with: {command[benchmarks]}",
    "host_not_found": "check --origin and the network" + OFFLINE,
    "timed_out": "raise --timeout",
    "connection_refused": "check --origin, or that the portal is running" + OFFLINE,
    "wrong_scheme": "give --origin {origin}",
    "other_skill_there": "to replace it with {version}, add --force",
}

# What a failed publish says after what happened, in place of a remedy a retry could not mend.
RESEND = "resend the same request, as it may or may not be posted and the same request cannot post twice: {command}"
POST_ADVICE = {
    "unknown": "{when}" + RESEND,
    "unsent": "nothing was posted; {remedy}then send it with: {command}",
    "refused": "nothing was posted",
    "interrupted": "interrupted; " + RESEND,
}

OUTCOMES = {
    "posted": "posted {post_id} in {thread_id}",
    "confirmed": "posted {post_id} in {thread_id}; its first answer was lost, and the retry confirmed it: "
                 "one post, no duplicate",
    "receipt": "already published {post_id} in {thread_id} at {at} (receipt of {path}); nothing sent",
    "replayed": "already published {post_id} in {thread_id} at {at}, by an earlier run with the same nonce; "
                "nothing new was posted",
    "receipt_damaged": "already published: the receipt of {path} is damaged; nothing sent",
}


def remedy(error, spell: Callable[[str], str], when_missing: Optional[str] = None) -> Optional[str]:
    """What to do about ``error``: the command line's advice where it has its own, else the
    library's hint (also for a "see what exists" that this command has no command for)."""
    template = ADVICE.get(error.reason)
    if not template or "{command[when_missing]}" in template and not when_missing:
        return error.hint
    template = template if SANDBOX_HERE else template.removesuffix(OFFLINE)
    commands = {name: spell(when_missing if name == "when_missing" else name)
                for name in re.findall(r"{command\[(\w+)\]}", template)}
    quoted = {name: shell_word(str(value)) for name, value in error.facts.items()}
    template = re.sub(r"{(\w+)!q}", r"{quoted[\1]}", template)
    return template.format(command=commands, quoted=quoted, **error.facts)
