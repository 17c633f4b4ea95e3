"""The Markdown files hold together: every relative link (and its #anchor) resolves, and no table
is a header without rows."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def markdown_files() -> list[Path]:
    """The Markdown files of the repository (git's list when it has one, else every .md file below it)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        files = [ROOT / line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):
        files = [p for p in ROOT.rglob("*.md") if ".venv" not in p.parts and "runs" not in p.parts]
    return sorted(p for p in files if p.is_file())


def prose_lines(text: str, keep_code: bool = False) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with inline code spans blanked out (kept
    with ``keep_code``: headings keep their code spans' text)."""
    out, fence = [], None
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            marker = m.group(1)[0] * 3
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is None:
            out.append((i, line if keep_code else re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line)))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: markup dropped, lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every heading anchor of a Markdown file (GitHub numbers repeated ones: x, x-1, x-2 ...)."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines_raw(path):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def prose_lines_raw(path: Path) -> list[tuple[int, str]]:
    """Lines outside fenced code blocks, inline code kept (headings keep their code spans' text)."""
    return prose_lines(path.read_text(), keep_code=True)


def broken_links(path: Path) -> list[str]:
    problems = []
    for i, line in prose_lines(path.read_text()):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = path if not file_part else (path.parent / file_part).resolve()
            where = f"{path.relative_to(ROOT)}:{i}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif ROOT not in dest.parents and dest != ROOT:
                problems.append(f"{where}: outside the repository")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: no heading with the anchor #{anchor}")
    return problems


def empty_tables(path: Path) -> list[str]:
    """Every table (a block of lines starting with '|') must be a header, a separator and at least one row."""
    lines = prose_lines_raw(path)
    problems = []
    for k, (i, header) in enumerate(lines):
        if not header.lstrip().startswith("|"):
            continue
        if k > 0 and lines[k - 1][0] == i - 1 and lines[k - 1][1].lstrip().startswith("|"):
            continue  # inside a table
        block = [header]
        for j, line in lines[k + 1:]:
            if j != i + len(block) or not line.lstrip().startswith("|"):
                break
            block.append(line)
        if len(block) < 3 or not SEPARATOR.match(block[1]):
            problems.append(f"{path.relative_to(ROOT)}:{i}: a table header without rows: {header.strip()[:80]}")
    return problems


FILES = markdown_files()


def test_the_markdown_files_are_found():
    names = {str(p.relative_to(ROOT)) for p in FILES}
    assert {"README.md", "docs/guide/README.md", "docs/design.md", "docs/results/README.md"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_table_is_a_header_without_rows(path):
    assert empty_tables(path) == []


def test_the_checks_find_what_they_look_for(tmp_path, monkeypatch):
    """The link and table checks on a planted file: a missing file, a missing anchor, an empty table."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)  # this module (imported by path)
    (tmp_path / "b.md").write_text("# Title\n\n## Several devices and hosts\n\n## Title\n")
    doc = tmp_path / "a.md"
    doc.write_text("[ok](b.md#several-devices-and-hosts) [ok2](b.md#title-1) ![img](missing.png)\n"
                   "[bad](b.md#nowhere) [web](https://example.org/x) `[code](nothing.md)`\n\n"
                   "```\n[fenced](nothing.md)\n```\n\n| a | b |\n| --- | ---: |\n\ntext\n\n| c |\n|---|\n| 1 |\n")
    assert broken_links(doc) == ["a.md:1: missing.png: no such file", "a.md:2: b.md#nowhere: no heading with the anchor #nowhere"]
    assert empty_tables(doc) == ["a.md:8: a table header without rows: | a | b |"]
    doc.write_text("| agent | c4jax | thesis |\n## Next section\n\n| x |\n| --- |\n| 1 |\n| 2 |\n")
    assert empty_tables(doc) == ["a.md:1: a table header without rows: | agent | c4jax | thesis |"]
    assert slug("Training against a fixed opponent (`--opponent`)") == "training-against-a-fixed-opponent---opponent"
    assert slug("5.3 Ranking: c4jax – thesis") == "53-ranking-c4jax--thesis"
