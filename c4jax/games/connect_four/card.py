"""Connect Four's card (:class:`c4jax.games.card.GameCard`)."""

from __future__ import annotations

from types import MappingProxyType

from c4jax.games.card import GameCard

CARD = GameCard(
    title="Connect Four",
    num_actions=7,
    cnet=True,  # CNET reads its boards
    random_start=True,  # the thesis' random start positions
    symmetric=True,  # the mirror
    yardstick=True,
    reference_agents=("random", "1steplA"),
    reference="1steplA",  # the thesis' yardstick of training progress
    baselines=("1steplA", "2steplA"),  # the thesis' tournament field starts with them; Table 5.1 times against them
    teacher="1steplA",  # the supervised stage imitates 1StepLA
    view="c4jax.games.connect_four.view",  # the play UI's page and watch's drawings
    defaults=MappingProxyType({"alphazero": MappingProxyType({"run": MappingProxyType(dict(
        eval_yardstick=True, eval_opponents=("2steplA",), select_by="yardstick"))})}),
)
