"""A game's card: what the commands read of a game before anything heavy loads, as plain data that
imports neither JAX nor NumPy. A registered game's kit takes these fields from its card."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


@dataclass(frozen=True)
class GameCard:
    """``title``, ``cnet``, ``yardstick``, ``reference_agents``, ``reference``, ``baselines``, ``teacher``,
    ``view``, ``defaults``: the kit's fields of those names; ``num_actions``: the game's; ``random_start``,
    ``symmetric``: whether the kit has a ``random_start`` and ``symmetries``."""

    title: str
    num_actions: int
    cnet: bool = False
    random_start: bool = False
    symmetric: bool = False
    yardstick: bool = False
    reference_agents: tuple[str, ...] = ("random",)
    reference: str | None = None
    baselines: tuple[str, ...] = ()
    teacher: str = "mcts100"
    view: str | None = None
    defaults: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=lambda: MappingProxyType({}),
                                                                     compare=False)

    @property
    def whole_games(self) -> bool:
        """Whether ``--collect games`` can play the game (CNET boards, random starts and a mirror)."""
        return self.cnet and self.random_start and self.symmetric

    def defaults_of(self, algorithm: str) -> Mapping[str, Mapping[str, Any]]:
        """The flags of ``algorithm`` that differ on this game, per config section (empty if none)."""
        return self.defaults.get(algorithm, MappingProxyType({}))

    def kit_fields(self) -> dict[str, Any]:
        """The fields a kit takes from its card."""
        return dict(title=self.title, cnet=self.cnet, yardstick=self.yardstick, reference_agents=self.reference_agents,
                    reference=self.reference, baselines=self.baselines, teacher=self.teacher, view=self.view, defaults=self.defaults)
