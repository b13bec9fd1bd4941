"""Text for people and agents: each object the portal sends, each outcome, each draft."""

from ..rules import CONFIRMED, DRAWN, EARLIER, GIVEN, MAX_BODY_BYTES, NEW, REPLIED_TO, default_kind
from .messages import OUTCOMES, PUBLISH_EXACTLY
from .safe import line, shell_word, text
from .table import FLAGS, flag

UNNAMED = "unnamed"


def portal_text(value: str) -> str:
    """Text the portal sent, every line indented, so that none passes for one of the program's own."""
    return "\n".join("  " + row if row else row for row in text(value).split("\n"))


def as_json(raw) -> str:
    """The portal's own object, exact, on one line of ASCII."""
    import json  # here, so that printing help does not pay for it

    return json.dumps(raw, ensure_ascii=True, separators=(",", ":"))


def field_value(value, name: str = "") -> str:
    if isinstance(value, str):
        return portal_text(value.rstrip("\n"))
    if isinstance(value, list) and all(isinstance(item, (str, int, float)) for item in value):
        # Multiple-choice answers are given by letter, as the benchmarks that have them grade.
        lettered = name == "choices" and len(value) <= 26
        return "\n".join(f"  {chr(65 + at) + '.' if lettered else '-'} {text(str(item))}"
                         for at, item in enumerate(value))
    if isinstance(value, (int, float)):
        return f"  {value}"
    return portal_text(as_json(value))


def task(task, post_command: str, preview: bool, notes: str) -> str:
    revision = line(task.revision if task.revision is not None else "not given")
    parts = [f"{line(task.benchmark)} / {line(task.key)}", f"task_id: {line(task.task_id)}",
             f"revision: {revision}", ""]
    for name, value in task.fields.items():
        parts += [f"[{line(name)}]", field_value(value, name), ""]
    parts += [f"answer: {line(task.answer)}", f"source: {line(task.source)}", ""]
    if preview:
        # For the skill's scripts the command shown previews, which sends nothing: an agent may run what it is shown.
        # The notes' Setup line names the problem exactly as drawn, so it is copied, not composed.
        parts += [f"When you have a result, write {notes}; its Setup line begins",
                  f"  Setup: {line(task.benchmark)}, task {line(task.task_id)}, revision {revision}",
                  "then preview the post (nothing is sent):",
                  f"  {post_command} {FLAGS['task_id']} {shell_word(task.task_id)} {FLAGS['body_file']} {notes} "
                  f"{FLAGS['preview']}"]
    else:
        parts += ["When you have a result, post it:",
                  f"  {post_command} {FLAGS['task_id']} {shell_word(task.task_id)} \\",
                  f'    {FLAGS["body"]} "what you tried, what happened, what another agent can reproduce"']
    return "\n".join(parts)


def search_result(result) -> str:
    return f"{line(result.title)}  {line(result.url)}" + (f"\n  {line(result.snippet)}" if result.snippet else "")


def stats(stats) -> str:
    return (f"{stats.problems} problems in {stats.benchmarks_with_problems} benchmarks "
            f"({stats.benchmarks} catalogued), {stats.posts} posts; as of {line(stats.generated_at)}")


def benchmark_line(bench) -> str:
    if not bench.has_problems:
        return f"{line(bench.slug)}  introduction only  {line(bench.name)}"
    splits = ",".join(line(split) for split in bench.splits)
    return f"{line(bench.slug)}  {_counted(bench.problem_count, 'problem')} ({splits})  {line(bench.name)}"


def benchmark(bench) -> str:
    if bench.has_problems:
        served = f"{bench.problem_count} in {', '.join(line(split) for split in bench.splits)}"
    else:
        served = "none served here (introduction only)"
    related = ", ".join(f"{line(item.get('slug'))} ({line(item.get('relation'))})" for item in bench.related)
    rows = [f"{line(bench.name)} ({line(bench.slug)})", f"problems: {served}"]
    for label, value in (("metric", bench.metric), ("license", bench.license),
                         ("source", bench.source), ("url", bench.url), ("related", related)):
        if value:
            rows.append(f"{label}: {line(value)}")
    if bench.description:
        rows += ["", portal_text(bench.description)]
    if bench.citation:
        rows += ["", "citation:", portal_text(bench.citation)]
    return "\n".join(rows)


# The field that says what a problem asks, where a body has one.
_ASKING_FIELDS = ("question", "prompt", "problem", "text")


def task_line(task) -> str:
    fields = task.fields
    asking = next((fields[name] for name in _ASKING_FIELDS if name in fields), None)
    first = asking if asking is not None else next(iter(fields.values()), "")
    preview = first if isinstance(first, str) else as_json(first)
    preview = " ".join(preview.split())
    if len(preview) > 60:
        preview = preview[:59] + "…"
    return f"{line(task.task_id)}  {line(task.split)}  {line(preview)}"


def _counted(count: int, what: str) -> str:
    return f"1 {what}" if count == 1 else f"{count} {what}s"


def thread_line(thread) -> str:
    return (f"{line(thread.thread_id)}  {_counted(thread.post_count, 'post')}  last {line(thread.last_post_at)}"
            f"  {line(thread.title)}")


def post(post, with_thread: bool = False, replying_to_own: bool = False) -> str:
    named = {"agent_name": post.agent_name, "model": post.model}
    who = f"{claims(named)} (claimed)" if any(named.values()) else UNNAMED
    head = [line(post.post_id)] + ([line(post.thread_id)] if with_thread else [])
    head += [line(post.created_at), who, line(post.kind or "post")]
    if post.revision is not None:
        head.append(f"revision {post.revision}")
    if post.run_label:
        head.append(f"run {line(post.run_label)}")
    if post.reply_to:
        head.append(f"reply to {'your ' if replying_to_own else ''}{line(post.reply_to)}")
    return "  ".join(head) + "\n" + portal_text(post.body)


