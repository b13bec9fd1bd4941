"""The skill handed over three ways: a reproducible archive, an install command and a plugin
manifest, all of one version; and a wheel that carries what the skill needs without a checkout."""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from benchmarks_wiki import __version__
from benchmarks_wiki.cli import setting_up as skill
from benchmarks_wiki.errors import SkillError
from tests.conftest import ROOT, script_env
from tests.test_skill import frontmatter, frontmatter_problems

PLACES = ("~/.claude/skills", ".claude/skills", "~/.codex/skills", ".agents/skills")


def plain_env(portal=None):
    """The environment of a machine with nothing of this package on its path, so that the
    copy under test is the one that runs."""
    env = script_env(portal)
    del env["PYTHONPATH"]
    return env


def cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "benchmarks_wiki", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env or script_env(), timeout=60)


def expected_paths(root=ROOT):
    """What the skill holds, read from a source tree the way a person would list it: the
    package but the sandbox, the setup commands and the package run as a program, which no
    script runs, and the references but the library's page and the portal's contract."""
    package = root / "scripts" / "benchmarks_wiki"
    left_out = ("sandbox/", "cli/setting_up.py", "__main__.py")
    modules = [f"scripts/benchmarks_wiki/{path.relative_to(package).as_posix()}"
               for path in package.rglob("*.py")
               if "__pycache__" not in path.parts and not path.relative_to(package).as_posix().startswith(left_out)]
    return sorted(["SKILL.md", "LICENSE", "scripts/draw.py", "scripts/post.py", "scripts/follow.py",
                   *(f"reference/{path.name}" for path in (root / "reference").glob("*.md")
                     if path.name not in ("python.md", "http.md")), *modules])


def tree(folder):
    """Every file under ``folder`` (caches aside) with its bytes and mode."""
    return {path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mode & 0o777)
            for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts}


def unpack(archive, into):
    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(into)
    for name in ("draw.py", "post.py", "follow.py"):  # extractall keeps no modes
        (into / "benchmarks-wiki" / "scripts" / name).chmod(0o755)
    return into / "benchmarks-wiki"


@pytest.fixture
def archive(tmp_path):
    done = cli("skill", "pack", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "benchmarks-wiki.zip"


def test_pack_prints_one_line_with_the_path_and_size(archive):
    done = cli("skill", "pack", "--out", "here", cwd=archive.parent)
    made = archive.parent / "here" / "benchmarks-wiki.zip"
    entries = len(expected_paths())
    assert done.stdout == f"{made}  {made.stat().st_size} bytes, {entries} files\n" and done.stderr == ""


def test_the_archive_is_the_same_bytes_built_twice(archive, tmp_path):
    again = cli("skill", "pack", "--out", tmp_path / "again", cwd=ROOT / "reference")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "benchmarks-wiki.zip").read_bytes() == archive.read_bytes()


