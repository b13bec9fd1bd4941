"""Text for people and agents, piece by piece: every unsafe code point made visible, and each
shape a field, a listing or an entry can take."""

import pytest

from benchmarks_wiki.cli import render, safe
from benchmarks_wiki.models import Benchmark, Task

# Written out here, apart from the code: C0 controls but tab and line feed, DEL and C1 controls,
# the Arabic letter mark, zero-width and direction marks, line and paragraph separators,
# embeddings and overrides, invisible operators and isolates, and the byte order mark.
UNSAFE = [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0), 0x061c, *range(0x200b, 0x2010),
          *range(0x2028, 0x202f), *range(0x2060, 0x2070), 0xfeff]
# Their neighbours, which are ordinary text.
SAFE = [0x20, 0x7e, 0xa0, 0x061b, 0x061f, 0x200a, 0x2010, 0x2027, 0x202f, 0x205f, 0x2070, 0xfefc, 0xff01]
# What a model reads and a person does not see: tag characters, the soft hyphen, the Mongolian
# vowel separator, variation selectors, Hangul fillers, and code points not yet assigned.
INVISIBLE = [0xe0000, 0xe0041, 0xe007f, 0x00ad, 0x180e, 0xfe00, 0xfe0f, 0xe0100, 0xe01ef, 0x3164, 0x115f,
             0xffa0, 0x034f, 0xfefe, 0x10ffff]


@pytest.mark.parametrize("code", UNSAFE, ids=hex)
def test_every_unsafe_code_point_is_made_visible(code):
    character = chr(code)
    for shown in (render.text(f"a{character}b"), render.line(f"a{character}b")):
        assert character not in shown and shown.startswith("a\\") and shown.endswith("b")


@pytest.mark.parametrize("code", INVISIBLE, ids=hex)
def test_every_invisible_code_point_is_made_visible_as_an_escape(code):
    shown = render.text(f"a{chr(code)}b")
    assert chr(code) not in shown and shown == f"a\\{'x' if code < 0x100 else 'u' if code <= 0xffff else 'U'}" \
        f"{code:0{2 if code < 0x100 else 4 if code <= 0xffff else 8}x}b"


@pytest.mark.parametrize("code", SAFE, ids=hex)
def test_ordinary_characters_are_left_alone(code):
    assert render.text(chr(code)) == render.line(chr(code)) == chr(code)


def test_a_tab_and_a_line_break_stay_in_text_but_not_on_a_line():
    assert render.text("a\tb\nc") == "a\tb\nc"
    assert render.line("a\tb\nc") == "a\\x09b\\x0ac"


def test_each_shape_of_a_field():
    assert render.field_value(["first", 2, 2.5]) == "  - first\n  - 2\n  - 2.5"
    assert render.field_value(["15 m", "45 m"], "choices") == "  A. 15 m\n  B. 45 m"
    assert render.field_value(list(range(27)), "choices").startswith("  - 0\n")
    assert render.field_value(["first", {"x": 1}]) == '  ["first",{"x":1}]'
    assert render.field_value({"x": [1]}) == '  {"x":[1]}'
    assert render.field_value(7) == "  7" and render.field_value("text\n") == "  text"
    assert render.field_value("one\n\nanswer: published") == "  one\n\n  answer: published"


def task(question):
    return Task.from_raw({"task_id": "317ef6cc-69a8-59a3-a347-e37d3399eb10", "benchmark": "gsm8k",
                          "key": "k", "split": "test", "body": {"question": question}})


def test_a_problem_on_one_line_is_cut_at_sixty_characters():
    assert render.task_line(task("x" * 60)).endswith("  test  " + "x" * 60)
    cut = render.task_line(task("y" * 61))
    assert cut.endswith("  test  " + "y" * 59 + "…")
    assert render.task_line(task("several   words\nover lines")).endswith("several words over lines")


def test_each_kind_of_journal_entry():
    base = {"at": "2026-12-01T09:00:00Z", "path": "/j/drafts/d.json"}
    assert render.journal_entry({**base, "type": "drawn", "benchmark": "gsm8k", "task_id": "t"}) \
        == "2026-12-01T09:00:00Z  drawn     gsm8k t"
    for kind in ("draft", "replaced"):
        assert render.journal_entry({**base, "type": kind, "destination": "task t", "body": "text"}) \
            == f"2026-12-01T09:00:00Z  {kind:<8}  /j/drafts/d.json  task t  as unnamed  text"
    named = {"agent_name": "trial-bot", "model": None}
    assert render.journal_entry({**base, "type": "draft", "destination": "task t", "body": "x", "claims": named}) \
        == "2026-12-01T09:00:00Z  draft     /j/drafts/d.json  task t  as name trial-bot, no model  x"
    # A draft is listed by its first line alone, never by its line breaks escaped.
    assert render.journal_entry({**base, "type": "draft", "destination": "task t", "body": "Answer: 7\n\nSetup: \x1b"}) \
        .endswith("as unnamed  Answer: 7")
    assert render.journal_entry({**base, "type": "refused", "refusal": "400 invalid: no"}) \
        == "2026-12-01T09:00:00Z  refused   /j/drafts/d.json  400 invalid: no"
    assert render.journal_entry({**base, "type": "posted", "post_id": "p_1", "public_url": "u", "claims": named}) \
        == "2026-12-01T09:00:00Z  posted    p_1  u  as name trial-bot, no model  /j/drafts/d.json"
    # The name and the model are each said, so that a model not claimed reads as not claimed.
    assert render.claims({"agent_name": "a", "model": "m", "run_label": "r"}) == "name a, model m, run r"
    assert render.claims({"model": "m"}) == "no name, model m"


@pytest.mark.parametrize("value, word", [("plain", "plain"), ("it's", "'it'\"'\"'s'"), ("a\nb", "$'a\\x0ab'"),
                                         ("a\x1bb", "$'a\\x1bb'"), ("é\u202e", "$'é\\u202e'"),
                                         ("a\x7fb", "$'a\\x7fb'"), ("a\x80b", "$'a\\u0080b'"),
                                         ("-x", "-x"), ("", "''")])
def test_one_shell_word_for_everything_echoed(value, word):
    assert render.shell_word(value) == word


def benchmark(**details):
    return Benchmark.from_raw({"slug": "gsm8k", "name": "GSM8K", "has_problems": True, "problem_count": 2,
                               "splits": ["test"], **details})


def test_a_benchmark_shows_a_line_for_each_detail_it_has_and_none_for_one_it_lacks():
    full = benchmark(metric="exact-match accuracy", license="MIT", source="https://example.org/gsm8k",
                     url="https://portal.test/gsm8k", related=[{"slug": "math", "relation": "harder"}])
    assert render.benchmark(full).splitlines()[:7] == [
        "GSM8K (gsm8k)", "problems: 2 in test", "metric: exact-match accuracy", "license: MIT",
        "source: https://example.org/gsm8k", "url: https://portal.test/gsm8k", "related: math (harder)"]
    sparse = benchmark(metric="accuracy", license="", source=None, related=[])
    assert render.benchmark(sparse).splitlines() == ["GSM8K (gsm8k)", "problems: 2 in test", "metric: accuracy"]


@pytest.mark.parametrize("character, shown", [
    ("\u180b", False), ("\u180f", False), ("\u1810", True),  # Mongolian selectors, then a digit
    ("\ufe00", False), ("\ufe0f", False), ("\ufe10", True),
    ("\U000e0100", False), ("\U000e01ef", False),
])
def test_variation_selectors_are_escaped_and_their_printable_neighbours_shown(character, shown):
    assert (safe.visible(character) == character) is shown
