"""PPO for two-player self-play on every game (design.md §7), whatever collects the rows (``--collect``).

Each buffer: one collection (:mod:`c4jax.learning.onpolicy`), then ``epochs`` passes of shuffled
minibatches with the clipped objective (:func:`c4jax.learning.losses.ppo_loss`); then it is discarded.
The host loop evaluates every ``buffers_per_eval`` buffers.
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
from c4jax.learning.settings.ppo import PPOConfig as PPOConfig
from c4jax.learning.optim import apply_gradients


class PPO(onpolicy.OnPolicy):
    """PPO on ``game``; ``ValueError`` when ``cfg`` does not fit the game."""

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
        """``(loss, metrics)``: the ``weights``-weighted mean of :func:`losses.ppo_loss` over minibatch ``mb`` [M]
        (``None``: unweighted), with the collection's value loss, advantage normalisation and KL estimator."""
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
        """``epochs`` passes over the flat ``buffer`` [N] in shuffled minibatches of ``minibatch_size``. A minibatch
        of zero weight makes no step; with ``cap`` (int32) at most ``cap`` steps are made. Returns ``(params,
        opt_state, metrics averaged over the steps made, steps made int32)``."""
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

    def capped(self, budget: int, units: int | None = None):
        """The chunk stopping each seed at ``budget`` with whole-games buffers, whose updates (the minibatches
        that hold samples) differ between seeds; ``None`` with streams, whose buffers make ``update_step`` each."""
        if not self.collection.weighted:
            return None
        return jax.jit(partial(self._chunk, units=units, budget=budget))

    def _chunk(self, state, units: int | None = None, budget: int | None = None):
        """``buffers_per_eval`` buffers, or the buffers that make ``units`` (or ``eval_updates``) updates at most;
        no update once ``state.updates`` reaches ``budget`` (``None``: no such stop)."""
        updates = self.eval_updates if units is None else units
        if units is None and budget is None and updates % self.update_step == 0:
            state, m = jax.lax.scan(self._buffer, state, None, length=self.cfg.buffers_per_eval)
        else:
            stop = state.updates + updates if budget is None else jnp.minimum(state.updates + updates, budget)
            state, m = jax.lax.scan(partial(self._buffer, stop=stop), state, None, length=-(-updates // self.update_step))
        return state, self.collection.chunk_metrics(state, m)