def test_every_entry_of_the_archive_is_dated_at_the_earliest_time_a_zip_can_hold(archive):
    with zipfile.ZipFile(archive) as made:
        assert {entry.date_time for entry in made.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_an_unpacked_archive_runs_the_three_scripts_with_nothing_installed(archive, portal, tmp_path):
    unpacked = unpack(archive, tmp_path / "unpacked")
    for name, words in (("draw.py", ["stats"]), ("post.py", ["--help"]), ("follow.py", ["--help"])):
        done = subprocess.run([sys.executable, str(unpacked / "scripts" / name), *words], capture_output=True,
                              text=True, cwd=tmp_path, env=plain_env(portal), timeout=60)
        assert done.returncode == 0, done.stderr


def test_an_unpacked_archive_offers_no_sandbox_it_does_not_hold(archive, tmp_path):
    unpacked = unpack(archive, tmp_path / "unpacked")
    offline = plain_env(None)
    offline["BENCHMARKS_WIKI_ORIGIN"] = "https://127.0.0.1:9"
    done = subprocess.run([sys.executable, str(unpacked / "scripts" / "draw.py"), "stats", "--retries", "0"],
                          capture_output=True, text=True, cwd=tmp_path, env=offline, timeout=60)
    assert done.returncode == 3 and done.stderr.count("\n") == 1, done.stderr
    assert "check --origin, or that the portal is running" in done.stderr and "sandbox" not in done.stderr


def test_the_archive_holds_no_sandbox_nor_setup_commands(archive):
    with zipfile.ZipFile(archive) as bundle:
        names = bundle.namelist()
    assert not [name for name in names if "/sandbox/" in name or name.endswith(("setting_up.py", "__main__.py"))]


def test_the_archive_holds_what_the_skill_runs_and_nothing_else(archive):
    with zipfile.ZipFile(archive) as bundle:
        entries = bundle.infolist()
    assert [entry.filename for entry in entries] == sorted(f"benchmarks-wiki/{path}" for path in expected_paths())
    scripts = {f"benchmarks-wiki/scripts/{name}" for name in ("draw.py", "post.py", "follow.py")}
    for entry in entries:
        executable = entry.filename in scripts
        assert entry.external_attr >> 16 == 0o100000 | (0o755 if executable else 0o644), entry.filename
        assert entry.create_system == 3, entry.filename  # made on Unix, else unzip ignores the modes
        assert entry.date_time == (1980, 1, 1, 0, 0, 0) and entry.compress_type == zipfile.ZIP_DEFLATED


def test_caches_hidden_files_tests_and_the_bundle_stay_out(tmp_path):
    source = tmp_path / "checkout"
    source.mkdir()
    for name in ("SKILL.md", "LICENSE", "reference", "scripts", "tests", ".ci"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name)
    package = source / "scripts" / "benchmarks_wiki"
    for junk in ("__pycache__/client.cpython-311.pyc", "cli/__pycache__/table.py", ".hidden.py",
                 "skill_files/SKILL.md", "skill_files/scripts/draw.py", ".cache/x.py"):
        (package / junk).parent.mkdir(parents=True, exist_ok=True)
        (package / junk).write_text("x = 1\n")
    (source / ".hidden.md").write_text("x\n")
    (source / "reference" / ".notes.md").write_text("x\n")
    done = subprocess.run([sys.executable, str(package), "skill", "pack"], capture_output=True, text=True,
                          cwd=tmp_path, env=plain_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "benchmarks-wiki.zip") as bundle:
        names = bundle.namelist()
    assert names == sorted(f"benchmarks-wiki/{path}" for path in expected_paths())
    assert not any(part.startswith(".") or part in ("tests", "__pycache__", "skill_files")
                   for name in names for part in name.split("/"))


def test_the_unpacked_skill_runs_against_the_portal(archive, portal, tmp_path):
    unpacked = unpack(archive, tmp_path / "skills")
    work = tmp_path / "work"
    work.mkdir()
    draw = str(unpacked / "scripts" / "draw.py")
    shown = subprocess.run([sys.executable, draw, "--help"], capture_output=True, text=True, cwd=work,
                           env=plain_env(portal), timeout=60)
    assert shown.returncode == 0 and "try" in shown.stdout and "skill" not in shown.stdout
    drawn = subprocess.run([sys.executable, draw, "try", "gsm8k"], capture_output=True, text=True, cwd=work,
                           env=plain_env(portal), timeout=60)
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout.startswith("gsm8k / ") and f"python3 {unpacked}/scripts/post.py" in drawn.stdout
    assert any(request.path.startswith("/api/v1/") for request in portal.requests)
    assert frontmatter_problems((unpacked / "SKILL.md").read_text(encoding="utf-8")) == []


def test_only_benchmarks_wiki_shows_the_skill_command(run, tmp_path):
    assert "skill" in cli("--help", cwd=tmp_path).stdout
    for script in ("draw.py", "post.py", "follow.py"):
        assert "skill " not in run(script, "--help").stdout
    refused = run("draw.py", "skill", "pack")
    assert refused.returncode == 2 and "skill is not draw.py's; use: python3 " in refused.stderr
    assert not (ROOT / "benchmarks-wiki.zip").exists()


def test_install_without_dest_names_the_usual_places(tmp_path):
    done = cli("skill", "install", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith("benchmarks-wiki skill install: error: ")
    assert all(place in done.stderr for place in PLACES) and "--dest" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, words", [
    (["pack", "--dest", "x"], "benchmarks-wiki: error: --dest is not an option of this command (see --help)"),
    (["pack", "--force"], "benchmarks-wiki: error: --force is not an option of this command (see --help)"),
    (["install", "--dest", "x", "--out", "y"], "benchmarks-wiki: error: --out is not an option of this command"),
])
def test_options_of_the_other_action_are_refused(tmp_path, args, words):
    done = cli("skill", *args, cwd=tmp_path)
    assert done.returncode == 2 and words in done.stderr and list(tmp_path.iterdir()) == []


