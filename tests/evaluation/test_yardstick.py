"""The perfect-play yardstick: the shipped set, the grader (planted mistakes, perfect play, jit vs
no jit), and tiny in-process runs of experiments/make_yardstick.py and experiments/yardstick.py."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct
from jax import Array

from c4jax import agents, evaluation
from c4jax.agents.base import AgentBase
from c4jax.games.connect_four.kit import CENTRE_FIRST
from c4jax.games.connect_four.perfect import ILLEGAL, solver_available
from c4jax.evaluation import yardstick
from c4jax.games.connect_four.board import check_boards
from scripts import run_script
from c4jax import games as c4games
from command import error_of

C4 = c4games.make(c4games.DEFAULT)

needs_solver = pytest.mark.skipif(not solver_available(), reason="needs the solver extra")


@struct.dataclass
class _Lookup(AgentBase):
    """Plays ``actions[i]`` on a board equal to ``table[i]`` (column 0 on any other board)."""

    table: Array  # int8[N, 6, 7]
    actions: Array  # int32[N]
    name: str = struct.field(pytree_node=False, default="lookup")
    stochastic: bool = struct.field(pytree_node=False, default=False)
    game: object = struct.field(pytree_node=False, kw_only=True)

    def _act(self, boards, key):
        same = jnp.all(boards[:, None] == self.table[None], axis=(-1, -2))  # [B, N]
        return jnp.where(same.any(-1), self.actions[jnp.argmax(same, axis=-1)], 0).astype(jnp.int32)


def _best_actions(pos: yardstick.Positions) -> np.ndarray:
    best = pos.scores == pos.best[:, None]
    return np.argmin(np.where(best, np.argsort(CENTRE_FIRST), 99), axis=1).astype(np.int32)


def _subset(pos: yardstick.Positions, idx) -> yardstick.Positions:
    return yardstick.Positions(pos.boards[idx], pos.scores[idx], pos.meta, game=pos.game)


@pytest.fixture(scope="module")
def shipped() -> yardstick.Positions:
    return yardstick.load_positions()


@pytest.fixture(scope="module")
def small(shipped) -> yardstick.Positions:
    """200 positions, a third of each phase."""
    idx = np.concatenate([np.flatnonzero(shipped.phase == p)[:67] for p in range(3)])[:200]
    return _subset(shipped, idx)


# ----------------------------------------------------------------------------- the shipped set


def test_shipped_set_is_valid_and_matches_its_description(shipped):
    assert yardstick.POSITIONS_FILE.stat().st_size < 1_000_000
    check_boards(shipped.boards, batched=True, allow_finished=False)  # every position is playable
    keys = {min(b.tobytes(), b[:, ::-1].tobytes()) for b in shipped.boards}
    assert len(keys) == len(shipped)  # distinct up to mirroring
    meta = shipped.meta
    assert meta["positions"] == len(shipped) and meta["nontrivial"] == int(shipped.nontrivial.sum())
    assert meta["command"].startswith("python experiments/make_yardstick.py") and "solver" in meta
    for i, name in enumerate(yardstick.PHASES):
        lo, hi = yardstick.PHASE_STONES[i]
        in_phase = shipped.phase == i
        assert meta["phases"][name]["positions"] == in_phase.sum() > 0
        assert meta["phases"][name]["nontrivial"] == (in_phase & shipped.nontrivial).sum() > 0
        assert lo <= shipped.stones[in_phase].min() and shipped.stones[in_phase].max() <= hi
    assert np.all((np.abs(shipped.scores) <= 21) | (shipped.scores == ILLEGAL))


def test_nontrivial_means_some_column_changes_the_outcome():
    scores = np.array([[1, 1, ILLEGAL, 2, 1, 1, 1],     # every column wins: trivial
                       [0, -3, 0, 0, 0, 0, 0],          # a losing column: non-trivial
                       [-1, -5, -2, -1, -1, -3, -4],    # every column loses: trivial
                       [2, 0, 0, 0, 0, 0, 0]], np.int32)  # a win among draws: non-trivial
    boards = np.zeros((4, 6, 7), np.int8)
    boards[0, :, 2] = np.array([1, -1, 1, -1, 1, -1])  # column 2 full (3 stones each)
    pos = yardstick.Positions(boards, scores, game="connect_four")
    assert pos.nontrivial.tolist() == [False, True, False, True]
    assert pos.best.tolist() == [2, 0, -1, 2]


@needs_solver
def test_set_scores_are_the_solvers_and_mirror_symmetric(shipped):
    from c4jax.games.connect_four.perfect import solve_scores

    idx = np.concatenate([np.flatnonzero(shipped.phase == p)[:15] for p in range(3)])
    b, s = shipped.boards[idx], shipped.scores[idx]
    assert np.array_equal(solve_scores(b), s)
    assert np.array_equal(solve_scores(b[:, :, ::-1]), s[:, ::-1])


# ----------------------------------------------------------------------------- grading


def test_best_moves_score_100_percent_and_counts_add_up(shipped):
    m = evaluation.optimal_move_rate(_Lookup(jnp.asarray(shipped.boards), jnp.asarray(_best_actions(shipped)), game=C4),
                                     jax.random.key(0), batch_size=1000)
    assert m["yardstick/keep"] == m["yardstick/exact"] == 1.0
    assert m["yardstick/n"] == sum(m[f"yardstick/n_{p}"] for p in yardstick.PHASES) == shipped.nontrivial.sum()
    for i, p in enumerate(yardstick.PHASES):
        assert m[f"yardstick/n_{p}"] == shipped.meta["phases"][p]["nontrivial"]
        assert m[f"yardstick/keep_{p}"] == 1.0


def test_planted_mistakes_are_counted_wrong(small):
    best = _best_actions(small)
    nontrivial = np.flatnonzero(small.nontrivial)
    legal = small.legal
    # a losing column where the best one does not lose; a worse column with the same outcome; a full column
    lose_i = next(i for i in nontrivial if small.best[i] >= 0 and (small.scores[i][legal[i]] < 0).any())
    worse_i = next(i for i in nontrivial if i != lose_i and
                   ((np.sign(small.scores[i]) == np.sign(small.best[i])) & (small.scores[i] < small.best[i]) & legal[i]).any())
    full_i = next(i for i in nontrivial if i not in (lose_i, worse_i) and not legal[i].all())
    planted = best.copy()
    planted[lose_i] = np.flatnonzero(legal[lose_i] & (small.scores[lose_i] < 0))[0]
    planted[worse_i] = np.flatnonzero(legal[worse_i] & (np.sign(small.scores[worse_i]) == np.sign(small.best[worse_i]))
                                      & (small.scores[worse_i] < small.best[worse_i]))[0]
    planted[full_i] = np.flatnonzero(~legal[full_i])[0]
    raw = yardstick.grade(_Lookup(jnp.asarray(small.boards), jnp.asarray(planted), game=C4), jax.random.key(0), positions=small)
    # a deterministic agent is asked only about the graded positions (-1 at the others)
    assert np.array_equal(raw["action"], np.where(small.nontrivial, planted, -1))
    n = int(small.nontrivial.sum())
    assert raw["n"].sum() == n and raw["keep"].sum() == n - 2 and raw["exact"].sum() == n - 3
    m = yardstick.metrics(raw)
    assert m["yardstick/keep"] == pytest.approx((n - 2) / n) and m["yardstick/exact"] == pytest.approx((n - 3) / n)
    phase = small.phase
    for i, p in enumerate(yardstick.PHASES):
        wrong = sum(int(phase[j] == i) for j in (lose_i, full_i))
        assert raw["keep"][i] == raw["n"][i] - wrong, p


def test_random_is_well_below_perfect_and_jit_matches_no_jit(small):
    rnd = agents.load("random")
    key = jax.random.key(3)
    jitted = yardstick.grade(rnd, key, positions=small, batch_size=64)
    eager = yardstick.grade(rnd, key, positions=small, batch_size=64, jit=False)
    for k in jitted:
        assert np.array_equal(jitted[k], eager[k]), k
    full = evaluation.optimal_move_rate(rnd, key)
    assert full["yardstick/keep"] < 0.6 and full["yardstick/exact"] < full["yardstick/keep"]
    again = evaluation.optimal_move_rate(rnd, key)
    assert again == full  # same key, same result
    la = evaluation.optimal_move_rate(agents.load("1steplA"), key, positions=small)
    assert la["yardstick/keep"] > yardstick.metrics(jitted)["yardstick/keep"]


def test_a_deterministic_agent_graded_on_the_graded_positions_only_gets_the_full_grade(small):
    """Asking an agent that ignores the key only about the non-trivial positions gives the counts and
    the moves of asking it about every position."""
    la = agents.load("2steplA")
    assert not la.keyed
    raw = yardstick.grade(la, jax.random.key(0), positions=small, batch_size=64)
    chunks, keys = yardstick._chunks(small.boards, jax.random.key(0), 64)
    action = np.concatenate([yardstick._act_chunk(la, jnp.asarray(c), k) for c, k in zip(chunks, keys)])[:len(small)]
    every = {**yardstick._counts(jnp.asarray(action), jnp.asarray(small.scores), jnp.asarray(small.phase),
                                 jnp.asarray(small.nontrivial)), "action": action}
    for k in ("n", "keep", "exact"):
        assert np.array_equal(raw[k], np.asarray(every[k])), k
    graded = small.nontrivial
    assert 0 < graded.sum() < len(small)
    assert np.array_equal(raw["action"][graded], np.asarray(every["action"])[graded]) and (raw["action"][~graded] == -1).all()


@needs_solver
def test_perfect_agent_scores_100_percent(small):
    m = evaluation.optimal_move_rate(agents.load("perfect"), jax.random.key(0), positions=_subset(small, slice(0, 200, 4)))
    assert m["yardstick/keep"] == m["yardstick/exact"] == 1.0 and m["yardstick/n"] > 10


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        evaluation.optimal_move_rate(agents.load("random"), jax.random.key(0), batch_size=0)
    with pytest.raises(FileNotFoundError, match="not found"):
        yardstick.load_positions("/nonexistent/set.npz")
    with pytest.raises(ValueError, match="ILLEGAL exactly on the full columns"):
        yardstick.Positions(np.zeros((1, 6, 7), np.int8), np.full((1, 7), ILLEGAL), game="connect_four")
    with pytest.raises(ValueError, match=r"boards must be \[N, 6, 7\] and scores \[N, 7\]"):
        yardstick.Positions(np.zeros((1, 6, 7), np.int8), np.zeros((1, 6), np.int32), game="connect_four")


def test_positions_whose_json_names_no_game_are_refused(tmp_path):
    pos = yardstick.load_positions()
    path = yardstick.Positions(pos.boards[:4], pos.scores[:4], {"seed": 3}, game=pos.game).save(tmp_path / "set.npz")
    again = yardstick.load_positions(path)
    assert again.game == "connect_four" and again.meta == {"game": "connect_four", "seed": 3}
    np.testing.assert_array_equal(again.scores, pos.scores[:4])
    path.with_suffix(".json").write_text('{"seed": 3}')
    with pytest.raises(ValueError, match="set.json beside it must name their game"):
        yardstick.load_positions(path)


def test_illegal_score_is_the_solvers():
    """The position sets mark full columns with the perfect player's ILLEGAL score."""
    assert yardstick.ILLEGAL == ILLEGAL


