"""A conformance suite for the game protocol (:mod:`c4jax.games.base`); it does not import pytest.

    from c4jax.games import testing
    testing.check(game)  # a ConformanceError names the game and the broken rule

:func:`check` runs :func:`check_attributes` (types, hashable, equal to itself), :func:`check_init`
(``init``'s fields, deterministic, equal under ``jit(vmap(...))``) and :func:`check_play` (random batched
games to their end: fields and observations at every step, rewards zero-sum and in [-1, 1], the legal mask
empty exactly when over, finished states absorbing, illegal actions in ``0..num_actions-1`` ending the game
with -1 for their mover, every game within ``max_steps``, ``jit``/``vmap`` equal to ``step``).
:func:`check_kit` checks a kit's ``observation_range``, ``other_observation``, ``match.alternating`` and
symmetries."""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from c4jax.games import base

FIELDS = ("current_player", "legal_action_mask", "rewards", "terminated", "truncated")
COMPARED_PLIES = 3  # plies of game 0 stepped unjitted and compared with the jitted step
ZERO_SUM_TOLERANCE = 1e-6


class ConformanceError(AssertionError):
    """A game breaks a rule of the protocol; the message starts with the game's id and the rule."""


@dataclass(frozen=True)
class Summary:
    """What :func:`check_play` played (all of it passed)."""

    game_id: str
    games: int  # random games played to their end
    steps: int  # counted steps (from an unfinished state) over all games
    longest: int  # the longest game, in steps
    illegal_steps: int  # illegal actions played from unfinished states


def _fail(game_id: str, rule: str, detail: str = "") -> None:
    raise ConformanceError(f"{game_id}: {rule}" + (f" ({detail})" if detail else ""))


def _name(game) -> str:
    game_id = getattr(game, "id", None)
    return game_id if isinstance(game_id, str) and game_id else repr(game)


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _host(x) -> np.ndarray:
    """A leaf as numpy (PRNG keys as their key data)."""
    if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(jax.device_get(x))