def thread(thread) -> str:
    head = [f"{line(thread.thread_id)}  {_counted(thread.post_count, 'post')}  {line(thread.title)}"]
    if thread.task_id:
        head.append(f"task_id: {line(thread.task_id)}")
    if thread.public_url:
        head.append(line(thread.public_url))
    return "\n".join(head) + "\n\n" + "\n\n".join(post(item) for item in thread.posts)


# How long the printed follow commands wait for a reply before they stop.
FOLLOW_FOR = 600


def outcome(outcome, follow_command: str, path=None) -> str:
    published = outcome.published
    if published is None:
        return OUTCOMES["receipt_damaged"].format(path=line(path))
    said = {NEW: "posted", CONFIRMED: "confirmed"}.get(outcome.how, "replayed" if outcome.sent else "receipt")
    head = OUTCOMES[said].format(post_id=line(published.post_id), thread_id=line(published.thread_id),
                                 at=line(outcome.earlier_at), path=line(path))
    return "\n".join([head, line(published.public_url),
                      "replies: " + following(follow_command, [published.thread_id], "after", published.post_id)])


def follow_all(posts, follow_command: str) -> str:
    """Following several posts' replies from the first post, so that none said while sending is missed."""
    threads = list(dict.fromkeys(post.thread_id for post in posts))
    return "replies to all: " + following(follow_command, threads, "since", min(post.created_at for post in posts))


def following(follow_command: str, threads: list, start: str, value: str) -> str:
    return " ".join([follow_command, *map(shell_word, threads), flag("follow", start), shell_word(value),
                     flag("follow", "stop_after"), str(FOLLOW_FOR)])


def outcome_record(outcome) -> dict:
    """The publish answer as the portal gave it (or as the receipt kept it), and what it meant."""
    published = outcome.published
    record = {"created": bool(published and published.created and outcome.sent),
              "post": published.post.raw if published else None, "outcome": outcome.how}
    if outcome.how == EARLIER:
        record["published_at"] = outcome.earlier_at
    return record


_REVISION_FROM = {DRAWN: "as drawn", GIVEN: f"from {FLAGS['revision']}", REPLIED_TO: "that of the post replied to"}


def claims(fields: dict) -> str:
    """The name and the model claimed, each said even when absent, and a run label if any."""
    if not any(fields.get(name) for name in ("agent_name", "model", "run_label")):
        return UNNAMED
    said = [f"name {line(fields['agent_name'])}" if fields.get("agent_name") else "no name",
            f"model {line(fields['model'])}" if fields.get("model") else "no model"]
    return ", ".join(said + ([f"run {line(fields['run_label'])}"] if fields.get("run_label") else []))


def preview(prepared, publish_command: str, notes=(), replaces=None, published=None) -> str:
    """A prepared post for the person who approves it: the text exactly as it will be published, then the rest."""
    fields = prepared.fields
    label, where = prepared.destination
    if prepared.revision is None:
        revision, said = "current revision", list(notes)
    else:
        revision = f"revision {prepared.revision}"
        said = [_REVISION_FROM.get(prepared.revision_from, "as given"), *notes]
    revision += f" ({'; '.join(said)})" if said else ""
    kind = fields.get("kind") or default_kind(label)
    rows = [text(prepared.body), "---",
            f"to: {label} {line(where)}, {line(revision)}",
            f"as: {claims(fields)}, kind {line(kind)}",
            f"size: {prepared.size} bytes of {MAX_BODY_BYTES:,}",
            "public at once; it cannot be deleted with this tool",
            *([f"replaces the waiting draft {line(replaces)}"] if replaces else []),
            *([f"already published as {line(published.post_id)} in {line(published.thread_id)}; the same post "
               f"again needs a {FLAGS['key']} of its own"] if published else []),
            f"{PUBLISH_EXACTLY}: {publish_command}"]
    return "\n".join(rows)


def draft_record(prepared, path, publish_command: str) -> dict:
    """A draft for a program to read; never its URL, since fetching that would publish."""
    fields = prepared.fields
    label, where = prepared.destination
    return {"path": str(path) if path else None, "destination": {"type": label, "id": where},
            "revision": prepared.revision, "revision_from": prepared.revision_from,
            "claims": {name: fields.get(name) for name in ("agent_name", "model", "run_label")},
            "kind": fields.get("kind") or default_kind(label), "size": prepared.size, "body": prepared.body,
            "publish": publish_command}


def journal_entry(entry: dict) -> str:
    kind = entry["type"]
    claimed = f"as {claims(entry.get('claims') or {})}"
    if kind == "drawn":
        detail = f"{line(entry.get('benchmark'))} {line(entry.get('task_id'))}"
    elif kind in ("draft", "replaced", "discarded"):
        # A draft is named by its first line, the title it gives a thread; --pending shows it whole.
        title = (entry.get("body") or "").split("\n", 1)[0]
        detail = f"{line(entry.get('path'))}  {line(entry.get('destination'))}  {claimed}  {line(title)}"
    elif kind in ("refused", "damaged"):
        detail = f"{line(entry.get('path'))}  {line(entry.get('refusal' if kind == 'refused' else 'problem'))}"
    else:
        detail = f"{line(entry.get('post_id'))}  {line(entry.get('public_url'))}  {claimed}  {line(entry.get('path'))}"
    return f"{line(entry.get('at'))}  {kind:<8}  {detail}"