# ----------------------------------------------------------------------------- scripts


def test_yardstick_script_tiny_run(tmp_path, small):
    path = _subset(small, slice(0, 200, 5)).save(tmp_path / "set.npz")
    out = tmp_path / "out"
    r = run_script("yardstick.py", "--agents", "random", "1steplA", "--positions", path, "--out", out)
    assert r.returncode == 0, r.stderr
    info = json.loads((out / "yardstick.json").read_text())
    assert [a["agent"] for a in info["agents"]] == ["random", "1steplA:det"]
    assert set(info["agents"][0]["metrics"]) >= {"yardstick/keep", "yardstick/exact_end", "yardstick/n_middle"}
    md = (out / "yardstick.md").read_text()
    assert "python experiments/yardstick.py" in md and "| 1steplA:det |" in md
    assert (out / "yardstick.png").stat().st_size > 1000 and (out / "yardstick.csv").is_file()
    bad = run_script("yardstick.py", "--agents", "nosuchagent", "--out", out)
    assert bad.returncode == 2 and error_of(bad.stderr).startswith("error: cannot load agent 'nosuchagent'")
    missing = run_script("yardstick.py", "--positions", tmp_path / "none.npz", "--out", out)
    assert missing.returncode == 2 and "error: cannot read the positions" in missing.stderr


