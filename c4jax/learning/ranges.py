"""The allowed values of the trainers' numeric settings: each config class's ``RANGES`` (``{field: Range}``),
checked by :func:`check`, which raises ``ValueError("--flag must be <range>, got <value>")`` (NaN included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class Range:
    """An interval ``low``/``high`` (``None``: unbounded), closed unless ``*_open``; ``note``: e.g. ``"(0 = auto)"``."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    note: str = ""

    def allows(self, value) -> bool:
        """Whether ``value`` lies in the interval (NaN never does)."""
        v = float(value)
        if math.isnan(v):
            return False
        if self.low is not None and (v <= self.low if self.low_open else v < self.low):
            return False
        if self.high is not None and (v >= self.high if self.high_open else v > self.high):
            return False
        return True

    @property
    def text(self) -> str:
        """The interval as text: ``>= 1``, ``> 0``, ``in [0, 1]``, ``in (0, 1]``."""
        if self.high is None:
            body = f"{'>' if self.low_open else '>='} {_number(self.low)}"
        elif self.low is None:
            body = f"{'<' if self.high_open else '<='} {_number(self.high)}"
        else:
            body = (f"in {'(' if self.low_open else '['}{_number(self.low)}, {_number(self.high)}"
                    f"{')' if self.high_open else ']'}")
        return f"{body} {self.note}" if self.note else body


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def at_least(low: float, note: str = "") -> Range:
    """``>= low``."""
    return Range(low=low, note=note)


POSITIVE = Range(low=0, low_open=True)
"""``> 0``: a learning rate, a clip range, a temperature..."""
NON_NEGATIVE = Range(low=0)
"""``>= 0``: a weight, a penalty, a count that may be zero."""
ONE_OR_MORE = Range(low=1)
"""``>= 1``: a size or a count."""
UNIT = Range(low=0, high=1)
"""``in [0, 1]``: a share, a probability, a discount."""


def flag(name: str) -> str:
    """The command-line flag of the field ``name``."""
    return "--" + name.replace("_", "-")


def ranges_of(cls) -> dict[str, Range]:
    """The ranges of a config class: its bases' ``RANGES`` first, then its own."""
    merged: dict[str, Range] = {}
    for klass in reversed(cls.__mro__):
        merged.update(klass.__dict__.get("RANGES", {}))
    return merged


def check_values(values: Mapping[str, object], ranges: Mapping[str, Range]) -> None:
    """``ValueError`` naming the flag, the value and the range of the first of ``values`` out of its range."""
    for name, allowed in ranges.items():
        value = values[name]
        if not allowed.allows(value):
            raise ValueError(f"{flag(name)} must be {allowed.text}, got {value}")


def check(cfg) -> None:
    """Check every field of ``cfg`` listed in its class' ranges (:func:`ranges_of`)."""
    check_values({name: getattr(cfg, name) for name in ranges_of(type(cfg))}, ranges_of(type(cfg)))
