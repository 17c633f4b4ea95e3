"""Reference tests for the baseline agents (design.md §4): Random and N-step lookahead.

The N-step lookahead agents are checked against an independent reference written here
in plain numpy/python (never against the library's own code):

* heuristic of a board from the root mover's point of view, over the 69 four-cell
  windows: 1e10*own4 + 1e4*own3 + 1e2*own2 - opp2 - 1e6*opp3 - 1e8*opp4, where
  own_k counts windows holding exactly k own stones and 4-k empty cells (exact int64);
* minimax of depth N: the root mover (+1) plays, then the players alternate; a board at
  depth N or a terminal board (a four for either player, or a full board) is scored by
  the heuristic, always from the root mover's view; the root mover maximises;
* ``scores`` = each legal column's minimax value minus the heuristic of the root board,
  -inf for full columns; deterministic tie-break 3, 2, 4, 1, 5, 0, 6.

The vectorised reference (``ref_root_values``) is itself cross-checked against an even
plainer scalar, recursive pure-python version on a few boards: ``c4jax.games.connect_four.reference``, the
plain-Python lookahead timed in Table 5.1, which shares no code with the bitboard agents.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents
from c4jax.games.connect_four import env
from c4jax.games.connect_four import reference
from c4jax.games.connect_four.game import GAME as C4
from c4jax.agents.baselines import RandomAgent
from c4jax.agents.players import PlayerAgent, build
from c4jax.games.connect_four.kit import PLAYERS

ROWS, COLS = 6, 7
TIE_ORDER = (3, 2, 4, 1, 5, 0, 6)  # centre first, the left one of two equally close
W_OWN = {4: 10**10, 3: 10**4, 2: 10**2}
W_OPP = {4: -(10**8), 3: -(10**6), 2: -1}
RTOL, ATOL = 1e-6, 1e-2


# --------------------------------------------------------------------------------------
# Reference implementation (independent of the library)
# --------------------------------------------------------------------------------------

def _windows() -> list[list[tuple[int, int]]]:
    out = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    out.append(cells)
    return out


WINDOWS = _windows()
WINDOW_IDX = np.array([[r * COLS + c for r, c in w] for w in WINDOWS])  # [69, 4]


def test_reference_window_count():
    assert len(WINDOWS) == 69
    # 24 horizontal + 21 vertical + 12 + 12 diagonals
    assert WINDOW_IDX.shape == (69, 4)
    assert len({tuple(sorted(w)) for w in WINDOW_IDX.tolist()}) == 69


def ref_heuristic(boards: np.ndarray) -> np.ndarray:
    """int64[...]: heuristic of boards [..., 6, 7] for the +1 player."""
    boards = np.asarray(boards)
    lead = boards.shape[:-2]
    w = boards.reshape((-1, ROWS * COLS))[:, WINDOW_IDX]  # [M, 69, 4]
    own = (w == 1).sum(-1)
    opp = (w == -1).sum(-1)
    total = np.zeros(w.shape[0], np.int64)
    for k in (2, 3, 4):
        total += W_OWN[k] * ((own == k) & (opp == 0)).sum(-1).astype(np.int64)
        total += W_OPP[k] * ((opp == k) & (own == 0)).sum(-1).astype(np.int64)
    return total.reshape(lead)


def ref_terminal(boards: np.ndarray) -> np.ndarray:
    w = boards.reshape((-1, ROWS * COLS))[:, WINDOW_IDX]
    four = (w == 1).all(-1).any(-1) | (w == -1).all(-1).any(-1)
    full = (boards.reshape((-1, ROWS * COLS)) != 0).all(-1)
    return four | full


def ref_drop(boards: np.ndarray, col: int, piece: int) -> tuple[np.ndarray, np.ndarray]:
    """Drop ``piece`` in column ``col`` of every board: (children, legal)."""
    row = (boards[:, :, col] == 0).sum(-1) - 1  # largest empty row index (gravity)
    legal = row >= 0
    child = boards.copy()
    idx = np.nonzero(legal)[0]
    child[idx, row[idx], col] = piece
    return child, legal


def ref_minimax(boards: np.ndarray, depth: int, maximizing: bool) -> np.ndarray:
    """int64[M]: minimax value (root mover's view) of boards [M, 6, 7]."""
    values = ref_heuristic(boards)
    if depth == 0 or boards.shape[0] == 0:
        return values
    active = ~ref_terminal(boards)
    if not active.any():
        return values
    sub = boards[active]
    piece = 1 if maximizing else -1
    sentinel = np.iinfo(np.int64).min if maximizing else np.iinfo(np.int64).max
    child_values = np.full((sub.shape[0], COLS), sentinel, np.int64)
    for c in range(COLS):
        child, legal = ref_drop(sub, c, piece)
        if legal.any():
            child_values[legal, c] = ref_minimax(child[legal], depth - 1, not maximizing)
    values[active] = child_values.max(1) if maximizing else child_values.min(1)
    return values


def ref_root_values(boards: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(int64[B, 7] minimax value of each root column, bool[B, 7] legal)."""
    boards = np.asarray(boards, np.int8)
    values = np.zeros((boards.shape[0], COLS), np.int64)
    legal_all = np.zeros((boards.shape[0], COLS), bool)
    for c in range(COLS):
        child, legal = ref_drop(boards, c, 1)
        legal_all[:, c] = legal
        if legal.any():
            values[legal, c] = ref_minimax(child[legal], n - 1, maximizing=False)
    return values, legal_all


def ref_scores(boards: np.ndarray, n: int):
    """(float64[B, 7] scores as the agent reports them, int64 values, legal)."""
    values, legal = ref_root_values(boards, n)
    root = ref_heuristic(np.asarray(boards, np.int8))
    scores = np.where(legal, (values - root[:, None]).astype(np.float64), -np.inf)
    return scores, values, legal


def ref_best_sets(values: np.ndarray, legal: np.ndarray) -> list[set[int]]:
    out = []
    for v, l in zip(values, legal):
        best = max(int(v[c]) for c in range(COLS) if l[c])
        out.append({c for c in range(COLS) if l[c] and int(v[c]) == best})
    return out


def ref_det_actions(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    return np.array([next(c for c in TIE_ORDER if c in s) for s in ref_best_sets(values, legal)])


# --------------------------------------------------------------------------------------
# Boards
# --------------------------------------------------------------------------------------

def parse(rows: str) -> np.ndarray:
    """Board from text, top row first: X = player to move (1), O = opponent (-1)."""
    lines = [ln.strip() for ln in rows.strip().splitlines()]
    assert len(lines) == ROWS and all(len(ln) == COLS for ln in lines)
    m = {"X": 1, "O": -1, ".": 0}
    return np.array([[m[ch] for ch in ln] for ln in lines], np.int8)


def show(board) -> str:
    m = {1: "X", -1: "O", 0: "."}
    return "\n".join("".join(m[int(v)] for v in row) for row in np.asarray(board))


# name -> (board, expected 1StepLA action or None, expected 2StepLA action or None)
TACTICAL = {
    "win_horizontal": (parse("""
        .......
        .......
        .......
        .......
        OO.....
        XXX...O"""), 3, 3),
    "win_vertical_left": (parse("""
        .......
        .......
        .......
        X......
        XO.....
        XOO...."""), 0, 0),
    # own win in column 0 while the opponent threatens column 6: take the win
    "win_beats_block": (parse("""
        .......
        .......
        .......
        X.....O
        X.....O
        X.....O"""), 0, 0),
    # single vertical threat of the opponent in column 0: block it
    "block_vertical_left": (parse("""
        .......
        .......
        .......
        O......
        O......
        OXX...."""), None, 0),
    "block_vertical_right": (parse("""
        .......
        .......
        .......
        ......O
        ......O
        ..XX..O"""), None, 6),
    # single horizontal threat in column 6 of the bottom row
    "block_horizontal_right": (parse("""
        .......
        .......
        .......
        .......
        ..XX...
        ..XOOO."""), None, 6),
    # full centre column
    "full_centre": (parse("""
        ...O...
        ...X...
        ...O...
        ...X...
        ...O...
        ...X..."""), None, None),
    # two full columns
    "full_two": (parse("""
        ..XO...
        ..OX...
        ..XO...
        ..OX...
        ..XO...
        ..OX..."""), None, None),
    "empty": (np.zeros((ROWS, COLS), np.int8), 3, None),
}


@pytest.fixture(scope="module")
def random_boards() -> np.ndarray:
    n = 1200
    keys = jax.random.split(jax.random.PRNGKey(20240611), n)
    states = jax.vmap(env.random_initial_state)(keys)
    boards = np.asarray(jax.vmap(env.observe)(states)).astype(np.int8)
    assert not np.asarray(states.done).any()
    return boards


@pytest.fixture(scope="module")
def all_boards(random_boards) -> np.ndarray:
    tactical = np.stack([b for b, _, _ in TACTICAL.values()])
    return np.concatenate([tactical, random_boards])


def test_tactical_boards_are_valid():
    from c4jax.games.connect_four.board import check_boards
    boards = np.stack([b for b, _, _ in TACTICAL.values()])
    check_boards(boards, batched=True, allow_finished=False)


def test_reference_matches_scalar_reference(random_boards):
    """The vectorised reference agrees with the plain recursive one (and hand boards)."""
    boards = np.concatenate([np.stack([b for b, _, _ in TACTICAL.values()]), random_boards[:25]])
    for n in (1, 2, 3):
        sub = boards if n < 3 else boards[:12]
        values, legal = ref_root_values(sub, n)
        for i, b in enumerate(sub):
            want = reference.root_values(b, n)
            got = [int(values[i, c]) if legal[i, c] else None for c in range(COLS)]
            assert got == want, f"n={n}\n{show(b)}"
    # expected tactics of the hand-built boards hold for the reference itself
    for name, (b, a1, a2) in TACTICAL.items():
        for n, a in ((1, a1), (2, a2)):
            if a is not None:
                v, l = ref_root_values(b[None], n)
                assert ref_det_actions(v, l)[0] == a, (name, n)
    # heuristic spot checks
    assert ref_heuristic(np.zeros((ROWS, COLS), np.int8)) == 0
    b = TACTICAL["win_horizontal"][0]
    # X windows: (5,0-3) own3; (5,1-4) own2; opp: rows 4 windows (4,0-3) opp2
    assert reference.heuristic(b.tolist()) == int(ref_heuristic(b))


# --------------------------------------------------------------------------------------
# Helpers for comparing with the library
# --------------------------------------------------------------------------------------

def _check_scores_against_ref(got, boards, n, label):
    got = np.asarray(got)
    assert got.shape == (boards.shape[0], COLS), got.shape
    assert got.dtype == np.float32, got.dtype
    want, values, legal = ref_scores(boards, n)
    bad_inf = np.isneginf(got) != ~legal
    ok = np.isclose(got.astype(np.float64), want, rtol=RTOL, atol=ATOL) | (~legal & np.isneginf(got))
    bad = bad_inf.any(1) | ~ok.all(1)
    if bad.any():
        i = int(np.argmax(bad))
        pytest.fail(
            f"{label}: {int(bad.sum())} of {len(boards)} boards have wrong scores (n={n}); "
            f"first one (index {i}):\n{show(boards[i])}\nboard={boards[i].tolist()}\n"
            f"got  {got[i].tolist()}\nwant {want[i].tolist()}"
        )
    return values, legal


def _check_actions(got, boards, values, legal, label):
    got = np.asarray(got)
    want = ref_det_actions(values, legal)
    bad = got != want
    if bad.any():
        i = int(np.argmax(bad))
        pytest.fail(
            f"{label}: {int(bad.sum())} of {len(boards)} deterministic actions differ; first one "
            f"(index {i}):\n{show(boards[i])}\nboard={boards[i].tolist()}\n"
            f"got {int(got[i])}, want {int(want[i])}; ref values {values[i].tolist()}"
        )


# --------------------------------------------------------------------------------------
# 1. scores and deterministic actions vs the reference
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2])
def test_nstep_matches_reference(all_boards, n):
    # n=2 over all ~1,200 boards: the numpy reference takes well under a second.
    boards = all_boards
    assert (boards[:, 0, :] != 0).any(), "no board with a full column in the sample"
    agent = agents.load(f"{n}steplA")
    assert isinstance(agent, PlayerAgent)
    assert agent.stochastic is False
    scores = agent.scores(boards)
    values, legal = _check_scores_against_ref(scores, boards, n, f"{n}StepLA.scores")
    actions = agent.act(boards, jax.random.PRNGKey(0))
    actions = np.asarray(actions)
    assert actions.shape == (boards.shape[0],)
    assert actions.dtype == np.int32
    assert legal[np.arange(len(boards)), actions].all()
    _check_actions(actions, boards, values, legal, f"{n}StepLA.act")
    # the deterministic agent ignores the key
    again = np.asarray(agent.act(boards, jax.random.PRNGKey(12345)))
    np.testing.assert_array_equal(again, actions)


def test_nstep_direct_constructor_matches_load(all_boards):
    boards = all_boards[:64]
    a = build(PLAYERS[0], 2, "det", C4)  # the kit's lookahead player at depth 2
    b = agents.load("2steplA")
    np.testing.assert_array_equal(np.asarray(a.scores(boards)), np.asarray(b.scores(boards)))
    np.testing.assert_array_equal(np.asarray(a.act(boards, jax.random.PRNGKey(1))),
                                  np.asarray(b.act(boards, jax.random.PRNGKey(1))))


@pytest.mark.parametrize("n", [1, 2])
def test_scores_jittable(all_boards, n):
    boards = all_boards[:32]
    agent = agents.load(f"{n}steplA")
    jitted = np.asarray(jax.jit(agent.scores)(jnp.asarray(boards)))
    eager = np.asarray(agent.scores(boards))
    np.testing.assert_array_equal(jitted, eager)
    _check_scores_against_ref(jitted, boards, n, f"jit({n}StepLA.scores)")


def test_single_board_batch(all_boards):
    """A batch of one gives the same as that row of a larger batch."""
    agent = agents.load("2steplA")
    boards = all_boards[:16]
    full = np.asarray(agent.scores(boards))
    for i in (0, 5, 15):
        np.testing.assert_array_equal(np.asarray(agent.scores(boards[i:i + 1]))[0], full[i])


@pytest.mark.parametrize("n,count", [(3, 24), (4, 8)])
def test_deeper_lookahead_matches_reference(all_boards, n, count):
    boards = np.concatenate([all_boards[:9], all_boards[-count:]])
    agent = agents.load(f"{n}steplA")
    values, legal = _check_scores_against_ref(agent.scores(boards), boards, n, f"{n}StepLA.scores")
    _check_actions(agent.act(boards, jax.random.PRNGKey(0)), boards, values, legal, f"{n}StepLA.act")


# --------------------------------------------------------------------------------------
# 2. stochastic tie-break
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2])
def test_stochastic_tie_break(all_boards, n):
    values, legal = ref_root_values(all_boards, n)
    best = ref_best_sets(values, legal)
    multi = [i for i, s in enumerate(best) if len(s) > 1]
    single = [i for i, s in enumerate(best) if len(s) == 1]
    assert len(multi) >= 5, "sample has too few boards with tied best columns"
    pick = np.array(multi[:40] + single[:8])
    boards = all_boards[pick]
    agent = agents.load(f"{n}steplA:sto")
    assert agent.stochastic is True
    seen = [set() for _ in pick]
    n_keys = 60
    for k in range(n_keys):
        key = jax.random.PRNGKey(1000 + k)
        acts = np.asarray(agent.act(boards, key))
        assert acts.shape == (len(pick),) and acts.dtype == np.int32
        again = np.asarray(agent.act(boards, key))
        np.testing.assert_array_equal(acts, again, err_msg="same key, different actions")
        for j, (i, a) in enumerate(zip(pick, acts)):
            assert int(a) in best[i], (
                f"{n}StepLA:sto chose {int(a)} outside best {sorted(best[i])}\n{show(all_boards[i])}")
            seen[j].add(int(a))
    for j, i in enumerate(pick):
        if len(best[i]) > 1:
            # P(a single column over 60 keys | >= 2 equally likely) <= 2 * 2**-60
            assert len(seen[j]) > 1, f"only {seen[j]} of best {sorted(best[i])}\n{show(all_boards[i])}"
        else:
            assert seen[j] == best[i]
    # the empty board: for 1StepLA every column scores 0, so every column should appear
    if n == 1:
        empty = np.zeros((1, ROWS, COLS), np.int8)
        got = {int(np.asarray(agent.act(empty, jax.random.PRNGKey(k)))[0]) for k in range(120)}
        assert got == set(range(COLS))


# --------------------------------------------------------------------------------------
# 3. Random agent
# --------------------------------------------------------------------------------------

def test_random_agent(random_boards):
    agent = agents.load("random")
    assert isinstance(agent, RandomAgent)
    assert agent.stochastic is True
    legal_all = random_boards[:, 0, :] == 0
    n_legal = legal_all.sum(1)
    # a few boards with 7 legal columns and a few with fewer
    pick = list(np.nonzero(n_legal == 7)[0][:3]) + list(np.nonzero(n_legal < 7)[0][:5])
    assert len(pick) >= 5
    boards = random_boards[np.array(pick)]
    legal = legal_all[np.array(pick)]
    n_keys = 700
    counts = np.zeros((len(pick), COLS), np.int64)
    first = None
    for k in range(n_keys):
        acts = np.asarray(agent.act(boards, jax.random.PRNGKey(k)))
        assert acts.shape == (len(pick),) and acts.dtype == np.int32
        assert legal[np.arange(len(pick)), acts].all(), "random agent played an illegal column"
        counts[np.arange(len(pick)), acts] += 1
        if k == 0:
            first = acts
    np.testing.assert_array_equal(np.asarray(agent.act(boards, jax.random.PRNGKey(0))), first)
    for j in range(len(pick)):
        obs = counts[j][legal[j]]
        assert (obs > 0).all(), f"legal column never chosen: counts {counts[j].tolist()}"
        expected = n_keys / legal[j].sum()
        chi2 = ((obs - expected) ** 2 / expected).sum()
        # df <= 6; P(chi2 > 40) < 1e-6. Deterministic anyway with fixed keys.
        assert chi2 < 40, f"far from uniform: counts {counts[j].tolist()}, chi2={chi2:.1f}"
    # also one key over a large batch of copies of one board: independent draws per board
    b = np.repeat(boards[:1], 2100, axis=0)
    acts = np.asarray(agent.act(b, jax.random.PRNGKey(7)))
    c = np.bincount(acts, minlength=COLS)
    assert ((c - 300) ** 2 / 300).sum() < 40, c.tolist()


# --------------------------------------------------------------------------------------
# 4. mirror symmetry
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2])
def test_mirror_symmetry(all_boards, n):
    boards = all_boards[:400]
    agent = agents.load(f"{n}steplA")
    s = np.asarray(agent.scores(boards))
    m = np.asarray(agent.scores(np.ascontiguousarray(boards[:, :, ::-1])))
    np.testing.assert_allclose(m, s[:, ::-1], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(np.isneginf(m), np.isneginf(s[:, ::-1]))


# --------------------------------------------------------------------------------------
# 5. tactics
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(TACTICAL))
def test_tactics(name):
    board, a1, a2 = TACTICAL[name]
    for n, want in ((1, a1), (2, a2)):
        agent = agents.load(f"{n}steplA")
        s = np.asarray(agent.scores(board[None]))[0]
        full = board[0] != 0
        assert np.isneginf(s[full]).all() and np.isfinite(s[~full]).all(), s.tolist()
        act = int(np.asarray(agent.act(board[None], jax.random.PRNGKey(0)))[0])
        assert not full[act]
        if want is not None:
            assert act == want, f"{n}StepLA played {act}, want {want}; scores {s.tolist()}\n{show(board)}"


def test_1step_takes_immediate_win_on_random_boards(random_boards):
    """Wherever the mover has a winning drop, 1StepLA plays a winning column."""
    agent = agents.load("1steplA")
    acts = np.asarray(agent.act(random_boards, jax.random.PRNGKey(0)))
    wins_found = 0
    for b, a in zip(random_boards, acts):
        winning = []
        for c in range(COLS):
            nb = reference.play(b.tolist(), c, 1)
            if nb is not None and any(all(nb[r][cc] == 1 for r, cc in w) for w in WINDOWS):
                winning.append(c)
        if winning:
            wins_found += 1
            assert int(a) in winning, f"missed a win {winning}, played {int(a)}\n{show(b)}"
    assert wins_found > 10


# --------------------------------------------------------------------------------------
# 6. bad input
# --------------------------------------------------------------------------------------

def _bad_inputs():
    good = np.zeros((2, ROWS, COLS), np.int8)
    out = {
        "no_batch_axis": np.zeros((ROWS, COLS), np.int8),
        "wrong_cols": np.zeros((2, ROWS, 8), np.int8),
        "wrong_rows": np.zeros((2, 7, COLS), np.int8),
        "float_dtype": good.astype(np.float32),
        "value_2": good.copy(),
        "value_minus_2": good.copy(),
        "floating_stone": good.copy(),
    }
    out["value_2"][1, 5, 3] = 2
    out["value_minus_2"][0, 5, 3] = -2
    out["floating_stone"][1, 2, 3] = -1  # nothing below it
    return out


BAD = _bad_inputs()


@pytest.mark.parametrize("agent_name", ["1steplA", "2steplA", "1steplA:sto", "random"])
@pytest.mark.parametrize("bad", list(BAD))
def test_bad_input_raises(agent_name, bad):
    agent = agents.load(agent_name)
    boards = BAD[bad]
    if agent_name != "random":
        with pytest.raises(ValueError):
            agent.scores(boards)
    with pytest.raises(ValueError):
        agent.act(boards, jax.random.PRNGKey(0))


# --------------------------------------------------------------------------------------
# 7. agents.load names
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name,cls,stochastic,depth",
    [
        ("random", RandomAgent, True, None),
        ("1steplA", PlayerAgent, False, 1),
        ("1StepLA", PlayerAgent, False, 1),
        ("1steplA:det", PlayerAgent, False, 1),
        ("1steplA:sto", PlayerAgent, True, 1),
        ("1StepLA:sto", PlayerAgent, True, 1),
        ("2steplA", PlayerAgent, False, 2),
        ("2STEPLA", PlayerAgent, False, 2),
        ("2steplA:sto", PlayerAgent, True, 2),
        ("2steplA:det", PlayerAgent, False, 2),
        ("3steplA", PlayerAgent, False, 3),
        ("4steplA", PlayerAgent, False, 4),
    ],
)
def test_load_names(name, cls, stochastic, depth):
    agent = agents.load(name)
    assert isinstance(agent, cls)
    assert agent.stochastic is stochastic
    assert isinstance(agent.name, str) and agent.name
    if depth is not None:
        assert str(depth) in agent.name
        # behavioural depth check on a board where 1-, 2- and 3-step scores all differ
        board = TACTICAL["block_vertical_left"][0][None]
        want, _, _ = ref_scores(board, depth)
        np.testing.assert_allclose(np.asarray(agent.scores(board)), want, rtol=RTOL, atol=ATOL)


def test_load_depths_distinguishable():
    board = TACTICAL["block_vertical_left"][0][None]
    refs = [ref_scores(board, n)[0] for n in (1, 2, 3, 4)]
    for x, y in itertools.combinations(refs, 2):
        assert not np.allclose(x, y)


@pytest.mark.parametrize("name", ["nosuchagent", "5stepla_typo", "0steplA", "99steplA", "stepla"])
def test_load_unknown_name(name):
    with pytest.raises((ValueError, KeyError)) as exc:
        agents.load(name)
    msg = str(exc.value).lower()
    assert "random" in msg and "1stepla" in msg and "2stepla" in msg, msg


@pytest.mark.parametrize("name", ["1steplA:maybe", "random:xyz", "", ":sto"])
def test_load_bad_suffix_or_empty(name):
    with pytest.raises((ValueError, KeyError)):
        agents.load(name)


@pytest.mark.parametrize("n", [1, 2])
def test_plain_python_reference_plays_the_same_moves(all_boards, n):
    """c4jax.games.connect_four.reference (the Table 5.1 yardstick, plain lists and recursion) is the same player."""
    boards = all_boards[:300]
    got = np.asarray(jax.jit(agents.load(f"{n}steplA").act)(jnp.asarray(boards), jax.random.key(0)))
    assert [reference.act(b, n) for b in boards] == got.tolist()



def _finished_boards() -> np.ndarray:
    """int8[2, 6, 7]: a game the opponent won with four in a row, and a full board (a draw)."""
    won = np.zeros((ROWS, COLS), np.int8)
    won[5, :4] = -1  # the opponent's bottom-row four
    won[4, :3] = 1
    full = np.array([[1, 1, -1, -1, 1, 1, -1], [-1, -1, 1, 1, -1, -1, 1]] * 3, np.int8)
    return np.stack([won, full])


@pytest.mark.parametrize("agent_name", ["1steplA", "2steplA:sto", "random"])
def test_finished_games_in_a_batch_get_column_0(agent_name, all_boards):
    """Outside jit, act and scores take a batch where some games have ended: column 0 and -inf
    scores for those, the same moves and scores as without them for the others."""
    from c4jax.games.connect_four.board import check_boards

    finished = _finished_boards()
    check_boards(finished, batched=True)  # well-formed...
    for board in finished:
        with pytest.raises(ValueError, match="finished game"):
            check_boards(board[None], batched=True, allow_finished=False)  # ...and finished
    live = all_boards[:6]
    boards = np.concatenate([live[:3], finished[:1], live[3:], finished[1:]])
    where = np.array([False] * 3 + [True] + [False] * 3 + [True])
    agent, key = agents.load(agent_name), jax.random.key(3)
    got = np.asarray(agent.act(boards, key))
    assert got.dtype == np.int32 and (got[where] == 0).all()
    assert (boards[~where][np.arange(6), 0, got[~where]] == 0).all()  # legal columns
    if not agent.stochastic:
        np.testing.assert_array_equal(got[~where], np.asarray(agent.act(live, key)))
        scores = np.asarray(agent.scores(boards))
        assert np.isneginf(scores[where]).all()
        np.testing.assert_array_equal(scores[~where], np.asarray(agent.scores(live)))
