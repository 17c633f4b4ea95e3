"""The allowed values of the trainers' numeric settings: each config class's ``RANGES`` (``{field: Range}``),
checked by :func:`check`, which raises ``ValueError("--flag must be <range>, got <value>")`` (NaN included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from c4jax.io.outdir import flag_name


@dataclass(frozen=True)
class Range:
    """The interval from ``low`` to ``high`` (``None``: unbounded), closed unless ``*_open``, and its ``note``."""

    low: float
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    note: str = ""

    def allows(self, value) -> bool:
        """Whether ``value`` lies in the interval (NaN never does)."""
        v = float(value)
        below = self.high is None or (v < self.high if self.high_open else v <= self.high)
        return (v > self.low if self.low_open else v >= self.low) and below and not math.isnan(v)

    @property
    def text(self) -> str:
        """The interval as text: ``>= 1``, ``> 0``, ``in [0, 1]``, ``in (0, 1]``, then the note."""
        if self.high is None:
            body = f"{'>' if self.low_open else '>='} {self.low:g}"
        else:
            body = f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"
        return f"{body} {self.note}".rstrip()


POSITIVE = Range(low=0, low_open=True)
"""``> 0``: a learning rate, a clip range, a temperature..."""
NON_NEGATIVE = Range(low=0)
"""``>= 0``: a weight, a penalty, a count that may be zero."""
ONE_OR_MORE = Range(low=1)
"""``>= 1``: a size or a count."""
UNIT = Range(low=0, high=1)
"""``in [0, 1]``: a share, a probability, a discount."""


def ranges_of(cls) -> dict[str, Range]:
    """The ranges of a config class: its bases' ``RANGES`` first, then its own."""
    merged: dict[str, Range] = {}
    for klass in reversed(cls.__mro__):
        merged.update(klass.__dict__.get("RANGES", {}))
    return merged


def check(cfg) -> None:
    """``ValueError`` naming the flag, the value and the range of the first field of ``cfg`` outside its
    class' range (:func:`ranges_of`)."""
    for name, allowed in ranges_of(type(cfg)).items():
        if not allowed.allows(getattr(cfg, name)):
            raise ValueError(f"{flag_name(name)} must be {allowed.text}, got {getattr(cfg, name)}")
