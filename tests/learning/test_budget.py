"""What every trainer shares about its settings: the range of each numeric setting (checked by
``config.validate``, and by the command line before anything compiles: one error line, exit status 2),
``--eval-every`` in updates, ``--preset smoke``, and a ``--total-updates``
that ends inside an evaluation block (the last block is shortened; a resumed run ends the same)."""

from __future__ import annotations

import dataclasses
import json
import random
import typing

import jax
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from c4jax.cli import supervised, training  # noqa: F401  (imported before jax.jit is patched)
from c4jax.cli import main as c4jax_main
from c4jax.cli.supervised import Config as SupervisedConfig
from c4jax.cli.training import TRAINERS, parse
from c4jax.io.outdir import flag_name
from c4jax.learning import config, loop, ranges
from c4jax.learning import dqn as dqn_lib
from c4jax.learning.alphazero import AlphaZeroConfig
from c4jax.learning.dqn import DQNConfig
from c4jax.learning.ppo import PPOConfig
from c4jax.learning.reinforce import ReinforceConfig
from scripts import run_script

CONFIGS = (loop.LoopConfig, DQNConfig, PPOConfig, ReinforceConfig, AlphaZeroConfig, SupervisedConfig)


def _numeric_fields(cls) -> dict[str, type]:
    hints = typing.get_type_hints(cls, include_extras=False)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if hints[f.name] in (int, float)}


def _make(cls, **changes):
    """A ``cls`` config of its defaults with ``changes``, on Connect Four where the class takes a game."""
    game = {"game": "connect_four"} if "game" in {f.name for f in dataclasses.fields(cls)} else {}
    return cls(**game, **changes)


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_every_numeric_setting_has_a_range_and_the_defaults_lie_in_it(cls):
    table = ranges.ranges_of(cls)
    assert set(_numeric_fields(cls)) <= set(table), set(_numeric_fields(cls)) - set(table)
    default = _make(cls)
    for name, allowed in table.items():
        assert allowed.allows(getattr(default, name)), name


def _outside(allowed: ranges.Range, kind: type) -> st.SearchStrategy:
    """Values of ``kind`` outside ``allowed`` (NaN among the floats)."""
    options = []
    if kind is int:
        if allowed.low is not None:
            top = int(allowed.low) if allowed.low_open else int(allowed.low) - 1
            options.append(st.integers(max_value=top))
        if allowed.high is not None:
            bottom = int(allowed.high) if allowed.high_open else int(allowed.high) + 1
            options.append(st.integers(min_value=bottom))
        return st.one_of(options)
    if allowed.low is not None:
        options.append(st.floats(max_value=allowed.low, exclude_max=not allowed.low_open, allow_nan=False))
    if allowed.high is not None:
        options.append(st.floats(min_value=allowed.high, exclude_min=not allowed.high_open, allow_nan=False))
    return st.one_of(*options, st.just(float("nan")))


CASES = [(cls, name) for cls in CONFIGS for name in ranges.ranges_of(cls)]


@st.composite
def _bad_setting(draw):
    cls, name = draw(st.sampled_from(CASES))
    kind = _numeric_fields(cls)[name]
    return cls, name, draw(_outside(ranges.ranges_of(cls)[name], kind))


@settings(max_examples=300, deadline=None)
@given(_bad_setting())
def test_a_value_out_of_range_is_refused_naming_its_flag(case):
    cls, name, value = case
    with pytest.raises(ValueError, match=f"^{flag_name(name)} must be "):
        config.validate(_make(cls, **{name: value}))


def test_range_texts():
    assert ranges.POSITIVE.text == "> 0" and ranges.UNIT.text == "in [0, 1]"
    assert ranges.Range(0, 1, low_open=True).text == "in (0, 1]" and ranges.Range(0, note="(0 = auto)").text == ">= 0 (0 = auto)"
    with pytest.raises(ValueError, match=r"^--learning-rate must be > 0, got -1.0$"):
        config.validate(PPOConfig(learning_rate=-1.0))


