"""AlphaZero's network-guided search and the agent that plays with it (design.md §8); the trainer
is :mod:`c4jax.learning.alphazero`. A two-headed network (policy logits, ``tanh`` value for the
player to move) guides an mctx search (Gumbel MuZero, or PUCT with Dirichlet root noise) whose model
is the real game (:func:`c4jax.agents.search.recurrent_fn`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mctx
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents import search as mcts
from c4jax.agents.base import (AgentBase, ScoreInfo, observation_legal, searched_value_label, states_of,
                               unfinished)
from c4jax.agents.network import agent_from_checkpoint, checkpoint_game, resolve_checkpoint
from c4jax.agents.policy import ILLEGAL_SCORE, masked_logits
from c4jax.games.base import done
from c4jax.io import checkpoint
from c4jax.nets import tower as nets

METHODS = ("gumbel", "puct")
DEFAULT_SIMULATIONS = 128  # how a search checkpoint without a saved setting plays
# PUCT's c_1 in the solving search (docs/results/alphazero)
SOLVE_PB_C_INIT = mcts.PB_C_INIT


def evaluate(params, boards: Array, width: int, tower: tuple[int, ...], game,
             reply_head: bool = False) -> tuple[Array, ...]:
    """The network (CNET of ``width``, or the residual ``tower`` ``(blocks, channels)``) on
    observations of ``game``: policy logits ``float32[B, A]`` (masked where the kit's
    ``observation_legal`` tells the legal actions) and value ``float32[B]`` in [−1, 1]; with
    ``reply_head``, the reply head's unmasked logits ``float32[B, A]`` third."""
    out = nets.two_headed(game, width, tower, reply_head).apply({"params": params}, boards)
    logits, value = out[:2]
    legal = games.kit_of(game).observation_legal
    if legal is not None:
        logits = masked_logits(logits, legal(boards))
    return (logits, jnp.tanh(value), *out[2:])


def evaluator(width: int, tower: tuple[int, ...], game) -> mcts.LeafEvaluator:
    """The network as a :data:`c4jax.agents.search.LeafEvaluator` (masked logits, ``tanh`` value)."""

    def evaluate_states(params, keys: Array, states) -> tuple[Array, Array]:
        del keys
        logits, value = evaluate(params, jax.vmap(game.observe)(states), width, tower, game)
        if games.kit_of(game).observation_legal is None:  # the observations did not mask them
            logits = masked_logits(logits, states.legal_action_mask)
        return logits, value

    return evaluate_states


def search(params, states, key: Array, *, num_simulations: int, width: int = 128,
           tower: tuple[int, ...] = (), method: str = "gumbel", gumbel_scale: float = 1.0, max_considered: int = 16,
           dirichlet_alpha: float = 0.3, dirichlet_fraction: float = 0.25, game) -> mctx.PolicyOutput:
    """One batched mctx search (``gumbel_muzero_policy`` / ``muzero_policy``) from states [B] of
    ``game``; ``key`` typed or legacy. Returns mctx's ``PolicyOutput``: ``action`` int32[B] (PUCT:
    the most visited), ``action_weights`` float32[B, A] (0 on illegal actions) and the tree; finished
    games get a meaningless but finite result. ``ValueError`` for an unknown ``method``."""
    if method not in METHODS:
        raise ValueError(f"search method must be one of {METHODS}, got {method!r}")
    evaluate_states = evaluator(width, tower, game)
    key = mcts.typed_keys(key)
    finished = done(states)
    keys = jax.random.split(key, finished.shape[0])  # per-node keys of the model (unused by the network)
    logits, value = evaluate_states(params, keys, states)
    root = mctx.RootFnOutput(prior_logits=logits, value=jnp.where(finished, 0.0, value),
                             embedding=(states, jax.random.key_data(keys)))
    invalid = ~states.legal_action_mask & ~finished[:, None]
    model = mcts.recurrent_fn(evaluate_states, game)
    if method == "gumbel":
        return mctx.gumbel_muzero_policy(
            params, key, root, model, num_simulations, invalid_actions=invalid,
            max_num_considered_actions=max_considered, gumbel_scale=gumbel_scale)
    out = mctx.muzero_policy(
        params, key, root, model, num_simulations, invalid_actions=invalid,
        dirichlet_alpha=dirichlet_alpha, dirichlet_fraction=dirichlet_fraction)
    return out.replace(action=jnp.argmax(out.action_weights, axis=-1).astype(jnp.int32))


