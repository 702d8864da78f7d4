"""Prints the PTX held by the first gpu.binary in MLIR text read from stdin
(the attribute string escapes bytes as \\XX)."""

import re
import sys

text = sys.stdin.read()
match = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', text)
if not match:
    sys.exit("extract_ptx.py: no gpu.binary with PTX (assembly = ...) in the input")
sys.stdout.write(re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), match.group(1)))