def test_settings_that_depend_on_each_other():
    settle = config.settle
    assert settle(PPOConfig(eval_every=100)) == PPOConfig(eval_every=100)  # not a multiple of a buffer's 315: kept
    assert settle(PPOConfig(eval_every=100)).eval_updates == 100
    assert settle(PPOConfig(eval_every=630)).buffers_per_eval == 2
    assert settle(PPOConfig(eval_every=630)) == PPOConfig(buffers_per_eval=2)
    assert settle(AlphaZeroConfig(eval_every=256)).iterations_per_eval == 2
    assert settle(AlphaZeroConfig(eval_every=256)).eval_updates == 256
    streams = dict(collect="streams", network="tower", envs=64, steps=64, minibatch_size=512, epochs=4)
    assert settle(PPOConfig(eval_every=64, **streams)).buffers_per_eval == 2
    assert settle(DQNConfig(eval_every=100)).eval_updates == 100 and settle(DQNConfig()).eval_updates == 1000
    assert settle(DQNConfig(collect="streams")).eval_updates == 1000  # 250 iterations of 4 updates
    assert settle(AlphaZeroConfig(eval_every=200)).eval_updates == 200
    assert settle(ReinforceConfig(eval_every=7)).eval_updates == 7
    with pytest.raises(ValueError, match="--minibatch-size .* must divide"):
        settle(PPOConfig(**{**streams, "minibatch_size": 500}))
    with pytest.raises(ValueError, match="--learning-starts"):
        settle(DQNConfig(**dqn_lib.STREAMS, learning_starts=200_000))
    with pytest.raises(ValueError, match="--val-fraction \\+ --test-fraction must be < 1"):
        settle(SupervisedConfig(game="connect_four", val_fraction=0.5, test_fraction=0.5))
    assert PPOConfig(learning_rate=-1.0).learning_rate == -1.0  # making a config checks nothing: validate does