def root_values(out: mctx.PolicyOutput) -> Array:
    """float32[B, A]: each action's searched value for the player to move (−1 … 1)."""
    tree = out.search_tree
    return tree.qvalues(jnp.full(tree.node_values.shape[:1], tree.ROOT_INDEX))


@struct.dataclass
class AlphaZeroAgent(AgentBase):
    """A two-headed network (CNET of ``width``, or the residual ``tower``) playing through
    ``num_simulations`` of Gumbel MuZero search (0: the raw policy, greedy or sampled).

    ``scores``: the improved policy (with ``solve``, the PUCT visit shares), or the raw policy's
    probabilities; illegal actions ``-inf``. ``solve``: search with PUCT and proven values.
    ``saved_solve`` / ``saved_simulations``: the checkpoint's own settings, so that ``name`` loads
    this agent back. ``output="q"``: the first head gives Q-values (the raw network plays the best
    one and has no sampled mode). ``ValueError`` for an invalid combination of fields.
    """

    params: Any
    label: str = struct.field(pytree_node=False, default="alphazero")
    width: int = struct.field(pytree_node=False, default=128)
    tower: tuple[int, ...] = struct.field(pytree_node=False, default=())
    num_simulations: int = struct.field(pytree_node=False, default=DEFAULT_SIMULATIONS)
    deterministic: bool = struct.field(pytree_node=False, default=True)
    game: Any = struct.field(pytree_node=False, kw_only=True)
    solve: bool = struct.field(pytree_node=False, default=False)
    saved_solve: bool = struct.field(pytree_node=False, default=False)
    saved_simulations: int | None = struct.field(pytree_node=False, default=None)
    output: str = struct.field(pytree_node=False, default="policy")

    def __post_init__(self):
        if self.output not in ("policy", "q"):
            raise ValueError(f"output must be 'policy' or 'q', got {self.output!r}")
        if self.output == "q" and self.num_simulations == 0 and not self.deterministic:
            raise ValueError(f"{self.label}: a Q-value network has no sampled (':sto') mode without search; "
                             f"search with it ('{self.label}@<N>:sto') to sample")
        n = self.num_simulations
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= mcts.MAX_SIMULATIONS:
            raise ValueError(f"AlphaZero needs 0..{mcts.MAX_SIMULATIONS} simulations per move (0: the raw policy), "
                             f"got {n!r}")
        if self.solve and n == 0:
            raise ValueError("proven values (solve) need a search: AlphaZero with solve needs >= 1 simulation per move")

    @property
    def name(self) -> str:
        proofs = "solve" if self.solve else "nosolve" if self.saved_solve else ""
        if self.num_simulations:
            sims = f"@{self.num_simulations}{proofs}"
        else:
            sims = "" if self.saved_simulations == 0 else "@policy"
        return f"{self.label}{sims}:{'det' if self.deterministic else 'sto'}"

    def _solving_search(self, states, keys: Array) -> mcts.SearchOutput:
        """The PUCT search with proven values from states [B], root keys [B]."""
        return mcts.run(evaluator(self.width, self.tower, self.game), self.params, states, keys,
                        self.num_simulations, game=self.game, rule="puct", pb_c_init=SOLVE_PB_C_INIT, solve=True)

    def _solving_move(self, states, key: Array) -> Array:
        keys = jax.random.split(mcts.typed_keys(key), states.legal_action_mask.shape[0])
        out = self._solving_search(states, keys)
        return mcts.select_action(out, keys, states.legal_action_mask, 0.0 if self.deterministic else 1.0)

    def _solving_shares(self, states) -> Array:
        return self._solving_search(states, mcts.board_keys(states, game=self.game)).visit_probs

    def _raw_move(self, logits: Array, key: Array) -> Array:
        """int32[B]: the raw policy's move: the best logit (``:det``) or a sample."""
        if self.deterministic:
            return jnp.argmax(logits, axis=-1).astype(jnp.int32)
        return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)

    @property
    def stochastic(self) -> bool:
        return not self.deterministic

    @property
    def costly(self) -> bool:
        return self.num_simulations > 0  # a search (the raw policy is one forward pass)

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        n = self.num_simulations
        if n == 0 and self.output == "q":
            return ScoreInfo("q", f"Q-value of each {action} (the network's expected return)")
        if n == 0:
            return ScoreInfo("policy", f"policy probability of each {action} (its raw trained policy, no search)")
        if self.solve:
            how = ("network values backed up the tree; +1 / -1 where a win or a loss is proven, 0 where never "
                   "visited")
            what = f"visit share of each {action} in a {n}-simulation AlphaZero search (PUCT with proven values)"
        else:
            how = "network values backed up the tree"
            what = f"improved policy of each {action} after a {n}-simulation AlphaZero search (Gumbel MuZero)"
        return ScoreInfo("search", what + searched_value_label(action, how), True)

    def act_states(self, states, key: Array) -> Array:
        """int32[B]: a move for each state of the agent's game."""
        if self.solve:
            return self._solving_move(states, key)
        if games.kit_of(self.game).from_observation is not None:  # the board path: what act(boards) plays
            return self._act(jax.vmap(self.game.observe)(states), key)
        if self.num_simulations == 0:
            return self._raw_move(evaluator(self.width, self.tower, self.game)(self.params, None, states)[0], key)
        out = search(self.params, states, key, num_simulations=self.num_simulations, width=self.width,
                     tower=self.tower, gumbel_scale=0.0 if self.deterministic else 1.0, game=self.game)
        return out.action.astype(jnp.int32)

    def scores_states(self, states) -> Array:
        """float32[B, A]: ``scores`` of states of the agent's game (illegal ``-inf``). Jitted unless traced."""
        if isinstance(states.legal_action_mask, jax.core.Tracer):
            return self._scores_states(states)
        return _jit_scores_states(self, states)

    def _scores_states(self, states) -> Array:
        if self.num_simulations == 0:
            logits = evaluator(self.width, self.tower, self.game)(self.params, None, states)[0]
            probs = logits if self.output == "q" else jax.nn.softmax(logits, axis=-1)
        elif self.solve:
            probs = self._solving_shares(states)
        else:
            probs = search(self.params, states, jax.random.key(0), num_simulations=self.num_simulations,
                           width=self.width, tower=self.tower, gumbel_scale=0.0, game=self.game).action_weights
        return jnp.where(states.legal_action_mask, probs, ILLEGAL_SCORE)

    def _search(self, boards: Array, key: Array) -> mctx.PolicyOutput:
        states = states_of(self.game, boards)
        return search(self.params, states, key, num_simulations=self.num_simulations, width=self.width,
                      tower=self.tower, gumbel_scale=0.0 if self.deterministic else 1.0, game=self.game)

    def _scores(self, boards: Array) -> Array:
        legal = observation_legal(self.game, boards)
        if self.num_simulations == 0:
            logits = evaluate(self.params, boards, self.width, self.tower, self.game)[0]
            probs = logits if self.output == "q" else jax.nn.softmax(logits, axis=-1)
        elif self.solve:
            probs = self._solving_shares(states_of(self.game, boards))
        else:
            probs = self._search(boards, jax.random.key(0)).action_weights
        return jnp.where(legal, probs, ILLEGAL_SCORE)

    def _act(self, boards: Array, key: Array) -> Array:
        if self.num_simulations == 0:
            return self._raw_move(evaluate(self.params, boards, self.width, self.tower, self.game)[0], key)
        if self.solve:
            return self._solving_move(states_of(self.game, boards), key)
        return self._search(boards, key).action.astype(jnp.int32)

    def search_stats(self, boards) -> tuple[Array, Array]:
        """``(shares, values)``, float32[B, A] each, of the search behind ``scores`` (``shares ==
        scores(boards)``; illegal ``-inf``) and each action's searched value (illegal NaN).
        ``ValueError`` with 0 simulations. Jitted; validated as ``scores``."""
        if self.num_simulations == 0:
            raise ValueError(f"{self.name} plays its raw policy: it has no search statistics")
        boards = boards if isinstance(boards, jax.core.Tracer) else unfinished(boards, self.game)
        return _jit_search_stats(self, boards)


    def search_stats_states(self, states) -> tuple[Array, Array]:
        """:meth:`search_stats` of states [B] of the agent's game, none finished. Jitted unless traced."""
        if self.num_simulations == 0:
            raise ValueError(f"{self.name} plays its raw policy: it has no search statistics")
        if isinstance(states.legal_action_mask, jax.core.Tracer):
            return _search_stats_states(self, states)
        return _jit_search_stats_states(self, states)


