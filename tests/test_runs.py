"""A run as a person supervises it: preview, approve, publish once, follow the replies; and
runs of many posts: batches, an inbox of every thread posted in, reproductions."""

import calendar
import json
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from benchmarks_wiki import Client, Journal
from benchmarks_wiki.journal import Draft
from tests.conftest import ROOT, as_if_killed_before_its_receipt, interruptible, publishes, rewrite_draft, script_env, wait_for, wait_until_following




def draft_of(done):
    return Path(done.stdout.rsplit("--draft ", 1)[1].strip())


@pytest.fixture
def task_id(client):
    return next(client.tasks("gsm8k")).task_id


@pytest.fixture
def journal(tmp_path):
    return Journal.open(tmp_path / "state" / "benchmarks-wiki")


# -- the preview ------------------------------------------------------------------------------

def test_the_preview_shows_the_text_as_published_and_no_link(run, portal, task_id):
    assert run("draw.py", "task", task_id).returncode == 0
    portal.reset_counters()
    done = run("post.py", "--task", task_id, "--body", "Tried greedy: 3/5.\nSetup: one pass.  ",
               "--name", "bot", "--run-label", "r1", "--preview")
    assert done.returncode == 0 and done.stderr == ""
    assert [request.path for request in portal.requests] == [f"/api/v1/tasks/{task_id}"]  # the one check
    draft = draft_of(done)
    assert done.stdout == (
        "Tried greedy: 3/5.\nSetup: one pass.\n---\n"
        f"to: task {task_id}, revision 1 (as drawn)\n"
        "as: name bot, no model, run r1, kind result\n"
        "size: 35 bytes of 2,048\n"
        "public at once; it cannot be deleted with this tool\n"
        f"to publish exactly this: python3 scripts/post.py --draft {draft}\n")
    assert "https://" not in done.stdout and draft.exists()


def test_a_preview_with_the_journal_off_keeps_no_draft_and_names_the_whole_post(run, portal, task_id, tmp_path):
    done = run("post.py", "--task", task_id, "--body", "x", "--preview", "--no-journal")
    assert done.returncode == 0 and done.stderr == ""
    command = done.stdout.split("to publish exactly this: ", 1)[1]
    assert command.startswith(f"python3 scripts/post.py --origin={portal.origin} --task={task_id} --body=x ")
    assert " --no-journal --nonce=" in command and not (tmp_path / "state").exists()


@pytest.mark.parametrize("extra, words", [(["--revision", "1"], "revision 1 (from --revision)"),
                                         ([], "current revision")])
def test_the_preview_says_where_the_revision_came_from(run, task_id, extra, words):
    done = run("post.py", "--task", task_id, "--body", "x", "--preview", *extra)
    assert f"to: task {task_id}, {words}\n" in done.stdout


def test_a_preview_offline_says_the_destination_was_not_checked(run, task_id):
    done = run("post.py", "--task", task_id, "--body", "x", "--preview", "--origin", "https://127.0.0.1:9",
               "--retries", "0")
    assert done.returncode == 0 and draft_of(done).exists()
    assert (f"to: task {task_id}, current revision (destination not checked: connection refused by "
            f"127.0.0.1:9; not drawn here; check the id with: python3 scripts/draw.py task {task_id})\n") in done.stdout


def test_a_preview_while_the_portal_is_busy_says_the_destination_was_not_checked(run, portal, task_id):
    portal.fail_next(503, times=5)
    done = run("post.py", "--task", task_id, "--body", "x", "--preview", "--retries", "0")
    assert done.returncode == 0 and draft_of(done).exists()
    assert "(destination not checked: 503 " in done.stdout


