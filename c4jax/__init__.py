"""c4jax: a JAX-native Connect Four reinforcement-learning lab.

The package is layered; each subpackage imports only the ones listed before it:

- ``c4jax.games.connect_four``: the jitted environment (``env``), bitboards, the public board and its checks;
- ``c4jax.nets``: CNET128 and its heads;
- ``c4jax.io``: Orbax checkpoints with metadata, run logs and plots, tables, the device mesh;
- ``c4jax.agents``: the Agent protocol, Random and N-step lookahead, network agents, batched
  games between agents (``arena``), and ``agents.load(name)``;
- ``c4jax.evaluation``: protocol matches, tournaments, decision timing, ratings;
- ``c4jax.learning``: the supervised dataset and trainer, losses, buffers, DQN / REINFORCE / PPO
  and the one host loop that trains them;
- ``c4jax.play``: the browser UI.

Importing ``c4jax`` gives the game and the agents; the rest is imported on use.
"""

from c4jax import agents
from c4jax._version import __version__
from c4jax.agents import Agent, load
from c4jax.games.connect_four import env
from c4jax.games.connect_four.env import EnvState

__all__ = ["Agent", "EnvState", "__version__", "agents", "env", "load"]