def _search_stats_states(agent: AlphaZeroAgent, states) -> tuple[Array, Array]:
    legal = states.legal_action_mask
    if agent.solve:
        out = agent._solving_search(states, mcts.board_keys(states, game=agent.game))
        return jnp.where(legal, out.visit_probs, ILLEGAL_SCORE), jnp.where(legal, out.qvalues, jnp.nan)
    out = search(agent.params, states, jax.random.key(0), num_simulations=agent.num_simulations, width=agent.width,
                 tower=agent.tower, gumbel_scale=0.0, game=agent.game)
    return jnp.where(legal, out.action_weights, ILLEGAL_SCORE), jnp.where(legal, root_values(out), jnp.nan)


_jit_search_stats_states = jax.jit(_search_stats_states)


@jax.jit
def _jit_scores_states(agent: AlphaZeroAgent, states) -> Array:
    return agent._scores_states(states)


@jax.jit
def _jit_search_stats(agent: AlphaZeroAgent, boards: Array) -> tuple[Array, Array]:
    legal = observation_legal(agent.game, boards)
    if agent.solve:
        states = states_of(agent.game, boards)
        out = agent._solving_search(states, mcts.board_keys(states, game=agent.game))
        return jnp.where(legal, out.visit_probs, ILLEGAL_SCORE), jnp.where(legal, out.qvalues, jnp.nan)
    out = agent._search(boards, jax.random.key(0))
    return jnp.where(legal, out.action_weights, ILLEGAL_SCORE), jnp.where(legal, root_values(out), jnp.nan)


