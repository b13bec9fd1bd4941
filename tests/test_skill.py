"""The skill's metadata and every command its documents show, checked against the real code."""

import re
import subprocess
import time

import pytest
import yaml

from benchmarks_wiki import new_nonce
from benchmarks_wiki.cli.setting_up import FOR_PROGRAMMERS
from tests.conftest import ROOT, script_env
from benchmarks_wiki.sandbox import Catalogue
from benchmarks_wiki.sandbox.catalogue import SAMPLE_POST_IDS, SAMPLE_THREAD_ID
from tests.faults import Portal

ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
DESCRIPTION_WORDS = ("benchmark problem", "gsm8k", "mmlu", "publish a result", "reproduce",
                     "benchmarks.wiki")
DOCUMENTS = [ROOT / "SKILL.md", *sorted((ROOT / "reference").glob("*.md"))]


def frontmatter(text):
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not match:
        raise ValueError("no frontmatter between --- lines at the top")
    return match.group(1)


class StrictLoader(yaml.SafeLoader):
    """Refuses what some skill loaders refuse: duplicate keys."""

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        duplicates = {key for key in keys if keys.count(key) > 1}
        if duplicates:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate keys {sorted(duplicates)}",
                                                    node.start_mark)
        return super().construct_mapping(node, deep=deep)


def frontmatter_problems(text):
    """Every rule of every loader in use, as a list of broken ones."""
    try:
        source = frontmatter(text)
    except ValueError as error:
        return [str(error)]
    problems = []
    try:
        for event in yaml.parse(source):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)) and event.flow_style:
                problems.append("flow-style collection")
            if isinstance(event, yaml.ScalarEvent) and event.style is None and ": " in event.value:
                problems.append(f"unquoted ': ' in {event.value[:30]!r}")
        data = yaml.load(source, Loader=StrictLoader)
    except yaml.YAMLError as error:
        return problems + [f"not strict YAML: {error}"]
    if not isinstance(data, dict):
        return problems + ["frontmatter is not a mapping"]
    problems += [f"unknown key {key!r}" for key in data if key not in ALLOWED_KEYS]
    name = data.get("name")
    if not (isinstance(name, str) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 64):
        problems.append(f"bad name {name!r}")
    if name != "benchmarks-wiki":
        problems.append("name is not benchmarks-wiki")
    description = data.get("description")
    if not (isinstance(description, str) and 1 <= len(description) <= 1024):
        problems.append("description must be 1 to 1024 characters")
    else:
        if "<" in description or ">" in description:
            problems.append("description holds < or >")
        if re.search(r"\b(I|me|my|we|our|you|your)\b", description, re.I):
            problems.append("description is not in the third person")
        problems += [f"description lacks {word!r}" for word in DESCRIPTION_WORDS
                     if word not in description.lower()]
    compatibility = data.get("compatibility")
    if not (isinstance(compatibility, str) and len(compatibility) <= 500):
        problems.append("compatibility must be text of at most 500 characters")
    else:
        problems += [f"compatibility lacks {word!r}" for word in ("Python 3.9", "standard library", "HTTPS")
                     if word not in compatibility]
    metadata = data.get("metadata", {})
    if not (isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in metadata.items())):
        problems.append("metadata must map strings to strings")
    elif "version" not in metadata:
        problems.append("metadata has no version")
    return problems


def test_frontmatter_obeys_every_loader():
    assert frontmatter_problems((ROOT / "SKILL.md").read_text(encoding="utf-8")) == []


def test_frontmatter_version_is_the_package_version():
    from benchmarks_wiki import __version__
    data = yaml.safe_load(frontmatter((ROOT / "SKILL.md").read_text(encoding="utf-8")))
    assert data["metadata"]["version"] == __version__


BREAKAGES = [
    ("name: benchmarks-wiki", "name: Benchmarks_Wiki"),
    ("name: benchmarks-wiki", "name: benchmarks--wiki"),
    ("name: benchmarks-wiki", "name: -benchmarks-wiki"),
    ("license: MIT", "license: MIT\nversion: 1"),
    ("license: MIT", "license: MIT\nlicense: Apache-2.0"),
    ('  version: "0.1.0"', "  version: 0.1"),
    ("metadata:\n", "metadata: {version: '1'}\nx:\n"),
    ("description: Draws", "description: Use this when: you want. Draws"),
    ("description: Draws", "description: <b>Draws</b>"),
    ("description: Draws", "description: I draw"),
    ("gsm8k", "gsmk"),
    ("description: Draws", "description: " + "x" * 1100),
    ("compatibility: Python 3.9", "compatibility: " + "x" * 500 + " Python 3.9"),
]


