"""Orbax checkpoints with metadata, network agents rebuilt from a directory, and bad checkpoints."""

import json
import os

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents
from c4jax.io import checkpoint
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4
from c4jax.nets import cnet
from c4jax.agents import arena
from c4jax.agents.network import NetworkAgent

BOARDS = np.asarray(jax.vmap(env.observe)(arena.random_initial_states(jax.random.key(0), 64, C4)))
BOARDS = BOARDS[(BOARDS != 0).sum((1, 2)) > 0][:32]


def _save_agent(path, heads="one", output="policy", default_mode="det", seed=0):
    params = cnet.init_params(jax.random.key(seed), heads=heads)
    checkpoint.save(path, {"params": params}, {
        "name": "testnet",
        "algorithm": "test",
        "game": "connect_four",
        "network": {"width": 128, "heads": heads},
        "agent": {"output": output, "default_mode": default_mode, "symmetric": True},
        "config": {"seed": seed},
        "metrics": {"eval/vs_random": 0.5},
    })
    return params


@pytest.mark.parametrize("heads, output", [("one", "policy"), ("two", "policy"), ("dueling", "q"), ("one", "q")])
def test_save_load_gives_identical_outputs(tmp_path, heads, output):
    params = _save_agent(tmp_path / "run", heads, output)
    agent = agents.load(str(tmp_path / "run"))
    chex.assert_trees_all_close(agent.params, params)
    ref = NetworkAgent(params=params, heads=heads, output=output, game=C4)
    chex.assert_trees_all_close(agent.scores(BOARDS), ref.scores(BOARDS))
    meta = checkpoint.read_metadata(tmp_path / "run")
    assert meta["format_version"] == checkpoint.FORMAT_VERSION
    assert meta["network"] == {"width": 128, "heads": heads}
    assert meta["metrics"] == {"eval/vs_random": 0.5}
    assert "c4jax_version" in meta and "command" in meta


def test_modes_and_shipped_names(tmp_path, monkeypatch):
    _save_agent(tmp_path / "mynet", default_mode="det")
    monkeypatch.setenv("C4JAX_CHECKPOINTS", str(tmp_path))
    assert "mynet" in agents.known_names()
    det, sto = agents.load("MyNet"), agents.load("mynet:sto")
    assert det.name == "mynet:det" and not det.stochastic
    assert sto.name == "mynet:sto" and sto.stochastic
    a1 = sto.act(BOARDS, jax.random.key(1))
    a2 = sto.act(BOARDS, jax.random.key(2))
    assert not np.array_equal(a1, a2)
    np.testing.assert_array_equal(a1, sto.act(BOARDS, jax.random.key(1)))
    legal = BOARDS[:, 0, :] == 0
    assert legal[np.arange(len(a1)), a1].all()
    # scores: probabilities over legal columns, -inf on full ones
    s = np.asarray(det.scores(BOARDS))
    assert np.isneginf(s[~legal]).all()
    np.testing.assert_allclose(np.where(legal, s, 0).sum(1), 1.0, rtol=1e-5)


def test_q_agents_have_no_sampled_mode(tmp_path):
    _save_agent(tmp_path / "q", heads="dueling", output="q")
    with pytest.raises(ValueError, match="no sampled"):
        agents.load(str(tmp_path / "q") + ":sto")


def test_symmetric_averaging_plays_mirror_positions_mirror_wise(tmp_path):
    _save_agent(tmp_path / "net")
    agent = agents.load(str(tmp_path / "net"))
    s, m = np.asarray(agent.scores(BOARDS)), np.asarray(agent.scores(BOARDS[..., ::-1]))
    np.testing.assert_allclose(s, m[..., ::-1], rtol=1e-5, atol=1e-7)


def test_resave_is_atomic_and_keeps_other_files(tmp_path):
    run = tmp_path / "run"
    _save_agent(run, seed=0)
    (run / "metrics.jsonl").write_text("{}\n")
    p1 = _save_agent(run, seed=1)
    states = [p.name for p in run.iterdir() if p.name.startswith(checkpoint.STATE_PREFIX)]
    assert len(states) == 1
    assert (run / "metrics.jsonl").read_text() == "{}\n"
    chex.assert_trees_all_close(agents.load(str(run)).params, p1)


def test_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(checkpoint.CheckpointError, match="does not exist") as e:
        agents.load(str(tmp_path / "nope"))
    assert str(tmp_path / "nope") in str(e.value)


def test_directory_that_is_not_a_checkpoint(tmp_path):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file.txt").write_text("hello")
    with pytest.raises(checkpoint.CheckpointError, match="not a c4jax checkpoint"):
        agents.load(str(tmp_path / "junk"))
    (tmp_path / "junk" / "metadata.json").write_text("{not json")
    with pytest.raises(checkpoint.CheckpointError, match="unreadable metadata"):
        agents.load(str(tmp_path / "junk"))


