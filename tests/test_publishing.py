"""The run of one post from Python, without the command line: prepare, inspect, keep, send once."""

from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.conftest import publishes

from benchmarks_wiki.errors import DraftError, Refused
from benchmarks_wiki import (CONFIRMED, EARLIER, NEW, ApiError, Client, Draft, Journal, RetryPolicy,
                             ValidationError)



@pytest.fixture
def task_id(client):
    return next(client.tasks("gsm8k")).task_id


@pytest.fixture
def journal(tmp_path):
    return Journal.open(tmp_path / "journal")


def test_a_prepared_post_says_exactly_what_would_be_sent(client, portal, task_id):
    portal.reset_counters()
    prepared = client.prepare("Tried it: 3/5.  \r\n", task_id=task_id, revision=1, agent_name="bot",
                              kind="result")
    assert portal.requests == []
    assert prepared.body == "Tried it: 3/5." and prepared.size == 14 and len(prepared.nonce) == 24
    assert prepared.destination == ("task", task_id) and prepared.revision == 1
    assert prepared.revision_from == "given"
    query = dict(parse_qsl(urlsplit(prepared.url).query))
    assert query == prepared.fields == {"body": "Tried it: 3/5.", "task_id": task_id, "revision": "1",
                                        "agent_name": "bot", "kind": "result", "nonce": prepared.nonce}
    assert prepared.url.startswith(portal.origin + "/api/v1/publish?body=")


def test_prepare_and_publish_check_for_secrets_unless_told_not_to(client, portal, task_id):
    body = "Setup from /home/alice/run.sh"
    portal.reset_counters()
    for call in (client.prepare, client.publish):
        with pytest.raises(ValidationError) as caught:
            call(body, task_id=task_id)
        assert caught.value.reason == "sensitive" and "allow_sensitive=True" in str(caught.value)
    assert portal.requests == []
    assert client.prepare(body, task_id=task_id, allow_sensitive=True).body == body
    assert client.publish(body, task_id=task_id, allow_sensitive=True).created


def test_a_draft_is_sent_once_and_then_answers_from_its_receipt(client, portal, task_id, journal):
    draft = journal.keep(client.prepare("once", task_id=task_id))
    portal.reset_counters()
    first = client.send(draft)
    assert (first.how, first.sent, first.published.created) == (NEW, True, True)
    again = client.send(Draft.load(draft.path))
    assert (again.how, again.sent) == (EARLIER, False)
    assert again.published.post_id == first.published.post_id and again.earlier_at
    assert len(publishes(portal)) == 1 and portal.published == 1


def test_resend_sends_the_same_request_and_the_portal_replays_it(client, portal, task_id, journal):
    draft = journal.keep(client.prepare("again", task_id=task_id))
    client.send(draft)
    replay = client.send(draft, resend=True)
    assert (replay.how, replay.sent) == (EARLIER, True)
    first, second = publishes(portal)
    assert first.params == second.params and portal.published == 1


def test_an_answer_lost_after_the_post_was_recorded_is_confirmed_not_duplicated(client, portal, task_id,
                                                                              journal):
    draft = journal.keep(client.prepare("lost answer", task_id=task_id))
    portal.drop_after_record()
    outcome = client.send(draft)
    assert outcome.how == CONFIRMED and outcome.published.created is False
    assert portal.published == 1 and len(publishes(portal)) == 2


def test_an_answer_a_gateway_lost_is_confirmed_not_taken_for_an_earlier_run(client, portal, task_id,
                                                                           journal):
    draft = journal.keep(client.prepare("behind a gateway", task_id=task_id))
    portal.fail_after_record(502)
    outcome = client.send(draft)
    assert outcome.how == CONFIRMED and portal.published == 1


def test_a_prepared_post_sent_twice_is_one_post(client, portal, task_id):
    prepared = client.prepare("twice", task_id=task_id)
    assert client.send(prepared).how == NEW
    assert client.send(prepared).how == EARLIER and portal.published == 1


