"""Checkpointed runs across processes: drafts, receipts, locks, kills and resumed follows."""

import calendar
import dataclasses
import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks_wiki import Client, Journal
from benchmarks_wiki import journal as journal_module
from benchmarks_wiki.errors import JournalError
from benchmarks_wiki.files import locked
from benchmarks_wiki.journal import located
from benchmarks_wiki.publishing import Draft
from tests.conftest import ROOT, interruptible, publishes, script_env, wait_for, wait_until_following




@pytest.fixture
def task_id(client):
    return next(client.tasks("gsm8k")).task_id


@pytest.fixture
def draft(run, portal, task_id):
    """A draft made by a dry run, and the portal's counters cleared."""
    done = run("post.py", "--task", task_id, "--body", "Tried it; 3/5.", "--name", "bot", "--dry-run")
    assert done.returncode == 0, done.stderr
    path = Path(done.stderr.split("--draft ")[1].strip())
    portal.reset_counters()
    return path


def start_post(portal, *args):
    return subprocess.Popen([sys.executable, "scripts/post.py", *args], cwd=ROOT, env=script_env(portal),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_dry_run_writes_a_draft_and_sends_nothing(run, portal, task_id, tmp_path):
    portal.reset_counters()
    done = run("post.py", "--task", task_id, "--body", "Tried it.", "--dry-run")
    assert portal.requests == [] and done.stdout.startswith("https://")
    path = Path(done.stderr.split("--draft ")[1].strip())
    assert path.parent == tmp_path / "state" / "benchmarks-wiki" / "drafts"
    draft = json.loads(path.read_text())
    request = draft["request"]
    fields = dict(request["params"])
    assert request["origin"] == portal.origin and request["path"] == "/api/v1/publish" and request["write"]
    assert fields["body"] == "Tried it." and fields["nonce"] in done.stdout
    assert draft["digest"].startswith("sha256:")


def test_publishing_a_draft_sends_exactly_its_url_once(run, portal, draft):
    done = run("post.py", "--draft", str(draft))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("posted p_")
    sent = publishes(portal)
    request = json.loads(draft.read_text())["request"]
    assert len(sent) == 1 and sent[0].params == dict(request["params"])
    receipt = json.loads(draft.with_name(draft.stem + ".receipt.json").read_text())
    assert receipt["post_id"] == done.stdout.split()[1] and receipt["created"] is True
    again = run("post.py", "--draft", str(draft))
    assert again.returncode == 0 and again.stdout.startswith("already published ")
    assert len(publishes(portal)) == 1


def test_a_sent_draft_is_not_sent_again_after_the_replay_window(run, portal, draft):
    assert run("post.py", "--draft", str(draft)).returncode == 0
    portal.forget_nonces()
    assert run("post.py", "--draft", str(draft)).returncode == 0
    assert portal.published == 1 and len(publishes(portal)) == 1


def test_resend_sends_the_same_nonce_again(run, portal, draft):
    assert run("post.py", "--draft", str(draft)).returncode == 0
    done = run("post.py", "--draft", str(draft), "--resend")
    assert done.returncode == 0 and done.stdout.startswith("already published ")
    assert "by an earlier run with the same nonce; nothing new was posted" in done.stdout
    first, second = publishes(portal)
    assert first.params["nonce"] == second.params["nonce"] and portal.published == 1


def test_post_without_a_draft_leaves_one_with_its_receipt(run, portal, task_id, tmp_path):
    assert run("post.py", "--task", task_id, "--body", "direct").returncode == 0
    drafts = tmp_path / "state" / "benchmarks-wiki" / "drafts"
    assert len(list(drafts.glob("*.receipt.json"))) == 1


@pytest.mark.parametrize("damage", ["edit", "truncate", "garbage", "not-a-draft"])
def test_a_damaged_draft_is_refused(run, portal, draft, damage):
    text = draft.read_text()
    damaged = {"edit": text.replace("Tried it; 3/5.", "Tried it; 5/5."),
               "truncate": text[: len(text) // 2],
               "garbage": "\x00\xff nonsense",
               "not-a-draft": json.dumps({"url": "x"})}[damage]
    draft.write_text(damaged)
    done = run("post.py", "--draft", str(draft))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "make a new draft with --preview" in done.stderr
    assert portal.requests == []


def test_draft_with_other_post_flags_is_refused(run, portal, draft):
    done = run("post.py", "--draft", str(draft), "--body", "other")
    assert done.returncode == 2 and "--body" in done.stderr and portal.requests == []


def test_killed_before_the_request(portal, draft, run):
    lock = draft.with_name(draft.stem + ".lock")
    with open(lock, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        process = start_post(portal, "--draft", str(draft))
        time.sleep(0.3)
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert publishes(portal) == []
    assert run("post.py", "--draft", str(draft)).returncode == 0
    assert portal.published == 1 and len(publishes(portal)) == 1


@pytest.mark.parametrize("recorded", [False, True], ids=["during the request", "after it was recorded"])
def test_killed_mid_publish(portal, draft, run, recorded):
    portal.stall_next(30, before=not recorded)
    process = start_post(portal, "--draft", str(draft))
    wait_for(lambda: publishes(portal) and (portal.published == 1 or not recorded))
    process.send_signal(signal.SIGKILL)
    process.wait()
    portal.clear_faults()
    assert not draft.with_name(draft.stem + ".receipt.json").exists()
    done = run("post.py", "--draft", str(draft))
    assert done.returncode == 0, done.stderr
    wait_for(lambda: portal.published >= 1)
    time.sleep(0.1)
    assert portal.published == 1


def test_two_processes_publish_one_draft_once(portal, draft):
    portal.stall_next(0.5)
    first = start_post(portal, "--draft", str(draft))
    second = start_post(portal, "--draft", str(draft))
    outputs = [process.communicate(timeout=30) for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    assert len(publishes(portal)) == 1 and portal.published == 1
    assert sorted(out.split()[0] for out, _ in outputs) == ["already", "posted"]


def test_a_failed_publish_names_the_draft_to_retry(run, portal, task_id):
    portal.fail_next(503, times=4)
    done = run("post.py", "--task", task_id, "--body", "x", "--retries", "0")
    assert done.returncode == 1 and "same nonce" in done.stderr
    retry = done.stderr.split("cannot post twice: ")[1].strip()
    assert "--draft " in retry
    portal.clear_faults()
    assert subprocess.run(retry, shell=True, cwd=ROOT, env=script_env(portal)).returncode == 0
    assert portal.published == 1


def test_draw_records_the_revision_that_post_then_sends(run, portal, client):
    revised = next(task for task in client.tasks("gsm8k") if task.revision and task.revision > 1)
    assert run("draw.py", "task", revised.task_id).returncode == 0
    assert run("post.py", "--task", revised.task_id, "--body", "x", "--dry-run").returncode == 0
    assert run("post.py", "--task", revised.task_id, "--body", "y").returncode == 0
    assert publishes(portal)[-1].params["revision"] == str(revised.revision)
    assert run("post.py", "--task", revised.task_id, "--body", "z", "--revision", "1").returncode == 0
    assert publishes(portal)[-1].params["revision"] == "1"


def test_journal_lists_draws_drafts_and_posts_newest_first(run, portal, client):
    waiting, sent = (task.task_id for task in client.tasks("gsm8k", limit=2))
    run("draw.py", "try", "gsm8k")
    run("post.py", "--task", waiting, "--body", "waiting", "--dry-run")
    run("post.py", "--task", sent, "--body", "sent")
    done = run("draw.py", "journal")
    kinds = [line.split()[1] for line in done.stdout.splitlines()]
    assert sorted(kinds) == ["draft", "drawn", "posted"]
    entries = [json.loads(line) for line in run("draw.py", "journal", "--json").stdout.splitlines()]
    assert [entry["at"] for entry in entries] == sorted((entry["at"] for entry in entries), reverse=True)
    posted = next(entry for entry in entries if entry["type"] == "posted")
    assert posted["public_url"].startswith(portal.origin)


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_journal_folder_can_be_moved(run, portal, task_id, tmp_path, how):
    folder = tmp_path / "elsewhere"
    args = ["--journal", str(folder)] if how == "flag" else []
    env = script_env(portal, BENCHMARKS_WIKI_JOURNAL=str(folder)) if how == "environment" else None
    done = run("post.py", "--task", task_id, "--body", "x", "--dry-run", *args, env=env)
    assert str(folder / "drafts") in done.stderr


def test_an_unwritable_journal_is_off_and_said_once(run, portal, task_id, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = run("post.py", "--task", task_id, "--body", "x", "--journal", str(blocker / "journal"))
    assert done.returncode == 0 and done.stdout.startswith("posted ")
    assert done.stderr == f"journal off: cannot write {blocker / 'journal'} (Not a directory)\n"
    assert portal.published == 1


def test_the_journal_command_with_the_journal_off_is_refused(run, portal):
    done = run("draw.py", "journal", "--no-journal")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("draw.py: error: the journal is off, and the journal command needs it; "
                           "drop --no-journal, or give --journal DIR\n")


@pytest.mark.parametrize("actions", [["--pending", "--archive"], ["--pending", "--discard", "x.json"],
                                     ["--discard", "x.json", "--archive"]])
def test_the_journal_command_does_one_of_its_actions_at_a_time(run, portal, actions):
    done = run("draw.py", "journal", *actions)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "draw.py journal: error: give one of --pending, --discard and --archive (see --help)\n"


def test_no_journal_writes_nothing(run, portal, task_id, tmp_path):
    assert run("draw.py", "try", "gsm8k", "--no-journal").returncode == 0
    assert run("post.py", "--task", task_id, "--body", "x", "--no-journal").returncode == 0
    assert not (tmp_path / "state").exists()


def test_follow_resume_prints_each_post_once(run, portal, client, tls, tmp_path):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    writer = Client(portal.origin, ssl_context=tls)
    portal.reset_counters()
    follow = subprocess.Popen(interruptible("scripts/follow.py", opening.thread_id, "--interval", "0.1"),
                              cwd=ROOT, env=script_env(portal), stdout=subprocess.PIPE, text=True)
    wait_until_following(portal)
    writer.reply(opening, "one")
    shown = follow.stdout.readline()
    assert "p_" in shown and follow.stdout.readline().strip() == "one"
    mark = tmp_path / "state" / "benchmarks-wiki" / "follows" / f"{opening.thread_id}.json"
    wait_for(lambda: mark.exists() and shown.split()[0] in mark.read_text())
    follow.send_signal(signal.SIGINT)
    follow.communicate(timeout=10)
    writer.reply(opening, "two")
    writer.reply(opening, "three")
    resumed = run("follow.py", opening.thread_id, "--resume", "--interval", "0.1", "--stop-after", "0.3")
    assert resumed.returncode == 0, resumed.stderr
    bodies = [line.strip() for line in resumed.stdout.splitlines() if line.startswith("  ")]
    assert bodies == ["two", "three"]
    again = run("follow.py", opening.thread_id, "--resume", "--interval", "0.1", "--stop-after", "0.3")
    assert again.stdout == ""


def test_follow_resume_without_a_record_starts_from_now(run, portal, client):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    done = run("follow.py", opening.thread_id, "--resume", "--interval", "0.1", "--stop-after", "0.2")
    assert done.returncode == 0 and done.stdout == "" and "no record" in done.stderr


def test_a_draft_the_portal_refuses_for_good_is_listed_as_refused(run, portal, task_id):
    done = run("post.py", "--task", task_id, "--body", "x", "--revision", "99")
    assert done.returncode == 1 and "may or may not" not in done.stderr
    kinds = [json.loads(line)["type"] for line in run("draw.py", "journal", "--json").stdout.splitlines()]
    assert kinds == ["refused"]


def test_draft_origin_may_be_written_another_way(run, portal, draft):
    same = portal.origin.replace("127.0.0.1", "127.0.0.1") + "/"
    assert run("post.py", "--draft", str(draft), "--origin", same).returncode == 0
    other = run("post.py", "--draft", str(draft), "--origin", "https://elsewhere.example")
    assert other.returncode == 2 and "the draft is for" in other.stderr


def test_drafts_renamed_by_hand_keep_their_own_receipts(run, portal, task_id, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    for name, body in (("post-one", "first"), ("post-two", "second")):
        made = run("post.py", "--task", task_id, "--body", body, "--dry-run")
        Path(made.stderr.split("--draft ")[1].strip()).rename(keep / name)
    assert run("post.py", "--draft", str(keep / "post-one")).returncode == 0
    assert run("post.py", "--draft", str(keep / "post-two")).stdout.startswith("posted ")
    assert portal.published == 2


def test_a_receipt_of_another_draft_is_refused(run, portal, draft, task_id):
    assert run("post.py", "--draft", str(draft)).returncode == 0
    other = run("post.py", "--task", task_id, "--body", "other", "--dry-run")
    other_path = Path(other.stderr.split("--draft ")[1].strip())
    other_path.replace(draft)
    done = run("post.py", "--draft", str(draft))
    assert done.returncode == 2 and "belongs to another draft" in done.stderr and portal.published == 1


def test_a_rerun_prints_the_portal_shape_in_json(run, portal, draft):
    first = json.loads(run("post.py", "--draft", str(draft), "--json").stdout)
    again = json.loads(run("post.py", "--draft", str(draft), "--json").stdout)
    assert first["created"] is True and first["outcome"] == "new"
    assert again == {"created": False, "post": first["post"], "outcome": "earlier",
                     "published_at": again["published_at"]}


def test_journal_write_failures_never_hide_a_published_post(run, portal, task_id, tmp_path, monkeypatch,
                                                           capsys):
    journal = tmp_path / "state" / "benchmarks-wiki"
    (journal / "draws" / f"{task_id}.json").mkdir(parents=True)
    drawn = run("draw.py", "task", task_id)
    assert drawn.returncode == 0 and "Traceback" not in drawn.stderr
    # The note names where the write failed and why, in the system's words.
    assert drawn.stderr.startswith(f"journal: cannot write in {journal / 'draws'}")
    assert drawn.stderr.endswith(" (Is a directory); going on without it\n")

    from benchmarks_wiki import cli, publishing
    real_write = publishing.write_atomically

    def disk_full_for_receipts(path, content, **options):
        if path.name.endswith(".receipt.json"):
            raise OSError(28, "No space left on device")
        real_write(path, content, **options)

    monkeypatch.setattr(publishing, "write_atomically", disk_full_for_receipts)
    monkeypatch.setenv("BENCHMARKS_WIKI_ORIGIN", portal.origin)
    monkeypatch.setenv("SSL_CERT_FILE", portal.ca_file)
    code = cli.main(["--task", task_id, "--body", "x"], view="post")
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith("posted p_") and portal.published == 1
    assert "journal: cannot write in the journal (No space left on device); going on without it\n" in err
    assert "no receipt was written" in err


def test_a_task_id_from_the_portal_never_names_a_file_outside_the_journal(run, portal, tmp_path):
    hostile = {"task_id": "../../escaped", "benchmark": "gsm8k", "key": "k", "body": {"question": "q"}}
    portal.raw_next(200, json.dumps(hostile).encode(), "application/json")
    done = run("draw.py", "task", "317ef6cc-69a8-59a3-a347-e37d3399eb10")
    assert done.returncode == 1 and "is not a task id: '../../escaped'" in done.stderr
    assert not list(tmp_path.rglob("escaped*"))


def test_a_draft_keeps_its_receipt_even_without_a_journal(run, portal, draft):
    assert run("post.py", "--draft", str(draft), "--no-journal").stdout.startswith("posted ")
    again = run("post.py", "--draft", str(draft), "--no-journal")
    assert again.stdout.startswith("already published ") and again.stderr == ""
    assert len(publishes(portal)) == 1


# -- what the journal reads back -------------------------------------------------------------


def test_a_posted_entry_carries_when_it_was_published_not_when_its_draft_was_made(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("published a day later", task_id=task_id))
    made = calendar.timegm(time.strptime(draft.created_at, "%Y-%m-%dT%H:%M:%SZ"))
    published_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(made + 86400))
    # The receipt is written as a run that published the draft the next day would write it.
    draft.note_receipt(dataclasses.replace(client.send(draft.post), earlier_at=published_at))
    for listing in (journal.entries(), journal.entries(limit=20)):
        [entry] = list(listing)
        assert entry["type"] == "posted" and entry["at"] == published_at != draft.created_at


@pytest.mark.parametrize("revision, read", [(3, 3), (True, None), ("2", None), (2.0, None), (None, None)],
                         ids=repr)
def test_a_drawn_revision_is_a_whole_number_or_none(tmp_path, revision, read):
    journal = Journal.open(tmp_path / "journal")
    task_id = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
    record = {"drawn_at": "2026-01-01T00:00:00Z", "revision": revision, "task": {"task_id": task_id}}
    (journal.folder / "draws" / f"{task_id}.json").write_text(json.dumps(record))
    found = journal.drawn_revision(task_id)
    assert found == read and type(found) is type(read)


def test_a_draft_made_in_the_same_moment_as_its_draw_lists_as_newer(client, tmp_path):
    journal = Journal.open(tmp_path / "journal")
    task = next(client.tasks("gsm8k"))
    journal.record_draw(task)
    draft = journal.keep(client.prepare("made from the draw", task_id=task.task_id))
    # Both made in one moment, as a clock too coarse to tell them apart records them: in the log
    # of things made, which the newest few are read from, and in the draw file's time, which the
    # whole listing reads.
    name = draft.path.name
    moment = f"{name[0:4]}-{name[4:6]}-{name[6:8]}T{name[9:11]}:{name[11:13]}:{name[13:22]}Z"
    log = journal.folder / "index" / "made.log"
    log.write_text("".join(f"{moment} {line.split(' ', 1)[1]}\n" for line in log.read_text().splitlines()))
    # Half a microsecond past it, so that reading the time back as a float rounds to it.
    nanoseconds = (calendar.timegm(time.strptime(name[:15], "%Y%m%dT%H%M%S")) * 10**9
                   + int(name[16:22]) * 1000 + 500)
    os.utime(journal.folder / "draws" / f"{task.task_id}.json", ns=(nanoseconds, nanoseconds))
    for listing in (journal.entries(), journal.entries(limit=20)):
        assert [(entry["type"], entry["at"] if entry["type"] == "draft" else entry["path"]) for entry in listing] \
            == [("draft", draft.created_at), ("drawn", str(journal.folder / "draws" / f"{task.task_id}.json"))]


def test_the_newest_entries_still_list_a_sent_draft_the_archive_took(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("archived", task_id=task_id))
    published = client.send(draft).published
    assert journal.archive(days=-1) == 1  # -1: every draft no longer waiting is old enough
    archived = journal.locate(draft.path)
    assert archived.parent.parent == journal.folder / "archive"
    assert [(entry["type"], entry["post_id"], entry["path"]) for entry in journal.entries(limit=20)] \
        == [("posted", published.post_id, str(archived))]


@pytest.mark.parametrize("line", ["draft {name}.receipt.json", "draft ../draws/{task_id}.json", "other {name}.json"],
                         ids=["a receipt", "a file outside drafts", "an unknown kind"])
def test_the_newest_entries_leave_out_a_line_of_the_log_that_names_no_draft(client, tmp_path, line):
    journal = Journal.open(tmp_path / "journal")
    task = next(client.tasks("gsm8k"))
    journal.record_draw(task)
    draft = journal.keep(client.prepare("sent", task_id=task.task_id))
    client.send(draft)
    journal.sent(draft)
    newest = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() + 60))
    named = line.format(name=draft.path.stem, task_id=task.task_id)
    with open(journal.folder / "index" / "made.log", "a") as log:
        log.write(f"{newest} {named}\n")
    assert list(journal.entries(limit=20)) == list(journal.entries())
    assert [entry["type"] for entry in journal.entries(limit=20)] == ["posted", "drawn"]


def test_the_newest_entries_of_a_long_log_read_the_first_whole_line_of_its_end(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    for wording in ("first", "second", "newest"):
        journal.keep(client.prepare(wording, task_id=task_id))
    log = journal.folder / "index" / "made.log"
    first, second, newest = log.read_text().splitlines(keepends=True)
    gone = [f"2020-01-01T00:00:00.000000Z draft 20200101T000000.000000Z-{n:08x}.json\n" for n in range(300)]
    assert {len(line) for line in (first, second, newest, gone[0])} == {len(first)}
    # Runs that write at once can log their lines out of order: the newest draft's line comes
    # first here, and is the first whole line of the log's last 16 KiB, read before the rest.
    after = (16384 - 1) // len(first) - 3
    log.write_text("".join(gone[after:] + [newest] + gone[:after] + [first, second]))
    assert log.stat().st_size > 16384
    whole = list(journal.entries())
    assert [entry["body"] for entry in whole] == ["newest", "second", "first"]
    assert list(journal.entries(limit=2)) == whole[:2]


def test_the_whole_listing_leaves_out_files_among_the_draws_that_are_not_draws(client, tmp_path):
    journal = Journal.open(tmp_path / "journal")
    task = next(client.tasks("gsm8k"))
    journal.record_draw(task)
    drawn = journal.folder / "draws" / f"{task.task_id}.json"
    # A copy an editor left, and a hidden file.
    shutil.copy(drawn, drawn.with_name(drawn.name + "~"))
    shutil.copy(drawn, drawn.with_name("." + drawn.name))
    assert [(entry["type"], entry["path"]) for entry in journal.entries()] == [("drawn", str(drawn))]


@pytest.mark.parametrize("malformed", ["thread_id", "post_id"])
def test_a_post_shown_with_a_malformed_id_is_not_remembered(client, tmp_path, task_id, malformed):
    journal = Journal.open(tmp_path / "journal")
    post = client.publish("shown", task_id=task_id).post
    journal.record_posts([dataclasses.replace(post, **{malformed: "../elsewhere"})])
    assert journal.seen_post(post.post_id) is None
    assert list((journal.folder / "posts").iterdir()) == []
    journal.record_posts([post])
    assert journal.seen_post(post.post_id) == (task_id, post.revision)


def test_a_draft_whose_send_failed_still_waits(run, portal, draft):
    journal = Journal.open(draft.parent.parent)
    portal.fail_next(503, times=4)
    failed = run("post.py", "--draft", str(draft), "--retries", "0")
    assert failed.returncode == 1 and portal.published == 0
    # Every run that tries a draft tells the journal so, sent or not; only a receipt, a refusal
    # or a discard takes it off the waiting list.
    assert journal.pending() == [draft]
    portal.clear_faults()
    assert run("post.py", "--draft", str(draft)).returncode == 0
    assert journal.pending() == []


def test_a_sent_draft_is_off_the_waiting_list_when_its_run_ends(run, portal, draft):
    journal = Journal.open(draft.parent.parent)
    journal.archive()  # looked at today, so that the send's run does not list the drafts again
    marker = journal.folder / "index" / "waiting" / draft.name
    assert marker.exists()
    assert run("post.py", "--draft", str(draft)).returncode == 0
    # The index is up to date at once, not only once a later listing finds the receipt.
    assert not marker.exists()


def test_the_whole_journal_lists_every_entry_past_the_newest_twenty(run, client, tmp_path):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki")
    task_id = next(client.tasks("gsm8k")).task_id
    for number in range(21):
        journal.keep(client.prepare(f"wording {number}", task_id=task_id))
    newest = run("draw.py", "journal")
    assert len(newest.stdout.splitlines()) == 20 and "more remain" in newest.stderr
    every = run("draw.py", "journal", "--all")
    assert len(every.stdout.splitlines()) == 21 and every.stderr == ""


@pytest.mark.parametrize("count, named", [(3, True), (4, False)])
def test_follow_names_up_to_three_threads_it_cannot_resume_and_counts_four(run, portal, count, named):
    threads = [f"t_00000{n}" for n in range(count)]
    done = run("follow.py", *threads, "--resume", "--interval", "0.1", "--stop-after", "0.1")
    said = done.stderr.splitlines()[0]
    assert done.returncode == 0 and said.startswith("no record of following "), done.stderr
    assert (" ".join(threads) in said) is named and (f"these {count} threads" in said) is not named


def test_follow_resume_with_the_journal_off_says_so_and_starts_from_now(run, portal, client, tmp_path):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    done = run("follow.py", opening.thread_id, "--resume", "--no-journal", "--interval", "0.1", "--stop-after", "0.1")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert f"the journal is off; not resuming {opening.thread_id}; starting from the newest post" in done.stderr
    assert not (tmp_path / "state").exists()


def test_a_follow_that_saw_no_post_is_resumed_from_where_it_started(run, portal, client, tls):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    quiet = run("follow.py", opening.thread_id, "--interval", "0.1", "--stop-after", "0.1")
    assert quiet.returncode == 0 and quiet.stdout == "", quiet.stderr
    with Client(portal.origin, ssl_context=tls) as writer:
        writer.reply(opening, "while no one followed")
    resumed = run("follow.py", opening.thread_id, "--resume", "--interval", "0.1", "--stop-after", "0.1")
    assert "no record" not in resumed.stderr
    assert [line.strip() for line in resumed.stdout.splitlines() if line.startswith("  ")] == ["while no one followed"]


def test_a_follow_without_resume_starts_from_now_though_an_earlier_one_was_recorded(run, portal, client, tls):
    opening = client.publish("opening", task_id=next(client.tasks("gsm8k")).task_id)
    assert run("follow.py", opening.thread_id, "--interval", "0.1", "--stop-after", "0.1").returncode == 0
    with Client(portal.origin, ssl_context=tls) as writer:
        writer.reply(opening, "before this follow")
    again = run("follow.py", opening.thread_id, "--interval", "0.1", "--stop-after", "0.1")
    assert again.returncode == 0 and again.stdout == "", again.stderr


# -- where the journal is, and whether it can be written --------------------------------------


def test_the_journal_lives_in_the_platform_s_own_place_when_nothing_names_one():
    home = Path(os.path.expanduser("~"))
    own = home / "AppData" / "Local" if os.name == "nt" else home / ".local" / "state"
    assert located(environ={}) == (own / "benchmarks-wiki", "default")


def test_a_journal_whose_drafts_cannot_be_written_is_off_and_said_once(run, portal, task_id, tmp_path,
                                                                        monkeypatch):
    folder = tmp_path / "journal"
    real_access = os.access

    # Permission bits do not stop every user (root writes anyway): the system's answer is made.
    def no_writing_in_drafts(path, mode, **options):
        return False if Path(path) == folder / "drafts" else real_access(path, mode, **options)

    monkeypatch.setattr(os, "access", no_writing_in_drafts)
    with pytest.raises(PermissionError) as caught:
        Journal.open(folder)
    assert caught.value.filename == str(folder / "drafts") and caught.value.errno == errno.EACCES
    done = run("post.py", "--task", task_id, "--body", "x", "--journal", str(folder))
    assert done.returncode == 0 and done.stdout.startswith("posted ")
    assert done.stderr == f"journal off: cannot write {folder} (not writable)\n"
    assert portal.published == 1 and not list((folder / "drafts").iterdir())


# -- the index -------------------------------------------------------------------------------


@pytest.mark.parametrize("written_as, rebuilt", [(1, False), (0, True), (2, True), (None, True)], ids=repr)
def test_an_index_of_another_format_is_written_again_from_the_drafts(client, tmp_path, task_id, written_as,
                                                                     rebuilt):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("waiting", task_id=task_id))
    # An index that lost track of the draft: only reading the drafts again finds it.
    (journal.folder / "index" / "waiting" / draft.path.name).unlink()
    (journal.folder / "index" / "ready").write_text(json.dumps({"format": written_as}))
    assert Journal(journal.folder).pending() == ([draft.path] if rebuilt else [])
    assert json.loads((journal.folder / "index" / "ready").read_text())["format"] == 1


def test_a_damaged_record_of_the_journal_s_own_posts_is_left_out(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("mine", task_id=task_id))
    published = client.send(draft).published
    journal.sent(draft)
    (journal.folder / "index" / "mine" / "damaged.json").write_text(
        json.dumps({"post_id": "p_damaged", "thread_id": "../elsewhere"}))
    assert journal.published_posts() == {published.post_id: published.thread_id}


# -- discarding and the archive --------------------------------------------------------------


def test_a_discarded_draft_is_off_the_waiting_list_at_once(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("never", task_id=task_id))
    marker = journal.folder / "index" / "waiting" / draft.path.name
    assert marker.exists()
    journal.discard(draft.path)
    assert not marker.exists()


def test_discarding_the_newest_draft_leaves_an_older_one_to_the_same_place_replaced(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    older = journal.keep(client.prepare("first wording", task_id=task_id))
    newer = journal.keep(client.prepare("second wording", task_id=task_id))
    assert older.path.name < newer.path.name
    # As a run that stopped after writing the newer draft, before unmarking the older, leaves it.
    (journal.folder / "index" / "waiting" / older.path.name).write_text(
        json.dumps({"to": list(older.post.destination)}))
    journal.discard(newer.path)
    assert journal.pending() == []


def test_discarding_a_copy_kept_elsewhere_leaves_the_journal_s_own_draft_waiting(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("waiting", task_id=task_id))
    copy = tmp_path / "elsewhere" / draft.path.name
    copy.parent.mkdir()
    copy.write_bytes(draft.path.read_bytes())
    journal.discard(copy)
    assert journal.pending() == [draft.path]


@pytest.mark.parametrize("since_last, moved", [(86399.5, False), (86400.5, True)], ids=["under a day", "over a day"])
def test_a_send_moves_old_sent_drafts_to_the_archive_once_a_day(client, tmp_path, task_id, since_last, moved):
    journal = Journal.open(tmp_path / "journal")
    journal.archive()
    old = Draft.write(client.prepare("sent long ago", task_id=task_id),
                      journal.folder / "drafts" / "20200101T000000.000000Z-aaaaaaaa.json")
    client.send(old)
    stamp = journal.folder / "index" / "archived"
    last = time.time() - since_last
    os.utime(stamp, (last, last))
    journal.sent(old)
    assert old.path.exists() is not moved
    assert (journal.folder / "archive" / "2020-01" / old.path.name).exists() is moved


def test_the_archive_leaves_the_lock_of_a_waiting_draft_a_run_is_sending(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("being sent", task_id=task_id))
    with locked(draft.path):
        assert journal.archive(days=-1) == 0
        assert draft.path.with_name(draft.path.stem + ".lock").exists()
        # So that no other run takes the draft while this one sends it.
        with pytest.raises(JournalError) as caught:
            with locked(draft.path, wait=0):
                pass
        assert caught.value.reason == "lock_timeout"


def test_an_index_written_again_lists_only_the_drafts_still_waiting(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    thread_id = client.send(journal.keep(client.prepare("sent", task_id=task_id))).published.thread_id
    waiting = journal.keep(client.prepare("waiting", thread_id=thread_id))
    shutil.rmtree(journal.folder / "index")
    Journal(journal.folder).rebuild_index()
    assert sorted(os.listdir(journal.folder / "index" / "waiting")) == [waiting.path.name]


def test_an_index_written_again_still_knows_the_posts_this_journal_published(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    published = client.send(journal.keep(client.prepare("mine", task_id=task_id))).published
    shutil.rmtree(journal.folder / "index")
    again = Journal(journal.folder)
    assert again.published_posts() == {published.post_id: published.thread_id}
    assert published.post_id in again.own_posts()


KEPT_BY_THREAD_TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"


def kept_by_thread(tmp_path, revisions):
    """A journal holding one thread's posts as an earlier version kept them: a file per thread."""
    journal = Journal.open(tmp_path / "journal")
    (journal.folder / "threads").mkdir()
    (journal.folder / "threads" / "t_51d0e9.json").write_text(
        json.dumps({"task_id": KEPT_BY_THREAD_TASK, "revisions": revisions}))
    return journal, KEPT_BY_THREAD_TASK


def test_posts_an_earlier_version_kept_by_thread_are_read_back(tmp_path):
    journal, task_id = kept_by_thread(tmp_path, {"p_8f2c1a": 2, "p_8f2c1b": 3})
    assert journal.seen_post("p_8f2c1a") == (task_id, 2)
    assert journal.seen_post("p_8f2c1b") == (task_id, 3)


def test_posts_kept_by_thread_under_a_malformed_id_are_left_out_and_the_rest_read_back(tmp_path):
    journal, task_id = kept_by_thread(tmp_path, {"../elsewhere": 1, "p_8f2c1a": 2})
    assert journal.seen_post("p_8f2c1a") == (task_id, 2)
    assert len(list((journal.folder / "posts").iterdir())) == 1


def test_a_post_shown_since_keeps_its_revision_over_the_one_an_earlier_version_kept_by_thread(tmp_path):
    journal, task_id = kept_by_thread(tmp_path, {"p_8f2c1a": 2})
    journal.record_posts([SimpleNamespace(post_id="p_8f2c1a", thread_id="t_51d0e9", task_id=task_id, revision=3)])
    assert journal.seen_post("p_8f2c1a") == (task_id, 3)


def test_a_post_recorded_by_an_earlier_run_is_found_under_the_same_file_name(tmp_path):
    journal = Journal.open(tmp_path / "journal")
    task_id = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
    # The name every version gives the record of p_8f2c1a: a journal outlives the version that wrote it.
    (journal.folder / "posts" / "4769f760e750ffab95aa3b8179390b21.json").write_text(
        json.dumps({"post_id": "p_8f2c1a", "thread_id": "t_51d0e9", "task_id": task_id, "revision": 2}))
    assert journal.seen_post("p_8f2c1a") == (task_id, 2)


def test_a_draft_another_run_archives_while_this_one_waits_for_its_lock_is_left_to_it(client, tmp_path, task_id,
                                                                                        monkeypatch):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("sent", task_id=task_id))
    client.send(draft)
    real_locked = journal_module.locked

    # Two sends may each archive at once: the other run takes the lock first and moves the draft.
    def another_run_archives_first(path, **options):
        monkeypatch.setattr(journal_module, "locked", real_locked)
        assert Journal(journal.folder).archive(days=-1) == 1
        return real_locked(path, **options)

    monkeypatch.setattr(journal_module, "locked", another_run_archives_first)
    assert journal.archive(days=-1) == 0
    archived = journal.locate(draft.path)
    assert archived.parent.parent == journal.folder / "archive"
    assert Draft.load(archived).receipt().published.post_id
    assert os.listdir(journal.folder / "drafts") == []


def test_the_archive_leaves_the_marker_of_a_keep_made_in_the_very_second_of_its_cutoff(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    post = client.prepare("kept at the cutoff", task_id=task_id)
    waiting = journal.folder / "index" / "waiting"
    journal.pending()
    at_cutoff, before = "20200101T000000.900000Z-aaaaaaaa.json", "20191231T235959.900000Z-bbbbbbbb.json"
    for name in (at_cutoff, before):
        (waiting / name).write_text(json.dumps({"to": list(post.destination)}))
    # Half a second into it, so that the archive, reading the clock a moment later, is in the same second.
    cutoff = calendar.timegm((2020, 1, 1, 0, 0, 0)) + 0.5
    journal.archive(days=(time.time() - cutoff) / 86400)
    assert sorted(os.listdir(waiting)) == [at_cutoff]
    # The keep under way then writes its draft, which waits.
    Draft.write(post, journal.folder / "drafts" / at_cutoff)
    assert journal.pending() == [journal.folder / "drafts" / at_cutoff]


@pytest.mark.parametrize("threads, name", [(["t_51d0e9"], "t_51d0e9.json"),
                                           (["t_000002", "t_000001"], "inbox-7427ec57b08af4f9.json")],
                         ids=["one thread", "two threads"])
def test_a_follow_resumes_from_the_mark_an_earlier_run_kept_under_the_same_file_name(tmp_path, threads, name):
    journal = Journal.open(tmp_path / "journal")
    # The name every version gives the mark of these threads: a journal outlives the version that wrote it.
    (journal.folder / "follows" / name).write_text(json.dumps({"since": "2026-01-01T00:00:00Z", "seen": ["p_8f2c1a"]}))
    assert journal.follow_mark(threads) == ("2026-01-01T00:00:00Z", ("p_8f2c1a",))


def test_a_listing_from_a_moment_lists_a_draft_the_log_of_things_made_lost(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    draft = journal.keep(client.prepare("kept while the index was written again", task_id=task_id))
    # As a rebuild of the index under way while the draft was kept leaves the log.
    (journal.folder / "index" / "made.log").write_text("")
    for limit in (None, 20):
        assert [entry["path"] for entry in journal.entries(limit=limit, since="2000-01-01T00:00:00Z")] \
            == [str(draft.path)]


def test_the_newest_entries_read_the_log_only_as_far_back_as_they_need(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    oldest, older, newest = (journal.keep(client.prepare(f"wording {n}", task_id=task_id)) for n in range(3))
    log = journal.folder / "index" / "made.log"
    lines = log.read_text().splitlines()
    assert [line.split()[2] for line in lines] == [oldest.path.name, older.path.name, newest.path.name]
    # Far back, a line that would list the oldest draft first, were it read; then more than a
    # chunk of the log's end naming drafts long gone.
    gone = [f"2020-01-01T00:00:00.000000Z draft 20200101T000000.{n:06d}Z-00000000.json" for n in range(400)]
    log.write_text("\n".join([f"2099-01-01T00:00:00.000000Z draft {oldest.path.name}", *gone, *lines[1:]]) + "\n")
    assert log.stat().st_size > 16384
    assert [entry["path"] for entry in journal.entries(limit=2)] == [str(newest.path), str(older.path)]


def test_the_journal_lists_the_first_eighty_characters_of_a_draft_s_body(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    body = "".join(str(n % 10) for n in range(100))
    journal.keep(client.prepare(body, task_id=task_id))
    for listing in (journal.entries(), journal.entries(limit=20)):
        assert [entry["body"] for entry in listing] == [body[:80]]


def test_a_key_of_one_character_keeps_a_draft_once(client, tmp_path, task_id):
    journal = Journal.open(tmp_path / "journal")
    post = client.prepare("keyed", task_id=task_id)
    kept = journal.keep(post, key="k")
    assert journal.keep(post, key="k").path == kept.path and journal.drafts() == [kept.path]