TINY = ("--games", 64, "--batch", 64, "--per-phase", 4, 4, 2, "--players", "1steplA:sto", "random", "--no-progress")


@needs_solver
def test_make_yardstick_tiny_run(tmp_path):
    out = tmp_path / "ys.npz"
    r = run_script("make_yardstick.py", *TINY, "--out", out)
    assert r.returncode == 0, r.stderr
    pos = yardstick.load_positions(out)
    assert len(pos) == 10 and np.bincount(pos.phase, minlength=3).tolist() == [4, 4, 2]
    assert pos.meta["phases"]["end"]["positions"] == 2 and pos.meta["players"] == ["1steplA:sto", "random"]
    assert pos.meta["nontrivial"] == int(pos.nontrivial.sum()) and pos.meta["solver"].startswith("bitbully")
    for bad, message in ((("--random-move-prob", 2), "--random-move-prob"), (("--per-phase", 1, -1, 1), "--per-phase"),
                         (("--players", "nosuchagent"), "unknown agent")):
        r = run_script("make_yardstick.py", *TINY, *bad, "--out", tmp_path / "bad.npz")
        assert r.returncode == 2 and error_of(r.stderr) and message in r.stderr, r.stderr


@needs_solver
@pytest.mark.slow
def test_make_yardstick_is_deterministic_and_says_when_games_are_too_few(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert run_script("make_yardstick.py", *TINY, "--out", a).returncode == 0
    assert run_script("make_yardstick.py", *TINY, "--out", b).returncode == 0
    pa, pb = yardstick.load_positions(a), yardstick.load_positions(b)
    assert np.array_equal(pa.boards, pb.boards) and np.array_equal(pa.scores, pb.scores)
    too_many = run_script("make_yardstick.py", *TINY, "--per-phase", 4, 4, 5000, "--out", tmp_path / "x.npz")
    assert too_many.returncode == 2 and "play more --games" in too_many.stderr


def test_an_agent_of_a_game_without_a_yardstick_is_refused_in_one_line(tmp_path):
    from c4jax import games

    without = [g for g in games.GAMES if not games.kit_of(g).yardstick]
    if not without:
        pytest.skip("every registered game has a yardstick")
    r = run_script("yardstick.py", "--agents", f"{without[0]}/random", "--out", tmp_path / "y")
    assert r.returncode == 2 and "has no yardstick" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "y").exists()
