#!/usr/bin/env python3
"""Runs a tool and prints its output with one mutant applied.

Usage: mutate_output.py MUTANT TOOL [ARGS...]

The lit suite's tiledattn-opt under `lit --param mutant=MUTANT`
(scripts/mutation_check.py): the tool's stdout goes through
scripts/mutants.py's mutate_text; stderr and the exit status pass through.
"""

import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mutants  # noqa: E402


def main():
    mutant, tool, *args = sys.argv[1:]
    run = subprocess.run([tool, *args], stdout=subprocess.PIPE)
    text, _ = mutants.mutate_text(mutant, run.stdout.decode())
    sys.stdout.write(text)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
