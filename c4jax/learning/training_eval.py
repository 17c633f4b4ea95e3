"""The evaluation between two chunks of training (design.md §7): each seed's current network plays one
protocol match against each opponent (and optionally the yardstick); seed ``s``'s evaluation ``n`` uses
the same key whatever ``--vmap-seeds`` is.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents, evaluation
from c4jax.agents.base import Agent
from c4jax.io import devices
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.stacked import seed_slice

YARDSTICK_SALT = 0x7A5D  # the yardstick's sampling key: the evaluation key folded with this

AgentOf = Callable[[Any, str], Agent]  # (params, label) -> the network as the evaluation plays it


class Settings(Protocol):
    """What the evaluation reads of the run's settings (:class:`c4jax.learning.loop.LoopConfig`)."""

    eval_greedy: bool
    eval_symmetric: bool
    eval_opponents: tuple[str, ...]
    eval_yardstick: bool

    @property
    def fixed_opponents(self) -> tuple[str, ...]: ...

    def agent_name(self, name: str) -> str: ...


def evaluated_agent(algo: Algorithm, settings: Settings, width: int) -> AgentOf:
    """``agent_of(params, label)``: the network as the evaluation matches play it."""
    sampled = algo.default_mode == "sto" and not settings.eval_greedy
    return lambda params, label: algo.agent_of(params, label, sampled=sampled, symmetric=settings.eval_symmetric,
                                               width=width)


def opponents(agent_of: AgentOf, old_params, settings: Settings) -> dict:
    """``{tag: agent}``: the fixed opponents, the old network (``"old"``), then ``eval_opponents``."""
    random, *rest = settings.fixed_opponents
    fixed = {random: agents.load(settings.agent_name(random)), "old": agent_of(old_params, "old"),
             **{name: agents.load(settings.agent_name(name)) for name in rest}}
    return {**fixed, **{name: agents.load(settings.agent_name(name)) for name in settings.eval_opponents
                        if name not in fixed}}


def eval_key(seed: int, evals: int) -> jax.Array:
    """The key of a seed's evaluation number ``evals`` (the same in single and vmapped runs)."""
    return jax.random.fold_in(jax.random.key(seed + 1), evals)


def matches(current, opponent, keys: jax.Array, b_batched: bool, game) -> list[evaluation.MatchResult]:
    """One protocol match of ``game`` per seed (one seed: unbatched ``evaluation.match``)."""
    if keys.shape[0] == 1:
        return [evaluation.match(seed_slice(current, 0), seed_slice(opponent, 0) if b_batched else opponent, keys[0],
                                 game=game)]
    return evaluation.match_many(current, opponent, keys, b_batched=b_batched, game=game)


def eval_row(results: dict[str, evaluation.MatchResult]) -> dict:
    """``eval/vs_<tag>`` (win rate) and ``eval/vs_<tag>_length`` (mean game length) of each match."""
    row = {}
    for tag, res in results.items():
        row[f"eval/vs_{tag}"] = res.win_rate
        row[f"eval/vs_{tag}_length"] = res.mean_length
    return row


def evaluate(agent_of: AgentOf, label: str, params, old_params, seeds: list[int], evals: list[int],
             settings: Settings, game) -> list[dict]:
    """Per seed, the :func:`eval_row` (and yardstick grades) of K seeds' stacked ``params`` against their
    ``old_params`` and the other opponents; ``evals``: each seed's evaluation number."""
    keys = jnp.stack([eval_key(s, n) for s, n in zip(seeds, evals)])
    current = agent_of(params, label)
    results = {tag: matches(current, opp, keys, b_batched=tag == "old", game=game)  # old: one per seed
               for tag, opp in opponents(agent_of, old_params, settings).items()}
    graded = [evaluation.optimal_move_rate(seed_slice(current, k), jax.random.fold_in(keys[k], YARDSTICK_SALT))
              for k in range(len(seeds))] if settings.eval_yardstick else [{}] * len(seeds)
    return [{**eval_row({t: res[k] for t, res in results.items()}), **graded[k]} for k in range(len(seeds))]


def host_metrics(metrics: dict, k: int | None = None) -> dict:
    """Chunk metrics as floats (seed ``k`` of a batched run; means over any other axes)."""
    host = devices.to_host(metrics)
    return {name: float(np.mean(np.asarray(v) if k is None else np.asarray(v)[k])) for name, v in host.items()}


def metrics_row(metrics: dict, k: int, evaluated: dict) -> dict:
    """Seed ``k``'s metrics row: the chunk's training metrics, then its evaluation (:func:`evaluate`)."""
    return {**host_metrics(metrics, k), **evaluated}
