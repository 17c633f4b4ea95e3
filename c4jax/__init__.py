"""c4jax: a JAX-native Connect Four reinforcement-learning lab.

The package is layered; each subpackage imports only the ones listed before it:

- ``c4jax.games``: the game protocol, each game's kit and its folder (Connect Four's jitted
  environment, bitboards, public board and checks, its own players as pure functions);
- ``c4jax.nets``: CNET128 and its heads;
- ``c4jax.io``: Orbax checkpoints with metadata, run logs and plots, tables, the device mesh;
- ``c4jax.agents``: the Agent protocol, Random and the games' own players, network agents, batched
  games between agents (``arena``), and ``agents.load(name)``;
- ``c4jax.evaluation``: protocol matches, tournaments, decision timing, ratings;
- ``c4jax.learning``: the supervised dataset and trainer, losses, buffers, DQN / REINFORCE / PPO
  and the one host loop that trains them;
- ``c4jax.play``: the browser UI.

Importing ``c4jax`` gives the agents and ``c4jax.env``, the environment of the default game
(:data:`c4jax.games.DEFAULT`, Connect Four: its kit's ``env``); the rest is imported on use.
"""

import importlib

from c4jax import agents, games
from c4jax._version import __version__
from c4jax.agents import Agent, load

env = importlib.import_module(games.kit_of(games.DEFAULT).env)
EnvState = env.EnvState

__all__ = ["Agent", "EnvState", "__version__", "agents", "env", "load"]