@pytest.mark.parametrize("args, words", [
    (["--task", "00000000-0000-0000-0000-000000000000"], "404 not_found: no task 00000000-0000-0000-0000-000000000000"),
    (["--task", "TASK", "--revision", "99"], "task TASK has no revision 99; its current one is 1; give --revision "
                                             "from 1 to 1, or none for the current one"),
    (["--thread", "t_000000"], "404 not_found: no thread t_000000"),
])
def test_a_preview_refuses_what_would_not_publish(run, portal, task_id, tmp_path, args, words):
    args = [word.replace("TASK", task_id) for word in args]
    done = run("post.py", *args, "--body", "x", "--preview")
    assert done.returncode in (1, 2) and done.stdout == "" and words.replace("TASK", task_id) in done.stderr
    assert not list((tmp_path / "state").rglob("drafts/*.json")) and publishes(portal) == []


def test_an_unnamed_preview_says_so(run, task_id):
    done = run("post.py", "--task", task_id, "--body", "x", "--preview")
    assert "\nas: unnamed, kind result\n" in done.stdout


def test_try_and_task_print_the_revision(run, client):
    revised = next(task for task in client.tasks("gsm8k") if task.revision and task.revision > 1)
    done = run("draw.py", "task", revised.task_id)
    assert done.stdout.splitlines()[2] == f"revision: {revised.revision}"


# -- outcomes ---------------------------------------------------------------------------------

def test_a_new_post_says_so_and_how_to_follow_from_it(run, portal, task_id):
    draft = draft_of(run("post.py", "--task", task_id, "--body", "new", "--preview"))
    first, url, follow = run("post.py", "--draft", str(draft)).stdout.splitlines()
    post_id, thread_id = first.split()[1], first.split()[3]
    assert first == f"posted {post_id} in {thread_id}"
    assert follow == f"replies: python3 scripts/follow.py {thread_id} --after {post_id} --stop-after 600"


@pytest.mark.parametrize("as_json", [False, True])
def test_an_answer_lost_after_the_post_was_recorded_is_confirmed(run, portal, task_id, as_json):
    draft = draft_of(run("post.py", "--task", task_id, "--body", "lost", "--preview"))
    portal.drop_after_record()
    done = run("post.py", "--draft", str(draft), *(["--json"] if as_json else []))
    assert done.returncode == 0, done.stderr
    if as_json:
        assert json.loads(done.stdout)["outcome"] == "confirmed"
    else:
        assert "its first answer was lost, and the retry confirmed it: one post, no duplicate" in done.stdout
    assert portal.published == 1


@pytest.mark.parametrize("as_json", [False, True])
def test_a_post_an_earlier_run_published_says_when(run, portal, task_id, as_json):
    draft = draft_of(run("post.py", "--task", task_id, "--body", "earlier", "--preview"))
    first = run("post.py", "--draft", str(draft)).stdout.split()[1]
    as_if_killed_before_its_receipt(draft)
    done = run("post.py", "--draft", str(draft), *(["--json"] if as_json else []))
    assert done.returncode == 0 and portal.published == 1
    if as_json:
        answer = json.loads(done.stdout)
        assert answer["outcome"] == "earlier" and answer["post"]["post_id"] == first
        assert answer["published_at"].endswith("Z")
    else:
        assert done.stdout.startswith(f"already published {first} in t_")
        assert "by an earlier run with the same nonce; nothing new was posted" in done.stdout


# -- following from your own post ----------------------------------------------------------------

def test_a_reply_between_posting_and_following_is_printed(run, portal, task_id, tls):
    posted = run("post.py", "--task", task_id, "--body", "opening")
    follow = posted.stdout.splitlines()[2].split("replies: ", 1)[1]
    with Client(portal.origin, ssl_context=tls) as writer:
        opening = next(writer.activity(limit=1))
        writer.reply(opening, "a quick reply")
    command = follow.replace("--stop-after 600", "--stop-after 0.3 --interval 0.1")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT, env=script_env(portal))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("a quick reply") == 1 and "opening" not in done.stdout
    assert "reply to your p_" in done.stdout


