"""The command line that helps: help written from the command table, an example per command
that runs as shown, a suggestion for a mistyped command, completion, doctor and --verbose."""

import json
import re
import subprocess

import pytest

from benchmarks_wiki import cli
from benchmarks_wiki.cli.setting_up import bash, fish, zsh
from benchmarks_wiki.cli.table import COMMANDS, VIEWS
from benchmarks_wiki.sandbox import Catalogue
from benchmarks_wiki.sandbox.catalogue import SAMPLE_THREAD_ID
from tests.certs import CA_FILE

EVERY = [(view, command, parent) for view in VIEWS.values() for parent in view.commands
         for command in ((parent,) + parent.actions)]


def named(entry):
    view, command, parent = entry
    return " ".join([view.prog, *([parent.name] if command is not parent else []), command.name])


def test_every_command_and_argument_says_what_it_does():
    for command in (c for parent in COMMANDS for c in (parent, *parent.actions)):
        assert command.summary and (command.prints or command.actions), command.name
        for argument in command.arguments:
            assert argument.options.get("help"), f"{command.name} {argument.flags[0]}"


def run_main(capsys, view, *argv):
    try:
        code = cli.main(list(argv), view=view)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def help_of(capsys, entry):
    view, command, parent = entry
    key = next(key for key, value in VIEWS.items() if value is view)
    words = [] if view.single else [*([parent.name] if command is not parent else []), command.name]
    code, out, err = run_main(capsys, key, *words, "--help")
    assert code == 0 and err == ""
    return out


@pytest.mark.parametrize("entry", EVERY, ids=named)
def test_each_command_has_its_own_help_with_an_example(capsys, entry):
    view, command, parent = entry
    text = help_of(capsys, entry)
    assert text.startswith("usage: ") and command.summary in " ".join(text.split())
    for argument in command.arguments:
        assert argument.options["help"] in " ".join(text.split())
        assert str(argument.options.get("range", "")) in " ".join(text.split())
    assert "example:" in text or command.actions
    assert (f"\nprints: {command.prints}\n" in text) is bool(command.prints)
    if not view.single:
        assert "--retries N " not in text  # the common options are shown once, in the program's help


def test_a_programs_help_lists_its_commands_and_the_common_options_once(capsys):
    code, out, err = run_main(capsys, "draw", "--help")
    assert "    try  " in out and "\n    post" not in out
    assert out.count("\n  --retries N") == 1 and "(a whole number, 0 to 10; default 3)" in " ".join(out.split())


@pytest.mark.parametrize("argv", [["skill", "install", "--help"], ["try", "--help"], ["--help"]])
def test_help_is_printed_for_what_is_named(capsys, argv):
    code, out, err = run_main(capsys, "benchmarks-wiki", *argv)
    assert code == 0 and err == ""
    assert out.startswith("usage: benchmarks-wiki " + (" ".join(argv[:-1]) if len(argv) > 1 else "[-h]"))
    if argv[0] == "skill":
        assert "--dest DIR" in out and "--out" not in out


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_of_a_command_with_actions_lists_them(capsys, flag):
    code, out, err = run_main(capsys, "benchmarks-wiki", "skill", flag)
    assert code == 0 and err == ""
    assert out.startswith("usage: benchmarks-wiki skill [-h] ACTION ...")
    assert "pack " in out and "write the skill as benchmarks-wiki.zip" in out and "  install " in out
    assert "prints:" not in out and "example:" not in out


def test_a_value_that_looks_like_help_is_a_value_where_an_option_takes_one(sandbox_env, capsys):
    code, out, err = run_main(capsys, "draw", "search", "--list", "--", "-h")
    assert code == 0 and "usage:" not in out
    assert any(request.params.get("q") == "-h" for request in sandbox_env.requests)


