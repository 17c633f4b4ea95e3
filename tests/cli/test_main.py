"""The ``c4jax`` command (c4jax.cli.main), in this process: each subcommand reaches the module that
its experiments/ script runs, with the rest of the command line; each one's ``--help`` is that
script's (only the usage line names the command differently); unknown subcommands and algorithms
are one error line and exit status 2."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import tomllib

import pytest

from c4jax.cli import main as c4jax_main
from c4jax.io import runlog
from c4jax.play import __main__ as play_main
from command import error_of
from command import run_command as run  # c4jax ARGV in this process
from scripts import ROOT, run_script

SCRIPTS = {  # c4jax command -> the experiments/ script that runs the same module
    ("train", "ppo"): "ppo.py",
    ("train", "dqn"): "dqn.py",
    ("train", "dueling_dqn"): "dueling_dqn.py",
    ("train", "reinforce"): "reinforce.py",
    ("train", "alphazero"): "alphazero.py",
    ("train", "supervised"): "supervised.py",
    ("tournament",): "tournament.py",
    ("yardstick",): "yardstick.py",
    ("export-onnx",): "export_onnx.py",
    ("export-web",): "export_web.py",
    ("watch",): "watch.py",
    ("match",): "match.py",
}


def _after_usage(text: str) -> str:
    """A help text without its usage line (the only line that names the program)."""
    first, _, rest = text.partition("\n")
    assert first.startswith("usage: "), first
    return rest


def test_the_console_script_is_the_dispatcher():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["c4jax"].partition(":")
    assert getattr(importlib.import_module(module), attr) is c4jax_main.main


@pytest.mark.parametrize("command", sorted(SCRIPTS), ids=" ".join)
def test_help_is_the_scripts_help(command):
    code, out, err = run(*command, "--help")
    script = run_script(SCRIPTS[command], "--help")
    assert code == 0 and script.returncode == 0, (err, script.stderr)
    assert out.startswith(f"usage: c4jax {' '.join(command)} ")
    assert _after_usage(out) == _after_usage(script.stdout)
    assert len(_after_usage(out).splitlines()) > 10  # the flags, not an empty help


def test_play_help_is_c4jax_plays():
    code, out, _ = run("play", "--help")
    assert code == 0 and out.startswith("usage: c4jax play ")
    own = io.StringIO()
    with contextlib.redirect_stdout(own), pytest.raises(SystemExit):
        play_main.main(["--help"])
    assert own.getvalue().startswith("usage: c4jax-play ")
    assert _after_usage(out) == _after_usage(own.getvalue()) and "--checkers-agents NAME [NAME ...]" in out


@pytest.mark.parametrize("command", sorted(SCRIPTS) + [("play",)], ids=" ".join)
def test_each_subcommand_hands_the_rest_of_its_arguments_to_its_module(command, monkeypatch):
    if command == ("play",):
        module, entry = "c4jax.play.__main__", "main"
    else:
        module, entry = _module_of(command), "cli" if command[0] == "train" else c4jax_main.COMMANDS[command[0]][1]
    calls = []
    monkeypatch.setattr(importlib.import_module(module), entry, lambda *args, prog: calls.append((args, prog)) or 0)
    code, _, err = run(*command, "--out", "runs/x", "--seed", "3")
    assert code == 0, err
    named = (command[1],) if module == "c4jax.cli.training" else ()  # a trainer's name, then the arguments
    assert calls == [((*named, ["--out", "runs/x", "--seed", "3"]), "c4jax " + " ".join(command))]


def _module_of(command: tuple[str, ...]) -> str:
    """The module that runs a subcommand: c4jax.cli.training runs every RL trainer."""
    if command[0] != "train":
        return c4jax_main.COMMANDS[command[0]][0]
    return "c4jax.cli.supervised" if command[1] == "supervised" else "c4jax.cli.training"


def test_every_experiments_script_of_a_subcommand_is_a_thin_wrapper_of_the_same_module():
    for command, script in SCRIPTS.items():
        module = _module_of(command)
        text = (ROOT / "experiments" / script).read_text()
        assert f"from c4jax.cli import {module.rsplit('.', 1)[1]}\n" in text, script
        assert len(text.splitlines()) < 20, f"{script} holds code that the installed package would lack"


def test_a_match_through_the_command(tmp_path):
    code, out, err = run("match", "1steplA", "random", "--keys", "2", "--json", tmp_path / "m.json")
    assert code == 0, err
    assert "key 0: win rate" in out and "key 1: win rate" in out and "mean win rate of A: " in out
    saved = json.loads((tmp_path / "m.json").read_text())
    assert len(saved["matches"]) == 2 and saved["mean"] == sum(saved["win_rates"]) / 2 > 0.8
    assert run("match", "1steplA", "nobody")[0] == 2
    assert run("match", "1steplA", "random", "--keys", "0")[0] == 2
    assert run("match", "checkers/random", "random")[0] == 2  # different games


def test_a_real_run_through_the_command(tmp_path):
    code, out, err = run("watch", "random", "1steplA", "--seed", "2", "--svg", tmp_path / "g.svg")
    assert code == 0, err
    assert "1steplA" in out and (tmp_path / "g.svg").read_text().startswith("<svg")


@pytest.mark.parametrize("argv, message", [
    (["frobnicate"], "error: c4jax: unknown command 'frobnicate'; choose one of: train, tournament, play"),
    (["train", "sarsa"], "error: c4jax train: unknown algorithm 'sarsa'; choose one of: ppo, dqn"),
    (["train"], "error: c4jax train: no algorithm given; choose one of: ppo, dqn"),
    (["--out", "x"], "error: c4jax: unknown command '--out'"),
])
def test_an_unknown_command_is_one_error_line_and_exit_2(argv, message):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(message), err


def test_top_level_help_version_and_no_command():
    code, out, _ = run("--help")
    assert code == 0 and out.startswith("usage: c4jax {train,tournament,play,yardstick,export-onnx,export-web,watch,match}")
    assert all(f"\n  {name} " in out for name in c4jax_main.COMMANDS)
    code, out, _ = run("train", "--help")
    assert code == 0 and all(f"\n  {name} " in out for name in c4jax_main.TRAINERS)
    code, out, _ = run("--version")
    assert code == 0 and out.strip() == f"c4jax {importlib.import_module('c4jax').__version__}"
    code, out, err = run()
    assert code == 2 and out == "" and err.startswith("usage: c4jax ")


def test_a_subcommands_errors_leave_with_its_exit_status():
    code, _, err = run("train", "ppo", "--no-such-flag")
    assert code == 2 and "--no-such-flag" in err
    code, _, err = run("yardstick", "--agents", "no_such_agent", "--out", "unused")
    assert code == 2 and error_of(err).startswith("error: cannot load agent 'no_such_agent'")


def test_the_recorded_command_is_the_one_typed():
    assert runlog.command_line(["/opt/venv/bin/c4jax", "train", "ppo", "--out", "runs/x"]) == "c4jax train ppo --out runs/x"
    assert runlog.command_line(["experiments/ppo.py", "--out", "runs/x"]) == "python experiments/ppo.py --out runs/x"
    assert runlog.command_line(["-c", "x"]) == "python -c x"
