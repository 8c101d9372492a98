"""CI runs the README's test command: .ci/run's stages, joined by &&, are the README's second line exactly.

Usage: ci_run.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
readme = root.joinpath("README.md").read_text(encoding="utf-8").splitlines()
test_command = readme[2].strip()  # the README opens with a code block: the gate's command, then the test command
run = root.joinpath(".ci/run").read_text(encoding="utf-8")
body = run[run.index("\nstage ") + 1:]
stages = [s.strip() for s in re.sub(r"&&\s*\n\s*", "&& ", body).strip().split("&&")]
commands = [s[len("stage "):] for s in stages if s.startswith("stage ")]
if len(commands) != len(stages) or " && ".join(commands) != test_command:
    sys.exit(f".ci/run runs {' && '.join(commands)!r}, but README's test command is {test_command!r}")
print(f"ok: .ci/run runs README's test command in {len(commands)} stages")