def _no_compile(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("compiled or trained after a bad setting")

    monkeypatch.setattr(jax, "jit", refuse)
    monkeypatch.setattr(loop, "run", refuse)


@pytest.mark.parametrize("argv, flag", [
    (["ppo", "--learning-rate", "-1"], "--learning-rate must be > 0, got -1.0"),
    (["ppo", "--gamma", "2"], "--gamma must be in [0, 1], got 2.0"),
    (["ppo", "--clip", "-1"], "--clip must be > 0, got -1.0"),
    (["ppo", "--epochs", "0"], "--epochs must be >= 1, got 0"),
    (["ppo", "--minibatch-size", "0"], "--minibatch-size must be >= 1, got 0"),
    (["ppo", "--game", "checkers", "--minibatch-size", "100"], "--minibatch-size (100) must divide"),
    (["ppo", "--eval-every", "-1"], "--eval-every must be >= 0 (0 = the preset's), got -1"),
    (["dqn", "--tau", "0"], "--tau must be in (0, 1], got 0.0"),
    (["dqn", "--game", "checkers", "--huber-delta", "0"], "--huber-delta must be > 0, got 0.0"),
    (["dueling_dqn", "--batch-size", "0"], "--batch-size must be >= 1, got 0"),
    (["reinforce", "--learning-rate", "0"], "--learning-rate must be > 0, got 0.0"),
    (["alphazero", "--dirichlet-alpha", "0"], "--dirichlet-alpha must be > 0, got 0.0"),
    (["alphazero", "--game", "checkers", "--total-updates", "0"], "--total-updates must be >= 1, got 0"),
    (["supervised", "--batch-size", "0"], "--batch-size must be >= 1, got 0"),
    (["ppo", "--buffers-per-eval", "0"], "unrecognized options: --buffers-per-eval"),
])
def test_the_command_line_refuses_a_bad_value_in_one_line_before_anything_compiles(argv, flag, monkeypatch, capsys,
                                                                                   tmp_path):
    _no_compile(monkeypatch)
    with pytest.raises(SystemExit) as done:
        c4jax_main.main(["train", *argv, "--out", str(tmp_path / "run")])
    assert done.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("note:")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and flag in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_smoke_preset_shrinks_every_trainer_and_keeps_explicit_flags():
    c = parse("ppo", ["--preset", "smoke", "--epochs", "3"])
    assert (c.ppo.buffer_size, c.ppo.epochs, c.ppo.buffers_per_eval, c.run.total_updates) == (256, 3, 1, 16)
    assert c.preset == "smoke" and c.ppo.td_advantage and c.run.out == "runs/smoke/ppo" and c.run.overwrite
    assert parse("dqn", ["--preset", "smoke", "--game", "checkers"]).run.out == "runs/smoke/checkers/dqn"
    az = parse("alphazero", ["--preset", "smoke"])
    assert (az.run.total_updates, az.run.eval_opponents, az.run.eval_yardstick, az.run.select_by) == (2, (), False, "1steplA")
    assert not parse("alphazero", ["--preset", "smoke", "--resume"]).run.overwrite  # a resumed smoke run keeps its files
    rei = parse("reinforce", ["--preset", "smoke", "--out", "elsewhere"])
    assert rei.run.out == "elsewhere" and rei.run.total_updates == rei.reinforce.episodes_per_eval == 10


def test_a_smoke_run_says_what_it_is(capsys, monkeypatch):
    monkeypatch.setattr(training, "main", lambda name, cfg: {"preset": cfg.preset})
    assert training.cli("ppo", ["--preset", "smoke"]) == {"preset": "smoke"}
    assert capsys.readouterr().out.splitlines()[0] == "smoke run: checks the pipeline, not strength (--preset smoke)"
    assert training.cli("ppo", []) == {"preset": "published"} and "smoke" not in capsys.readouterr().out


REI = ("--preset", "smoke", "--eval-opponents", "--no-progress")


def _steps(run) -> list[int]:
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def _last(run) -> dict:
    metrics = json.loads((run / "last" / "metadata.json").read_text())["metrics"]
    return {k: v for k, v in metrics.items() if not k.startswith("time/")}


@pytest.mark.slow
def test_total_updates_inside_a_block_stops_there_and_resumes_exactly(tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    # REINFORCE's smoke run: 5 updates per iteration, an evaluation every 10
    done = run_script("reinforce.py", *REI, "--out", straight, "--total-updates", "17")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _steps(straight) == [10, 17]
    assert run_script("reinforce.py", *REI, "--out", resumed, "--total-updates", "10").returncode == 0
    again = run_script("reinforce.py", *REI, "--out", resumed, "--total-updates", "17", "--resume")
    assert again.returncode == 0, again.stderr[-2000:]
    assert _steps(resumed) == [10, 17] and _last(resumed) == _last(straight)
    longer = run_script("reinforce.py", *REI, "--out", resumed, "--total-updates", "30", "--resume")
    assert longer.returncode == 0, longer.stderr[-2000:]
    assert _steps(resumed) == [10, 17, 27, 30]


# Any budget: each trainer's smoke run with budgets that end inside a block (seeded, so that a failure repeats),
# run in this process so that the cases of one trainer share its compiled programs.
_RNG = random.Random(20)
# trainer, its flags, and the updates of its smoke run's evaluation interval and of one block (iteration, buffer);
# Checkers trains with --collect streams
SMOKE_RUNS = {
    "reinforce": ("reinforce", (), 10, 5),
    "ppo": ("ppo", (), 16, 16),
    "dqn": ("dqn", (), 8, 4),
    "alphazero": ("alphazero", (), 2, 2),
    "ppo_streams": ("ppo", ("--game", "checkers"), 2, 2),
    "reinforce_streams": ("reinforce", ("--game", "checkers"), 1, 1),
    "dqn_streams": ("dqn", ("--game", "checkers"), 4, 1),
    "dueling_dqn": ("dueling_dqn", (), 8, 4),
}


def _budgets(interval: int, block: int, exhaustive: bool) -> list[int]:
    """One just above a block and, exhaustive, 1, 7, 13 and two drawn from 2 .. 3 intervals."""
    budgets = {block + 1}
    if exhaustive:
        budgets |= {1, 7, 13} | {_RNG.randint(2, 3 * interval) for _ in range(2)}
    return sorted(budgets)


def _check_budgets(name: str, budgets: list[int], tmp_path) -> None:
    trainer, flags, interval, _ = SMOKE_RUNS[name]
    for n in budgets:
        out = tmp_path / f"{name}_{n}"
        argv = ["--preset", "smoke", "--no-progress", "--out", str(out), "--total-updates", str(n), *flags]
        assert config.settle(getattr(parse(trainer, argv), TRAINERS[trainer].section)).eval_updates == interval, name
        training.cli(trainer, argv)
        rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        # an evaluation every `interval` updates, and one at the budget
        want = list(range(interval, n, interval)) + [n]
        assert [row["step"] for row in rows] == want, (name, n)
        assert "eval/vs_random" in rows[-1], (name, n)
        assert json.loads((out / "summary.json").read_text())["final"]["step"] == n, (name, n)


@pytest.mark.parametrize("name", ["reinforce"])
def test_any_budget_ends_there_with_an_evaluation(name, tmp_path):
    _check_budgets(name, _budgets(*SMOKE_RUNS[name][2:], exhaustive=False), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SMOKE_RUNS))
def test_any_budget_ends_there_with_an_evaluation_for_every_trainer(name, tmp_path):
    _check_budgets(name, _budgets(*SMOKE_RUNS[name][2:], exhaustive=True), tmp_path)
