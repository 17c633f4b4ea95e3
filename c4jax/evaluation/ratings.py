"""Bradley–Terry ratings on the Elo scale, fitted by maximum likelihood over all games.

P(i beats j) = ``sigmoid(theta_i - theta_j)``, a draw half a win each; ``Elo = anchor_value + 400 /
ln(10) * (theta - theta_anchor)`` (the anchor an agent or ``"mean"``). ``prior`` virtual drawn games
per pair that met keep ratings finite (``prior=0``: the plain MLE, :class:`RatingError` when it is
infinite); a disconnected comparison graph raises :class:`DisconnectedError`. 95% intervals relative
to the anchor: ``ci="bootstrap"`` (every pair's games resampled ``samples`` times with ``seed``) or
``ci="fisher"`` (``rating ± 1.96 se``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from c4jax.io.tables import Table

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of log-odds
DEFAULT_ANCHOR_VALUE = 1000.0
Z95 = 1.959963984540054


class RatingError(ValueError):
    """The ratings cannot be computed from these games."""


class DisconnectedError(RatingError):
    """The comparison graph (agents linked by played games) has several components."""

    def __init__(self, components: list[list[str]]):
        self.components = components
        parts = " | ".join("{" + ", ".join(c) + "}" for c in components)
        super().__init__(
            f"the comparison graph is not connected ({len(components)} components: {parts}); ratings "
            "across components are not comparable: play at least one match linking them"
        )


def components(games: np.ndarray) -> list[list[int]]:
    """Connected components (lists of indices, sorted) of the graph with an edge where ``games[i, j] > 0``."""
    linked = (games + games.T) > 0
    seen, out = np.zeros(games.shape[0], bool), []
    for start in range(games.shape[0]):
        if not seen[start]:
            comp = _reach(linked, start)
            seen |= comp
            out.append(np.flatnonzero(comp).tolist())
    return out


def _reach(adj: np.ndarray, start: int) -> np.ndarray:
    seen = np.zeros(adj.shape[0], bool)
    seen[start] = True
    stack = [start]
    while stack:
        i = stack.pop()
        for j in np.flatnonzero(adj[i] & ~seen):
            seen[j] = True
            stack.append(int(j))
    return seen


def _finite_mle(score: np.ndarray) -> bool:
    """The MLE exists: the graph "i scored against j" (``score[i, j] > 0``) is strongly connected."""
    scored = score > 0
    return bool(_reach(scored, 0).all() and _reach(scored.T, 0).all())


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _loglik(theta: np.ndarray, score: np.ndarray) -> np.ndarray:
    d = theta[..., :, None] - theta[..., None, :]
    # log sigmoid(d) = -log1p(exp(-d)), stable for both signs
    return (score * -np.logaddexp(0.0, -d)).sum((-1, -2))


def fit_theta(score: np.ndarray, games: np.ndarray, *, max_iter: int = 200, tol: float = 1e-10) -> np.ndarray:
    """Bradley–Terry maximum likelihood, batched.

    Args:
      score: float[..., n, n]: ``score[i, j]`` = points of i against j (win 1, draw 0.5).
      games: float[..., n, n] (symmetric): games between i and j (``score + score.T``).

    Returns:
      float[..., n]: log-strengths with ``theta[..., 0] == 0``. Assumes a finite optimum
      exists (see :func:`fit`, which checks it).
    """
    score = np.asarray(score, np.float64)
    games = np.asarray(games, np.float64)
    batch_shape, n = score.shape[:-2], score.shape[-1]
    theta = np.zeros(batch_shape + (n,))
    if n == 1:
        return theta
    ll = _loglik(theta, score)
    for _ in range(max_iter):
        p = _sigmoid(theta[..., :, None] - theta[..., None, :])
        grad = (score - games * p).sum(-1)
        h = games * p * (1.0 - p)
        neg_hess = np.eye(n) * h.sum(-1)[..., None, :] - h  # -d2L, positive semi-definite (null space: 1)
        neg_hess = neg_hess + 1e-12 * np.eye(n)  # numerical safety only; connectivity is checked by the caller
        step = np.zeros_like(theta)
        step[..., 1:] = np.linalg.solve(neg_hess[..., 1:, 1:], grad[..., 1:, None])[..., 0]
        # step halving per batch element until the likelihood does not decrease
        alpha = np.ones(batch_shape)
        for _ in range(40):
            cand = theta + alpha[..., None] * step
            cand_ll = _loglik(cand, score)
            bad = cand_ll < ll - 1e-12 * (1.0 + np.abs(ll))
            if not np.any(bad):
                break
            alpha = np.where(bad, 0.5 * alpha, alpha)
        theta, ll = cand, cand_ll
        if np.max(np.abs(alpha[..., None] * step)) < tol:
            break
    return theta


@dataclass(frozen=True)
class Ratings:
    """Bradley–Terry ratings on the Elo scale with 95% intervals (arrays indexed like ``names``)."""

    names: tuple[str, ...]
    rating: np.ndarray  # Elo
    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray  # Fisher standard error (Elo), relative to the anchor
    games: np.ndarray  # int: games played
    wins: np.ndarray
    draws: np.ndarray
    losses: np.ndarray
    anchor: str  # an agent name or "mean"
    anchor_value: float
    ci: str  # "bootstrap" or "fisher"
    samples: int  # bootstrap samples (0 for fisher)
    seed: int
    prior: float

    def order(self) -> list[int]:
        """Indices, best rating first."""
        return sorted(range(len(self.names)), key=lambda i: (-self.rating[i], self.names[i]))

    def __getitem__(self, name: str) -> float:
        return float(self.rating[self.names.index(name)])

    def rows(self) -> list[dict]:
        out = []
        for k, i in enumerate(self.order(), 1):
            out.append({"rank": k, "agent": self.names[i], "rating": float(self.rating[i]),
                        "ci_low": float(self.ci_low[i]), "ci_high": float(self.ci_high[i]),
                        "se": float(self.se[i]), "games": int(self.games[i]), "wins": int(self.wins[i]),
                        "draws": int(self.draws[i]), "losses": int(self.losses[i])})
        return out

    def description(self) -> str:
        anchor = "mean rating" if self.anchor == "mean" else self.anchor
        how = (f"percentile bootstrap over games ({self.samples} resamples of every pair's games, seed {self.seed})"
               if self.ci == "bootstrap" else "±1.96 × Fisher-information standard error")
        return (f"Bradley–Terry maximum likelihood over all games (a draw = half a win; {self.prior:g} virtual "
                f"drawn game(s) per pair that met), Elo scale (400 points = 10:1 odds), {anchor} = "
                f"{self.anchor_value:g}. 95% interval: {how}, relative to the anchor.")

    _COLUMNS = ("rank", "agent", "rating", "ci_low", "ci_high", "games", "wins", "draws", "losses")

    def table(self) -> Table:
        """The ratings as the project's :class:`~c4jax.io.tables.Table` (rank order)."""
        return Table(
            name="ratings", title="Ratings (Bradley–Terry, Elo scale)",
            header=("rank", "agent", "rating", "95% CI low", "95% CI high", "games", "wins", "draws", "losses"),
            rows=tuple(tuple(r[k] for k in self._COLUMNS) for r in self.rows()),
            formats=("", "", ".0f", ".0f", ".0f", "", "", "", ""), note=self.description())

    def to_markdown(self, title: bool = True) -> str:
        return self.table().to_markdown(title=title)

    def to_csv(self, path: str | os.PathLike) -> Path:
        keys = ("rank", "agent", "rating", "ci_low", "ci_high", "se", "games", "wins", "draws", "losses")
        csv_table = Table(name="ratings", title="", header=keys, rows=tuple(tuple(r[k] for k in keys) for r in self.rows()))
        return csv_table.to_csv(path)

    def to_dict(self) -> dict:
        return {"anchor": self.anchor, "anchor_value": self.anchor_value, "ci": self.ci, "samples": self.samples,
                "seed": self.seed, "prior": self.prior, "description": self.description(), "ratings": self.rows()}


