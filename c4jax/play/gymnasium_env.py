"""Any c4jax game as a single-agent Gymnasium environment against a c4jax agent (the ``gymnasium`` extra;
docs/guide/play.md describes its conventions).

The observation is the game's from the learner's side, ``info["action_mask"]`` (``int8[num_actions]``) its
legal actions; ``step`` plays the learner's action, then the opponent's until the learner is to move or
the game is over; the reward is the learner's result (+1 / -1 / 0) on the last step. A game ended by its
rules terminates, by its length cap truncates. An action the mask forbids ends the game with -1 for the
learner; one outside ``0 .. num_actions - 1`` raises ``ValueError``. ``player``: 0, 1 or ``"random"``
(drawn at every ``reset``); ``reset(seed=...)`` makes an episode replay exactly."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents, games
from c4jax.games.base import done
from c4jax.play.env_support import (
    RENDER_MODES,
    check_action,
    host,
    observation_bounds,
    programs,
    render_text,
    resolve_game,
    seed_key,
    summarize,
)

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("c4jax.play.gymnasium_env needs Gymnasium: pip install 'c4jax[gymnasium]'") from e


def resolve_opponent(opponent, game):
    """The agent of ``opponent`` (a name of :func:`c4jax.agents.load`, without or with the
    ``<game>/`` prefix, or an agent object); ``ValueError`` when it plays another game."""
    if isinstance(opponent, str):
        opponent = agents.load(opponent if "/" in opponent else agents.in_game(opponent, game.id))
    if not hasattr(opponent, "act_states"):
        raise ValueError(f"opponent must be an agent name or a c4jax agent (with act_states), got {opponent!r}")
    if agents.game_of(opponent) != game.id:
        raise ValueError(f"opponent {getattr(opponent, 'name', opponent)!r} plays {agents.game_of(opponent)}, "
                         f"not {game.id}")
    return opponent


def _learner_reward(before, after, learner):
    return jnp.where(done(before), 0.0, after.rewards[learner])


@functools.lru_cache(maxsize=None)
def _replies(game):
    """jit((opponent, state, key, learner) -> (summary, learner's reward)): the opponent moves until
    the learner is to move or the game is over; the summary (``env_support.Summary``) of the state
    it leaves (one program per game, compiled per opponent)."""

    def opponent_move(opponent, carry):
        state, key, learner, reward = carry
        key, sub = jax.random.split(key)
        batch = jax.tree.map(lambda x: x[None], state)
        action = opponent.act_states(batch, sub)[0]
        key, sub = jax.random.split(key)
        after = game.step(state, action, sub)
        return after, key, learner, reward + _learner_reward(state, after, learner)

    def replies(opponent, state, key, learner):
        def waiting(carry):
            state = carry[0]
            return ~done(state) & (state.current_player != carry[2])

        state, _, _, reward = jax.lax.while_loop(waiting, functools.partial(opponent_move, opponent),
                                                 (state, key, learner, jnp.float32(0.0)))
        return summarize(game, state), reward

    return jax.jit(replies)


class C4jaxGymEnv(gymnasium.Env):
    """A c4jax game against a c4jax agent as a Gymnasium environment (module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, game=games.DEFAULT, opponent="random", player: int | str = 0,
                 render_mode: str | None = None):
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}")
        if player not in (0, 1, "random"):
            raise ValueError(f"player must be 0, 1 or 'random', got {player!r}")
        self.game = resolve_game(game)
        self.opponent = resolve_opponent(opponent, self.game)
        self.player = player
        self.render_mode = render_mode
        low, high, dtype = observation_bounds(self.game)
        self.observation_space = spaces.Box(low, high, dtype=dtype)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self._programs = programs(self.game)
        self._replies = _replies(self.game)
        self._key = None
        self._learner = None
        self._now = None  # the env_support.Summary of the current state, fetched to the host

    @property
    def game_state(self):
        """The c4jax state of the game being played (``None`` before ``reset``)."""
        return None if self._now is None else self._now.state

    @property
    def learner(self) -> int | None:
        """The learner's player in the current episode (0 or 1; ``None`` before ``reset``)."""
        return self._learner

    def _answer(self, summary, reward: float):
        """Let the opponent reply, then (observation, reward, terminated, truncated, info)."""
        self._key, key = jax.random.split(self._key)
        now, extra = self._replies(self.opponent, summary.state, key, jnp.int32(self._learner))
        self._now = now = host(now)
        mine = int(now.current_player) == self._learner  # always so while the game goes on
        mask = now.mask if mine else np.zeros_like(now.mask)
        return (np.array(now.views[0 if mine else 1]), reward + float(extra), bool(now.terminated),
                bool(now.truncated), {"action_mask": mask.astype(np.int8)})

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        del options  # no options
        self._learner = int(self.np_random.integers(2)) if self.player == "random" else int(self.player)
        self._key, key = jax.random.split(seed_key(self.np_random))
        observation, _, _, _, info = self._answer(self._programs.init(key), 0.0)
        return observation, info

    def step(self, action):
        if self._now is None:
            raise RuntimeError("call reset() before step()")
        action = check_action(action, self.game.num_actions)
        self._key, key = jax.random.split(self._key)
        after = host(self._programs.step(self._now.state, jnp.int32(action), key))
        mine = 0.0 if self._now.terminated or self._now.truncated else float(after.rewards[self._learner])
        return self._answer(after, mine)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode: pass render_mode='ansi'")
            return None
        if self._now is None:
            raise RuntimeError("call reset() before render()")
        return render_text(self.game, self._now.state)


# gymnasium.make ids of the built-in games, "c4jax/<kit title without spaces>-v0" (keyword arguments of
# C4jaxGymEnv, such as opponent="1steplA", pass through make)
IDS = {f"c4jax/{games.kit_of(name).title.replace(' ', '')}-v0": name for name in games.GAMES}


def register() -> None:
    """Register :data:`IDS` with Gymnasium (done on import; registering again does nothing)."""
    for env_id, game in IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=C4jaxGymEnv, kwargs={"game": game})


register()