def test_a_draft_refused_for_good_is_not_sent_again(client, portal, task_id, journal):
    draft = journal.keep(client.prepare("too new", task_id=task_id, revision=99))
    with pytest.raises(ApiError) as caught:
        client.send(draft)
    assert isinstance(caught.value, Refused) and not caught.value.outcome_unknown
    portal.reset_counters()
    with pytest.raises(ValidationError) as refused:
        client.send(draft)
    assert refused.value.reason == "refused_draft" and portal.requests == []
    assert journal.pending() == []


def test_a_draft_changed_by_hand_is_refused(client, task_id, journal):
    draft = journal.keep(client.prepare("exact", task_id=task_id))
    draft.path.write_text(draft.path.read_text().replace("exact", "edited"))
    with pytest.raises(ValidationError) as caught:
        Draft.load(draft.path)
    assert caught.value.reason == "changed_draft"


def test_a_draft_is_sent_only_to_its_own_portal(client, task_id, journal, tls):
    draft = journal.keep(client.prepare("here", task_id=task_id))
    with Client("https://elsewhere.example", ssl_context=tls) as other, pytest.raises(ValidationError) as caught:
        other.send(draft)
    assert "the draft is for" in str(caught.value)


def test_publish_keeps_the_documented_behaviour(client, portal, task_id):
    posted = client.publish("documented", task_id=task_id, nonce="n" * 16)
    replayed = client.publish("documented", task_id=task_id, nonce="n" * 16)
    assert posted.created and not replayed.created and replayed.post_id == posted.post_id


def test_the_retry_policy_is_one_object():
    policy = RetryPolicy()
    assert policy.retries == 3 and policy.statuses == frozenset({429, 502, 503, 504})
    assert policy.wait(1, jitter=1.0) == 0.5 and policy.wait(3, jitter=0.5) == 1.0
    assert policy.wait(4, jitter=1.0) is None
    assert policy.wait(1, jitter=1.0, status=400) is None
    assert policy.wait(1, jitter=1.0, status=503, retry_after=7) == 7
    assert policy.wait(1, jitter=1.0, status=429, retry_after=31) is None


def test_one_backoff_is_capped():
    policy = RetryPolicy(retries=10)
    assert policy.wait(10, jitter=1.0) == policy.max_backoff == 10.0
    assert policy.wait(5, jitter=1.0) == 8.0


def rewritten(draft, change):
    """The draft's record changed by ``change``, signed again with its journal's secret."""
    from tests.conftest import rewrite_draft

    rewrite_draft(draft.path, change)


@pytest.mark.parametrize("content", ['{"format": "something else"}', '["benchmarks-wiki draft 3"]',
                                     '{"request": {}}', '"text"'])
def test_a_file_that_is_not_a_draft_is_refused_as_such(client, task_id, journal, content):
    path = journal.keep(client.prepare("a draft", task_id=task_id)).path
    path.write_text(content)
    with pytest.raises(DraftError) as caught:
        Draft.load(path)
    assert caught.value.reason == "not_a_draft"


def test_a_draft_outside_a_journal_is_refused_as_no_draft(client, task_id, journal, tmp_path):
    draft = journal.keep(client.prepare("a draft", task_id=task_id))
    copied = tmp_path / "elsewhere" / draft.path.name
    copied.parent.mkdir()
    copied.write_bytes(draft.path.read_bytes())
    with pytest.raises(DraftError) as caught:
        Draft.load(copied)
    assert caught.value.reason == "not_a_draft"


def test_a_draft_written_by_hand_or_changed_is_refused(client, portal, task_id, journal):
    import json

    draft = journal.keep(client.prepare("exact", task_id=task_id))
    record = json.loads(draft.path.read_text())
    record["request"]["params"][0][1] = "changed"
    draft.path.write_text(json.dumps(record))
    portal.reset_counters()
    with pytest.raises(DraftError) as caught:
        client.send(Draft.load(draft.path))
    assert caught.value.reason == "changed_draft" and portal.requests == []