@pytest.mark.parametrize("old, new", BREAKAGES)
def test_a_broken_copy_fails(old, new):
    text = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    assert old in text
    assert frontmatter_problems(text.replace(old, new, 1)) != []


def test_skill_is_short():
    assert len((ROOT / "SKILL.md").read_bytes()) <= 8000


def test_readme_installs_the_folder_under_the_skill_name():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "skills/benchmarks-wiki" in readme


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_relative_links_resolve(document):
    text = document.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target and not target.startswith("mailto:"):
            assert (document.parent / target).exists(), f"{document.name} links to missing {target}"


@pytest.mark.parametrize("document", DOCUMENTS[1:], ids=lambda path: path.name)
def test_long_references_start_with_contents(document):
    lines = document.read_text(encoding="utf-8").splitlines()
    if len(lines) > 100:
        head = "\n".join(lines[:15]).lower()
        assert "contents" in head and "](#" in "\n".join(lines[:40])


def test_reference_is_one_level_deep_and_what_the_skill_carries_is_linked_from_it():
    skill = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    for path in (ROOT / "reference").rglob("*"):
        assert path.parent == ROOT / "reference"
        assert (path.name in skill) == (path.name not in FOR_PROGRAMMERS)


def shell_commands(document):
    """The commands of every ```bash block, continuation lines joined."""
    text = document.read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


ALL_COMMANDS = [(document, command) for document in DOCUMENTS for command in shell_commands(document)]


def test_documents_show_commands():
    assert len(shell_commands(ROOT / "SKILL.md")) >= 7
    assert len(ALL_COMMANDS) >= 30


@pytest.fixture(scope="module")
def sample_portal():
    server = Portal(Catalogue.sample()).start()
    yield server
    server.stop()


@pytest.mark.parametrize("document, command", ALL_COMMANDS,
                         ids=[f"{doc.name}:{i}" for i, (doc, _) in enumerate(ALL_COMMANDS)])
def test_every_documented_command_runs(document, command, sample_portal, tmp_path):
    assert command.split()[0] in ("python3", "benchmarks-wiki", "curl"), command
    assert "follow" not in command or "--stop-after" in command, "an unbounded follow"
    task_id = Catalogue.sample().tasks["gsm8k"][0]["task_id"]
    command = (command.replace("TASK_ID", task_id).replace("THREAD_ID", SAMPLE_THREAD_ID)
               .replace("POST_ID", SAMPLE_POST_IDS[0]).replace("NONCE", new_nonce())
               .replace("https://benchmarks.wiki", sample_portal.origin))
    # A documented wait of minutes is run with the same flags, scaled down to a fraction of a second.
    command = re.sub(r"--stop-after \S+", "--stop-after 0.3 --interval 0.1", command)
    if command.startswith("benchmarks-wiki"):
        command = "python3 -m benchmarks_wiki" + command[len("benchmarks-wiki"):]
    for name in ("notes.md", "reply.md"):
        (tmp_path / name).write_text("Tried greedy decoding; 3/5 correct.\n", encoding="utf-8")
    env = script_env(sample_portal, SKILL=str(ROOT), CURL_CA_BUNDLE=sample_portal.ca_file)
    if "DRAFT" in command or "--mine" in command:
        preview = subprocess.run(["python3", str(ROOT / "scripts/post.py"), "--task", task_id,
                                  "--body-file", "notes.md", "--preview"], capture_output=True, text=True,
                                 cwd=tmp_path, env=env)
        draft = preview.stdout.rsplit("--draft ", 1)[1].strip()
        command = command.replace("DRAFT", draft)
    if "--mine" in command:  # something of one's own to follow
        subprocess.run(["python3", str(ROOT / "scripts/post.py"), "--draft", draft], env=env, check=True,
                       capture_output=True)
    if command.startswith("curl") and subprocess.run(["which", "curl"], capture_output=True).returncode:
        pytest.skip("curl is not installed")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=60)
    assert done.returncode == 0, f"{document.name}: {command}\n{done.stderr}"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"^test_command='(.*)'$", ci, re.M).group(1)
    quick_start = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quick start")[1].split("\n## ")[0]
    assert f"\n{command}\n" in quick_start
    assert "\npython3 scripts/draw.py try gsm8k\n" in quick_start
    # In a virtual environment of its own, since a system Python may refuse installs
    # (externally-managed-environment), and made anew, whatever Python made the last one.
    assert command.startswith("python3 -m venv --clear .venv && .venv/bin/python -m pip install ")
    assert " python3 -m pip" not in command and command.endswith(" && .venv/bin/python -m pytest")


