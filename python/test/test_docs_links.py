"""Every repository file the pages point at exists (CPU only, no build).

In README.md, docs/*.md, results/README.md and each run's
results/*/README.md: each markdown link `](target)` that is not a URL or
an anchor must resolve from the page's folder, and each path the text, a
table or a code block names under `docs/` or `results/` (globs and `{a,b}`
lists included) must match a file or folder. A moved or pruned results
folder fails here, naming the page.
"""

import glob
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "results" / "README.md",
    *sorted((ROOT / "results").glob("*/README.md")),
]

LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# A path starts at docs/ or results/ that is not the tail of another word
# or path (bench-results/, build/docs/, $OUT/results/).
REPO_PATH = re.compile(r"(?<![\w./$-])(?:docs|results)/(?:[\w./*\\-]|\{[^{}\s]*\})*")


def expand_braces(path: str) -> "list[str]":
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [p for alt in match.group(1).split(",") for p in expand_braces(head + alt + tail)]


def missing_links(page: Path, text: str) -> "list[str]":
    missing = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL (https:, mailto:) or an anchor on the same page
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            missing.append(f"link ]({target})")
    return missing


def missing_paths(text: str) -> "list[str]":
    missing = []
    for named in REPO_PATH.findall(text):
        named = named.replace("\\", "").rstrip(".")
        for path in expand_braces(named):
            if not glob.glob(str(ROOT / path)):
                missing.append(f"path {named}")
                break
    return missing


def missing(page: Path) -> "list[str]":
    text = page.read_text(encoding="utf-8")
    return missing_links(page, text) + missing_paths(text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_named_repo_path_exists(page):
    assert page.is_file(), f"{page.relative_to(ROOT)} is missing"
    broken = missing(page)
    assert not broken, f"{page.relative_to(ROOT)} names what is not in the repository:\n" + (
        "\n".join(f"  {b}" for b in dict.fromkeys(broken))
    )


def test_the_check_sees_a_broken_link_and_path(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "![plot](../results/no-such-run/plot.png) and results/no-such-run/{a,b}.log; "
        "[ok](page.md), [web](https://example.com), [here](#top), results/\n"
    )
    assert missing(page) == [
        "link ](../results/no-such-run/plot.png)",
        "path results/no-such-run/{a,b}.log",
    ]


def test_the_run_readmes_are_checked_from_their_own_folder(tmp_path):
    run = tmp_path / "results" / "some-run"
    run.mkdir(parents=True)
    (run / "plot.png").write_bytes(b"")
    page = run / "README.md"
    page.write_text(
        "![ok](plot.png) ![moved](../results/some-run/plot.png) [docs](../../docs/Nope.md)\n"
    )
    assert missing_links(page, page.read_text()) == [
        "link ](../results/some-run/plot.png)",
        "link ](../../docs/Nope.md)",
    ]
    # and the runs' own pages are among those checked
    assert any(p.parent.parent == ROOT / "results" for p in PAGES)
