"""The journal: drafts kept and sent once across processes, kills and crashes at every step,
keys, what the listings read (and that they write nothing), privacy, locks, resumed follows."""

import errno
import fcntl
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks_wiki import Client, Journal
from benchmarks_wiki.errors import DraftError, JournalError
from benchmarks_wiki.files import locked
from benchmarks_wiki.journal import Draft, located
from benchmarks_wiki.rules import EARLIER, NEW
from tests.conftest import (ROOT, as_if_killed_before_its_receipt, interruptible, publishes, script_env,
                            wait_for, wait_until_following)


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


def all_drafts(journal):
    """Every draft in the journal, waiting or sent, by name."""
    return sorted((path for part in ("waiting", "sent") for path in (journal.folder / part).glob("*.json")
                   if path.name.count(".") == 2), key=lambda path: path.name)


def start_post(portal, *args):
    return subprocess.Popen([sys.executable, "scripts/post.py", *args], cwd=ROOT, env=script_env(portal),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_publishing_a_draft_sends_exactly_its_url_once(run, portal, draft):
    done = run("post.py", "--draft", str(draft))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("posted p_")
    sent = publishes(portal)
    request = json.loads((draft.parent.parent / "sent" / draft.name).read_text())["request"]
    assert len(sent) == 1 and sent[0].params == dict(request["params"])
    receipt = json.loads((draft.parent.parent / "sent" / (draft.stem + ".receipt.json")).read_text())
    assert receipt["post"]["post_id"] == done.stdout.split()[1] and receipt["created"] is True
    assert not draft.exists() and (draft.parent.parent / "sent" / draft.name).exists()
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
    lock = draft.parent.parent / "locks" / (draft.stem + ".lock")
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
    assert done.returncode == 1 and "resend the same request" in done.stderr
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
    assert str(folder / "waiting") in done.stderr


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


def test_the_journal_command_does_one_of_its_actions_at_a_time(run, portal):
    done = run("draw.py", "journal", "--pending", "--discard", "x.json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "draw.py journal: error: give one of --pending and --discard (see --help)\n"


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


def test_a_rerun_prints_the_portal_shape_in_json(run, portal, draft):
    first = json.loads(run("post.py", "--draft", str(draft), "--json").stdout)
    again = json.loads(run("post.py", "--draft", str(draft), "--json").stdout)
    assert first["created"] is True and first["outcome"] == "new"
    assert again == {"created": False, "post": first["post"], "outcome": "earlier",
                     "published_at": again["published_at"]}


def test_journal_write_failures_never_hide_a_published_post(run, portal, task_id, tmp_path, monkeypatch,
                                                           capsys):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki").folder
    (journal / "draws" / f"{task_id}.json").mkdir()
    drawn = run("draw.py", "task", task_id)
    assert drawn.returncode == 0 and "Traceback" not in drawn.stderr
    # The note names where the write failed and why, in the system's words.
    assert drawn.stderr.startswith(f"journal: cannot write in {journal / 'draws'}")
    assert drawn.stderr.endswith(" (Is a directory); going on without it\n")

    from benchmarks_wiki import cli
    from benchmarks_wiki import journal as journal_module
    real_write = journal_module.write_atomically

    def disk_full_for_receipts(path, content, **options):
        if path.name.endswith(".receipt.json"):
            raise OSError(28, "No space left on device")
        real_write(path, content, **options)

    monkeypatch.setattr(journal_module, "write_atomically", disk_full_for_receipts)
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


@pytest.mark.parametrize("revision, read", [(3, 3), (True, None), ("2", None), (2.0, None), (None, None)],
                         ids=repr)
def test_a_drawn_revision_is_a_whole_number_or_none(tmp_path, revision, read):
    journal = Journal.open(tmp_path / "journal")
    task_id = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
    record = {"drawn_at": "2026-01-01T00:00:00Z", "revision": revision, "task": {"task_id": task_id}}
    (journal.folder / "draws" / f"{task_id}.json").write_text(json.dumps(record))
    found = journal.drawn_revision(task_id)
    assert found == read and type(found) is type(read)


def test_the_whole_listing_leaves_out_files_among_the_draws_that_are_not_draws(client, tmp_path):
    journal = Journal.open(tmp_path / "journal")
    task = next(client.tasks("gsm8k"))
    journal.record_draw(task)
    drawn = journal.folder / "draws" / f"{task.task_id}.json"
    # A copy an editor left, and a hidden file.
    shutil.copy(drawn, drawn.with_name(drawn.name + "~"))
    shutil.copy(drawn, drawn.with_name("." + drawn.name))
    assert [(entry["type"], entry["path"]) for entry in journal.entries()] == [("drawn", str(drawn))]


def test_a_draft_whose_send_failed_still_waits(run, portal, draft):
    journal = Journal.open(draft.parent.parent)
    portal.fail_next(503, times=4)
    failed = run("post.py", "--draft", str(draft), "--retries", "0")
    assert failed.returncode == 1 and portal.published == 0
    # Every run that tries a draft tells the journal so, sent or not; only a receipt, a refusal
    # or a discard takes it off the waiting list.
    assert [waiting.path for waiting in journal.pending()] == [draft]
    portal.clear_faults()
    assert run("post.py", "--draft", str(draft)).returncode == 0
    assert journal.pending() == []


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
        return False if Path(path) == folder / "waiting" else real_access(path, mode, **options)

    monkeypatch.setattr(os, "access", no_writing_in_drafts)
    with pytest.raises(PermissionError) as caught:
        Journal.open(folder)
    assert caught.value.filename == str(folder / "waiting") and caught.value.errno == errno.EACCES
    done = run("post.py", "--task", task_id, "--body", "x", "--journal", str(folder))
    assert done.returncode == 0 and done.stdout.startswith("posted ")
    assert done.stderr == f"journal off: cannot write {folder} (not writable)\n"
    assert portal.published == 1 and not list((folder / "waiting").iterdir())


@pytest.mark.parametrize("threads, name", [(["t_51d0e9"], "t_51d0e9.json"),
                                           (["t_000002", "t_000001"], "inbox-7427ec57b08af4f9.json")],
                         ids=["one thread", "two threads"])
def test_a_follow_resumes_from_the_mark_an_earlier_run_kept_under_the_same_file_name(tmp_path, threads, name):
    journal = Journal.open(tmp_path / "journal")
    # The name every version gives the mark of these threads: a journal outlives the version that wrote it.
    (journal.folder / "follows" / name).write_text(json.dumps({"since": "2026-01-01T00:00:00Z", "seen": ["p_8f2c1a"]}))
    assert journal.follow_mark(threads) == ("2026-01-01T00:00:00Z", ("p_8f2c1a",))


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
    assert journal.keep(post, key="k").path == kept.path and all_drafts(journal) == [kept.path]



@pytest.fixture
def journal(tmp_path):
    return Journal.open(tmp_path / "journal")



@pytest.fixture
def task_ids(client):
    return [task.task_id for task in client.tasks("gsm8k", limit=3)]



def test_the_same_post_under_the_same_key_is_the_same_draft_sent_or_not(client, portal, journal, task_ids):
    first = journal.keep(client.prepare("kept once", task_id=task_ids[0]), key="run-42")
    again = journal.keep(client.prepare("kept once", task_id=task_ids[0]), key="run-42")
    assert again.path == first.path and again.post.nonce == first.post.nonce
    assert client.send(again).how == NEW
    after_sending = journal.keep(client.prepare("kept once", task_id=task_ids[0]), key="run-42")
    assert after_sending.path.name == first.path.name and after_sending.path.parent.name == "sent"
    assert client.send(after_sending).how == EARLIER
    assert len(publishes(portal)) == 1 and journal.pending() == []



def test_another_post_under_a_used_key_is_refused_and_nothing_is_kept(client, journal, task_ids):
    journal.keep(client.prepare("first text", task_id=task_ids[0]), key="run-42")
    with pytest.raises(DraftError) as caught:
        journal.keep(client.prepare("other text", task_id=task_ids[0]), key="run-42")
    assert caught.value.reason == "key_taken" and len(all_drafts(journal)) == 1
    with pytest.raises(DraftError):
        journal.keep(client.prepare("first text", task_id=task_ids[1]), key="run-42")



@pytest.mark.parametrize("key", ["", "x" * 201, "tab\there", 42])
def test_a_key_is_short_printable_text(client, journal, task_ids, key):
    with pytest.raises(Exception) as caught:
        journal.keep(client.prepare("text", task_id=task_ids[0]), key=key)
    assert caught.value.__class__.__name__ == "ValidationError" and all_drafts(journal) == []



def test_pending_reads_only_what_waits(client, portal, journal, task_ids):
    sent = [journal.keep(client.prepare(f"sent {n}", task_id=task_ids[n % 2])) for n in range(6)]
    for draft in sent:
        client.send(draft)
    waiting = journal.keep(client.prepare("waiting", task_id=task_ids[2]))
    assert journal.pending() == [waiting]
    for path in (journal.folder / "sent").iterdir():  # nothing sent is opened again to learn what waits
        path.write_text("damaged")
    assert journal.pending() == [waiting]



def test_a_send_from_python_alone_is_taken_off_the_list_and_counts_as_ours(client, journal, task_ids):
    draft = journal.keep(client.prepare("mine", task_id=task_ids[0]))
    published = client.send(draft).published
    assert journal.pending() == []
    assert published.post_id in journal and "p_other" not in journal
    assert journal.published_posts() == {published.post_id: published.thread_id}



def test_the_reference_recipe_publishes_once_however_often_it_runs(portal, tmp_path, task_ids, monkeypatch,
                                                                    capsys):
    from tests.crashing import recipe

    for name, value in (("BENCHMARKS_WIKI_ORIGIN", portal.origin), ("SSL_CERT_FILE", portal.ca_file),
                        ("BENCHMARKS_WIKI_JOURNAL", str(tmp_path / "journal"))):
        monkeypatch.setenv(name, value)
    for _ in range(2):
        exec(recipe("run twice"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("new https://") and printed[1].startswith("earlier https://")
    assert len(publishes(portal)) == 1



def crash_everywhere(portal, root):
    """(folder, body, exit status) of the reference's recipe stopped at each of its steps."""
    env = script_env(portal, PYTHONPATH=f"{ROOT / 'scripts'}{os.pathsep}{ROOT}")
    done = subprocess.run([sys.executable, "-m", "tests.crashing", str(root)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]



def check_after_crash(folder, client, portal, task_id, body):
    """Nothing waiting is lost, nothing sent waits; a rerun of the recipe publishes once."""
    journal = Journal.open(folder)
    pending = {draft.path.name for draft in journal.pending()}
    for path in all_drafts(journal):
        sent = (journal.folder / "sent" / (path.stem + ".receipt.json")).exists()
        assert (path.name in pending) != sent, (path, sent)
    nonces = {request.params["nonce"] for request in publishes(portal) if request.params["body"] == body}
    assert len(nonces) <= 1
    kept = journal.keep(client.prepare(body, task_id=task_id), key="gsm8k-run-42")
    client.send(kept)
    assert journal.pending() == []
    nonces = {request.params["nonce"] for request in publishes(portal) if request.params["body"] == body}
    assert nonces == {kept.post.nonce}



@pytest.mark.skipif(not hasattr(os, "fork"), reason="the crashes are forked copies of one process")
def test_a_crash_at_any_step_of_keeping_and_sending_loses_nothing_and_posts_once(portal, client, tmp_path,
                                                                                  task_ids):
    import random

    runs = crash_everywhere(portal, tmp_path)
    drawn = client.sample("gsm8k", rng=random.Random(42)).task_id  # the recipe's seeded draw
    assert len(runs) >= 2 * 6  # every step of the keep and the send, before and after
    assert len([request for request in publishes(portal) if request.params["body"] == "counting"]) == 1
    for folder, body, status in runs:
        assert status == "99", (folder, status)
        check_after_crash(Path(folder), client, portal, drawn, body)



def test_journal_lists_the_newest_by_default(run, client, tmp_path, task_ids):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki")
    for n in range(4):
        journal.keep(client.prepare(f"draft {n}", task_id=task_ids[0]))
    done = run("draw.py", "journal", "--limit", "2")
    assert len(done.stdout.splitlines()) == 2 and "draft 3" in done.stdout and "more remain" in done.stderr
    assert len(run("draw.py", "journal", "--all").stdout.splitlines()) == 4
    assert len(run("draw.py", "journal", "--since", "2000-01-01").stdout.splitlines()) == 4
    assert run("draw.py", "journal", "--since", "2999-01-01").stdout == ""



def test_a_discarded_draft_is_never_sent(run, portal, client, tmp_path, task_ids):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki")
    draft = journal.keep(client.prepare("never", task_id=task_ids[0]))
    done = run("draw.py", "journal", "--discard", str(draft.path))
    assert done.returncode == 0 and "never sent" in done.stderr
    assert journal.pending() == [] and "discarded" in run("draw.py", "journal").stdout
    portal.reset_counters()
    refused = run("post.py", "--draft", str(draft.path))
    assert refused.returncode == 2 and "was discarded" in refused.stderr and portal.requests == []
    with pytest.raises(DraftError):
        client.send(Draft.load(draft.path))



def test_a_published_draft_cannot_be_discarded(run, client, tmp_path, task_ids):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki")
    draft = journal.keep(client.prepare("public", task_id=task_ids[0]))
    client.send(draft)
    done = run("draw.py", "journal", "--discard", str(draft.path))
    assert done.returncode == 2 and "already published" in done.stderr



def test_post_key_on_the_command_line_reruns_without_a_second_post(run, portal, task_ids):
    args = ("post.py", "--task", task_ids[0], "--body", "keyed", "--key", "run-1")
    preview = run(*args, "--preview")
    assert preview.returncode == 0
    first = run(*args)
    again = run(*args)
    assert first.stdout.startswith("posted ") and again.stdout.startswith("already published ")
    assert len({request.params["nonce"] for request in publishes(portal)}) == 1
    other = run("post.py", "--task", task_ids[0], "--body", "changed", "--key", "run-1")
    assert other.returncode == 2 and "already names another post" in other.stderr
    assert run(*args, "--no-journal").returncode == 2



def test_the_journal_lives_under_localappdata_on_windows(tmp_path):
    local = str(tmp_path / "Local")
    assert located(environ={"LOCALAPPDATA": local}, windows=True) == (Path(local) / "benchmarks-wiki",
                                                                      "LOCALAPPDATA")
    assert located(environ={"LOCALAPPDATA": local, "XDG_STATE_HOME": str(tmp_path)}, windows=True)[1] == \
        "XDG_STATE_HOME"
    assert located(environ={"BENCHMARKS_WIKI_JOURNAL": str(tmp_path / "j")}, windows=True)[0] == tmp_path / "j"
    assert located(environ={}, windows=True)[0].parts[-3:] == ("AppData", "Local", "benchmarks-wiki")



# A stand-in for Windows' msvcrt: locking() takes a byte range of an open file, from the
# file's position, and refuses (EACCES) a range another handle holds; as on Windows, an unlock
# must name exactly the range its handle locked. ``calls`` lists each call's mode and length.
MSVCRT = '''
import errno, os
LK_UNLCK, LK_NBLCK = 0, 2
_held = {}
calls = []
def locking(fd, mode, nbytes):
    if fd == 999:
        raise OSError(errno.EBADF, "Bad file descriptor")
    calls.append((mode, nbytes))
    key = os.fstat(fd).st_ino
    span = (fd, os.lseek(fd, 0, os.SEEK_CUR), nbytes)
    if mode == LK_NBLCK:
        if _held.get(key, span)[0] != fd:
            raise OSError(errno.EACCES, "Permission denied")
        _held[key] = span
    elif _held.get(key) == span:
        del _held[key]
    else:
        raise OSError(errno.EACCES, "Permission denied")
'''



@pytest.fixture
def msvcrt_standin(tmp_path):
    """The stand-in, imported in this process as ``msvcrt``."""
    folder = tmp_path / "standin"
    folder.mkdir()
    (folder / "msvcrt.py").write_text(MSVCRT)
    sys.path.insert(0, str(folder))
    try:
        import msvcrt

        yield msvcrt
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("msvcrt", None)



WINDOWS_RUN = '''
import sys
sys.modules["fcntl"] = None  # as on Windows: there is none
from benchmarks_wiki import Client, Journal
from benchmarks_wiki.errors import JournalError
from benchmarks_wiki.files import locked
with Client() as client:
    journal = Journal.open(sys.argv[1])
    draft = journal.keep(client.prepare("from windows", task_id=sys.argv[2]))
    with locked(draft.lock_file()):
        try:
            with locked(draft.lock_file(), wait=0.2):
                print("taken twice")
        except JournalError as error:
            print(error.reason)
    print(client.send(draft).how, client.send(draft).how)
'''



def test_the_windows_lock_sends_once_and_waits_a_bounded_time(portal, tmp_path, task_ids):
    (tmp_path / "standin").mkdir()
    (tmp_path / "standin" / "msvcrt.py").write_text(MSVCRT)
    env = script_env(portal, PYTHONPATH=os.pathsep.join([str(tmp_path / "standin"), str(ROOT / "scripts")]))
    done = subprocess.run([sys.executable, "-c", WINDOWS_RUN, str(tmp_path / "journal"), task_ids[0]],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["lock_timeout", "new", "earlier"]
    assert len(publishes(portal)) == 1



def test_a_lock_error_on_windows_is_one_line_at_once(msvcrt_standin):
    from benchmarks_wiki.files import _msvcrt_lock

    take, _ = _msvcrt_lock(msvcrt_standin)

    class Broken:
        def fileno(self):
            return 999

        def seek(self, _):
            pass

    with pytest.raises(OSError):
        take(Broken())



def test_the_windows_lock_frees_exactly_the_byte_it_took(msvcrt_standin, tmp_path):
    from benchmarks_wiki.files import _msvcrt_lock

    take, release = _msvcrt_lock(msvcrt_standin)
    lock = tmp_path / "draft.lock"
    with open(lock, "a+b") as first, open(lock, "a+b") as second:
        assert take(first) and not take(second)
        first.seek(5)  # a handle moved since its lock was taken still frees that lock
        release(first)
        assert take(second)
        release(second)
    taken, freed = (msvcrt_standin.LK_NBLCK, 1), (msvcrt_standin.LK_UNLCK, 1)
    assert msvcrt_standin.calls == [taken, taken, freed, taken, freed]



def test_a_lock_that_never_frees_is_given_up_after_the_wait(tmp_path, fake_time):
    draft = tmp_path / "d.json"
    draft.write_text("{}")
    with locked(draft):
        with pytest.raises(JournalError) as caught:
            with locked(draft, wait=5, sleep=fake_time.sleep, clock=fake_time.clock):
                pass
    assert caught.value.reason == "lock_timeout" and fake_time.clock() >= 1005



@pytest.mark.parametrize("wait, sleeps", [(0, 0), (1, 4)])
def test_a_lock_is_given_up_the_moment_its_wait_runs_out(tmp_path, fake_time, wait, sleeps):
    draft = tmp_path / "d.json"
    draft.write_text("{}")

    def sleep(_):  # a quarter second a look, a step the clock adds up exactly
        fake_time.sleep(0.25)

    with locked(draft):
        with pytest.raises(JournalError) as caught:
            with locked(draft, wait=wait, sleep=sleep, clock=fake_time.clock):
                pass
    assert caught.value.reason == "lock_timeout" and len(fake_time.slept) == sleeps



def test_a_lock_the_system_refuses_is_one_line_with_its_reason_at_once(msvcrt_standin, monkeypatch, tmp_path,
                                                                       fake_time):
    def refused(fd, mode, nbytes):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setitem(sys.modules, "fcntl", None)  # as on Windows: there is none
    monkeypatch.setattr(msvcrt_standin, "locking", refused)
    draft = tmp_path / "d.json"
    draft.write_text("{}")
    with pytest.raises(JournalError) as caught:
        with locked(draft, wait=5, sleep=fake_time.sleep, clock=fake_time.clock):
            pass
    assert caught.value.reason == "cannot_lock" and fake_time.slept == []
    assert str(caught.value).startswith(f"cannot lock {draft} (No locks available); nothing sent")



def test_a_draft_whose_lock_cannot_be_opened_is_refused_with_the_systems_reason(run, portal, client, tmp_path,
                                                                                task_ids):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki")
    draft = journal.keep(client.prepare("unsent", task_id=task_ids[0]))
    draft.lock_file().mkdir()  # where the lock file should be, a folder
    portal.reset_counters()
    done = run("post.py", "--draft", str(draft.path))
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr.startswith(f"post.py: error: cannot lock {draft.lock_file()} (Is a directory); nothing sent")
    assert portal.requests == []
    with pytest.raises(JournalError) as caught:
        client.send(draft)
    assert caught.value.reason == "cannot_lock"



def test_a_replaced_draft_sent_by_hand_still_counts_as_ours(client, journal, task_ids):
    first = journal.keep(client.prepare("first", task_id=task_ids[0]))
    journal.keep(client.prepare("second", task_id=task_ids[0]))  # replaces the first
    published = client.send(Draft.load(first.path)).published
    assert published.post_id in journal and first.path.parent.name == "waiting"



def test_a_file_system_without_hard_links_still_keeps_each_draft_once(client, journal, task_ids, monkeypatch):
    def no_links(source, target):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    kept = journal.keep(client.prepare("kept", task_id=task_ids[0]), key="run-1")
    assert journal.keep(client.prepare("kept", task_id=task_ids[0]), key="run-1").path == kept.path
    assert journal.pending() == [kept] and all_drafts(journal) == [kept.path]



# -- privacy, and listings that write nothing -------------------------------------------------


def modes(folder):
    return {str(path.relative_to(folder)): stat.S_IMODE(path.stat().st_mode) for path in [folder, *folder.rglob("*")]}


def test_a_journal_made_under_umask_022_is_private_to_its_user(run, portal, task_id, tmp_path):
    previous = os.umask(0o022)
    try:
        state = tmp_path / "new-state"
        env = script_env(portal, XDG_STATE_HOME=str(state))
        assert run("draw.py", "task", task_id, env=env).returncode == 0
        assert run("post.py", "--task", task_id, "--body", "private", "--preview", env=env).returncode == 0
        assert run("post.py", "--task", task_id, "--body", "private", env=env).returncode == 0
    finally:
        os.umask(previous)
    found = modes(state)
    assert found and all(not mode & 0o077 for mode in found.values()), found
    assert found["."] == 0o700 and found["benchmarks-wiki/secret"] == 0o600
    # 256 bits behind every draft's code, so that none can be forged by trying.
    assert re.fullmatch(r"[0-9a-f]{64}", (state / "benchmarks-wiki" / "secret").read_text())


def test_a_journal_others_can_read_is_said_once_with_the_command_that_makes_it_private(run, portal, tmp_path):
    folder = tmp_path / "state" / "benchmarks-wiki"
    Journal.open(folder)
    os.chmod(folder, 0o755)
    done = run("draw.py", "journal")
    assert done.stderr.splitlines()[0] == (f"journal: {folder} can be read by other users (mode 755), and a waiting "
                                           f"draft holds its nonce; make it private: chmod -R go= {folder}")


def snapshot(folder):
    return {str(path): (path.read_bytes() if path.is_file() else None, path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*"))}


def test_listing_the_journal_twice_leaves_its_folder_byte_identical(run, portal, client, task_ids, tmp_path):
    folder = tmp_path / "state" / "benchmarks-wiki"
    journal = Journal.open(folder)
    old = journal.keep(client.prepare("replaced", task_id=task_ids[0]))
    journal.keep(client.prepare("waiting", task_id=task_ids[0]))
    client.send(journal.keep(client.prepare("sent", task_id=task_ids[1])))
    discarded = journal.keep(client.prepare("discarded", task_id=task_ids[2]))
    journal.discard(discarded.path)
    # As a run killed between a receipt and the move leaves it.
    as_if_killed_before_its_receipt(client.send(journal.keep(client.prepare("half", task_id=task_ids[2]))) and
                                    sorted((folder / "sent").glob("*Z-*[0-9a-f].json"))[-1])
    (folder / "sent" / (old.path.stem + ".receipt.json")).write_text("{}")
    before = snapshot(folder)
    for _ in range(2):
        journal.pending(), list(journal.entries()), list(journal.entries(limit=2)), journal.published_posts()
        assert "p_1" not in journal
        for argv in (["journal"], ["journal", "--pending"], ["journal", "--all", "--json"]):
            assert run("draw.py", *argv).returncode == 0
    assert snapshot(folder) == before


def test_a_replaced_draft_kept_again_under_its_key_waits_again(client, journal, task_ids):
    first = journal.keep(client.prepare("first wording", task_id=task_ids[0]), key="wording-1")
    second = journal.keep(client.prepare("second wording", task_id=task_ids[0]), key="wording-2")
    assert journal.pending() == [second]
    again = journal.keep(client.prepare("first wording", task_id=task_ids[0]), key="wording-1")
    assert again.path == first.path and again.post.nonce == first.post.nonce
    assert [draft.path.name for draft in journal.pending()] == [first.path.name]


def test_a_draft_sent_elsewhere_meanwhile_is_found_where_it_went(client, portal, journal, task_ids):
    draft = journal.keep(client.prepare("moved", task_id=task_ids[0]))
    stale = Draft.load(draft.path)
    assert client.send(draft).how == NEW
    assert client.send(stale).how == EARLIER and Draft.load(draft.path).path.parent.name == "sent"
    assert len(publishes(portal)) == 1
