"""Put a PTX line before each overlapped block's P.V wait (the
wgmma.wait_group 0 after a wait_group 1):
    python3 pin_fence.py IN.ptx OUT.ptx "fence.acq_rel.cta;"
"""

import sys

src, dst, line = sys.argv[1:4]
out, after_s_wait, patched = [], False, 0
for text in open(src):
    s = text.strip()
    if s.startswith("wgmma.wait_group.sync.aligned") and s.endswith("1;"):
        after_s_wait = True
    elif s.startswith("wgmma.wait_group.sync.aligned") and s.endswith("0;") and after_s_wait:
        out.append("\t" + line + "\n")
        after_s_wait = False
        patched += 1
    out.append(text)
open(dst, "w").write("".join(out))
print("patched", patched)