def test_a_draft_of_a_journal_whose_secret_others_can_read_is_refused(client, task_id, journal):
    import os

    draft = journal.keep(client.prepare("exact", task_id=task_id))
    os.chmod(journal.folder / "secret", 0o644)
    with pytest.raises(DraftError) as caught:
        Draft.load(draft.path)
    assert caught.value.reason == "journal_secret_exposed"


def body_of(record, value):
    record["request"]["params"][0][1] = value


@pytest.mark.parametrize("change, problem", [
    (lambda record: record["request"].update(path="/api/v1/stats"), "not a publish request"),
    (lambda record: record["request"].update(write=False), "not a publish request"),
    (lambda record: record["request"].update(params=[["body"]]), "params must be pairs"),
    (lambda record: record.pop("request"), "'request'"),
    (lambda record: body_of(record, "x" * 3000), "the limit is 2048"),
    (lambda record: body_of(record, "token gh" + "p_" + "a1B2" * 9), "a GitHub token"),
    (lambda record: body_of(record, "trailing  "), "a request the checks would not make"),
    (lambda record: record["request"]["params"].append(["admin", "1"]), "not a publish request"),
    (lambda record: record["request"]["params"].append(["revision", "\u0661"]), "a revision that is not a number"),
    (lambda record: record["request"].update(origin="https://elsewhere.test"), None),
    (lambda record: record["request"].update(origin="http://portal.test"), "writes need HTTPS"),
    (lambda record: record["request"]["params"].insert(1, ["task_id", "../../etc"]), "not a publish request"),
])
def test_a_draft_is_checked_again_as_a_post_made_now_would_be(client, portal, task_id, journal, change,
                                                               problem):
    draft = journal.keep(client.prepare("exact", task_id=task_id))
    rewritten(draft, change)
    portal.reset_counters()
    if problem is None:  # a draft for another origin is one; it goes only to that origin
        with pytest.raises(ValidationError) as caught:
            client.send(Draft.load(draft.path))
        assert caught.value.reason == "wrong_origin"
    else:
        with pytest.raises(DraftError) as caught:
            client.send(Draft.load(draft.path))
        assert caught.value.reason == "damaged_draft" and problem in caught.value.message
    assert portal.requests == []


def test_more_than_three_findings_are_listed_three_and_counted_after(client, task_id):
    body = "\n".join(f"from /home/user{n}/run.sh" for n in range(4))
    with pytest.raises(ValidationError) as caught:
        client.prepare(body, task_id=task_id)
    assert caught.value.message.count(" at line ") == 3 and "line 3, column 6 and 1 more" in caught.value.message
    with pytest.raises(ValidationError) as caught:
        client.prepare(body.rsplit("\n", 1)[0], task_id=task_id)  # three: each listed, none more
    assert caught.value.message.count(" at line ") == 3 and " more" not in caught.value.message


def test_a_draft_that_waived_the_secret_check_keeps_that_waiver(client, portal, task_id, journal):
    draft = journal.keep(client.prepare("from /home/alice", task_id=task_id, allow_sensitive=True))
    assert Draft.load(draft.path).post.allow_sensitive and client.send(Draft.load(draft.path)).published


def test_paths_are_taken_as_text_or_path_like(client, task_id, tmp_path):
    journal = Journal.open(str(tmp_path / "as text"))
    draft = journal.keep(client.prepare("mine", task_id=task_id))
    assert Draft.load(str(draft.path)) == Draft.load(draft.path)
    for bad in (5, None, b"\xff"):
        with pytest.raises(ValidationError):
            Draft.load(bad)
    with pytest.raises(ValidationError):
        Journal.open(5)


def test_the_package_says_its_annotations_are_true():
    from tests.conftest import SCRIPTS

    assert (SCRIPTS / "benchmarks_wiki" / "py.typed").exists()