def _difference(a, b, values: bool = True) -> str | None:
    """Where two pytrees differ (structure, shape, dtype and with ``values`` values), or None."""
    paths_a, tree_a = jax.tree_util.tree_flatten_with_path(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    if tree_a != tree_b:
        return f"pytree structures differ: {tree_a} vs {tree_b}"
    for (path, x), y in zip(paths_a, leaves_b):
        where = jax.tree_util.keystr(path) or "the value"
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{where}: {x.dtype}{list(x.shape)} {'vs' if values else 'became'} {y.dtype}{list(y.shape)}"
        if values:
            x, y = _host(x), _host(y)
            if not np.array_equal(x, y, equal_nan=np.issubdtype(x.dtype, np.inexact)):
                return f"{where}: {x.ravel()[:8].tolist()} vs {y.ravel()[:8].tolist()}"
    return None


def _item(tree, i: int):
    return jax.tree.map(lambda x: x[i], tree)


# --------------------------------------------------------------------------- attributes


def check_attributes(game) -> str:
    """The game's id, after checking the protocol's attributes and that the game is hashable
    and equal to itself."""
    name = _name(game)
    missing = [n for n in ("id", "num_actions", "num_players", "observation_shape", "max_steps", "init", "step",
                           "observe") if not hasattr(game, n)]
    if missing:
        _fail(name, "a game must have every attribute of c4jax.games.base.Game", f"missing: {', '.join(missing)}")
    if not isinstance(game.id, str) or not game.id:
        _fail(name, "id must be a non-empty str", f"got {game.id!r}")
    for attr in ("num_actions", "max_steps"):
        value = getattr(game, attr)
        if not _is_int(value) or value <= 0:
            _fail(name, f"{attr} must be an int > 0", f"got {value!r}")
    if not _is_int(game.num_players) or game.num_players != 2:
        _fail(name, "num_players must be 2: two-player games only", f"got {game.num_players!r}")
    shape = game.observation_shape
    if not isinstance(shape, tuple) or not all(_is_int(d) and d >= 0 for d in shape):
        _fail(name, "observation_shape must be a tuple of ints >= 0", f"got {shape!r}")
    for attr in ("init", "step", "observe"):
        if not callable(getattr(game, attr)):
            _fail(name, f"{attr} must be callable")
    try:
        hash(game)
    except TypeError as e:
        _fail(name, "the game object must be hashable: it is a static argument of jit", str(e))
    if not operator.eq(game, game):
        _fail(name, "the game object must equal itself: it is a static argument of jit")
    return name


# --------------------------------------------------------------------------- jitted programs
# The game is a static argument: each program compiles once per game (and batch size) and is reused.


@functools.partial(jax.jit, static_argnums=0)
def _init_batch(game, keys):
    states = jax.vmap(game.init)(keys)
    return states, {f: getattr(states, f) for f in FIELDS}, jax.vmap(game.observe)(states)


@functools.partial(jax.jit, static_argnums=0)
def _step_batch(game, states, actions, keys):
    after = jax.vmap(game.step)(states, actions, keys)
    fields = {f: getattr(after, f) for f in FIELDS}
    return after, fields, jax.vmap(game.observe)(after), base.mover_reward(states, after)


@functools.partial(jax.jit, static_argnums=0)
def _step_one(game, state, action, key):
    return game.step(state, action, key)


def _call(name: str, what: str, fn, *args):
    """``fn(*args)``, the game's own exception turned into a ConformanceError naming the call."""
    try:
        return fn(*args)
    except ConformanceError:
        raise
    except Exception as e:  # the game's own error, reported with the call that raised it
        raise ConformanceError(f"{name}: {what} raised {type(e).__name__}: {e}") from e


# --------------------------------------------------------------------------- field checks


def _check_fields(name: str, game, fields: dict, batch: tuple[int, ...], where: str) -> dict[str, np.ndarray]:
    """The protocol fields as numpy arrays, after checking their dtypes, shapes and values."""
    expected = {"current_player": (np.int32, ()), "legal_action_mask": (np.bool_, (game.num_actions,)),
                "rewards": (np.float32, (game.num_players,)), "terminated": (np.bool_, ()),
                "truncated": (np.bool_, ())}
    out = {}
    for field, (dtype, shape) in expected.items():
        x = _host(fields[field])
        if x.dtype != dtype or x.shape != batch + shape:
            _fail(name, f"state.{field} must be {np.dtype(dtype).name}{list(shape)}",
                  f"{where}: got {x.dtype}{list(x.shape[len(batch):])}")
        out[field] = x
    player = out["current_player"]
    if not np.isin(player, (0, 1)).all():
        _fail(name, "current_player must be 0 or 1", f"{where}: got {sorted(set(player.ravel().tolist()))}")
    if not np.isfinite(out["rewards"]).all():
        _fail(name, "rewards must be finite", f"{where}: got {out['rewards'].tolist()}")
    return out


def _fields_of(name: str, state) -> dict:
    missing = [f for f in FIELDS if not hasattr(state, f)]
    if missing:
        _fail(name, "a state must have every field of the protocol", f"missing: {', '.join(missing)}")
    return {f: getattr(state, f) for f in FIELDS}


def _check_observation(name: str, game, obs, batch: tuple[int, ...], dtype, where: str) -> None:
    obs = jnp.asarray(obs)
    if obs.shape != batch + tuple(game.observation_shape):
        _fail(name, "observe(state) must have observation_shape",
              f"{where}: got {list(obs.shape[len(batch):])}, observation_shape {list(game.observation_shape)}")
    if dtype is not None and obs.dtype != dtype:
        _fail(name, "observe(state) must keep one dtype", f"{where}: got {obs.dtype}, first {dtype}")


# --------------------------------------------------------------------------- init


def _check_start(name: str, fields: dict, where: str) -> None:
    """Start positions: not finished, a legal action, zero rewards."""
    if (fields["terminated"] | fields["truncated"]).any():
        _fail(name, "init(key) must not be finished: terminated and truncated False", where)
    if not fields["legal_action_mask"].any(-1).all():
        _fail(name, "init(key) must have a legal action", where)
    if fields["rewards"].any():
        _fail(name, "init(key) must have zero rewards", f"{where}: got {fields['rewards'].tolist()}")


def check_init(game, *, seed: int = 0):
    """Check ``init(key)`` and ``observe`` of it; returns the observation's dtype."""
    name = check_attributes(game)
    key = jax.random.key(seed)
    state = _call(name, "init(key)", game.init, key)
    _check_start(name, _check_fields(name, game, _fields_of(name, state), (), "init(key)"), "init(key)")
    diff = _difference(state, _call(name, "init(key)", game.init, key))
    if diff:
        _fail(name, "init must be deterministic: the same key gives the same state", diff)
    obs = _call(name, "observe(state)", game.observe, state)
    _check_observation(name, game, obs, (), None, "observe(init(key))")
    dtype = jnp.asarray(obs).dtype
    keys = jax.random.split(key, 2)
    states, _, observations = _call(name, "jit(vmap(init))", _init_batch, game, keys)
    diff = _difference(_item(states, 1), game.init(keys[1]))
    if diff:
        _fail(name, "jit(vmap(init)) must equal init on each key", diff)
    _check_observation(name, game, observations, (2,), dtype, "jit(vmap(observe))")
    diff = _difference(observations[1], game.observe(game.init(keys[1])))
    if diff:
        _fail(name, "jit(vmap(observe)) must equal observe on each state", diff)
    return dtype


# --------------------------------------------------------------------------- random games


def _random_actions(rng: np.random.Generator, allowed: np.ndarray) -> np.ndarray:
    """int32[B]: a uniformly random action among ``allowed`` per row (any where none is)."""
    scores = rng.random(allowed.shape)
    scores = np.where(allowed | ~allowed.any(-1, keepdims=True), scores, -1.0)
    return scores.argmax(-1).astype(np.int32)


def _compare_single(name: str, game, states, actions, keys, after, obs, rows, t: int, eager: bool) -> None:
    """vmap(step) against the jitted single-state step on ``rows``; with ``eager`` also the
    unjitted step (twice) and observe."""
    for i in rows:
        state, action, key = _item(states, i), jnp.asarray(actions[i]), keys[i]
        alone = _call(name, "jit(step)", _step_one, game, state, action, key)
        if eager:
            unjitted = _call(name, "step(state, action, key)", game.step, state, action, key)
            diff = _difference(unjitted, game.step(state, action, key))
            if diff:
                _fail(name, "step must be deterministic: the same state, action and key give the same state",
                      f"game {i}, step {t}: {diff}")
            diff = _difference(alone, unjitted)
            if diff:
                _fail(name, "jit(step) must equal step", f"game {i}, step {t}: {diff}")
            diff = _difference(obs[i], _call(name, "observe(state)", game.observe, unjitted))
            if diff:
                _fail(name, "jit(vmap(observe)) must equal observe on each state", f"game {i}, step {t}: {diff}")
        diff = _difference(_item(after, i), alone)
        if diff:
            _fail(name, "vmap(step) must equal step on each state", f"game {i}, step {t}: {diff}")


def _check_step(name: str, game, before: dict, after: dict, illegal: np.ndarray, t: int, what: str = "") -> None:
    """The rules of one batched step; ``illegal``: bool[B], the action played was not legal."""
    done_before = before["terminated"] | before["truncated"]
    done_after = after["terminated"] | after["truncated"]
    mask = after["legal_action_mask"]
    rewards = after["rewards"]

    def first(bad):
        i = int(np.flatnonzero(bad)[0])
        return i, f"game {i}, step {t}{what}"

    if (bad := done_before & ~done_after).any():
        i, where = first(bad)
        _fail(name, "finished states must be absorbing: stepping one returns a finished state", where)
    if (bad := done_after & mask.any(-1)).any():
        i, where = first(bad)
        _fail(name, "the legal mask must be all False once the game is over", f"{where}: {mask[i].sum()} legal")
    if (bad := ~done_after & ~mask.any(-1)).any():
        i, where = first(bad)
        _fail(name, "a game that is not over must have a legal action", where)
    counted = ~done_before
    if (bad := counted & (np.abs(rewards.sum(-1)) > ZERO_SUM_TOLERANCE)).any():
        i, where = first(bad)
        _fail(name, "rewards must be zero-sum", f"{where}: rewards {rewards[i].tolist()}")
    if (bad := counted & ~illegal & (np.abs(rewards) > 1.0).any(-1)).any():
        i, where = first(bad)
        _fail(name, "rewards of a legal action must lie in [-1, 1]", f"{where}: rewards {rewards[i].tolist()}")


def _check_illegal(name: str, game, states, fields: dict, rng, keys, t: int) -> int:
    """Play an illegal action in every unfinished game that has one and check that it ends with
    -1 for its mover; returns how many were played."""
    done = fields["terminated"] | fields["truncated"]
    mask = fields["legal_action_mask"]
    rows = ~done & ~mask.all(-1)
    if not rows.any():
        return 0
    actions = _random_actions(rng, ~mask)
    _, new, _, mover = _call(name, "jit(vmap(step))", _step_batch, game, states, jnp.asarray(actions), keys)
    new = _check_fields(name, game, new, rows.shape, f"after an illegal action at step {t}")
    mover = _host(mover)
    ended = new["terminated"] | new["truncated"]
    if (bad := rows & (~ended | (mover != -1.0))).any():
        i = int(np.flatnonzero(bad)[0])
        _fail(name, "an illegal action must end the game with -1 for its mover",
              f"game {i}, step {t}: action {actions[i]}, finished {bool(ended[i])}, mover's reward {mover[i]}, "
              f"rewards {new['rewards'][i].tolist()}")
    _check_step(name, game, fields, new, rows, t, ", the batch playing illegal actions")
    return int(rows.sum())


def check_play(game, *, games: int = 16, seed: int = 0, obs_dtype=None) -> Summary:
    """Play ``games`` random games to their end (and one step beyond), checking every step.
    ``obs_dtype``: the observation's dtype (default: the first batch's)."""
    name = check_attributes(game)
    if not _is_int(games) or games < 1:
        raise ValueError(f"games must be an int >= 1, got {games!r}")
    root = jax.random.key(seed)
    states, fields, obs = _call(name, "jit(vmap(init))", _init_batch, game, jax.random.split(root, games))
    batch = (games,)
    fields = _check_fields(name, game, fields, batch, "jit(vmap(init))")
    _check_start(name, fields, "jit(vmap(init))")
    obs_dtype = obs.dtype if obs_dtype is None else obs_dtype
    _check_observation(name, game, obs, batch, obs_dtype, "jit(vmap(observe(init)))")
    step_keys = jax.random.split(jax.random.fold_in(root, 1), (game.max_steps + 1, games))
    rng = np.random.default_rng(seed)
    lengths = np.zeros(games, np.int64)
    steps = illegal_steps = 0
    compared_mixed = False
    for t in range(game.max_steps + 1):
        done = fields["terminated"] | fields["truncated"]
        if t == game.max_steps and not done.all():
            i = int(np.flatnonzero(~done)[0])
            _fail(name, "every game must end within max_steps steps",
                  f"game {i} is not over after max_steps={game.max_steps} steps")
        keys = step_keys[t]
        illegal_steps += _check_illegal(name, game, states, fields, rng, keys, t)
        actions = _random_actions(rng, fields["legal_action_mask"])
        after, new, obs, _ = _call(name, "jit(vmap(step))", _step_batch, game, states, jnp.asarray(actions), keys)
        diff = _difference(states, after, values=False)
        if diff:
            _fail(name, "step must return a state of the same structure, shapes and dtypes: lax.scan carries it",
                  f"step {t}: {diff}")
        new = _check_fields(name, game, new, batch, f"step {t}")
        _check_observation(name, game, obs, batch, obs_dtype, f"step {t}")
        _check_step(name, game, fields, new, np.zeros(games, bool), t)
        mixed = done.any() and not done.all() and not compared_mixed  # the first step with a finished game
        if t < COMPARED_PLIES or mixed or done.all():
            rows = sorted({0, games - 1} | ({int(np.flatnonzero(done)[0])} if done.any() else set()))
            _compare_single(name, game, states, actions, keys, after, obs, rows, t, eager=t < COMPARED_PLIES)
            compared_mixed |= mixed
        steps += int((~done).sum())
        lengths += ~done
        if done.all():
            break  # this step checked that finished states absorb any action
        states, fields = after, new
    return Summary(game_id=name, games=games, steps=steps, longest=int(lengths.max()), illegal_steps=illegal_steps)


def check(game, *, games: int = 16, seed: int = 0) -> Summary:
    """Run every check of this module on ``game`` (a ConformanceError names the first broken rule)."""
    dtype = check_init(game, seed=seed)
    return check_play(game, games=games, seed=seed, obs_dtype=dtype)


def _check_observed(name: str, kit, obs: np.ndarray, low, high, what: str, t: int) -> None:
    if (obs.shape[1:], obs.dtype) != (tuple(kit.game.observation_shape), low.dtype):
        _fail(name, f"{what} must have observation_shape and observe's dtype",
              f"step {t}: got {obs.dtype}{list(obs.shape[1:])}")
    if kit.observation_range is not None:
        bad = ((obs < low) | (obs > high)).reshape(len(obs), -1).any(-1)
        if bad.any():
            _fail(name, f"{what} must lie within the kit's observation_range", f"game {int(np.argmax(bad))}, step {t}")


@functools.partial(jax.jit, static_argnums=0)
def _observe_both(kit, states):
    other = kit.other_observation or kit.game.observe
    return jax.vmap(kit.game.observe)(states), jax.vmap(other)(states)


def check_kit(kit, *, games: int = 16, seed: int = 0) -> str:
    """Check what ``kit`` says of its game over ``games`` random games; returns the game's id."""
    game = kit.game
    name = check_attributes(game)
    for sym in kit.symmetries:
        if sorted(sym.actions) != list(range(game.num_actions)):
            _fail(name, "a symmetry's actions must be a permutation of the actions", f"{sym.name}: {sym.actions}")
    states, fields, _ = _call(name, "jit(vmap(init))", _init_batch, game, jax.random.split(jax.random.key(seed), games))
    fields = {f: _host(x) for f, x in fields.items()}
    rng = np.random.default_rng(seed)
    dtype = None
    for t in range(game.max_steps + 1):
        obs, other = (_host(x) for x in _call(name, "observe / other_observation", _observe_both, kit, states))
        dtype = obs.dtype if dtype is None else dtype
        bounds = kit.observation_range or (0, 0)
        low, high = (np.broadcast_to(np.asarray(x, dtype), obs.shape[1:]) for x in bounds)
        _check_observed(name, kit, obs, low, high, "observe(state)", t)
        _check_observed(name, kit, other, low, high, "other_observation(state)", t)
        for sym in kit.symmetries:
            image = jax.eval_shape(sym.observation, jax.ShapeDtypeStruct(obs.shape, obs.dtype))
            if (image.shape, image.dtype) != (obs.shape, obs.dtype):
                _fail(name, "a symmetry's observation must keep the observation's shape and dtype",
                      f"{sym.name}: got {image.dtype}{list(image.shape[1:])}")
        done = fields["terminated"] | fields["truncated"]
        if done.all():
            return name
        actions = _random_actions(rng, fields["legal_action_mask"])
        keys = jax.random.split(jax.random.fold_in(jax.random.key(seed), t), games)
        states, new, _, _ = _call(name, "jit(vmap(step))", _step_batch, game, states, jnp.asarray(actions), keys)
        new = {f: _host(x) for f, x in new.items()}
        same = ~done & ~(new["terminated"] | new["truncated"]) & (new["current_player"] == fields["current_player"])
        if kit.match.alternating and same.any():
            _fail(name, "the kit's match.alternating says the player to move changes at every ply",
                  f"game {int(np.argmax(same))}, step {t}: player {int(fields['current_player'][np.argmax(same)])} "
                  "moves again")
        fields = new
    _fail(name, "every game must end within max_steps steps")


__all__ = ["ConformanceError", "Summary", "check", "check_attributes", "check_init", "check_kit", "check_play"]
