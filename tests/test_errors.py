"""Errors by meaning: one closed set of reasons, each with its message and remedy in one table,
a class for each thing that can happen, and an outcome that only a write can leave unknown."""

import ast
import re
import string

import pytest

from benchmarks_wiki import ApiError, Client, TransportError, ValidationError
from benchmarks_wiki.cli.context import remedy
from benchmarks_wiki.errors import (MESSAGES, BenchmarksWikiError, NotFound, Refused, Unavailable, UnreadableAnswer,
                                    fail)
from benchmarks_wiki.transport import MockTransport, NetworkFailure, Response
from tests.conftest import ROOT

PACKAGE = ROOT / "scripts" / "benchmarks_wiki"
TASK = "317ef6cc-69a8-59a3-a347-e37d3399eb10"
# Words only a Python caller can act on: a call, a keyword argument, a class of the library.
PYTHON_WORDS = re.compile(r"\w\(|\w=\w|\bClient\b|\bJournal\b|PreparedPost|allow_sensitive")


def reasons_raised():
    """Each reason the package passes to fail() (or to the helpers that call it), by where."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "fail" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                yield f"{path.name}:{node.lineno}", node.args[0].value


def fields(template):
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_reason_raised_is_in_the_table_and_every_entry_is_raised():
    raised = dict(reasons_raised())
    assert {reason for reason in raised.values() if reason not in MESSAGES} == set()
    indirect = {"unreadable", "answer_too_large", "not_found", "refused", "busy", "busy_wait", "server_error",
                "untrusted_certificate", "host_not_found", "timed_out", "connection_refused", "proxy_refused",
                "tls_failed", "connection_failed", "wrong_scheme"}  # chosen by the retry policy, or by unreadable()
    assert set(MESSAGES) - set(raised.values()) - indirect == set()
    errors = (PACKAGE / "errors.py").read_text(encoding="utf-8")
    sources = (PACKAGE / "transport.py").read_text(encoding="utf-8") + errors[errors.index("def fail("):]
    assert [reason for reason in indirect if f'"{reason}"' not in sources] == []


@pytest.mark.parametrize("reason", sorted(MESSAGES))
def test_each_reason_has_words_for_the_library_and_the_command_line(reason):
    from benchmarks_wiki.cli.messages import ADVICE

    entry, advice = MESSAGES[reason], ADVICE.get(reason)
    made = fields(entry.text) | fields(entry.hint or "") | {"status", "code", "attempts", "write", "sent"}
    assert fields(entry.hint or "") <= fields(entry.text) | fields(entry.hint or "")
    if advice:
        assert fields(advice) - {"command"} <= made, f"{reason}: advice names a fact the error lacks"
        assert advice != entry.hint and not PYTHON_WORDS.search(advice), reason
    # The library's words name no option of the command line.
    assert not re.search(r"(?<![\w-])--[a-z]", entry.text + (entry.hint or "")), reason
    assert issubclass(entry.kind, BenchmarksWikiError)


def test_the_command_line_spells_its_own_remedy():
    error = fail("introduction_only", slug="a b")
    spelled = remedy(error, lambda name: f"python3 scripts/draw.py {name}")
    assert spelled == "read its introduction with: python3 scripts/draw.py benchmark 'a b'"
    assert error.hint == "read its introduction with Client.benchmark()"
    missing = fail("not_found", status=404, code="not_found", message="no task x")
    assert remedy(missing, str, when_missing=None) == "check the id"
    assert remedy(missing, lambda name: f"draw.py {name}", when_missing="try").endswith("draw.py try")


def test_each_kind_of_error_exits_with_its_own_code_decided_in_one_map():
    from benchmarks_wiki.cli.table import EXIT_CODES, exit_code
    from benchmarks_wiki.errors import LocalError

    assert EXIT_CODES == {ApiError: 1, ValidationError: 2, TransportError: 3, LocalError: 4}
    for reason, entry in MESSAGES.items():
        facts = {name: "x" for name in fields(entry.text) | fields(entry.hint or "")}
        facts.update(seconds=1.0, wait=1.0, size=1, limit=1, found=[])
        if issubclass(entry.kind, ApiError):
            facts.update(status=500, code="c")
        error = fail(reason, **facts)
        assert type(error) is entry.kind
        expected = next(code for kind, code in EXIT_CODES.items() if isinstance(error, kind))
        assert exit_code(error) == expected
        # Nothing the portal did not answer exits 1.
        assert (expected == 1) is isinstance(error, ApiError), reason


def test_a_lock_the_portal_never_saw_is_not_a_refusal_of_the_portal_nor_of_the_arguments():
    from benchmarks_wiki.cli.table import exit_code
    from benchmarks_wiki.errors import JournalError, SkillError

    for error in (fail("lock_timeout", path="p", seconds=60), fail("cannot_write", path="p", problem="full")):
        assert isinstance(error, (JournalError, SkillError)) and exit_code(error) == 4


def answering(*responses):
    """A transport that gives these answers in turn, and the requests it was sent."""
    sent, answers = [], list(responses)

    def handle(request):
        sent.append(request)
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, BaseException):
            raise NetworkFailure(answer, "wait", "portal.test:443")
        return answer

    return MockTransport(handle), sent


def busy(seconds=None):
    headers = {"Retry-After": str(seconds)} if seconds is not None else {}
    return Response(503, b'{"error": {"code": "unavailable", "message": "down"}}', headers)


def client_with(transport, fake_time, **options):
    return Client("https://portal.test", transport=transport, sleep=fake_time.sleep, clock=fake_time.clock,
                  **options)


def test_a_failed_read_never_says_a_post_may_exist(fake_time):
    for answer in (busy(), ConnectionResetError(104, "reset"), Response(200, b"not json"),
                   Response(302, b"", {"Location": "http://portal.test/api/v1/stats"})):
        transport, _ = answering(answer)
        with client_with(transport, fake_time) as client:
            with pytest.raises(BenchmarksWikiError) as caught:
                client.stats()
        assert not caught.value.outcome_unknown and "posted" not in str(caught.value)


def test_a_write_that_may_be_recorded_says_how_to_send_the_same_request(fake_time):
    for answer in (busy(), ConnectionResetError(104, "reset"), Response(201, b"{}")):
        transport, sent = answering(answer)
        with client_with(transport, fake_time) as client:
            with pytest.raises(BenchmarksWikiError) as caught:
                client.publish("a result", task_id=TASK)
        error = caught.value
        assert error.outcome_unknown and error.write
        assert error.hint.startswith("send the same request again") and "try again" not in error.hint
        assert len({request.url for request in sent}) == 1  # every attempt the same request, nonce and all


def test_an_error_after_a_retry_says_it_came_after_two_attempts(fake_time):
    transport, sent = answering(busy())
    with client_with(transport, fake_time, retries=1) as client:
        with pytest.raises(Unavailable) as caught:
            client.stats()
    assert len(sent) == 2 and "(after 2 attempts)" in str(caught.value)


def test_the_wait_the_portal_asked_for_is_said(fake_time):
    transport, sent = answering(busy(2))
    with client_with(transport, fake_time) as client:
        with pytest.raises(Unavailable) as caught:
            client.stats()
    assert caught.value.retry_after == 2 and "the portal asks to wait 2 s" in caught.value.hint
    assert len(sent) == 4 and fake_time.slept == [2, 2, 2]
    transport, _ = answering(busy(2))
    with client_with(transport, fake_time) as client:
        with pytest.raises(Unavailable) as caught:
            client.publish("a result", task_id=TASK)
    assert "after 2 s, send the same request again" in caught.value.hint


@pytest.mark.parametrize("status, kind, refused", [(404, NotFound, True), (400, Refused, True), (414, Refused, True),
                                                   (429, Unavailable, False), (503, Unavailable, False),
                                                   (500, ApiError, False)])
def test_each_error_status_is_told_by_its_class(status, kind, refused, fake_time):
    transport, _ = answering(Response(status, b'{"error": {"code": "c", "message": "m"}}'))
    with client_with(transport, fake_time, retries=0) as client:
        with pytest.raises(ApiError) as caught:
            client.publish("a result", task_id=TASK)
    assert type(caught.value) is kind and isinstance(caught.value, Refused) == refused
    assert caught.value.outcome_unknown == (not refused)


def test_an_error_body_needs_both_a_code_and_a_message(fake_time):
    for detail in ({"code": "c", "message": 5}, {"code": 5, "message": "m"}, {"code": "c"}):
        transport, _ = answering(Response(400, f'{{"error": {__import__("json").dumps(detail)}}}'.encode(),
                                          {"Content-Type": "application/json"}))
        with client_with(transport, fake_time) as client:
            with pytest.raises(Refused) as caught:
                client.stats()
        assert caught.value.code == "http_400" and caught.value.message.startswith("the portal answered 400")


def test_an_answer_the_client_cannot_read_is_its_own_class(fake_time):
    transport, _ = answering(Response(200, b"[1, 2]"))
    with client_with(transport, fake_time) as client:
        with pytest.raises(UnreadableAnswer, match="unreadable answer from /api/v1/stats"):
            client.stats()


def test_every_flag_a_message_names_is_a_flag_of_the_command_line():
    from benchmarks_wiki.cli.messages import ADVICE, NOTES, POST_ADVICE, USAGE
    from benchmarks_wiki.cli.table import COMMANDS, COMMON

    def flags_of(command):
        return {flag for argument in command.arguments for flag in argument.flags} | {
            flag for action in command.actions for flag in flags_of(action)}

    known = {flag for command in COMMANDS for flag in flags_of(command)}
    known |= {flag for argument in COMMON for flag in argument.flags} | {"--help", "--version"}
    words = [text for message in MESSAGES.values() for text in message if isinstance(text, str)]
    words += [*NOTES.values(), *POST_ADVICE.values(), *USAGE.values(), *ADVICE.values()]
    named = {flag for text in words for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", text)}
    assert named - known == set()


def test_text_that_cannot_be_sent_as_utf8_names_the_character_counting_from_one():
    from benchmarks_wiki.rules import check_text

    with pytest.raises(ValidationError, match=r"the body is not valid UTF-8 \(character 3\)"):
        check_text("ab\udc80c", "the body")
