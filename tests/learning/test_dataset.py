"""The supervised dataset (design.md §6): generation, mirrors, splits, .npz and text formats, CLI."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

from c4jax import agents
from c4jax.learning import dataset as data
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR
from c4jax.games.connect_four.board import check_boards
from scripts import run_script
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

N = 5000
BATCH = 256  # about 2,500 rows per batch: the fixtures cross batch boundaries


@pytest.fixture(scope="module")
def ds():
    return data.generate(N, seed=0, batch=BATCH, game=C4)


def _is_image(d) -> np.ndarray:
    """bool[N]: the row is not the first of its group (in generated data: an added image)."""
    first = np.zeros(len(d), bool)
    first[np.unique(d.groups, return_index=True)[1]] = True
    return ~first


def _flat_keys(boards):
    return [b.tobytes() for b in np.ascontiguousarray(boards).reshape(len(boards), -1)]


def _mirror_pairs(d):
    """(first rows, second rows) of every two-row group."""
    uniq, first, counts = np.unique(d.groups, return_index=True, return_counts=True)
    two = first[counts == 2]
    return two, two + 1


# --------------------------------------------------------------------------- generation


def test_size_dtypes_and_exact_truncation(ds):
    assert len(ds) == N
    assert ds.observations.shape == (N, 6, 7) and ds.observations.dtype == np.int8
    assert ds.actions.shape == (N,) and ds.actions.dtype == np.int8
    assert ds.groups.shape == (N,) and ds.groups.dtype == np.int32
    for n in (1, 2, 3, 7):
        d = data.generate(n, seed=0, batch=BATCH, game=C4)
        assert len(d) == n
        np.testing.assert_array_equal(d.observations, ds.observations[:n])  # a prefix of the same discovery order
    assert len(data.generate(0, seed=0, batch=BATCH, game=C4)) == 0


def test_boards_unique_also_up_to_mirroring_outside_groups(ds):
    keys = _flat_keys(ds.observations)
    assert len(set(keys)) == N
    # A board's mirror occurs only inside its own group.
    where = {k: i for i, k in enumerate(keys)}
    for i, k in enumerate(_flat_keys(ds.observations[:, :, ::-1])):
        j = where.get(k)
        assert j is None or ds.groups[j] == ds.groups[i]


def test_mirror_rows_follow_their_original(ds):
    uniq, first, counts = np.unique(ds.groups, return_index=True, return_counts=True)
    np.testing.assert_array_equal(uniq, np.arange(uniq.size))  # ids 0.. in order of discovery
    assert np.all(np.diff(ds.groups) >= 0) and set(counts.tolist()) <= {1, 2}
    a, b = _mirror_pairs(ds)
    assert a.size > 0.45 * N
    np.testing.assert_array_equal(ds.observations[b], ds.observations[a][:, :, ::-1])
    np.testing.assert_array_equal(ds.actions[b], 6 - ds.actions[a])
    np.testing.assert_array_equal(ds.groups[b], ds.groups[a])
    # A single-row group is a symmetric board, or the very last row (its mirror cut off).
    singles = first[counts == 1]
    symmetric = (ds.observations[singles] == ds.observations[singles][:, :, ::-1]).all(axis=(1, 2))
    assert symmetric[singles != N - 1].all()
    assert _is_image(ds).sum() == a.size and not _is_image(ds)[a].any() and _is_image(ds)[b].all()


def test_original_rows_are_what_1steplA_plays(ds):
    orig = np.flatnonzero(~_is_image(ds))
    assert orig.size >= 1000
    played = np.asarray(agents.load("1steplA").act(ds.observations[orig], jax.random.key(7)))
    np.testing.assert_array_equal(played, ds.actions[orig])


def test_boards_valid_and_not_terminal(ds):
    check_boards(ds.observations, batched=True, allow_finished=False)
    ds.validate()
    assert (ds.observations[np.arange(N), 0, ds.actions] == 0).all()  # the column is not full
    s = jax.vmap(env.from_board)(ds.observations[:500])  # the environment agrees
    assert not np.asarray(s.done).any()


def test_same_seed_same_data_other_seed_other_data(ds):
    again = data.generate(N, seed=0, batch=BATCH, game=C4)
    for f in ("observations", "actions", "groups"):
        np.testing.assert_array_equal(getattr(again, f), getattr(ds, f))
    other = data.generate(N, seed=1, batch=BATCH, game=C4)
    assert len(other) == N
    assert not np.array_equal(other.observations, ds.observations)
    assert len(set(_flat_keys(other.observations)) ^ set(_flat_keys(ds.observations))) > N


def test_rollout_compiled_once_per_batch_shape(ds):
    before = data._play._cache_size()
    data.generate(300, seed=5, batch=BATCH, game=C4)
    data.generate(N, seed=6, batch=BATCH, game=C4)
    assert data._play._cache_size() == before


def _sequential_reference(boards, actions, seen, room, group0):
    """design.md §6 rule, one pair at a time: a new board is kept, then its mirror unless present."""
    out_b, out_a, out_g = [], [], []
    g = group0
    for b, a in zip(boards, actions):
        if len(out_b) >= room:
            break
        k = b.tobytes()
        if k in seen:
            continue
        seen.add(k)
        out_b.append(b), out_a.append(a), out_g.append(g)
        m = np.ascontiguousarray(b[:, ::-1])
        if m.tobytes() not in seen and len(out_b) < room:
            seen.add(m.tobytes())
            out_b.append(m), out_a.append(6 - a), out_g.append(g)
        g += 1
    return np.array(out_b, np.int8).reshape(-1, 6, 7), np.array(out_a, np.int8), np.array(out_g, np.int32)


def test_vectorised_dedupe_equals_the_sequential_rule():
    rng = np.random.default_rng(0)
    pool = np.asarray(jax.vmap(env.observe)(jax.vmap(env.random_initial_state)(
        jax.random.split(jax.random.key(3), 400))))
    pool = np.concatenate([pool, np.zeros((1, 6, 7), np.int8)])  # the symmetric empty board
    acts = rng.integers(0, 7, len(pool)).astype(np.int8)
    seen_vec, seen_ref = set(), set()
    group0 = 0
    for call in range(3):  # several batches: duplicates and mirrors across calls too
        i = rng.integers(0, len(pool), 300)
        flip = rng.random(300) < 0.3
        boards = np.where(flip[:, None, None], pool[i][:, :, ::-1], pool[i])
        actions = np.where(flip, 6 - acts[i], acts[i]).astype(np.int8)
        room = 10_000 if call < 2 else 57  # the last call is truncated
        b, a, g, n_orig = data._new_rows(CONNECT_FOUR, boards, actions, seen_vec, room, group0)
        rb, ra, rg = _sequential_reference(boards, actions, seen_ref, room, group0)
        np.testing.assert_array_equal(b, rb)
        np.testing.assert_array_equal(a, ra)
        np.testing.assert_array_equal(g, rg)
        group0 += n_orig
    assert group0 > 100


# --------------------------------------------------------------------------- split


def test_split_sizes_disjoint_groups_whole(ds):
    train, val, test = ds.split((0.8, 0.1, 0.1), seed=0)
    for part, want in ((train, 4000), (val, 500), (test, 500)):
        assert abs(len(part) - want) <= 2
    assert len(train) + len(val) + len(test) == N
    keys = [set(_flat_keys(p.observations)) for p in (train, val, test)]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    assert len(keys[0] | keys[1] | keys[2]) == N
    groups = [set(p.groups.tolist()) for p in (train, val, test)]
    assert not (groups[0] & groups[1] or groups[0] & groups[2] or groups[1] & groups[2])
    # mirrors travel with their board: every group is complete in its part
    sizes = np.bincount(ds.groups)
    for p in (train, val, test):
        np.testing.assert_array_equal(np.bincount(p.groups, minlength=sizes.size)[p.groups], sizes[p.groups])
        p.validate()
    # deterministic for a seed, different for another
    again = ds.split((0.8, 0.1, 0.1), seed=0)
    np.testing.assert_array_equal(again[1].observations, val.observations)
    assert not np.array_equal(ds.split(seed=1)[1].observations, val.observations)


def test_split_other_fractions_and_errors(ds):
    a, b = ds.split((0.5, 0.5))
    assert abs(len(a) - N // 2) <= 1 and len(a) + len(b) == N
    empty, rest, none = ds.split((0.0, 1.0, 0.0))
    assert len(empty) == 0 and len(rest) == N and len(none) == 0
    assert [len(p) for p in ds.take(np.arange(0)).split()] == [0, 0, 0]
    for bad in ((0.5, 0.6), (1.2, -0.2), ()):
        with pytest.raises(ValueError, match="fractions"):
            ds.split(bad)


# --------------------------------------------------------------------------- .npz


def test_npz_round_trip(ds, tmp_path):
    path = ds.save_npz(tmp_path / "sub" / "ds.data")  # exact name kept, parents created
    assert path == tmp_path / "sub" / "ds.data" and path.is_file()
    back = data.Dataset.load_npz(path)
    for f in ("observations", "actions", "groups"):
        np.testing.assert_array_equal(getattr(back, f), getattr(ds, f))
        assert getattr(back, f).dtype == getattr(ds, f).dtype
    assert back.info == ds.info and back.info["seed"] == 0 and back.info["agent"] == "1steplA"


def _write_npz(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **{k: a for k, a in arrays.items() if a is not None})  # None: left out
    return path


def test_load_npz_errors(ds, tmp_path):
    missing = tmp_path / "nope.npz"
    with pytest.raises(ValueError, match="nope.npz") as e:
        data.Dataset.load_npz(missing)
    assert isinstance(e.value, FileNotFoundError)

    other = _write_npz(tmp_path / "other.npz", x=np.arange(3))
    with pytest.raises(ValueError, match=r"other\.npz is not a c4jax dataset.*missing"):
        data.Dataset.load_npz(other)

    np.save(tmp_path / "single.npy", np.zeros(3))
    with pytest.raises(ValueError, match=r"single\.npy is not a c4jax dataset.*single \.npy array"):
        data.Dataset.load_npz(tmp_path / "single.npy")
    with pytest.raises(ValueError, match="is a directory"):
        data.Dataset.load_npz(tmp_path)

    good = ds.take(np.arange(100)).save_npz(tmp_path / "good.npz")
    raw = bytearray(good.read_bytes())
    for name, blob in (("truncated.npz", bytes(raw[: len(raw) // 2])),
                       ("garbage.npz", bytes(np.random.default_rng(0).integers(0, 256, 4000, np.uint8))),
                       ("flipped.npz", bytes(raw[:60]) + bytes(b ^ 0xFF for b in raw[60:400]) + bytes(raw[400:]))):
        (tmp_path / name).write_bytes(blob)
        with pytest.raises(ValueError, match=name.replace(".", r"\.")):
            data.Dataset.load_npz(tmp_path / name)

    base = dict(format=np.array(data.FORMAT_NAME), version=np.array(2, np.int32), game=np.array("connect_four"),
                observations=ds.observations[:10], actions=ds.actions[:10], groups=ds.groups[:10])
    cases = {
        "dtype.npz": (dict(observations=ds.observations[:10].astype(np.int32)), "observations.*int8"),
        "shape.npz": (dict(actions=ds.actions[:9]), "shapes"),
        "version.npz": (dict(version=np.array(99, np.int32)), "newer"),
        "version_1.npz": (dict(version=np.array(1, np.int32)), "version 1 names no game and is no longer read"),
        "no_game.npz": (dict(game=None), r"missing arrays \['game'\]"),
        "tag.npz": (dict(format=np.array("something else")), "format tag"),
        "action.npz": (dict(actions=np.where(np.arange(10) == 4, 7, ds.actions[:10]).astype(np.int8)),
                       "row 4: action 7 is outside"),
        "floating.npz": (dict(observations=_with_floating_stone(ds.observations[:10], 3)), "row 3: invalid board.*floating"),
        "full.npz": (dict(observations=_full_column_board(10), actions=np.zeros(10, np.int8),
                          groups=np.arange(10, dtype=np.int32)), "row 0: action 0 is not legal"),
        "groups.npz": (dict(groups=np.zeros(10, np.int32)), "not images of one another"),
    }
    for name, (override, msg) in cases.items():
        path = _write_npz(tmp_path / name, **{**base, **override})
        with pytest.raises(ValueError, match=msg):
            data.Dataset.load_npz(path)


def _with_floating_stone(boards, i):
    b = boards.copy()
    col = int(np.argmax(b[i, 1] == 0))  # a column whose second row from the top is empty
    assert b[i, 1, col] == 0
    b[i, 0, col] = -1  # a stone in the top row with an empty cell below it
    return b


def _full_column_board(n):
    b = np.zeros((6, 7), np.int8)
    b[:, 0] = [1, -1, 1, -1, 1, -1]  # column 0 full, alternating: no four, 3 stones each
    check_boards(b[None], batched=True, allow_finished=False)
    return np.repeat(b[None], n, axis=0)


def _text(board) -> str:
    return "".join("2" if v == -1 else str(v) for v in np.asarray(board).reshape(-1))


# --------------------------------------------------------------------------- text format


def test_text_round_trip(ds, tmp_path):
    path = data.export_text(ds, tmp_path / "t" / "ds.txt")
    text = path.read_text()
    pairs = text.split(";")
    assert len(pairs) == N and all(len(p) == 43 for p in pairs)
    # row 0 (top) first, 1 = player to move, 2 = opponent
    b0 = ds.observations[0].reshape(-1)
    assert pairs[0][:42] == "".join("0" if v == 0 else "1" if v == 1 else "2" for v in b0)
    assert pairs[0][42] == str(ds.actions[0])
    back = data.import_text(path, C4.id)
    for f in ("observations", "actions", "groups"):
        np.testing.assert_array_equal(getattr(back, f), getattr(ds, f))
    # trailing ';', newlines and spaces around pairs are tolerated
    loose = tmp_path / "loose.txt"
    loose.write_text("  " + ";\n".join(pairs[:50]) + ";\n\n")
    back = data.import_text(loose, C4.id)
    np.testing.assert_array_equal(back.observations, ds.observations[:50])
    np.testing.assert_array_equal(back.actions, ds.actions[:50])
    # empty dataset
    empty = data.export_text(ds.take(np.arange(0)), tmp_path / "empty.txt")
    assert len(data.import_text(empty, C4.id)) == 0


def test_text_import_groups_pair_mirrors(tmp_path):
    a = "0" * 35 + "2000000" + "3"  # one opponent stone bottom-left, play the centre
    a_mirror = "0" * 35 + "0000002" + "3"
    sym = "0" * 35 + "0002000" + "3"  # symmetric: its own group
    b = "0" * 35 + "0200000" + "1"  # mirror absent: its own group
    path = tmp_path / "g.txt"
    path.write_text(";".join([a, sym, b, a_mirror]))
    d = data.import_text(path, C4.id)
    np.testing.assert_array_equal(d.groups, [0, 1, 2, 0])
    np.testing.assert_array_equal(_is_image(d), [False, False, False, True])


def test_text_import_errors(tmp_path):
    ok = "0" * 42 + "3"
    cases = {
        "length": ([ok, ok[:-2]], r"pair 1 has 41 characters"),
        "char": ([ok, ok, "3" + ok[1:]], r"pair 2 has the bad character '3' at board cell 0"),
        "action": ([ok, ok[:-1] + "7"], r"pair 1 has the bad action '7'"),
        "floating": ([ok, ok, ok, "2" + "0" * 41 + "3"], r"pair 3: invalid board.*floating"),
        "count": (["0" * 41 + "1" + "3"], r"pair 0: invalid board.*stone counts"),
        "four": ([ok, "0" * 14 + "1000000" * 3 + "1220220" + "3"], r"pair 1: invalid board.*four in a row"),
        "empty_pair": ([ok, "", ok], r"pair 1 has 0 characters"),
    }
    for name, (pairs, msg) in cases.items():
        path = tmp_path / f"{name}.txt"
        path.write_text(";".join(pairs))
        with pytest.raises(ValueError, match=msg) as e:
            data.import_text(path, C4.id)
        assert str(path) in str(e.value)
    # an action on a full column
    path = tmp_path / "fullcol.txt"
    path.write_text(_text(_full_column_board(1)[0]) + "0")
    with pytest.raises(ValueError, match=r"pair 0: action 0 is not legal"):
        data.import_text(path, C4.id)
    with pytest.raises(ValueError, match="missing.txt"):
        data.import_text(tmp_path / "missing.txt", C4.id)


# --------------------------------------------------------------------------- CLI


def test_make_dataset_cli_end_to_end(tmp_path):
    out, text = tmp_path / "deep" / "ds.npz", tmp_path / "deep" / "ds.txt"
    res = run_script("make_dataset.py", "--num-pairs", "2000",
         "--out", str(out), "--text-out", str(text), "--no-progress")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "rows: 2,000" in res.stdout and "from symmetries" in res.stdout
    assert "first batch incl. compile" in res.stdout and str(out) in res.stdout
    d = data.Dataset.load_npz(out)
    assert len(d) == 2000 and d.info["num_pairs"] == 2000
    np.testing.assert_array_equal(data.import_text(text, C4.id).observations, d.observations)


# --------------------------------------------------------------------------- resumable generation


class _Stop(Exception):
    pass


def test_generation_resumed_from_any_batch_gives_the_same_dataset(ds, tmp_path):
    saved = []

    def keep(p):
        saved.append(p.save(tmp_path / f"p{p.counts['batches']}"))

    again = data.generate_with_stats(N, seed=0, batch=BATCH, on_batch=keep, game=C4)[0]
    np.testing.assert_array_equal(again.observations, ds.observations)  # saving changes nothing
    assert len(saved) >= 2
    for path in saved:
        p = data.Progress.load(path)
        resumed = data.generate_with_stats(N, seed=0, batch=BATCH, resume=p, game=C4)[0]
        for k in ("observations", "actions", "groups"):
            np.testing.assert_array_equal(getattr(resumed, k), getattr(ds, k), err_msg=f"{path.name}: {k}")
        assert resumed.info == ds.info
    with pytest.raises(ValueError, match="other|made with"):
        data.generate_with_stats(N, seed=1, batch=BATCH, resume=data.Progress.load(saved[0]), game=C4)


def test_a_damaged_progress_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "p"
    data.generate_with_stats(600, seed=0, batch=BATCH, on_batch=lambda p: p.save(path), game=C4)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="cannot be read as generation progress") as e:
        data.Progress.load(path)
    assert "\n" not in str(e.value)


def test_make_dataset_resume_cli(tmp_path):
    out = tmp_path / "d.npz"
    args = ("--out", out, "--num-pairs", "600", "--batch", str(BATCH), "--no-progress")
    nothing = run_script("make_dataset.py", *args, "--resume")
    assert nothing.returncode == 2 and nothing.stderr.startswith("error: --resume: no progress to resume")
    assert nothing.stderr.count("\n") == 1
    assert run_script("make_dataset.py", *args).returncode == 0
    assert not (tmp_path / "d.npz.progress").exists() and [p.name for p in tmp_path.iterdir()] == ["d.npz"]
    done = run_script("make_dataset.py", *args, "--resume")
    assert done.returncode == 0 and "nothing to resume" in done.stdout
    other = run_script("make_dataset.py", *args[:3], "700", *args[4:], "--resume")
    assert other.returncode == 2 and "other settings" in other.stderr and "Traceback" not in other.stderr
    (tmp_path / "d.npz.progress").write_bytes(b"PK\x03\x04 not really")
    bad = run_script("make_dataset.py", *args, "--resume")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --resume:") and bad.stderr.count("\n") == 1


# --------------------------------------------------------------------------- any game, any symmetries


def _swap(boards):
    return -np.asarray(boards)


def test_every_image_of_a_group_of_symmetries_follows_its_original(monkeypatch):
    """With a kit whose symmetries form a group of four with the identity (the mirror, a stone swap and
    both; the swap only exercises the bookkeeping), each new position is followed by its distinct
    images with their actions, the canonical keys of groups never repeat, and a batch met again adds
    nothing."""
    from c4jax import games
    from c4jax.games.kit import Symmetry

    kit = games.kit_of(CONNECT_FOUR)
    mirror = kit.symmetries[0]
    both = Symmetry("mirror+swap", lambda b: _swap(mirror.observation(b)), mirror.actions)
    fake = dataclasses.replace(kit, symmetries=(mirror, Symmetry("swap", _swap, tuple(range(7))), both))
    monkeypatch.setattr(games, "kit_of", lambda game: fake if getattr(game, "id", game) == CONNECT_FOUR.id
                        else kit)
    pool = np.asarray(jax.vmap(env.observe)(jax.vmap(env.random_initial_state)(jax.random.split(jax.random.key(5), 200))))
    pool = np.concatenate([pool, np.zeros((1, 6, 7), np.int8)])  # the empty board: its own image under every symmetry
    actions = np.random.default_rng(0).integers(0, 7, len(pool)).astype(np.int8)
    seen: set[bytes] = set()
    obs, act, grp, n_orig = data._new_rows(CONNECT_FOUR, pool, actions, seen, 10_000, 0)
    assert n_orig == len(np.unique(data._void(data._canonical(CONNECT_FOUR, pool))))
    empty = np.flatnonzero(~obs.reshape(len(obs), -1).any(axis=1))
    assert len(empty) == 1 and (grp == grp[empty[0]]).sum() == 1  # one row for the empty board
    for g in np.unique(grp):
        rows = np.flatnonzero(grp == g)
        first, o, a = rows[0], obs[rows[0]], act[rows[0]]
        expected = {o.tobytes(): a}
        for image, image_action in ((o[:, ::-1], 6 - a), (-o, a), (-o[:, ::-1], 6 - a)):
            expected.setdefault(image.tobytes(), image_action)
        assert {obs[r].tobytes(): act[r] for r in rows} == expected  # the distinct images, each once
        assert first == rows.min()
    assert len({data._canonical(CONNECT_FOUR, obs[grp == g][:1]).tobytes() for g in np.unique(grp)}) == n_orig
    again = data._new_rows(CONNECT_FOUR, pool[::-1], actions[::-1], seen, 10_000, n_orig)
    assert len(again[0]) == 0


def test_a_teacher_whose_games_repeat_stops_with_an_error(monkeypatch):
    """Without random start positions or random opening moves, the deterministic 1StepLA plays one game
    over and over: generation gives up after a few batches instead of looping."""
    from c4jax import games

    kit = games.kit_of(CONNECT_FOUR)
    monkeypatch.setattr(games, "kit_of", lambda game: dataclasses.replace(kit, random_start=None)
                        if getattr(game, "id", game) == CONNECT_FOUR.id else kit)
    with pytest.raises(ValueError, match=r"played no new position in 3 batches.*more opening plies"):
        data.generate(10_000, seed=0, batch=4, opening_plies=0, game=C4)


@pytest.fixture(scope="module")
def checkers_ds():
    from c4jax import games

    return data.generate(400, seed=0, batch=8, game=games.make("checkers"), teacher="checkers/random")


def test_a_game_without_random_starts_or_symmetries(checkers_ds, tmp_path):
    """Checkers: games start after random opening moves, no images are added, actions take int16 (256 of them),
    and the .npz keeps the game; loading it as another game's dataset is refused by the supervised stage."""
    from c4jax import games

    d = checkers_ds
    assert len(d) == 400 and d.game == "checkers" and d.observations.shape == (400, 8, 8, 2)
    assert d.actions.dtype == np.int16 and not _is_image(d).any() and len(np.unique(d.groups)) == 400
    assert d.info["agent"] == "checkers/random" and d.info["opening_plies"] == 4
    assert len(set(_flat_keys(d.observations))) == 400
    back = data.Dataset.load_npz(d.save_npz(tmp_path / "ck.npz"))
    assert back.game == "checkers" and back.info == d.info
    for k in ("observations", "actions", "groups"):
        np.testing.assert_array_equal(getattr(back, k), getattr(d, k))
    again = data.generate(400, seed=0, batch=8, game=games.make("checkers"), teacher="checkers/random")
    np.testing.assert_array_equal(again.observations, d.observations)
    with pytest.raises(ValueError, match="outside the game's range"):
        data.Dataset(np.full((1, 8, 8, 2), 9, np.int8), np.zeros(1, np.int16), np.zeros(1, np.int32),
                     game="checkers").validate()