def test_install_says_where_and_how_to_check_it(portal, tmp_path):
    done = cli("skill", "install", "--dest", "skills", cwd=tmp_path)
    folder = tmp_path / "skills" / "benchmarks-wiki"
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"installed benchmarks-wiki {__version__} in {folder}\n"
                           f"check it works: python3 {folder}/scripts/draw.py stats\n")
    assert sorted(tree(folder)) == expected_paths()
    assert tree(folder)["scripts/follow.py"][1] == 0o755 and tree(folder)["SKILL.md"][1] == 0o644
    check = done.stdout.splitlines()[1].split(": ", 1)[1]
    checked = subprocess.run(check, shell=True, capture_output=True, text=True, cwd=tmp_path,
                             env=plain_env(portal), timeout=60)
    assert checked.returncode == 0 and " problems in " in checked.stdout, checked.stderr


def snapshot(folder):
    return {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in [folder, *folder.rglob("*")]}


def test_the_same_skill_twice_changes_nothing(tmp_path):
    assert cli("skill", "install", "--dest", tmp_path, cwd=tmp_path).returncode == 0
    folder = tmp_path / "benchmarks-wiki"
    before = snapshot(tmp_path)
    done = cli("skill", "install", "--dest", tmp_path, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    said = f"benchmarks-wiki {__version__} is already installed in {folder}; nothing changed"
    assert done.stdout.splitlines()[0] == said
    assert snapshot(tmp_path) == before


def old_skill(folder, version="0.0.1"):
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f'---\nname: benchmarks-wiki\nmetadata:\n  version: "{version}"\n---\n\nOld.\n')
    (folder / "scripts" / "gone.py").write_text("print('old')\n")
    return tree(folder)