def is_search_checkpoint(directory) -> bool:
    """Whether the checkpoint (or run directory) holds an agent that plays with search."""
    meta = checkpoint.read_metadata(resolve_checkpoint(directory), game=None)
    return isinstance(meta.get("agent"), dict) and "search" in meta["agent"]


def agent_from_search_checkpoint(directory, mode: str | None = None, label: str | None = None,
                                 num_simulations: int | None = None, solve: bool | None = None) -> AlphaZeroAgent:
    """The AlphaZero agent of a checkpoint, with its saved number of simulations unless
    ``num_simulations`` is given (0: the raw policy). Without ``mode`` a search is ``det`` and a raw
    policy plays the metadata's ``default_mode``; ``solve=None`` follows ``agent.search.solve``.
    Raises ``CheckpointError`` for malformed metadata."""
    directory = resolve_checkpoint(directory)
    meta = checkpoint.read_metadata(directory, game=None)
    game = checkpoint_game(directory, meta)
    search = meta["agent"]["search"]
    saved_sims = int(search.get("simulations", DEFAULT_SIMULATIONS))
    sims = saved_sims if num_simulations is None else num_simulations
    output = str(meta["agent"].get("output", "policy"))
    saved = search.get("solve", False)
    if not isinstance(saved, bool):
        raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r}: agent.search.solve must be true or "
                                         f"false, got {saved!r}")
    solve = (saved if solve is None else solve) and sims > 0
    # without a suffix: a search plays its most visited move (det), a raw policy the checkpoint's default mode
    # (a PPO network samples; guided search of any network is det too, c4jax.agents.guided)
    default = meta["agent"].get("default_mode", "det") if sims == 0 else "det"
    deterministic = (mode or default) != "sto"
    try:
        tower = nets.from_metadata(meta["network"])
    except (KeyError, TypeError, ValueError) as e:
        raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r} has a malformed network description: {e}") from e
    if not tower:
        net = agent_from_checkpoint(directory, mode, label)
        return AlphaZeroAgent(params=net.params, label=net.label, width=net.width, num_simulations=sims,
                              deterministic=deterministic, game=game, solve=solve, saved_solve=saved,
                              saved_simulations=saved_sims, output=output)
    template = {"params": nets.param_shapes(tower=tower, game=game)}
    params = checkpoint.restore(directory, template, meta=meta)["params"]
    return AlphaZeroAgent(params=params, label=label or meta.get("name", directory.name), tower=tower,
                          num_simulations=sims, deterministic=deterministic, game=game, solve=solve,
                          saved_solve=saved, saved_simulations=saved_sims, output=output)