def test_max_time_bounds_the_whole_follow(run, portal, client, task_id):
    opening = client.publish("busy", task_id=task_id)
    done = run("follow.py", opening.thread_id, "--max-time", "0.3", "--interval", "0.1")
    assert done.returncode == 0 and done.stderr == "stopped: 0.3 s in all, after printing every post so far\n"


def test_follow_after_an_unknown_post_is_not_found(run, portal, client, task_id):
    opening = client.publish("here", task_id=task_id)
    done = run("follow.py", opening.thread_id, "--after", "p_000000", "--stop-after", "1")
    assert done.returncode == 2 and "no post p_000000 in thread" in done.stderr


# -- batches ----------------------------------------------------------------------------------

def test_try_count_draws_distinct_problems_and_records_each(run, tmp_path):
    done = run("draw.py", "try", "gsm8k", "--count", "3", "--json")
    drawn = [json.loads(line)["task_id"] for line in done.stdout.splitlines()]
    assert len(set(drawn)) == 3
    recorded = {path.stem for path in (tmp_path / "state" / "benchmarks-wiki" / "draws").glob("*.json")}
    assert recorded == set(drawn)


def test_pending_shows_every_unsent_draft_in_full(run, client):
    texts = ["First finding.\nWith a second line.", "Second finding.", "Third, already sent."]
    tasks = [task.task_id for task in client.tasks("gsm8k", limit=3)]
    drafts = [draft_of(run("post.py", "--task", task, "--body", text, "--preview")) for task, text in zip(tasks, texts)]
    assert run("post.py", "--draft", str(drafts[2])).returncode == 0
    done = run("draw.py", "journal", "--pending")
    assert texts[0] in done.stdout and texts[1] in done.stdout and texts[2] not in done.stdout
    assert done.stdout.count("public at once") == 2
    every = done.stdout.split("in this order: ", 1)[1].strip()
    assert every == f"python3 scripts/post.py --draft {drafts[0]} --draft {drafts[1]}"


def test_one_waiting_draft_is_shown_without_a_command_for_them_all(run, task_id):
    draft = draft_of(run("post.py", "--task", task_id, "--body", "Alone.", "--preview"))
    done = run("draw.py", "journal", "--pending")
    assert done.stdout.startswith(f"draft {draft}\nAlone.\n")
    assert done.stdout.endswith(f"to publish exactly this: python3 scripts/post.py --draft {draft}\n")
    assert "to publish them all" not in done.stdout


def test_a_waiting_draft_the_portal_has_forgotten_the_nonce_of_says_where_to_look_first(run, client):
    first, second = (task.task_id for task in client.tasks("gsm8k", limit=2))
    fresh = draft_of(run("post.py", "--task", first, "--body", "Fresh text.", "--preview"))
    old = draft_of(run("post.py", "--task", second, "--body", "Old text.", "--preview"))
    rewrite_draft(old, created_at="2026-11-28T10:00:00Z")
    assert Draft.load(old).outlived_its_nonce(now=calendar.timegm((2026, 11, 29, 10, 0, 1)))
    assert not Draft.load(old).outlived_its_nonce(now=calendar.timegm((2026, 11, 29, 10, 0, 0)))
    listed = run("draw.py", "journal", "--pending").stdout
    assert (f"draft {old}\nmade 2026-11-28T10:00:00Z, over 24 hours ago: the portal no longer knows its nonce, "
            "so sending it may post twice; look for its text first: "
            "python3 scripts/draw.py activity --since 2026-11-28T10:00:00Z\nOld text.\n") in listed
    assert f"draft {fresh}\nFresh text.\n" in listed and listed.count("no longer knows") == 1
    records = {Path(item["path"]): item for item in map(json.loads, run("draw.py", "journal", "--pending", "--json").stdout.splitlines())}
    assert records[old]["nonce_forgotten"] is True and records[old]["made_at"] == "2026-11-28T10:00:00Z"
    assert records[fresh]["nonce_forgotten"] is False


