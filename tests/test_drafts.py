"""The journal's drafts at scale: keys of the caller's own, an index that costs what waits,
crashes at every step, the archive, discarding, and the Windows branch."""

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks_wiki import Journal
from benchmarks_wiki.errors import DraftError, JournalError
from benchmarks_wiki.files import LOCK, beside, locked
from benchmarks_wiki.journal import located
from benchmarks_wiki.publishing import EARLIER, NEW, Draft
from tests.conftest import ROOT, publishes, script_env


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
    assert after_sending.path == first.path and client.send(after_sending).how == EARLIER
    assert len(publishes(portal)) == 1 and journal.pending() == []


def test_another_post_under_a_used_key_is_refused_and_nothing_is_kept(client, journal, task_ids):
    journal.keep(client.prepare("first text", task_id=task_ids[0]), key="run-42")
    with pytest.raises(DraftError) as caught:
        journal.keep(client.prepare("other text", task_id=task_ids[0]), key="run-42")
    assert caught.value.reason == "key_taken" and len(journal.drafts()) == 1
    with pytest.raises(DraftError):
        journal.keep(client.prepare("first text", task_id=task_ids[1]), key="run-42")


@pytest.mark.parametrize("key", ["", "x" * 201, "tab\there", 42])
def test_a_key_is_short_printable_text(client, journal, task_ids, key):
    with pytest.raises(Exception) as caught:
        journal.keep(client.prepare("text", task_id=task_ids[0]), key=key)
    assert caught.value.__class__.__name__ == "ValidationError" and journal.drafts() == []


def test_keys_survive_the_index_being_deleted(client, journal, task_ids):
    kept = journal.keep(client.prepare("kept", task_id=task_ids[0]), key="run-7")
    shutil.rmtree(journal.folder / "index")
    reopened = Journal.open(journal.folder)
    assert reopened.keep(client.prepare("kept", task_id=task_ids[0]), key="run-7").path == kept.path
    assert reopened.pending() == [kept.path]


def test_pending_reads_only_what_waits(client, portal, journal, task_ids):
    sent = [journal.keep(client.prepare(f"sent {n}", task_id=task_ids[n % 2])) for n in range(6)]
    for draft in sent:
        client.send(draft)
    waiting = journal.keep(client.prepare("waiting", task_id=task_ids[2]))
    assert journal.pending() == [waiting.path]
    for draft in sent:  # a sent draft is never opened again to learn what waits
        draft.path.write_text("damaged")
    assert journal.pending() == [waiting.path]
    assert journal.waiting_for(waiting.post.destination) == waiting.path


def test_the_index_is_written_again_from_the_drafts(client, journal, task_ids):
    replaced = journal.keep(client.prepare("old", task_id=task_ids[0]))
    newest = journal.keep(client.prepare("new", task_id=task_ids[0]))
    sent = journal.keep(client.prepare("sent", task_id=task_ids[1]))
    client.send(sent)
    other = journal.keep(client.prepare("other", task_id=task_ids[2]))
    before = journal.pending()
    shutil.rmtree(journal.folder / "index")
    assert Journal.open(journal.folder).pending() == before == sorted([newest.path, other.path])
    assert replaced.path not in before


def test_a_send_from_python_alone_is_taken_off_the_list_and_counts_as_ours(client, journal, task_ids):
    draft = journal.keep(client.prepare("mine", task_id=task_ids[0]))
    published = client.send(draft).published
    assert journal.pending() == []
    assert published.post_id in journal.own_posts() and "p_other" not in journal.own_posts()
    assert journal.published_posts() == {published.post_id: published.thread_id}


# -- crashes ----------------------------------------------------------------------------------