@pytest.mark.parametrize("view, argv, words", [
    ("draw", ["tyr"], "draw.py: error: draw.py has no command 'tyr'; did you mean try?"),
    ("draw", ["post", "--task", "x"], "draw.py: error: post is not draw.py's; use: python3 "),
    ("draw", ["xyzzy"], "draw.py: error: draw.py has no command 'xyzzy' (see --help)"),
    ("draw", ["tasks", "gsm8k", "--jsno"], "draw.py: error: no option --jsno; did you mean --json? (see --help)"),
    ("post", ["--tsk", "x", "--body", "y"], "post.py: error: no option --tsk; did you mean --task? (see --help)"),
    ("draw", ["try", "--pool", "many"], "draw.py try: error: --pool takes a whole number, not 'many' (see --help)"),
    ("follow", ["t_1", "--interval", "soon"], "follow.py: error: --interval takes a number, not 'soon'"),
    ("draw", [], "draw.py: error: give a command: try, stats,"),
    ("post", ["--task", "x", "--body", "-x"], "--body takes a value; one that starts with - is written --body=VALUE"),
    ("benchmarks-wiki", ["skill"], "benchmarks-wiki skill: error: give a command: pack, install"),
])
def test_a_mistake_is_one_line_that_says_what_to_do(capsys, view, argv, words):
    code, out, err = run_main(capsys, view, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


@pytest.fixture
def sandbox_env(portal, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHMARKS_WIKI_ORIGIN", portal.origin)
    monkeypatch.setenv("SSL_CERT_FILE", CA_FILE)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("Tried greedy decoding; 3/5 correct.\n", encoding="utf-8")
    return portal


@pytest.mark.parametrize("entry", [entry for entry in EVERY if entry[2].group != "setup"], ids=named)
def test_each_example_runs_as_shown(sandbox_env, capsys, entry):
    view, command, _ = entry
    import shlex

    task = Catalogue.sample().tasks["gsm8k"][0]["task_id"]
    words = shlex.split(command.example.replace("TASK_ID", task).replace("THREAD_ID", SAMPLE_THREAD_ID))
    if command.name == "follow":
        words = [SAMPLE_THREAD_ID, "--stop-after", "0.1", "--interval", "0.1"]  # the example, scaled down
    argv = words if view.single else [command.name, *words]
    code, out, err = run_main(capsys, next(key for key, value in VIEWS.items() if value is view), *argv)
    assert code == 0, err


def test_dates_are_taken_where_times_are(sandbox_env, capsys):
    code, out, err = run_main(capsys, "draw", "activity", "--since", "2026-01-01", "--limit", "1")
    assert code == 0 and out
    assert any(request.params.get("since") == "2026-01-01T00:00:00Z" for request in sandbox_env.requests)
    code, out, err = run_main(capsys, "draw", "activity", "--since", "2026-02-30")
    assert code == 2 and "is not a timestamp" in err


def test_search_as_a_list(sandbox_env, capsys):
    code, out, err = run_main(capsys, "draw", "search", "legs", "--list")
    assert code == 0 and "<" not in out
    first = out.splitlines()[0]
    assert first.startswith("gsm8k / ") and f"{sandbox_env.origin}/gsm8k/" in first
    code, out, err = run_main(capsys, "draw", "search", "legs", "--list", "--json")
    assert {"title", "url", "snippet"} == set(json.loads(out.splitlines()[0]))


def test_doctor_says_what_is_in_effect(sandbox_env, capsys, tmp_path):
    code, out, err = run_main(capsys, "draw", "doctor", "--journal", str(tmp_path / "j"))
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 0 and list(lines) == ["origin", "ca_file", "proxy", "journal", "python", "version", "portal"]
    assert lines["origin"] == f"{sandbox_env.origin} (from $BENCHMARKS_WIKI_ORIGIN)"
    assert lines["ca_file"] == f"{CA_FILE} (from $SSL_CERT_FILE)" and lines["proxy"] == "none"
    assert lines["journal"] == f"{tmp_path / 'j'} (from --journal; writable)"
    (tmp_path / "file").write_text("")  # a journal below a file can never be made, whoever runs it
    code, out, err = run_main(capsys, "draw", "doctor", "--journal", str(tmp_path / "file" / "j"))
    assert f"{tmp_path / 'file' / 'j'} (from --journal; cannot be written)" in out
    assert lines["portal"].startswith("answered in ") and "problems in" in lines["portal"]
    code, out, err = run_main(capsys, "draw", "doctor", "--json", "--origin", "https://127.0.0.1:9", "--retries", "0")
    assert code == 3 and json.loads(out)["portal"].startswith("no answer: connection refused")


def test_doctor_without_a_ca_variable_names_the_systems_ca_file_or_else_its_folder(capsys, monkeypatch):
    import ssl

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    paths = ssl.get_default_verify_paths()
    system = paths.cafile if paths.cafile is not None else paths.capath
    if system is None:
        pytest.skip("this system has neither a CA file nor a CA folder of its own")
    code, out, err = run_main(capsys, "draw", "doctor", "--origin", "https://127.0.0.1:9", "--retries", "0",
                              "--no-journal")
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 3 and lines["ca_file"] == f"{system} (the system's)"

def test_verbose_says_each_retry(sandbox_env, capsys):
    sandbox_env.fail_next(503, times=1)
    code, out, err = run_main(capsys, "draw", "stats", "--verbose")
    assert code == 0 and err.startswith("draw.py: /api/v1/stats: 503 Service Unavailable; sending it again in ")
    sandbox_env.fail_next(503, times=1)
    code, out, err = run_main(capsys, "draw", "stats")
    assert code == 0 and err == ""


def complete(script, *words):
    """What bash offers after ``words``, the last of them being completed."""
    line = " ".join(["benchmarks-wiki", *words])
    driver = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}; _benchmarks_wiki; "
              'echo "${COMPREPLY[*]}"')
    done = subprocess.run(["bash", "-c", driver], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_completion_is_written_from_the_table():
    script = bash()
    assert complete(script, "tr") == ["try"]
    assert complete(script, "--origin", "x", "sk") == ["skill"]
    assert complete(script, "skill", "")[:2] == ["pack", "install"]
    assert complete(script, "skill", "install", "--d") == ["--dest"]
    assert "--stop-after" in complete(script, "follow", "--")
    assert "_benchmarks_wiki" in zsh() and "complete -c benchmarks-wiki -n '__fish_use_subcommand' -a try" in fish()
    for command in COMMANDS:
        assert f"-a {command.name} " in fish()


def test_the_preview_command_a_draw_prints_carries_the_claims_in_effect(sandbox_env, capsys, monkeypatch):
    monkeypatch.setenv("BENCHMARKS_WIKI_AGENT_NAME", "my bot")
    code, out, err = run_main(capsys, "draw", "try", "gsm8k", "--seed", "1")
    assert code == 0 and " --name 'my bot' --task " in out.splitlines()[-1]
    assert "--model" not in out


@pytest.mark.parametrize("view, argv, common", [
    ("draw", ["stats", "--help"], True), ("benchmarks-wiki", ["stats", "--help"], True),
    ("benchmarks-wiki", ["sandbox", "--help"], True), ("benchmarks-wiki", ["completion", "--help"], False),
    ("benchmarks-wiki", ["skill", "install", "--help"], False),
])
def test_a_commands_help_ends_naming_the_common_options_unless_it_sets_up(capsys, view, argv, common):
    code, out, err = run_main(capsys, view, *argv)
    prog = VIEWS[view].prog
    assert code == 0 and err == ""
    last = out.splitlines()[-1]
    assert (last.startswith("options for every command: --json, --origin, --retries, ")
            and last.endswith(f", --verbose (see {prog} --help)")) is common
    assert ("options for every command" in out) is common


def test_help_reads_the_same_on_every_terminal(capsys, monkeypatch):
    texts = set()
    for columns in ("40", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        texts.add(run_main(capsys, "post", "--help")[1])
    assert len(texts) == 1


def test_fish_completes_each_common_option_by_its_whole_name(capsys):
    code, out, err = run_main(capsys, "benchmarks-wiki", "completion", "fish")
    assert code == 0
    lines = out.splitlines()
    for name in ("json", "origin", "retries", "timeout", "journal", "no-journal", "verbose"):
        assert f"complete -c benchmarks-wiki -l {name}" in lines


def test_fish_completes_each_commands_own_options_by_their_whole_names(capsys):
    code, out, err = run_main(capsys, "benchmarks-wiki", "completion", "fish")
    own = [line for line in out.splitlines() if "__fish_seen_subcommand_from" in line and " -l " in line]
    assert code == 0
    assert "complete -c benchmarks-wiki -n '__fish_seen_subcommand_from follow' -l stop-after" in own
    assert "complete -c benchmarks-wiki -n '__fish_seen_subcommand_from skill' -l dest" in own
    for command in COMMANDS:
        for argument in [*command.arguments, *(a for action in command.actions for a in action.arguments)]:
            for flag in argument.flags:
                if flag.startswith("--"):
                    assert (f"complete -c benchmarks-wiki -n '__fish_seen_subcommand_from {command.name}' "
                            f"-l {flag[2:]}") in own
    # fish's -l takes the name without its dashes; a positional argument has none to complete.
    assert all(re.fullmatch(r"complete -c benchmarks-wiki -n '__fish_seen_subcommand_from [a-z-]+' -l [a-z][a-z-]*",
                            line) for line in own)
