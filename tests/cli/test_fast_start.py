"""``--help`` and the argument errors of the commands (``c4jax``, ``c4jax train ALGO``,
``c4jax tournament|yardstick|export-onnx|export-web|watch|match|play``, ``python -m c4jax.play`` and the
``experiments/`` scripts of the same names) run without importing JAX or the libraries built on it, and
a command that runs prints its first line (``cliargs.starting``) before it imports them: one fresh
interpreter runs every command line in-process and reports what each one imported."""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

from c4jax import games
from c4jax.games.card import GameCard

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("jax", "jaxlib", "flax", "optax", "orbax", "chex")
TRAINERS = ("ppo", "dqn", "dueling_dqn", "reinforce", "alphazero", "supervised")
# command -> its argument errors found before anything runs: a bad value, then out-of-range values
# (each command's --help and an unknown flag are checked too)
COMMANDS = {
    "tournament": [["--seed", "x"], ["--timing-batch", "0"], ["--bootstrap-samples", "0"], ["--rating-prior", "-1"],
                   ["--ratings-ci", "nope"]],
    "yardstick": [["--seed", "x"], ["--batch-size", "0"], ["--agents"]],
    "export-onnx": [["supervised", "--out", "x.onnx", "--seed", "x"], ["supervised", "--out", "x.onnx", "--boards", "0"],
                    ["supervised", "--out", "x.onnx", "--opset", "5"], ["supervised"]],
    "export-web": [["--out", "site", "--check-positions", "x"], ["--out", "site", "--check-positions", "0"], []],
    "watch": [["dqn", "2steplA", "--seed", "x"], ["dqn", "2steplA", "--seconds", "0"],
              ["dqn", "2steplA", "--game", "nope"], ["dqn", "2steplA", "--first", "c"], ["dqn"]],
    "match": [["dqn", "2steplA", "--keys", "x"], ["dqn", "2steplA", "--keys", "0"], ["dqn"]],
    "play": [["--port", "x"], ["--port", "70000"], ["--port", "-1"], ["--open", "x"]],
}


def runs(out: Path) -> dict[tuple[str, ...], str]:
    """Command lines that run (their outputs under ``out``) -> the start of their first line."""
    lines = {(f"experiments/{name}.py", "--out", str(out / name)): f"{name}: Connect Four" for name in TRAINERS}
    lines |= {("c4jax", "train", "ppo", "--game", "checkers", "--out", str(out / "c")): "ppo: Checkers",
              ("experiments/ppo.py", "--preset", "smoke", "--out", str(out / "s")): "ppo: Connect Four, 16 updates",
              ("c4jax", "tournament", "--agents", "random", "1steplA", "--out", str(out / "t")): "tournament: 2 agents, 1 match ",
              ("c4jax", "yardstick", "--agents", "random", "--out", str(out / "y")): "yardstick: 1 agent ",
              ("c4jax", "match", "random", "1steplA"): "match: random vs 1steplA",
              ("c4jax", "watch", "random", "1steplA"): "watch: random vs 1steplA",
              ("c4jax", "export-onnx", "dqn", "--out", str(out / "d.onnx")): "export-onnx: dqn into",
              ("c4jax", "export-web", "--out", str(out / "site")): "export-web: ",
              ("c4jax", "play", "--port", "0"): "c4jax play: ", ("-m", "c4jax.play", "--port", "0"): "c4jax play: "}
    return lines


def command_lines() -> list[list[str]]:
    """Every command line checked: ``c4jax`` itself, then each trainer's ``--help``, an unknown flag, a
    bad value, an out-of-range value, a bad preset and an unknown game, by ``c4jax train`` and by script."""
    lines = [["c4jax", "--help"], ["c4jax"], ["c4jax", "--version"], ["c4jax", "nope"], ["c4jax", "train", "--help"],
             ["c4jax", "train", "nope"], ["c4jax", "train"]]
    for name in TRAINERS:
        for prefix in (["c4jax", "train", name], [f"experiments/{name}.py"]):
            lines += [prefix + ["--help"], prefix + ["--bogus"], prefix + ["--seed", "x"], prefix + ["--seed", "-1"],
                      prefix + ["--preset", "nope"], prefix + ["--game", "nope"], prefix + ["--game", "checkers", "--help"]]
    for command, errors in COMMANDS.items():
        script = ["-m", "c4jax.play"] if command == "play" else [f"experiments/{command.replace('-', '_')}.py"]
        for prefix in (["c4jax", command], script):
            lines += [prefix + ["--help"], prefix + ["--bogus"]] + [prefix + e for e in errors]
    lines += [["c4jax", "watch", "--game", "checkers", "--help"], ["c4jax", "play", "--help", "--no-compile-cache"]]
    return lines


