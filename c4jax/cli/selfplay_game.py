"""What the DQN and PPO commands share for a ``--game`` other than Connect Four: the run's defaults,
the parsing of the command line (Connect Four's presets, or the other game's defaults) and the
training call. Each command keeps its own config classes, whose docstrings are its ``--help``."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from c4jax import games
from c4jax.io import cliargs
from c4jax.learning import config, loop
from c4jax.learning.algorithm import Algorithm


def loop_config(game: str, trainer: str, total_updates: int) -> loop.LoopConfig:
    """The run settings of ``trainer`` (``"dqn"``, ``"ppo"``) on ``game``: from scratch, out to
    ``runs/<game>/<trainer>``, evaluated against Random, the old network and pure MCTS with 100
    simulations (which also chooses best/), without the old-network rule (docs/results/checkers)."""
    return loop.LoopConfig(out=f"runs/{game}/{trainer}", game=game, init_from="", freeze_conv=False,
                           total_updates=total_updates, eval_opponents=("mcts100",), select_by="mcts100",
                           revert_drop=1.0)


def parse(argv: Sequence[str], connect_four_default: Any, game_defaults: Callable[[str], Any],
          prog: str | None = None) -> Any:
    """The command line's config: ``connect_four_default`` with its ``--preset`` for Connect Four,
    ``game_defaults(game)`` for another ``--game``. A command line it cannot take (an unknown ``--game``
    included) is one ``error:`` line and exit status 2 (:func:`c4jax.io.cliargs.one_line_errors`)."""
    argv = list(argv)
    with cliargs.one_line_errors(argv, prog):
        return config.game_cli(argv, lambda a: config.preset_cli(connect_four_default, a, prog=prog), game_defaults,
                               prog=prog)


def connect_four_only(argv: Sequence[str], trainer: str, others: str) -> None:
    """Refuse (one ``error:`` line, exit 2) a known ``--game`` other than Connect Four for ``trainer``, which
    trains Connect Four only, naming the commands (``others``) that train the other games; an unknown game
    is left to the parser."""
    game = config.preset_from_argv(argv, flag="--game", default=games.DEFAULT)
    if game != games.DEFAULT and game in games.GAMES and not {"-h", "--help"} & set(argv):
        cliargs.fail(f"--game {game}: {trainer} trains on {games.DEFAULT} only; {others} train on {game}")


def train(algo: Algorithm, run: loop.LoopConfig, algo_config: Any, width: int = 128) -> dict:
    """Train ``algo`` on the one loop; ``algo_config`` (a dataclass) is saved with the run. ``width``:
    the CNET's (a residual tower ignores it)."""
    return loop.run(algo, run, width=width, algo_config=dataclasses.asdict(algo_config))