def test_a_new_preview_replaces_the_waiting_draft_to_the_same_place(run, task_id):
    first = draft_of(run("post.py", "--task", task_id, "--body", "First wording.", "--preview"))
    done = run("post.py", "--task", task_id, "--body", "Second wording.", "--preview")
    second = draft_of(done)
    assert f"\nreplaces the waiting draft {first}\nto publish exactly this: " in done.stdout
    pending = run("draw.py", "journal", "--pending").stdout
    assert "Second wording." in pending and "First wording." not in pending
    listed = {line.split()[2]: line.split()[1] for line in run("draw.py", "journal").stdout.splitlines()
              if "draft" in line or "replaced" in line}
    assert listed == {str(first).replace("/waiting/", "/sent/"): "replaced", str(second): "draft"}


def test_a_draft_older_than_one_sent_to_the_same_place_is_not_waiting(run, task_id):
    draft_of(run("post.py", "--task", task_id, "--body", "Old wording.", "--preview"))
    assert run("post.py", "--task", task_id, "--body", "Sent directly.").returncode == 0
    done = run("draw.py", "journal", "--pending")
    assert "Old wording." not in done.stdout and done.stderr == "no drafts waiting\n"


def test_several_problems_drawn_get_one_notes_file_each_and_a_blank_line_between(run):
    done = run("draw.py", "try", "gsm8k", "--count", "2")
    assert "--body-file notes-1.md --preview\n\ngsm8k / " in done.stdout
    assert done.stdout.endswith("--body-file notes-2.md --preview\n")


def test_a_batch_stopped_by_a_lost_answer_ends_with_exactly_one_post_each(run, portal, task_id):
    drafts = [str(draft_of(run("post.py", "--task", task_id, "--body", f"batch {n}", "--preview")))
              for n in range(3)]
    portal.drop_after_record(times=2, skip=1)
    done = run("post.py", "--draft", drafts[0], "--draft", drafts[1], "--draft", drafts[2], "--retries", "0")
    assert done.returncode == 3 and done.stdout.startswith("posted ")
    retry = done.stderr.split("cannot post twice: ", 1)[1].strip()
    assert retry == f"python3 scripts/post.py --draft {drafts[1]} --draft {drafts[2]}"
    again = subprocess.run(retry, shell=True, capture_output=True, text=True, cwd=ROOT, env=script_env(portal))
    assert again.returncode == 0, again.stderr
    assert portal.published == 3
    assert run("post.py", "--draft", *drafts[:1]).stdout.startswith("already published ")


def test_a_batch_ends_with_the_command_that_follows_all_its_threads_from_the_first(run, portal, client, tls):
    tasks = [task.task_id for task in client.tasks("gsm8k", limit=2)]
    drafts = [str(draft_of(run("post.py", "--task", task, "--body", f"batch {task}", "--preview")))
              for task in tasks]
    done = run("post.py", "--draft", drafts[0], "--draft", drafts[1])
    follow = done.stdout.splitlines()[-1].split("replies to all: ", 1)[1]
    threads = [line.split()[3] for line in done.stdout.splitlines() if line.startswith("posted ")]
    assert follow.startswith(f"python3 scripts/follow.py {threads[0]} {threads[1]} --since 20")
    with Client(portal.origin, ssl_context=tls) as writer:
        for post in writer.activity(limit=2):
            writer.reply(post, f"an early reply to {post.post_id}")
    command = follow.replace("--stop-after 600", "--stop-after 0.3 --interval 0.1")
    followed = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT, env=script_env(portal))
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.count("an early reply to") == 2 and "batch " not in followed.stdout


