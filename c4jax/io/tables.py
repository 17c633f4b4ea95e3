"""Markdown and CSV tables: the one table writer of reports, tournaments and sweeps."""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MISSING = "–"


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


@dataclass(frozen=True)
class Table:
    """A small host-side table, written as markdown and CSV. ``rows`` hold raw values (``None`` or
    ``nan``: ``–`` in markdown, empty in CSV); ``formats``: a markdown format spec per column (``""``:
    ``str``); CSV keeps full precision."""

    name: str  # file stem, e.g. "table_5_2_first_player"
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple, ...]
    formats: tuple[str, ...] = ()
    note: str = ""

    def _cell(self, v, fmt: str) -> str:
        if _is_missing(v):
            return MISSING
        if fmt and isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            return format(v, fmt)
        return str(v).replace("|", "\\|")

    def to_markdown(self, title: bool = True) -> str:
        fmts = self.formats or ("",) * len(self.header)
        numeric = [any(isinstance(r[c], (int, float, np.integer, np.floating)) and not isinstance(r[c], bool)
                       for r in self.rows) for c in range(len(self.header))]
        lines = [f"### {self.title}", ""] if title else []
        lines.append("| " + " | ".join(h.replace("|", "\\|") for h in self.header) + " |")
        lines.append("| " + " | ".join("---:" if num else "---" for num in numeric) + " |")
        for r in self.rows:
            lines.append("| " + " | ".join(self._cell(v, f) for v, f in zip(r, fmts)) + " |")
        if self.note and title:
            lines += ["", self.note]
        return "\n".join(lines) + "\n"

    def to_csv(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.header)
            for r in self.rows:
                w.writerow(["" if _is_missing(v) else (repr(float(v)) if isinstance(v, (float, np.floating)) else v)
                            for v in r])
        return path

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "header": list(self.header),
                "rows": [[None if _is_missing(v) else (v.item() if isinstance(v, np.generic) else v) for v in r]
                         for r in self.rows]}
