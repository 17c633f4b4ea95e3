"""PPO for two-player self-play (design.md §7), on every game: its config (:class:`PPOConfig`), its loss
(:meth:`PPO.loss`, on :func:`c4jax.learning.losses.ppo_loss`), its update (:meth:`PPO.update`) and the
algorithm (:class:`PPO`), whatever collects the rows (``--collect``, :mod:`c4jax.learning.onpolicy`).

Each *buffer*: one collection, then ``epochs`` passes of shuffled minibatches with the clipped objective,
the value loss and the entropy bonus over the legal actions; then the buffer is discarded. The host loop
evaluates every ``buffers_per_eval`` buffers.

- ``--collect games`` (the thesis, :mod:`c4jax.learning.onpolicy_games`): ``games_per_collect`` (default:
  enough to fill it) whole self-play games sampled from the current policy, each followed by its mirror,
  trimmed to the first ``buffer_size`` rows in game order; minibatches of ``minibatch_size`` valid rows
  (the last one of an epoch may be short), the Smooth-L1 value loss. Optionally (``--opponent``) a fixed
  agent plays one side of a fraction of the games.
- ``--collect streams`` (:mod:`c4jax.learning.onpolicy_streams`): a buffer is one collection of
  ``envs x steps`` plies with the game's own rewards and GAE(λ); ``minibatch_size`` divides it; the squared
  error of the tanh value and advantages normalised over each minibatch.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import Array

from c4jax.io.devices import shard_batch
from c4jax.learning import config, losses, onpolicy
from c4jax.learning.onpolicy import weighted_mean
from c4jax.learning.onpolicy_games import Samples, Strategies
from c4jax.learning.settings.ppo import GAMES_ONLY as GAMES_ONLY
from c4jax.learning.settings.ppo import STREAMS as STREAMS
from c4jax.learning.settings.ppo import STREAMS_UPDATES as STREAMS_UPDATES
from c4jax.learning.settings.ppo import PPOConfig as PPOConfig
from c4jax.learning.optim import apply_gradients


class PPO(onpolicy.OnPolicy):
    """PPO on ``game`` with the collection of ``cfg.collect`` (:class:`~c4jax.learning.onpolicy.OnPolicy`);
    ``ValueError`` when ``cfg`` does not fit the game."""

    name = "ppo"

    def __init__(self, cfg: PPOConfig, game, freeze_conv: bool = True):
        cfg = config.settle(cfg)
        self.strategies = Strategies.of(cfg, explore=cfg.explore, mirror_avg=cfg.selfplay_mirror_avg,
                                        td_advantage=cfg.td_advantage, unmasked_log_probs=cfg.unmasked_log_probs)
        self.games = cfg.games
        super().__init__(cfg, game, freeze_conv)
        if not cfg.streams:
            self.batch_sizes = {"--games-per-collect (games per buffer)": cfg.games, "--buffer-size": cfg.buffer_size,
                                "--minibatch-size": cfg.minibatch_size}
        self.update_step = cfg.buffer_updates
        self.eval_updates = cfg.eval_updates

    def loss(self, params, mb: Samples, weights: Array | None):
        """``(loss, metrics)`` of minibatch ``mb`` [M]: the mean of :func:`losses.ppo_loss` over its rows, weighted
        by ``weights`` [M] (``None``: every row alike), with the collection's value loss, its advantages
        (normalised over the minibatch where the collection says so) and its KL estimator in the metrics
        (``k3``: ``(ratio - 1) - log ratio``, ``k1``: ``log pi_old - log pi``)."""
        cfg, c = self.cfg, self.collection
        logits, legal, value = c.forward(params, mb.obs, mb.legal)
        adv = mb.advantage
        if c.normalise_advantages:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss_fn = partial(losses.ppo_loss, clip=cfg.clip, c1=cfg.c1, c2=cfg.c2, value_loss=c.value_loss)
        total, aux = jax.vmap(loss_fn)(logits, legal, mb.action, mb.logp, adv, value, mb.target)
        kl = aux["approx_kl"] if c.kl == "k3" else mb.logp - aux["log_prob"]
        rows = {"loss": total, "policy_loss": aux["policy_loss"], "value_loss": aux["value_loss"],
                "entropy": aux["entropy"], "approx_kl": kl, "clip_fraction": aux["clipped"]}
        metrics = {f"train/{k}": weighted_mean(v, weights) for k, v in rows.items()}
        return metrics["train/loss"], metrics

    def update(self, params, opt_state, buffer: Samples, key: Array, cap: Array | None = None):
        """``epochs`` passes over the flat ``buffer`` [N], each in the collection's shuffled minibatches of
        ``minibatch_size`` rows (one ``lax.scan``). A weighted minibatch without weight makes no optimiser step
        (no Adam step, no weight decay); with ``cap`` (int32 scalar) no minibatch steps after the first ``cap``
        steps. Returns ``(params, opt_state, metrics, updates)``: the ``train/*`` metrics averaged over the
        minibatches that made a step, and the number of those steps (int32)."""
        cfg, c = self.cfg, self.collection
        grad = jax.value_and_grad(self.loss, has_aux=True)

        def minibatch(carry, xs):
            index, weights = xs
            mb, weights = shard_batch((jax.tree.map(lambda x: x[index], buffer), weights))  # split over devices
            (_, metrics), grads = grad(carry[0], mb, weights)
            if weights is None and cap is None:
                return apply_gradients(self.tx, *carry, grads), metrics
            stepped = jnp.bool_(True) if weights is None else weights.sum() > 0
            if cap is not None:
                stepped = stepped & (carry[2] < cap)
            new = jax.lax.cond(stepped, lambda p: apply_gradients(self.tx, *p, grads), lambda p: p, carry[:2])
            if cap is not None:
                new = (*new, carry[2] + stepped.astype(jnp.int32))
            return new, {**metrics, "stepped": stepped.astype(jnp.float32)}

        def epoch(carry, k):
            return jax.lax.scan(minibatch, carry, c.minibatches(k, buffer.valid, cfg.minibatch_size))

        start = (params, opt_state) if cap is None else (params, opt_state, jnp.int32(0))
        (params, opt_state, *_), m = jax.lax.scan(epoch, start, jax.random.split(key, cfg.epochs))
        if "stepped" not in m:
            return params, opt_state, {k: v.mean() for k, v in m.items()}, jnp.int32(cfg.buffer_updates)
        stepped = m.pop("stepped")
        count = stepped.sum()
        metrics = {k: jnp.sum(v * stepped) / jnp.maximum(count, 1.0) for k, v in m.items()}
        return params, opt_state, metrics, count.astype(jnp.int32)

    def _buffer(self, state, _, stop: Array | None = None):
        """One collection and its update (``stop``: no update once ``state.updates`` reaches it)."""
        c = self.collection
        key, *keys = jax.random.split(state.key, 2 + c.keys)
        state, samples, stats = c.collect(state, keys[:-1], self.cfg.gae_lambda)
        buffer, more = c.buffer(jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), samples))
        cap = None if stop is None else stop - state.updates
        params, opt_state, metrics, updates = self.update(state.params, state.opt_state, buffer, keys[-1], cap)
        state = state.replace(params=params, opt_state=opt_state, key=key, updates=state.updates + updates)
        return state, {**metrics, **stats, **more}

    def _chunk(self, state, units: int | None = None):
        """``buffers_per_eval`` buffers (one ``lax.scan``); ``units`` (or an ``eval_updates`` that is not a
        multiple of a buffer's): the buffers that make that many updates, the last one stopping after the
        minibatch update that reaches it (fewer when self-play leaves buffers short)."""
        updates = self.eval_updates if units is None else units
        if units is None and updates % self.update_step == 0:
            state, m = jax.lax.scan(self._buffer, state, None, length=self.cfg.buffers_per_eval)
        else:
            stop = state.updates + updates
            state, m = jax.lax.scan(partial(self._buffer, stop=stop), state, None, length=-(-updates // self.update_step))
        return state, self.collection.chunk_metrics(state, m)