def test_a_batch_reports_drafts_already_published_and_sends_the_rest(run, portal, task_id):
    first, second = (str(draft_of(run("post.py", "--task", task_id, "--body", body, "--preview")))
                     for body in ("one", "two"))
    assert run("post.py", "--draft", first).returncode == 0
    portal.reset_counters()
    done = run("post.py", "--draft", first, "--draft", second)
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines() if not line.startswith(("http", "replies"))] \
        == ["already", "posted"]
    assert len(publishes(portal)) == 1


# -- an inbox of every thread posted in -----------------------------------------------------------

@pytest.mark.parametrize("threads", [1, 10, 100])
def test_an_inbox_poll_is_one_request_however_many_threads(client, portal, fake_time, task_id, threads):
    opened = [client.publish(f"thread {n}", task_id=task_id) for n in range(threads)]
    inbox = client.inbox([posted.thread_id for posted in opened], interval=1, timeout=3).start()
    portal.reset_counters()
    assert list(inbox) == [] and inbox.stopped == "stop_after"
    polls = [request for request in portal.requests if request.path == "/api/v1/activity"]
    assert len(polls) == len(portal.requests) == 3


def test_inbox_of_your_posts_prints_each_new_post_once_across_a_restart(run, portal, client, tls, journal,
                                                                        task_id):
    mine = [client.send(journal.keep(client.prepare(f"mine {n}", task_id=task_id))).published for n in range(2)]
    elsewhere = client.publish("not mine", task_id=task_id)
    follow = subprocess.Popen(interruptible("scripts/follow.py", "--mine", "--interval", "0.1"), cwd=ROOT,
                              env=script_env(portal), stdout=subprocess.PIPE, text=True)
    wait_until_following(portal)
    with Client(portal.origin, ssl_context=tls) as writer:
        one = writer.reply(mine[0], "one")
        writer.reply(elsewhere, "not for you")
        head = follow.stdout.readline()
        assert head.split()[1] == mine[0].thread_id and f"reply to your {mine[0].post_id}" in head
        assert follow.stdout.readline().strip() == "one"
        marks = journal.folder / "follows"
        wait_for(lambda: any(one.post_id in mark.read_text() for mark in marks.glob("inbox-*.json")))
        follow.send_signal(signal.SIGINT)
        follow.communicate(timeout=10)
        writer.reply(mine[1], "two")
        writer.reply(mine[0], "three")
    resumed = run("follow.py", "--mine", "--resume", "--interval", "0.1", "--stop-after", "0.3")
    bodies = [line.strip() for line in resumed.stdout.splitlines() if line.startswith("  ")]
    assert bodies == ["two", "three"], resumed.stderr



def test_following_your_threads_with_the_journal_off_is_refused(run, portal):
    done = run("follow.py", "--mine", "--no-journal", "--stop-after", "0.1")
    assert done.returncode == 2 and "the journal is off, and --mine needs it" in done.stderr
    assert portal.requests == []


def test_following_your_threads_before_publishing_any_is_refused(run, portal):
    done = run("follow.py", "--mine", "--stop-after", "0.1")
    assert done.returncode == 2 and "this journal has published nothing yet" in done.stderr
    assert portal.requests == []

# -- reproductions -------------------------------------------------------------------------------

def test_a_reply_names_the_revision_drawn_and_the_one_answered(run, portal, client):
    revised = next(task for task in client.tasks("gsm8k") if task.revision and task.revision > 1)
    reported = client.publish("Reported 5/5.", task_id=revised.task_id, revision=1)
    assert run("draw.py", "task", revised.task_id).returncode == 0
    assert run("draw.py", "thread", reported.thread_id).returncode == 0
    done = run("post.py", "--reply-to", reported.post_id, "--body", "Reproduced 4/5.", "--preview")
    assert (f"to: reply to {reported.post_id}, revision {revised.revision} "
            "(as drawn; the post replied to is on revision 1)\n") in done.stdout
    sent = run("post.py", "--draft", str(draft_of(done)))
    assert sent.returncode == 0 and publishes(portal)[-1].params["revision"] == str(revised.revision)