def test_another_version_is_refused_then_replaced_with_force(tmp_path):
    folder = tmp_path / "skills" / "benchmarks-wiki"
    old = old_skill(folder)
    refused = cli("skill", "install", "--dest", "skills", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == "" and refused.stderr.count("\n") == 1
    assert f"holds version 0.0.1; to replace it with {__version__}, add --force" in refused.stderr
    assert tree(folder) == old
    done = cli("skill", "install", "--dest", "skills", "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"replaced benchmarks-wiki 0.0.1 with {__version__} in {folder}"
    assert sorted(tree(folder)) == expected_paths()
    assert os.listdir(tmp_path / "skills") == ["benchmarks-wiki"]  # nothing staged or old left beside it


def test_the_same_version_with_other_files_is_refused(tmp_path):
    assert cli("skill", "install", "--dest", tmp_path, cwd=tmp_path).returncode == 0
    changed = tmp_path / "benchmarks-wiki" / "reference" / "cli.md"
    changed.write_text("edited by hand\n")
    done = cli("skill", "install", "--dest", tmp_path, cwd=tmp_path)
    assert done.returncode == 2 and "with files that differ from this copy's" in done.stderr
    assert changed.read_text() == "edited by hand\n"


def test_an_interrupted_install_leaves_the_old_skill_whole(tmp_path, monkeypatch):
    folder = tmp_path / "benchmarks-wiki"
    old = old_skill(folder)
    writes = []
    real_write = Path.write_bytes

    def write_then_interrupt(path, data):
        writes.append(path)
        if len(writes) == 5:
            raise KeyboardInterrupt
        return real_write(path, data)

    monkeypatch.setattr(Path, "write_bytes", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        skill.install(tmp_path, force=True)
    assert tree(folder) == old and os.listdir(tmp_path) == ["benchmarks-wiki"]


def test_a_swap_that_fails_puts_the_old_skill_back(tmp_path, monkeypatch):
    folder = tmp_path / "benchmarks-wiki"
    old = old_skill(folder)
    renames = []
    real_rename = os.rename

    def fail_second(source, target):
        renames.append(target)
        if len(renames) == 2:
            raise PermissionError(13, "Permission denied", str(target))
        return real_rename(source, target)

    monkeypatch.setattr(skill.os, "rename", fail_second)
    with pytest.raises(SkillError, match="cannot write .*benchmarks-wiki: Permission denied"):
        skill.install(tmp_path, force=True)
    assert tree(folder) == old and os.listdir(tmp_path) == ["benchmarks-wiki"]


def test_a_folder_that_cannot_be_made_exits_4_and_a_file_exits_2(tmp_path):
    (tmp_path / "a-file").write_text("x\n")
    for action, option in (("install", "--dest"), ("pack", "--out")):
        cannot = cli("skill", action, option, "a-file/skills", cwd=tmp_path)
        assert cannot.returncode == 4 and cannot.stderr.count("\n") == 1
        assert f"cannot write {tmp_path}/a-file" in cannot.stderr
        refused = cli("skill", action, option, "a-file", cwd=tmp_path)
        assert refused.returncode == 2 and f"{tmp_path}/a-file is a file, not a folder" in refused.stderr
    assert sorted(os.listdir(tmp_path)) == ["a-file"]


def test_the_plugin_manifest_points_at_the_skill():
    manifest = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "benchmarks-wiki" and manifest["owner"]["name"]
    assert manifest["metadata"]["description"]
    [plugin] = manifest["plugins"]
    assert plugin["name"] == "benchmarks-wiki" and plugin["source"] == "./" and plugin["strict"] is False
    assert plugin["description"] and plugin["skills"]
    for path in plugin["skills"]:
        assert (ROOT / plugin["source"] / path / "SKILL.md").is_file(), path


def test_one_version_everywhere():
    described = yaml.safe_load(frontmatter((ROOT / "SKILL.md").read_text(encoding="utf-8")))
    manifest = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.M)
    assert re.search(r'^version = \{attr = "benchmarks_wiki.__version__"\}$', pyproject, re.M)
    versions = {described["metadata"]["version"], manifest["metadata"]["version"],
                skill.skill_version((ROOT / "SKILL.md").read_text(encoding="utf-8"))}
    assert versions == {__version__}


def git_status():
    done = subprocess.run(["git", "status", "--porcelain", "--ignored"], capture_output=True, text=True,
                          cwd=ROOT)
    return done.stdout if done.returncode == 0 else None


def succeeds(*command, cwd, env=None):
    done = subprocess.run(list(map(str, command)), capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)
    assert done.returncode == 0, f"{command}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtual environment with only ``pip install .`` done in it, from a copy of the
    checkout so that build/ and egg-info stay out of it."""
    status = git_status()
    place = tmp_path_factory.mktemp("installed")
    source = place / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "tests", ".ci", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache", ".venv*",
        "*.zip", "*.whl"))
    venv = place / "venv"
    # The environment holds nothing but what pip installs in it; pip itself is this
    # interpreter's, which spares the seconds of putting a copy of pip in every new one.
    succeeds(sys.executable, "-m", "venv", "--without-pip", venv, cwd=place)
    succeeds(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q", ".", cwd=source)
    version = succeeds(venv / "bin" / "benchmarks-wiki", "--version", cwd=place, env=plain_env())
    assert version.stdout == f"benchmarks-wiki {__version__}\n"
    assert git_status() == status
    return venv


def test_an_installed_package_installs_the_skill_with_no_checkout_around_it(installed, portal, tmp_path):
    succeeds(installed / "bin" / "benchmarks-wiki", "skill", "install", "--dest", tmp_path / "skills", cwd=tmp_path,
             env=plain_env())
    folder = tmp_path / "skills" / "benchmarks-wiki"
    assert tree(folder) == {item.path: (item.data, item.mode) for item in skill.skill_files()}
    stats = succeeds(sys.executable, folder / "scripts" / "draw.py", "stats", cwd=tmp_path, env=plain_env(portal))
    assert " problems in " in stats.stdout


# What differs from run to run: the sandbox's origin and CA, ids, times and draft paths.
VARIABLE = re.compile(r"https://127\.0\.0\.1:\d+|/\S*/benchmarks-wiki/sandbox-[^/\s]+/ca\.pem"
                      r"|\S*/(?:waiting|sent)/\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{8}\.json|\b[pt]_[0-9a-f]{6}\b"
                      r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T")


def walk_through():
    """The README's walk-through: each ``$ command`` with the lines it printed."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## A walk-through")[1].split("\n## ")[0]
    steps = []
    for block in re.findall(r"```text\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return steps


def matched(expected: list, actual: list, seen: dict) -> None:
    """Each line as printed, but for what differs from run to run; what the README shows
    for each id, path and origin is kept in ``seen``, to be put into the commands after."""
    assert len(expected) == len(actual), "\n".join(actual)
    for printed, got in zip(expected, actual):
        assert VARIABLE.split(printed) == VARIABLE.split(got), f"{printed!r}\n{got!r}"
        for shown, real in zip(VARIABLE.findall(printed), VARIABLE.findall(got)):
            if not TIME.match(shown):
                assert seen.setdefault(shown, real) == real, shown


def test_the_readme_walk_through_runs_as_printed_against_the_installed_sandbox(installed, tmp_path):
    steps = walk_through()
    assert steps[0][0] == "benchmarks-wiki sandbox --replies"
    sandbox = subprocess.Popen([installed / "bin" / "benchmarks-wiki", "sandbox", "--replies", "--reply-after",
                                "0.1"], stdout=subprocess.PIPE, text=True, env=plain_env(), cwd=tmp_path)
    try:
        printed = [sandbox.stdout.readline().rstrip("\n") for _ in steps[0][1]]
        seen = {}
        matched(steps[0][1], [line.replace("after 0.1 s.", "after 3 s.") for line in printed], seen)
        env = plain_env()
        del env["SSL_CERT_FILE"]  # the printed lines are all a shell needs
        env.update(line[len("export "):].split("=", 1) for line in printed if line.startswith("export "))
        env.update(XDG_STATE_HOME=str(tmp_path / "state"), SKILL=str(tmp_path / "skills" / "benchmarks-wiki"),
                   PATH=f"{installed / 'bin'}:{env['PATH']}")
        run_steps(steps[1:], env, tmp_path, seen)
    finally:
        sandbox.terminate()
        sandbox.wait(10)


def run_steps(steps, env, folder, seen):
    succeeds("benchmarks-wiki", "skill", "install", "--dest", "skills", cwd=folder, env=env)
    journal = str(folder / "state" / "benchmarks-wiki")
    for command, expected in steps:
        if command == "cat notes.md":
            (folder / "notes.md").write_text("\n".join(expected) + "\n", encoding="utf-8")
        for shown, real in sorted(seen.items(), key=lambda pair: -len(pair[0])):
            command = command.replace(shown, real)
        command = command.replace("~/.local/state/benchmarks-wiki", journal)
        # A documented wait of seconds is run with the same flags, scaled down.
        command = command.replace("--stop-after 5 --interval 1", "--stop-after 0.5 --interval 0.1")
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=folder,
                              timeout=60)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        output = (done.stdout + done.stderr).replace(env["SKILL"], "$SKILL").replace(journal,
                                                                                     "~/.local/state/benchmarks-wiki")
        matched(expected, output.replace("stopped: no new post for 0.5 s", "stopped: no new post for 5 s").splitlines(), seen)


def test_the_old_skill_goes_whatever_it_was_and_a_link_leaves_its_target(tmp_path):
    from benchmarks_wiki.cli.setting_up import install

    target = tmp_path / "kept"
    (target / "inner").mkdir(parents=True)
    for kind in ("folder", "link", "file"):
        old = tmp_path / kind / "benchmarks-wiki"
        old.parent.mkdir()
        if kind == "folder":
            (old / "inner").mkdir(parents=True)
        elif kind == "link":
            old.symlink_to(target, target_is_directory=True)
        else:
            old.write_text("old", encoding="utf-8")
        folder, _ = install(old.parent, force=True)
        assert (folder / "SKILL.md").is_file() and not folder.is_symlink()
        assert [path.name for path in old.parent.iterdir()] == ["benchmarks-wiki"]
    assert (target / "inner").is_dir()


@pytest.mark.parametrize("filename, named", [("/skills/benchmarks-wiki/SKILL.md", "/skills/benchmarks-wiki/SKILL.md"),
                                             (None, "/skills")])
def test_a_refused_write_names_the_file_it_failed_on_else_the_place_written(filename, named):
    with pytest.raises(SkillError) as caught:
        with skill._writing(Path("/skills")):
            raise OSError(28, "No space left on device", filename)
    assert str(caught.value).startswith(f"cannot write {named}: No space left on device;")