PROGRAM = textwrap.dedent('''
    import json, runpy, sys
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO
    HEAVY = set(json.loads(sys.argv[1]))
    from c4jax.io import cliargs

    class Started(Exception):
        """Raised by the first line of a command that runs: it stops there."""

    def started(line):
        raise Started(line)

    cliargs.starting = started
    # A game registered without a card (games.CARDS) is read from its kit, which imports JAX
    # (games.card_of): such a game gets the card its kit gives, made by the test's process.
    import pickle, types
    from c4jax import games
    from c4jax.games.card import GameCard
    made = types.ModuleType("_made_cards")
    for game, fields in pickle.loads(bytes.fromhex(sys.argv[3])).items():
        setattr(made, game, GameCard(**fields))
        games.CARDS[game] = f"_made_cards:{game}"
    sys.modules["_made_cards"] = made
    report = []
    for line in json.loads(sys.argv[2]):
        before = set(sys.modules)
        out, err = StringIO(), StringIO()
        code, first = None, None
        with redirect_stdout(out), redirect_stderr(err):
            try:
                if line[0] == "c4jax":
                    from c4jax.cli import main
                    code = main.main(line[1:])
                elif line[0] == "-m":
                    sys.argv = [line[1]] + line[2:]
                    sys.modules.pop(line[1] + ".__main__", None)  # as a fresh interpreter would run it
                    runpy.run_module(line[1], run_name="__main__", alter_sys=True)
                else:
                    sys.argv = line
                    runpy.run_path(line[0], run_name="__main__")
            except SystemExit as e:
                code = e.code
            except Started as e:
                code, first = "started", str(e)
        heavy = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in HEAVY)
        report.append({"line": line, "code": code, "heavy": heavy[:5], "err": err.getvalue()[-300:], "first": first})
    print(json.dumps(report))
''')


def _plain(x):
    """``x`` with its read-only mappings as dicts (to pickle a card's fields)."""
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    return tuple(_plain(v) for v in x) if isinstance(x, (list, tuple)) else x


def test_help_argument_errors_and_first_lines_import_no_jax(tmp_path):
    started = runs(tmp_path)
    lines = command_lines() + [list(line) for line in started]
    uncarded = {g: _plain({f.name: getattr(games.card_of(g), f.name) for f in dataclasses.fields(GameCard)})
                for g in set(games.GAMES) - set(games.CARDS)}
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(HEAVY), json.dumps(lines),
                           pickle.dumps(uncarded).hex()], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert [r["line"] for r in report] == lines
    for r in report:
        print(" ".join(r["line"]), "->", r["code"], r["heavy"] or "")
    importers = [f"{' '.join(r['line'])}: {r['heavy']}" for r in report if r["heavy"]]
    assert not importers, "imported JAX's libraries:\n" + "\n".join(importers)
    for r in report[len(lines) - len(started):]:
        assert r["code"] == "started" and r["first"].startswith(started[tuple(r["line"])]), r
        assert r["first"].endswith(" ...") and "\n" not in r["first"], r
    assert not any(tmp_path.iterdir())  # nothing is written before the first line
    for r in report[:len(lines) - len(started)]:
        words = r["line"][1:]
        ok = r["line"] in (["c4jax", "--help"], ["c4jax", "--version"], ["c4jax", "train", "--help"]) or "--help" in words
        assert r["code"] in ((0, None) if ok else (2,)), r
        if not ok and r["line"] != ["c4jax"]:  # bare c4jax prints its usage
            assert r["err"].strip().startswith("error: ") and len(r["err"].strip().splitlines()) == 1, r
    bad = next(r for r in report if r["line"] == ["c4jax", "train", "ppo", "--seed", "-1"])
    assert bad["err"].strip() == "error: --seed must be >= 0, got -1"
    bad = next(r for r in report if r["line"] == ["experiments/supervised.py", "--game", "nope"])
    assert bad["err"].strip().startswith(f"error: --game must be one of {sorted(games.GAMES)}, got 'nope'")
    bad = next(r for r in report if r["line"] == ["c4jax", "match", "dqn", "2steplA", "--keys", "0"])
    assert bad["err"].strip() == "error: --keys must be at least 1, got 0"
    bad = next(r for r in report if r["line"] == ["-m", "c4jax.play", "--port", "70000"])
    assert bad["err"].strip() == "error: --port must be in 0..65535, got 70000"
    assert not (ROOT / "x.onnx").exists() and not (ROOT / "site").exists()  # an error writes nothing