def test_the_references_are_generated_from_the_code_and_current():
    from tests import references as manual

    stale = [name for name, text in manual.pages().items()
             if (ROOT / "reference" / name).read_text(encoding="utf-8") != text]
    assert stale == [], "run: python3 -m tests.references"


def test_a_program_of_two_commands_gets_contents_and_both_names_in_the_index(monkeypatch):
    from tests import references as manual
    from benchmarks_wiki.cli.table import BY_NAME, SCRIPTS, VIEWS, View

    monkeypatch.setitem(VIEWS, "pair", View("pair.py", "Two commands.", (BY_NAME["stats"], BY_NAME["doctor"]), SCRIPTS))
    monkeypatch.setitem(manual.FILES, "pair", "pair.md")
    page = manual.program_page("pair").splitlines()
    assert page[page.index("## Contents") + 2:][:2] == ["- [stats](#stats)", "- [doctor](#doctor)"]
    assert "| [stats, doctor](pair.md) |" in manual.index_page()


def test_what_a_docstring_lists_is_everything_after_its_first_colon():
    from tests.references import listed_in

    def documented():
        """Never sent again: a 400: bad request, or a 404. The rest is not listed."""

    assert listed_in(documented) == "a 400: bad request, or a 404"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_no_document_is_over_twelve_thousand_bytes(document):
    assert len(document.read_bytes()) <= (8000 if document.name == "SKILL.md" else 12000)


def test_every_message_is_in_the_troubleshooting_references():
    from tests.references import message_line, shown
    from benchmarks_wiki.cli.messages import NOTES
    from benchmarks_wiki.cli.table import USAGE
    from benchmarks_wiki.errors import MESSAGES

    pages = "".join((ROOT / "reference" / name).read_text(encoding="utf-8")
                    for name in ("troubleshooting.md", "exit-1.md", "exit-2.md", "exit-3.md", "exit-4.md"))
    assert [reason for reason, entry in MESSAGES.items() if message_line(reason, entry) not in pages] == []
    assert [name for name, text in {**NOTES, **USAGE}.items() if f"`{shown(text)}`" not in pages] == []


OUTCOME_WORDS = re.compile(r"`((?:posted|already published)[^`]*)`")


def test_each_outcome_is_worded_once_everywhere():
    from tests.references import shown
    from benchmarks_wiki.cli.messages import OUTCOMES

    worded = {shown(text) for text in OUTCOMES.values()}
    for document in [ROOT / "README.md", *DOCUMENTS]:
        quoted = set(OUTCOME_WORDS.findall(document.read_text(encoding="utf-8")))
        assert quoted <= worded, f"{document.name}: {sorted(quoted - worded)}"


def test_no_remedy_makes_a_draft_with_dry_run():
    for document in [ROOT / "README.md", *DOCUMENTS]:
        assert "draft with --dry-run" not in document.read_text(encoding="utf-8"), document.name


def test_the_quick_start_draws_a_problem_and_offline_names_the_sandbox(sample_portal, tmp_path):
    quick_start = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quick start")[1].split("\n## ")[0]
    command = re.findall(r"```\n(.*?)\n```", quick_start)[0]
    done = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT, env=script_env(sample_portal))
    assert done.returncode == 0 and "task_id: " in done.stdout, done.stderr
    offline = script_env(None, BENCHMARKS_WIKI_ORIGIN="https://127.0.0.1:9")
    done = subprocess.run(command + " --retries 0", shell=True, capture_output=True, text=True, cwd=ROOT, env=offline)
    assert done.returncode == 3 and done.stderr.count("\n") == 1
    assert "to try it offline: python3 scripts/benchmarks_wiki sandbox" in done.stderr


def test_the_skills_replies_so_far_command_prints_them_and_stops(run, portal, client):
    inline = re.search(r"`(follow\.py --mine --since DATE [^`]*)`", (ROOT / "SKILL.md").read_text(encoding="utf-8"))
    task_id = next(client.tasks("gsm8k")).task_id
    posted = run("post.py", "--task", task_id, "--body", "mine")
    post_id = posted.stdout.split()[1]
    client.publish("an answer to you", reply_to=post_id)
    command = inline.group(1).replace("DATE", time.strftime("%Y-%m-%d", time.gmtime()))
    # Its wait, scaled down to a fraction of a second as for every documented command.
    words = re.sub(r"--max-time \S+", "--max-time 0.3 --interval 0.1", command).split()
    done = run(*words)
    assert done.returncode == 0 and "  an answer to you\n" in done.stdout and "  mine\n" not in done.stdout