def _state_files(run):
    meta = json.loads((run / "metadata.json").read_text())
    return sorted(p for p in (run / meta["state_dir"]).rglob("*") if p.is_file())


def test_truncated_checkpoint_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    _save_agent(run)
    for f in _state_files(run):
        if f.stat().st_size > 1000:  # the array data
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    with pytest.raises(checkpoint.CheckpointError, match="could not be restored") as e:
        agents.load(str(run))
    assert str(run) in str(e.value)


def test_corrupted_checkpoint_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    _save_agent(run)
    for f in _state_files(run):
        data = bytearray(f.read_bytes())
        data[: min(len(data), 64)] = os.urandom(min(len(data), 64))
        f.write_bytes(bytes(data))
    with pytest.raises(checkpoint.CheckpointError) as e:
        agents.load(str(run))
    assert str(run) in str(e.value)


def test_missing_state_directory_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    _save_agent(run)
    meta = json.loads((run / "metadata.json").read_text())
    import shutil

    shutil.rmtree(run / meta["state_dir"])
    with pytest.raises(checkpoint.CheckpointError, match="incomplete"):
        agents.load(str(run))


def test_a_checkpoint_that_names_no_game_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    _save_agent(run)
    meta = json.loads((run / "metadata.json").read_text())
    del meta["game"]
    (run / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(checkpoint.CheckpointError, match="names no game"):
        agents.load(str(run))
    with pytest.raises(checkpoint.CheckpointError, match="is of the game None, not 'connect_four'"):
        checkpoint.read_metadata(run, game="connect_four")


def test_checkpoint_of_another_architecture_is_refused(tmp_path):
    run = tmp_path / "run"
    _save_agent(run, heads="one")
    meta = json.loads((run / "metadata.json").read_text())
    meta["network"]["heads"] = "two"  # metadata lies about the architecture
    (run / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(checkpoint.CheckpointError, match="could not be restored"):
        agents.load(str(run))


def test_network_agents_validate_numpy_boards(tmp_path):
    _save_agent(tmp_path / "net")
    agent = agents.load(str(tmp_path / "net"))
    with pytest.raises(ValueError, match="shape"):
        agent.scores(np.zeros((6, 7), np.int8))
    with pytest.raises(ValueError, match="integers"):
        agent.act(np.zeros((1, 6, 7), np.float32), jax.random.key(0))
    # inside jit, no validation and the same result
    out = jax.jit(lambda a, b: a.scores(b))(agent, jnp.asarray(BOARDS))
    chex.assert_trees_all_close(out, agent.scores(BOARDS))


def test_shipped_supervised_agent_loads_and_reproduces_its_recorded_figures():
    sup = agents.load("supervised")
    assert sup.name == "supervised:det" and not sup.stochastic
    assert agents.load("supervised:sto").stochastic
    meta = checkpoint.read_metadata(agents.checkpoints_dir() / "supervised")
    m = meta["metrics"]
    assert m["test/accuracy"] >= 0.85  # thesis: ~85%
    from c4jax import evaluation

    for opp in ("random", "1steplA"):
        res = evaluation.match(sup, agents.load(opp), jax.random.key(meta["config"]["seed"]))
        assert res.win_rate == m[f"eval/vs_{opp}"]
    assert m["eval/vs_random"] >= 0.95


# --- damaged checkpoints: the checksum, and the fallback to the checkpoint before -----------------

def _tree(seed):
    return {"w": np.arange(5000, dtype=np.float32) * seed, "n": np.array(seed, np.int32)}


def _data_files(run, name=checkpoint.METADATA_FILE):
    meta = json.loads((run / name).read_text())
    files = [p for p in (run / meta["state_dir"]).rglob("*") if p.is_file()]
    return sorted(files, key=lambda p: p.stat().st_size)


def _flip_a_byte(f):
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))


def test_a_flipped_byte_in_the_array_data_is_caught_by_the_checksum(tmp_path):
    checkpoint.save(tmp_path / "c", _tree(1), {})
    _flip_a_byte(_data_files(tmp_path / "c")[-1])  # the largest file: the array data
    with pytest.raises(checkpoint.CheckpointError, match="corrupted") as e:
        checkpoint.restore(tmp_path / "c", _tree(0))
    assert "\n" not in str(e.value)


def test_keep_previous_keeps_exactly_the_checkpoint_before(tmp_path):
    run = tmp_path / "last"
    for seed in (1, 2, 3):
        checkpoint.save(run, _tree(seed), {"seed": seed}, keep_previous=True)
    assert json.loads((run / checkpoint.PREVIOUS_FILE).read_text())["seed"] == 2
    states = sorted(p.name for p in run.glob(f"{checkpoint.STATE_PREFIX}*"))
    assert len(states) == 2 and not [p for p in run.iterdir() if p.name.startswith(".")]
    tree, meta = checkpoint.restore_latest(run, _tree(0), warn=pytest.fail)
    assert meta["seed"] == 3 and int(tree["n"]) == 3
    # a plain save keeps nothing of the one before
    checkpoint.save(run, _tree(4), {"seed": 4})
    assert len(list(run.glob(f"{checkpoint.STATE_PREFIX}*"))) == 1