def test_the_reference_recipe_publishes_once_however_often_it_runs(portal, tmp_path, task_ids, monkeypatch,
                                                                    capsys):
    from tests.crashing import recipe

    for name, value in (("BENCHMARKS_WIKI_ORIGIN", portal.origin), ("SSL_CERT_FILE", portal.ca_file),
                        ("BENCHMARKS_WIKI_JOURNAL", str(tmp_path / "journal"))):
        monkeypatch.setenv(name, value)
    for _ in range(2):
        exec(recipe(task_ids[0], "run twice"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("new https://") and printed[1].startswith("earlier https://")
    assert len(publishes(portal)) == 1


def crash_everywhere(portal, root, task_id):
    """(folder, body, exit status) of the reference's recipe stopped at each of its steps."""
    env = script_env(portal, PYTHONPATH=f"{ROOT / 'scripts'}{os.pathsep}{ROOT}")
    done = subprocess.run([sys.executable, "-m", "tests.crashing", task_id, str(root)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


def check_after_crash(folder, client, portal, task_id, body):
    """Nothing waiting is lost, nothing sent waits; a rerun of the recipe publishes once."""
    journal = Journal.open(folder)
    for path in journal.drafts():
        sent = beside(path, ".receipt.json").exists()
        assert (path in journal.pending()) != sent, (path, sent)
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
    runs = crash_everywhere(portal, tmp_path, task_ids[1])
    assert len(runs) >= 4 * 6  # every step of the keep and the send, before and after, twice
    assert len([request for request in publishes(portal) if request.params["body"] == "counting"]) == 1
    for folder, body, status in runs:
        assert status == "99", (folder, status)
        if folder.endswith("deleted"):
            shutil.rmtree(Path(folder) / "index", ignore_errors=True)
        check_after_crash(Path(folder), client, portal, task_ids[1], body)


# -- the archive and discarding -------------------------------------------------------------


def test_archived_drafts_still_list_and_answer_with_their_receipt(run, client, portal, tmp_path, task_ids):
    folder = tmp_path / "state" / "benchmarks-wiki"
    journal = Journal.open(folder)
    sent = journal.keep(client.prepare("archived", task_id=task_ids[0]))
    published = client.send(sent).published
    waiting = journal.keep(client.prepare("still waiting", task_id=task_ids[1]))
    assert journal.archive(days=-1) == 1
    assert not sent.path.exists() and waiting.path.exists()
    assert journal.locate(sent.path).parent.parent == folder / "archive"
    portal.reset_counters()
    done = run("post.py", "--draft", str(sent.path))
    assert done.returncode == 0 and done.stdout.startswith(f"already published {published.post_id}")
    assert publishes(portal) == []
    listed = run("draw.py", "journal", "--all").stdout
    assert "posted" in listed and published.post_id in listed and "draft" in listed
    assert journal.pending() == [waiting.path]


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


# -- Windows ---------------------------------------------------------------------------------


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
    with locked(draft.path):
        try:
            with locked(draft.path, wait=0.2):
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
    assert str(caught.value).startswith(f"cannot lock draft {draft} (No locks available); nothing sent")


def test_a_draft_whose_lock_cannot_be_opened_is_refused_with_the_systems_reason(run, portal, client, tmp_path,
                                                                                task_ids):
    journal = Journal.open(tmp_path / "state" / "benchmarks-wiki")
    draft = journal.keep(client.prepare("unsent", task_id=task_ids[0]))
    beside(draft.path, LOCK).mkdir()  # where the lock file should be, a folder
    portal.reset_counters()
    done = run("post.py", "--draft", str(draft.path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"post.py: error: cannot lock draft {draft.path} (Is a directory); nothing sent")
    assert portal.requests == []
    with pytest.raises(JournalError) as caught:
        client.send(draft)
    assert caught.value.reason == "cannot_lock"


def test_the_newest_entries_from_the_log_are_those_of_the_whole_listing(client, journal, task_ids):
    for task in client.tasks("gsm8k", limit=2):
        journal.record_draw(task)
    for n in range(4):
        client.send(journal.keep(client.prepare(f"draft {n}", task_id=task_ids[n % 3])))
    journal.keep(client.prepare("waiting", task_id=task_ids[0]))
    whole = list(journal.entries())
    assert list(journal.entries(limit=3)) == whole[:3] and len(whole) == 7
    shutil.rmtree(journal.folder / "index")
    assert list(Journal.open(journal.folder).entries(limit=4)) == whole[:4]


def test_a_replaced_draft_sent_by_hand_still_counts_as_ours(client, journal, task_ids):
    first = journal.keep(client.prepare("first", task_id=task_ids[0]))
    journal.keep(client.prepare("second", task_id=task_ids[0]))  # replaces the first
    published = client.send(first).published
    journal.sent(first)
    assert published.post_id in journal.own_posts()


def test_a_draft_the_archive_took_while_waiting_to_send_is_not_sent(client, portal, journal, task_ids):
    draft = journal.keep(client.prepare("never", task_id=task_ids[0]))
    journal.discard(draft.path)
    loaded = Draft.load(draft.path)
    assert journal.archive(days=-1) == 1
    portal.reset_counters()
    with pytest.raises(DraftError) as caught:
        client.send(loaded)
    assert caught.value.reason == "no_draft_file" and publishes(portal) == []


def test_the_whole_listing_orders_the_archive_and_old_waiting_drafts_by_when_made(client, journal, task_ids):
    drafts = journal.folder / "drafts"
    waiting = Draft.write(client.prepare("old, waiting", task_id=task_ids[0]),
                          drafts / "20200101T000000.000000Z-aaaaaaaa.json")
    (journal.folder / "archive" / "2020-02").mkdir(parents=True)
    archived = Draft.write(client.prepare("archived", task_id=task_ids[1]),
                           journal.folder / "archive" / "2020-02" / "20200201T000000.000000Z-bbbbbbbb.json")
    assert [entry["path"] for entry in journal.entries()] == [str(archived.path), str(waiting.path)]
    assert [entry["path"] for entry in journal.entries(since="2020-01-15T00:00:00Z")] == [str(archived.path)]
    assert len(list(journal.entries(since="2020-02-01T00:00:00Z"))) == 1  # made in that very second


def test_a_file_system_without_hard_links_still_keeps_each_draft_once(client, journal, task_ids, monkeypatch):
    def no_links(source, target):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    kept = journal.keep(client.prepare("kept", task_id=task_ids[0]), key="run-1")
    assert journal.keep(client.prepare("kept", task_id=task_ids[0]), key="run-1").path == kept.path
    assert journal.pending() == [kept.path] and len(journal.drafts()) == 1


def test_the_archive_leaves_a_draft_made_in_its_cutoff_second(client, journal, task_ids):
    drafts = journal.folder / "drafts"
    # The cutoff is a whole second of the clock; retried should that second end mid-test.
    for attempt in range(5):
        second = time.strftime("%Y%m%dT%H%M%S", time.gmtime(time.time() + 86400))
        draft = Draft.write(client.prepare(f"discarded {attempt}", task_id=task_ids[0]),
                            drafts / f"{second}.000000Z-{attempt:08x}.json")
        journal.discard(draft.path)
        moved = journal.archive(days=-1)
        if time.strftime("%Y%m%dT%H%M%S", time.gmtime(time.time() + 86400)) == second:
            break
    assert moved == 0 and draft.path.exists()