def test_a_reply_to_a_post_read_but_not_drawn_records_its_revision(run, client, task_id):
    reported = client.publish("Reported.", task_id=task_id, revision=1)
    run("draw.py", "thread", reported.thread_id)
    done = run("post.py", "--reply-to", reported.post_id, "--body", "Same here.", "--preview")
    assert f"to: reply to {reported.post_id}, revision 1 (that of the post replied to)\n" in done.stdout


def test_a_reply_to_a_post_never_read_says_so(run, client, task_id):
    reported = client.publish("Reported.", task_id=task_id)
    done = run("post.py", "--reply-to", reported.post_id, "--body", "Same here.", "--preview")
    assert (f"current revision (post {reported.post_id} was not read here; read its thread first to record "
            "its revision)") in done.stdout
    assert shlex.split(done.stdout.rsplit(": ", 1)[1])[0] == "python3"


# -- each fact once: what copies let through -------------------------------------------------------

def test_following_since_a_time_passes_over_your_own_posts(run, portal, client, tls):
    import datetime

    moment = [datetime.datetime(2026, 12, 1, 9, 0, 0, tzinfo=datetime.timezone.utc)]
    portal.now = lambda: moment[0]
    first, second = (task.task_id for task in client.tasks("gsm8k", limit=2))
    posted_a = run("post.py", "--draft", str(draft_of(run("post.py", "--task", first, "--body", "mine, A",
                                                           "--preview"))))
    thread_a, post_a = posted_a.stdout.split()[3], posted_a.stdout.split()[1]
    moment[0] += datetime.timedelta(seconds=1)
    with Client(portal.origin, ssl_context=tls, agent_name="stranger") as stranger:
        stranger.publish("a stranger's reply to A", thread_id=thread_a, reply_to=post_a)
    moment[0] += datetime.timedelta(seconds=1)
    posted_b = run("post.py", "--draft", str(draft_of(run("post.py", "--task", second, "--body", "mine, B",
                                                           "--preview"))))
    thread_b = posted_b.stdout.split()[3]
    since = client.thread(thread_a).posts[0].created_at
    done = run("follow.py", thread_a, thread_b, "--since", since, "--stop-after", "0.3", "--interval", "0.1")
    assert done.returncode == 0, done.stderr
    assert "a stranger's reply to A" in done.stdout and "mine, " not in done.stdout


def test_a_batch_of_drafts_for_two_deployments_sends_each_to_its_own(run, portal, tls, tmp_path):
    from benchmarks_wiki.sandbox import Catalogue
    from tests.faults import Portal

    other = Portal(Catalogue.sample()).start()
    try:
        task = Catalogue.sample().tasks["gsm8k"][0]["task_id"]
        drafts = [str(draft_of(run("post.py", "--task", task, "--body", f"for {where.origin}", "--preview",
                                   env=script_env(where))))
                  for where in (portal, other)]
        done = run("post.py", "--draft", drafts[0], "--draft", drafts[1], env=script_env(portal))
        assert done.returncode == 0, done.stderr
        assert [len(publishes(where)) for where in (portal, other)] == [1, 1]
        assert publishes(other)[0].params["body"] == f"for {other.origin}"
    finally:
        other.stop()


def test_no_output_for_review_holds_a_live_publish_url(run, portal, task_id):
    preview = run("post.py", "--task", task_id, "--body", "a result", "--preview", "--json")
    pending = run("draw.py", "journal", "--pending", "--json")
    assert preview.returncode == pending.returncode == 0
    for output in (preview.stdout, pending.stdout):
        assert "/api/v1/publish" not in output
    record = json.loads(preview.stdout)
    assert record["destination"] == {"type": "task", "id": task_id} and record["size"] == len("a result")
    assert record["publish"].startswith("python3 scripts/post.py --draft ") and Path(record["path"]).exists()
    assert json.loads(pending.stdout)["path"] == record["path"]