def fit(names: Sequence[str], wins: np.ndarray, draws: np.ndarray | None = None, *, anchor: str | None = "mean",
        anchor_value: float = DEFAULT_ANCHOR_VALUE, prior: float = 1.0, ci: str = "bootstrap",
        samples: int = 1000, seed: int = 0) -> Ratings:
    """Ratings from game counts.

    ``wins`` int[n, n]: games i won against j; ``draws`` int[n, n] (symmetric, default none);
    ``anchor``: an agent of ``names`` held at ``anchor_value``, or ``"mean"``/``None``; the rest as
    the module docstring says. Raises ``ValueError`` for malformed counts or settings and the
    :class:`RatingError`s of the module docstring.
    """
    names = tuple(str(n) for n in names)
    n = len(names)
    wins = np.asarray(wins, np.int64)
    draws = np.zeros((n, n), np.int64) if draws is None else np.asarray(draws, np.int64)
    if wins.shape != (n, n) or draws.shape != (n, n):
        raise ValueError(f"wins and draws must be [{n}, {n}], got {wins.shape} and {draws.shape}")
    if (wins < 0).any() or (draws < 0).any() or (np.diag(wins) != 0).any() or (np.diag(draws) != 0).any():
        raise ValueError("counts must be non-negative with an empty diagonal")
    if not np.array_equal(draws, draws.T):
        raise ValueError("draws must be symmetric")
    if ci not in ("bootstrap", "fisher"):
        raise ValueError(f"ci must be 'bootstrap' or 'fisher', got {ci!r}")
    if prior < 0:
        raise ValueError(f"prior must be >= 0, got {prior}")
    if n < 2:
        raise RatingError(f"ratings need at least two agents, got {list(names)}")
    games = wins + wins.T + draws
    comps = components(games)
    if len(comps) > 1:
        raise DisconnectedError([[names[i] for i in c] for c in comps])
    if anchor in (None, "mean"):
        anchor_idx = None
    elif anchor in names:
        anchor_idx = names.index(anchor)
    else:
        raise ValueError(f"anchor {anchor!r} is not one of {list(names)} (or 'mean')")

    met = games > 0
    score = wins + 0.5 * draws + 0.5 * prior * met
    total = games + prior * met
    if prior == 0 and not _finite_mle(score):
        raise RatingError("the maximum likelihood ratings are infinite: some agents never scored (won or drew) "
                          "against a group that beat them; use prior > 0")

    def to_elo(theta: np.ndarray) -> np.ndarray:
        ref = theta[..., anchor_idx, None] if anchor_idx is not None else theta.mean(-1, keepdims=True)
        return anchor_value + ELO_PER_NAT * (theta - ref)

    theta = fit_theta(score, total)
    rating = to_elo(theta)

    # Fisher information: covariance of theta relative to the anchor (or to the mean).
    p = _sigmoid(theta[:, None] - theta[None, :])
    h = total * p * (1.0 - p)
    info = np.diag(h.sum(-1)) - h
    if anchor_idx is None:
        cov = np.linalg.pinv(info)  # centred parametrisation (null space: the all-ones vector)
    else:
        keep = [i for i in range(n) if i != anchor_idx]
        cov = np.zeros((n, n))
        cov[np.ix_(keep, keep)] = np.linalg.inv(info[np.ix_(keep, keep)])
    se = ELO_PER_NAT * np.sqrt(np.clip(np.diag(cov), 0.0, None))

    if ci == "fisher":
        low, high, used = rating - Z95 * se, rating + Z95 * se, 0
    else:
        rng = np.random.default_rng(seed)
        iu, ju = np.triu_indices(n, 1)
        pairs = [(i, j) for i, j in zip(iu, ju) if games[i, j] > 0]
        boot_score = np.zeros((samples, n, n))
        for i, j in pairs:
            counts = np.array([wins[i, j], draws[i, j], wins[j, i]], np.float64)
            draw = rng.multinomial(int(games[i, j]), counts / counts.sum(), size=samples)
            boot_score[:, i, j] = draw[:, 0] + 0.5 * draw[:, 1] + 0.5 * prior
            boot_score[:, j, i] = draw[:, 2] + 0.5 * draw[:, 1] + 0.5 * prior
        if prior == 0:
            bad = sum(not _finite_mle(b) for b in boot_score)
            if bad:
                raise RatingError(f"in {bad} of {samples} bootstrap resamples the maximum likelihood ratings are "
                                  "infinite (an agent scored nothing against a group); use prior > 0 or ci='fisher'")
        boot = to_elo(fit_theta(boot_score, np.broadcast_to(total, boot_score.shape)))
        if not np.isfinite(boot).all():
            raise RatingError("bootstrap ratings diverged (a resample left an agent without any score); "
                              "use prior > 0 or ci='fisher'")
        low, high = np.percentile(boot, [2.5, 97.5], axis=0)
        used = samples
        if anchor_idx is not None:
            low[anchor_idx] = high[anchor_idx] = anchor_value

    return Ratings(names=names, rating=rating, ci_low=np.asarray(low), ci_high=np.asarray(high), se=se,
                   games=games.sum(1), wins=wins.sum(1), draws=draws.sum(1), losses=wins.sum(0), anchor=anchor or "mean",
                   anchor_value=float(anchor_value), ci=ci, samples=used, seed=seed, prior=float(prior))


def from_tournament(tournament, *, anchor: str | None = "auto", **kwargs) -> Ratings:
    """Ratings from every game of a :class:`c4jax.evaluation.Tournament`.

    ``anchor="auto"``: the game's reference player (its card's ``reference``, 1StepLA on Connect
    Four) playing deterministically at 1000 when it played, else the mean rating at 1000.
    """
    if anchor == "auto":
        from c4jax import games

        ref = games.card_of(tournament.game).reference
        played = [n for n in tournament.names if ref and n.rsplit("/", 1)[-1] == f"{ref}:det"]
        anchor = played[0] if played else "mean"
    wins, draws = tournament.score_counts()
    return fit(tournament.names, wins, draws, anchor=anchor, **kwargs)
