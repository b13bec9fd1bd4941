"""The one build step pyproject.toml cannot express: a built package carries the skill's files
that live outside it (SKILL.md, LICENSE, reference/*.md and the three scripts) in
``benchmarks_wiki/skill_files/``, so that an installed package can pack and install the skill
with no checkout around it. The list comes from ``benchmarks_wiki.skill``, which reads them."""

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchmarks_wiki.cli.setting_up import BUNDLED, top_level_paths  # noqa: E402


class BuildWithSkillFiles(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the checkout itself
            return
        bundle = Path(self.build_lib) / "benchmarks_wiki" / BUNDLED
        shutil.rmtree(bundle, ignore_errors=True)  # nothing left over from an earlier build
        for relative in top_level_paths(ROOT):
            self.mkpath(str((bundle / relative).parent))
            self.copy_file(str(ROOT / relative), str(bundle / relative))


setup(cmdclass={"build_py": BuildWithSkillFiles})
