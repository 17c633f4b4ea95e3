"""Any c4jax game as a PettingZoo AEC environment (the ``pettingzoo`` extra), in the conventions of
PettingZoo's classic environments (docs/guide/play.md).

The agents ``"player_0"`` and ``"player_1"`` are the game's players 0 and 1, and may move several times in
a row where the game says so. An agent observes ``{"observation": ..., "action_mask": int8[num_actions]}``
from its own side (all 0 when it is not to move). Rewards are the game's; a game ended by its rules
terminates both agents, by its length cap truncates them. An action the mask forbids ends the game with
-1 for its mover; one outside ``0 .. num_actions - 1`` raises ``ValueError``. ``render_mode="ansi"``:
``render()`` returns the game's text diagram."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import games
from c4jax.play.env_support import (
    AGENTS,
    RENDER_MODES,
    check_action,
    host,
    observation_bounds,
    programs,
    render_text,
    resolve_game,
    seed_key,
)

try:
    from gymnasium import logger, spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("c4jax.play.pettingzoo_env needs PettingZoo: pip install 'c4jax[pettingzoo]'") from e


class C4jaxAECEnv(AECEnv):
    """A c4jax game as a PettingZoo AEC environment (module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "c4jax_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, game=games.DEFAULT, render_mode: str | None = None):
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}")
        self.game = resolve_game(game)
        self.render_mode = render_mode
        self.metadata = dict(self.metadata, name=f"c4jax_{self.game.id.replace(':', '_')}_v0")
        self.possible_agents = list(AGENTS)
        low, high, dtype = observation_bounds(self.game)
        n = self.game.num_actions
        self.observation_spaces = {
            a: spaces.Dict({"observation": spaces.Box(low, high, dtype=dtype),
                            "action_mask": spaces.Box(0, 1, (n,), np.int8)})
            for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self._programs = programs(self.game)
        self._rng: np.random.Generator | None = None
        self._key = None
        self._now = None  # the env_support.Summary of the current state, fetched to the host

    @property
    def game_state(self):
        """The c4jax state of the game being played (``None`` before ``reset``)."""
        return None if self._now is None else self._now.state

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a game; ``seed`` seeds the keys the game and its steps are handed (pgx games draw
        their first player from it), ``None`` goes on from the last seed (fresh entropy at first)."""
        del options  # no options
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self._key, key = jax.random.split(seed_key(self._rng))
        self._now = host(self._programs.init(key))
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = AGENTS[int(self._now.current_player)]

    def observe(self, agent) -> dict:
        if self._now is None:
            raise RuntimeError("call reset() before observe()")
        mover = agent == AGENTS[int(self._now.current_player)]
        mask = self._now.mask if mover else np.zeros_like(self._now.mask)
        return {"observation": np.array(self._now.views[0 if mover else 1]), "action_mask": mask.astype(np.int8)}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = check_action(action, self.game.num_actions)
        self._cumulative_rewards[agent] = 0.0
        self._key, key = jax.random.split(self._key)
        self._now = now = host(self._programs.step(self._now.state, jnp.int32(action), key))
        self.rewards = {a: float(now.rewards[i]) for i, a in enumerate(AGENTS)}
        if now.terminated or now.truncated:
            self.terminations = {a: bool(now.terminated) for a in self.agents}
            self.truncations = {a: not bool(now.terminated) for a in self.agents}
        self.agent_selection = AGENTS[int(now.current_player)]
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            logger.warn("render() was called without a render_mode: pass render_mode='ansi'")
            return None
        if self._now is None:
            raise RuntimeError("call reset() before render()")
        return render_text(self.game, self._now.state)

    def close(self) -> None:
        """Nothing to release (the compiled programs are shared by every environment of the game)."""


def raw_env(game=games.DEFAULT, render_mode: str | None = None) -> C4jaxAECEnv:
    """The environment itself, without PettingZoo's wrappers."""
    return C4jaxAECEnv(game, render_mode)


def env(game=games.DEFAULT, render_mode: str | None = None):
    """The environment wrapped as PettingZoo's classic environments are: out-of-range actions and
    calls before ``reset`` raise."""
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(raw_env(game, render_mode)))
