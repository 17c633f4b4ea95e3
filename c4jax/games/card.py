"""A game's card: what the commands read of a game before anything heavy loads (their defaults, the
checks of their flags), as plain data that imports neither JAX nor NumPy.

A registered game names its card in :data:`c4jax.games.CARDS`; its kit (:mod:`c4jax.games.kit`) takes
these fields from the card, so that the two never differ. :func:`c4jax.games.card_of` returns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


@dataclass(frozen=True)
class GameCard:
    """- ``title``, ``yardstick``, ``reference_agents``, ``reference``, ``teacher``, ``defaults``: the
    kit's fields of the same names (:class:`c4jax.games.kit.GameKit`);
    - ``num_actions``: the game's ``num_actions``;
    - ``cnet``: the kit's ``cnet``; ``random_start``, ``symmetric``: whether the kit has a ``random_start``
      and ``symmetries``;
    - ``view``: the kit's ``view``, the ``"module"`` or ``"module:ATTR"`` of what the play UI and ``watch``
      show of the game (:mod:`c4jax.games.viewbase`; ``None``: the game has none), a string imported on use."""

    title: str
    num_actions: int
    cnet: bool = False
    random_start: bool = False
    symmetric: bool = False
    yardstick: bool = False
    reference_agents: tuple[str, ...] = ("random",)
    reference: str | None = None
    teacher: str = "mcts100"
    view: str | None = None
    defaults: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=lambda: MappingProxyType({}),
                                                                     compare=False)

    @property
    def whole_games(self) -> bool:
        """Whether ``--collect games`` can play the game: its kit has the thesis' pieces (CNET boards, random
        start positions and a mirror; :func:`c4jax.learning.dqn_games.whole_games_fit`)."""
        return self.cnet and self.random_start and self.symmetric

    def defaults_of(self, algorithm: str) -> Mapping[str, Mapping[str, Any]]:
        """The flags of ``algorithm`` that differ on this game, per config section (empty if none)."""
        return self.defaults.get(algorithm, MappingProxyType({}))

    def kit_fields(self) -> dict[str, Any]:
        """The fields a kit takes from its card (``GameKit(game=..., **card.kit_fields(), ...)``)."""
        return dict(title=self.title, cnet=self.cnet, yardstick=self.yardstick, reference_agents=self.reference_agents,
                    reference=self.reference, teacher=self.teacher, view=self.view, defaults=self.defaults)