DAMAGES = {
    "truncated array data": lambda run: _data_files(run)[-1].write_bytes(_data_files(run)[-1].read_bytes()[:100]),
    "a flipped byte": lambda run: _flip_a_byte(_data_files(run)[-1]),
    "metadata.json deleted": lambda run: (run / checkpoint.METADATA_FILE).unlink(),
    "garbage metadata.json": lambda run: (run / checkpoint.METADATA_FILE).write_bytes(os.urandom(300)),
    "metadata.json not an object": lambda run: (run / checkpoint.METADATA_FILE).write_text("[1, 2]"),
    "metadata.json naming another directory": lambda run: (run / checkpoint.METADATA_FILE).write_text(
        json.dumps({"format_version": 1, "state_dir": "../../etc"})),
    "state directory deleted": lambda run: __import__("shutil").rmtree(_data_files(run)[0].parent),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_checkpoint_falls_back_to_the_one_before_with_a_warning(tmp_path, damage):
    run = tmp_path / "last"
    for seed in (1, 2):
        checkpoint.save(run, _tree(seed), {"seed": seed}, keep_previous=True)
    DAMAGES[damage](run)
    warnings = []
    tree, meta = checkpoint.restore_latest(run, _tree(0), warn=warnings.append)
    assert meta["seed"] == 1 and int(tree["n"]) == 1
    np.testing.assert_array_equal(tree["w"], _tree(1)["w"])
    assert len(warnings) == 1 and warnings[0].startswith("warning: ") and "previous checkpoint" in warnings[0]
    assert "\n" not in warnings[0]
    # the good one is the latest again: the next save keeps it as the one before, the damaged one goes
    assert checkpoint.restore_latest(run, _tree(0), warn=pytest.fail)[1]["seed"] == 1
    checkpoint.save(run, _tree(3), {"seed": 3}, keep_previous=True)
    assert checkpoint.restore_latest(run, _tree(0), warn=pytest.fail)[1]["seed"] == 3
    assert json.loads((run / checkpoint.PREVIOUS_FILE).read_text())["seed"] == 1
    assert len(list(run.glob(f"{checkpoint.STATE_PREFIX}*"))) == 2


def test_when_both_checkpoints_are_damaged_the_error_is_one_line(tmp_path):
    run = tmp_path / "last"
    for seed in (1, 2):
        checkpoint.save(run, _tree(seed), {"seed": seed}, keep_previous=True)
    _flip_a_byte(_data_files(run)[-1])
    _flip_a_byte(_data_files(run, checkpoint.PREVIOUS_FILE)[-1])
    with pytest.raises(checkpoint.CheckpointError, match="corrupted.*previous checkpoint.*corrupted") as e:
        checkpoint.restore_latest(run, _tree(0), warn=pytest.fail)
    assert "\n" not in str(e.value)


def test_a_refusal_by_check_does_not_fall_back(tmp_path):
    run = tmp_path / "last"
    for seed in (1, 2):
        checkpoint.save(run, _tree(seed), {"seed": seed}, keep_previous=True)

    def check(meta):
        raise checkpoint.CheckpointError(f"wrong seed {meta['seed']}")

    with pytest.raises(checkpoint.CheckpointError, match="wrong seed 2"):
        checkpoint.restore_latest(run, _tree(0), check=check, warn=pytest.fail)


def test_an_interrupted_save_keeps_the_committed_checkpoint(tmp_path, monkeypatch):
    run = tmp_path / "last"
    checkpoint.save(run, _tree(1), {"seed": 1}, keep_previous=True)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "_write_json_atomic", interrupted)  # Ctrl-C before the commit
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save(run, _tree(2), {"seed": 2}, keep_previous=True)
    monkeypatch.undo()
    assert len(list(run.glob(f"{checkpoint.STATE_PREFIX}*"))) == 1
    assert checkpoint.restore_latest(run, _tree(0), warn=pytest.fail)[1]["seed"] == 1
    real = checkpoint._write_json_atomic

    def commit_then_interrupt(path, obj):  # Ctrl-C right after the commit
        real(path, obj)
        if path.name == checkpoint.METADATA_FILE:
            raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "_write_json_atomic", commit_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save(run, _tree(3), {"seed": 3}, keep_previous=True)
    monkeypatch.undo()
    assert checkpoint.restore_latest(run, _tree(0), warn=pytest.fail)[1]["seed"] == 3


def test_remove_deletes_the_metadata_first(tmp_path):
    run = tmp_path / "last"
    checkpoint.save(run, _tree(1), {}, keep_previous=True)
    assert checkpoint.exists(run)
    checkpoint.remove(run)
    assert not run.exists() and not checkpoint.exists(run)
    checkpoint.remove(run)  # nothing to remove: fine
