"""Supervised stage: the optimiser, a tiny training run that learns, the script end to end."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from c4jax import agents
from c4jax.learning import dataset as data
from c4jax.nets import cnet
from c4jax.learning import supervised as sv
from scripts import run_script
from c4jax import games as c4games
from command import error_of

C4 = c4games.make(c4games.DEFAULT)


def test_adam_l2_adds_weight_decay_to_the_gradient_like_pytorch():
    # PyTorch Adam(weight_decay=wd): g <- g + wd * p, then the usual Adam step. On the
    # first step Adam's update is -lr * sign(g) (bias-corrected m/sqrt(v) = g/|g|).
    params = {"w": jnp.array([1.0, -2.0, 0.5])}
    grads = {"w": jnp.array([-0.001, 0.001, 0.0])}
    tx = sv.adam_l2(0.1, 1.0)
    updates, _ = tx.update(grads, tx.init(params), params)
    g = grads["w"] + 1.0 * params["w"]
    np.testing.assert_allclose(updates["w"], -0.1 * g / (jnp.abs(g) + 1e-8), rtol=1e-5)


def test_epoch_batches_cover_each_row_at_most_once():
    idx = sv.epoch_batches(np.random.default_rng(0), 1000, 64)
    assert idx.shape == (15, 64) and len(np.unique(idx)) == 15 * 64
    with pytest.raises(ValueError, match="smaller than one batch"):
        sv.epoch_batches(np.random.default_rng(0), 10, 64)


@pytest.fixture(scope="module")
def small_dataset():
    return data.generate(3000, seed=1, game=C4)


def test_tiny_training_run_learns_above_chance(small_dataset):
    train, val, _ = small_dataset.split((0.8, 0.2, 0.0), seed=0)
    net = cnet.CNet(heads="one")
    tx = sv.adam_l2(5e-4, 2e-3)
    params = cnet.init_params(jax.random.key(0))
    state = sv.TrainState(params=params, opt_state=tx.init(params), step=jnp.int32(0))
    chunk, evaluate = sv.make_train_chunk(net, tx), sv.make_evaluate(net, batch_size=512)
    loss0, acc0 = evaluate(params, val.observations, val.actions)
    rng = np.random.default_rng(0)
    for _ in range(4):
        idx = sv.epoch_batches(rng, len(train), 64)
        state, m = chunk(state, train.observations[idx], train.actions[idx])
    loss1, acc1 = evaluate(state.params, val.observations, val.actions)
    assert int(state.step) == 4 * (len(train) // 64)
    assert loss1 < loss0 - 0.2
    assert acc1 > 0.3 > 1 / 7 + 0.1  # chance is 1/7
    assert np.isfinite(np.asarray(m["loss"])).all()


def test_evaluate_pads_the_last_batch_without_counting_padding(small_dataset):
    net = cnet.CNet(heads="one")
    params = cnet.init_params(jax.random.key(0))
    n = 1000
    loss_a, acc_a = sv.make_evaluate(net, batch_size=333)(params, small_dataset.observations[:n], small_dataset.actions[:n])
    logits = net.apply({"params": params}, small_dataset.observations[:n])
    ce = optax.softmax_cross_entropy_with_integer_labels(logits, small_dataset.actions[:n].astype(np.int32))
    np.testing.assert_allclose(loss_a, float(ce.mean()), rtol=1e-4)
    np.testing.assert_allclose(acc_a, float((logits.argmax(-1) == small_dataset.actions[:n]).mean()), rtol=1e-6)


def test_supervised_script_end_to_end(tmp_path):
    out = tmp_path / "run"
    cmd = ["supervised.py", "--out", str(out),
           "--dataset", str(tmp_path / "ds.npz"), "--num-pairs", "2000", "--epochs", "2",
           "--chunk-steps", "10", "--no-progress"]
    proc = run_script(*cmd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "test acc" in proc.stdout
    for f in ("metadata.json", "metrics.jsonl", "metrics.csv", "curves.png", "summary.json"):
        assert (out / f).is_file(), f
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2]
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["algorithm"] == "supervised" and meta["network"] == {"width": 128, "heads": "one"}
    for k in ("test/accuracy", "eval/vs_random", "eval/vs_1steplA"):
        assert 0.0 <= meta["metrics"][k] <= 1.0
    agent = agents.load(str(out))
    boards = np.zeros((1, 6, 7), np.int8)
    assert 0 <= int(agent.act(boards, jax.random.key(0))[0]) < 7
    # A bad flag is a clear CLI error, not a traceback.
    bad = run_script("supervised.py", "--epochs", "many")
    assert bad.returncode != 0 and "epochs" in bad.stderr and "Traceback" not in bad.stderr


class _Killed(BaseException):
    pass


@pytest.mark.slow
def test_supervised_resume_continues_exactly(tmp_path, monkeypatch, small_dataset):
    dataset = tmp_path / "ds.npz"
    small_dataset.save_npz(dataset)
    args = ("--dataset", dataset, "--epochs", "2", "--chunk-steps", "10", "--no-eval-matches", "--no-progress")
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert run_script("supervised.py", "--out", straight, *args).returncode == 0
    assert not (straight / "last").exists()  # a finished run has nothing to resume
    # the same run, stopped right after saving its first epoch (as a kill there would) ...
    save = sv.save_progress

    def save_then_die(directory, state, best_params, progress):
        save(directory, state, best_params, progress)
        if progress["epoch"] == 1:
            raise _Killed

    monkeypatch.setattr(sv, "save_progress", save_then_die)
    with pytest.raises(_Killed):
        run_script("supervised.py", "--out", resumed, *args)
    monkeypatch.undo()
    assert [r["epoch"] for r in _rows(resumed)] == [1]
    # ... and resumed
    proc = run_script("supervised.py", "--out", resumed, *args, "--resume")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "resumed" in proc.stdout and "after epoch 1" in proc.stdout
    drop = lambda rows: [{k: v for k, v in r.items() if not k.startswith("time/")} for r in rows]  # noqa: E731
    assert drop(_rows(straight)) == drop(_rows(resumed))
    a, b = (json.loads((d / "metadata.json").read_text()) for d in (straight, resumed))
    assert a["metrics"] == b["metrics"] and a["checksum"] == b["checksum"]
    # resuming a finished run changes nothing; resuming nothing is one error line
    again = run_script("supervised.py", "--out", resumed, *args, "--resume")
    assert again.returncode == 0 and "nothing to resume" in again.stdout
    none = run_script("supervised.py", "--out", tmp_path / "none", *args, "--resume")
    assert none.returncode == 2 and error_of(none.stderr).startswith("error: --resume: no checkpoint to resume")


def _rows(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow  # the default run trains the tower on a new game: test_third_game's supervised test
def test_supervised_on_a_game_the_cnet_does_not_read(tmp_path):
    """--game checkers: the teacher's moves are generated for Checkers, the residual tower's policy head
    learns them, and the agent loads as a Checkers agent playing its raw policy."""
    from c4jax import games
    from c4jax.cli import supervised

    out, dataset = tmp_path / "ck", tmp_path / "ck.npz"
    summary = supervised.cli(["--game", "checkers", "--teacher", "random", "--num-pairs", "600", "--generation-batch",
                              "8", "--epochs", "2", "--batch-size", "32", "--tower-blocks", "1", "--tower-channels", "8",
                              "--no-eval-matches", "--no-progress", "--out", str(out), "--dataset", str(dataset)])
    assert 0.0 <= summary["metrics"]["test/accuracy"] <= 1.0
    assert data.Dataset.load_npz(dataset).game == "checkers"
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["game"] == "checkers" and meta["network"]["tower"] == [1, 8]
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "checkers" and agent.num_simulations == 0 and not agent.stochastic
    game = games.make("checkers")
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), 3))
    actions = np.asarray(agent.act_states(states, jax.random.key(1)))
    assert np.asarray(states.legal_action_mask)[np.arange(3), actions].all()


def test_a_dataset_of_another_game_is_refused_in_one_line(tmp_path, capsys):
    from c4jax.cli import supervised

    other = data.Dataset(np.zeros((4, 8, 8, 2), np.int8), np.arange(4), np.arange(4), game="checkers")
    path = other.save_npz(tmp_path / "ck.npz")
    with pytest.raises(SystemExit) as e:
        supervised.cli(["--out", str(tmp_path / "run"), "--dataset", str(path), "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert error_of(err).startswith("error: --dataset") and "positions of checkers, not of connect_four" in err
    assert not (tmp_path / "run" / "metadata.json").exists()


def test_the_settings_name_the_teacher_and_the_defaults_as_the_game_kits_do():
    """The jax-free settings read the game's card; the trainer's dataset code reads its kit: the same
    teacher, and the same stage defaults."""
    from c4jax import games
    from c4jax.learning.settings.supervised import Config

    for game in games.GAMES:
        kit = games.kit_of(game)
        assert games.card_of(game).defaults_of("supervised") == kit.defaults_of("supervised")
        for teacher in ("", "random", "mcts50:det", f"{game}/random"):
            assert Config(game=game, teacher=teacher).teacher_name == data.teacher_name(games.make(game), teacher)
