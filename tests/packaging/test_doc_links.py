"""Every link between the repository's own Markdown pages leads somewhere: the
file exists and, when the link names a section, the page has that heading (as
GitHub makes a heading's anchor). A newcomer following examples/README.md to
``../README.md#tasks-and-cases`` found no such section."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.tasks import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    lines = page.read_text(encoding="utf-8").splitlines()
    return {anchor(line.lstrip("#")) for line in lines if re.match(r"#{1,6} ", line)}


def test_every_link_between_the_pages_leads_to_a_file_and_a_section_it_has():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "examples" / "README.md"]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            name, _, section = target.partition("#")
            linked = (page.parent / name).resolve() if name else page
            if not linked.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif section and linked.suffix == ".md" and section not in anchors(linked):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such section)")
    assert broken == []


# A page the command line's help sends the user to: "the README's warm runs",
# or "Warm runs" in docs/sandbox.md.
HELP_POINTER = re.compile(r"the (README)'s ([\w -]+?)[),;.]|\"([^\"]+)\" in (README\.md|docs/[\w.-]+\.md)")


def test_every_section_the_command_lines_help_points_to_is_there():
    """``--preload``'s help said "see the README's warm runs": the README has
    no such section (it is docs/sandbox.md's), and a user reading ``--help``
    looked for it in vain."""
    from verifier_tui.cli import COMMANDS, DESCRIPTION, OPTIONS

    texts = [DESCRIPTION, *COMMANDS.values(), *(str(keywords.get("help", "")) for *_, keywords in OPTIONS)]
    pointers = [match for text in texts for match in HELP_POINTER.finditer(" ".join(text.split()))]
    broken = []
    for match in pointers:
        page = REPO / ("README.md" if match[1] else match[4])
        section = match[2] or match[3]
        if not page.exists() or anchor(section) not in anchors(page):
            broken.append(match[0])
    assert broken == []
