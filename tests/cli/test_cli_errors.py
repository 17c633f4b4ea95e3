"""Every ``c4jax`` subcommand answers a user's mistake (a bad flag or value, an unknown agent or game, a
missing or unusable path) with one ``error:`` line on stderr and exit status 2, never a traceback, and
before any work: nothing is trained, played or written. Each command line runs in this process through
``c4jax.cli.main.main``."""

from __future__ import annotations

import contextlib
import io

import pytest

from c4jax import games
from c4jax.cli import main as c4jax_main
from c4jax.io import cliargs
from command import error_of

WATCHED = games.with_views()  # the games `watch --game` takes

# {tmp}: the test's temporary directory, which holds junk.npz (not an .npz archive) and a file 'file'
CASES = {
    "train ppo": [
        "--game nosuchgame", "--gamma abc", "--no-such-flag 3", "--preset nope", "--reward-backprop foo",
        "--total-updates", "--game checkers --gamma x", "--game checkers --eval-opponents 1steplA --out {tmp}/r",
        "--resume --out {tmp}/none", "--init-from nosuchagent --out {tmp}/r", "--game checkers --preset published",
        "--game checkers --explore 0.1", "--collect streams", "--collect nope", "--network tower",
    ],
    "train dqn": ["--game nosuchgame", "--total-updates 1.5", "--preset nope", "--game checkers --double maybe",
                  "--devices 99 --out {tmp}/r", "--game checkers --collect games --out {tmp}/r", "--collect streams"],
    "train dueling_dqn": ["--game nosuchgame", "--game checkers --preset published", "--loss nope"],
    "train reinforce": ["--game nosuchgame", "--game checkers --preset thesis", "--game=checkers --replace-draws",
                        "--game checkers --collect games --games-per-collect 0 --out {tmp}/r", "--c1 x"],
    "train alphazero": ["--game nosuchgame", "--method foo", "--game checkers --num-simulations x",
                        "--eval-opponents nosuch --out {tmp}/r"],
    "train supervised": ["--epochs 0", "--val-fraction 0.9 --test-fraction 0.2", "--nosuch",
                         "--dataset {tmp}/junk.npz --out {tmp}/r", "--track nope"],
    "match": ["", "random", "random nobody", "random random --keys 0", "random random --keys x",
              "checkers/random random", "random random --json {tmp}"],
    "tournament": ["--agents random nobody --out {tmp}/t", "--agents random --out {tmp}/t",
                   "--agents random checkers/random --out {tmp}/t", "--agents random random:sto --out {tmp}/t",
                   "--timing-batch 0 --out {tmp}/t", "--ratings-ci x", "--devices 99 --out {tmp}/t"],
    "watch": ["nobody random", "random random --game chess", "random random --seconds 0",
              "random 1steplA --game checkers", "random random --svg {tmp}", "random"],
    "yardstick": ["--agents nobody --out {tmp}/y", "--batch-size 0 --out {tmp}/y", "--agents --out {tmp}/y",
                  "--positions {tmp}/junk.npz --out {tmp}/y", "--positions {tmp}/missing.npz --out {tmp}/y"],
    "export-onnx": ["nosuchagent --out {tmp}/a.onnx", "1steplA --out {tmp}/a.onnx", "checkers/mcts100 --out {tmp}/a.onnx",
                    "dqn", "dqn --out {tmp}/a.onnx --boards 0", "dqn --out {tmp}/a.onnx --opset 9",
                    "{tmp}/missing_run --out {tmp}/a.onnx", "dqn --out {tmp}/file/a.onnx"],
    "export-web": ["", "--out {tmp}/s --check-positions 0", "--out {tmp}/s --agents random",
                   "--out {tmp}/s --agents nobody", "--out {tmp}/s --agents checkers/mcts100", "--out {tmp}/file"],
    "play": ["--port 70000", "--port x", "--agents random,nobody --port 0", "--nosuch"],
}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = c4jax_main.main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command, args", [(c, a) for c, cases in CASES.items() for a in cases],
                         ids=[f"{c} {a}".strip() for c, cases in CASES.items() for a in cases])
def test_a_mistake_is_one_error_line_and_exit_2(command, args, tmp_path):
    (tmp_path / "junk.npz").write_text("not an archive")
    (tmp_path / "file").write_text("x")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(command.split() + [a.replace("{tmp}", str(tmp_path)) for a in args.split()])
    assert "Traceback" not in out + err
    assert code == 2, (out, err)
    error_of(err)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name not in ("r", "none")) == before  # nothing written
    for run_dir in (tmp_path / "r", tmp_path / "none"):
        assert not (run_dir / "last").exists() and not (run_dir / "metrics.jsonl").exists()


@pytest.mark.parametrize("argv, line", [
    ("train ppo --game nosuchgame",
     f"error: --game must be one of {sorted(games.GAMES)}, got 'nosuchgame' (see c4jax train ppo --help)"),
    ("train reinforce --game checkers --preset thesis",
     "error: --preset thesis: the thesis' presets set the whole-games collection (design.md §7, §7a); checkers "
     "trains with --collect streams and its own defaults (--preset smoke: the smallest run)"),
    ("match random random --keys x", "error: --keys: invalid literal for int() with base 10: 'x' (see c4jax match --help)"),
    ("match random", "error: missing B (see c4jax match --help)"),
    ("watch random random --game chess",
     f"error: --game: invalid choice 'chess'; choose one of {', '.join(WATCHED)} (see c4jax watch --help)"),
    ("watch random random --gam checkers",
     "error: unrecognized options: --gam, checkers; did you mean --game? (see c4jax watch --help)"),
    ("train dqn --total-updates", "error: --total-updates needs 1 value (see c4jax train dqn --help)"),
])
def test_the_line_names_the_flag_the_value_and_what_is_allowed(argv, line):
    code, _, err = run(argv.split())
    assert code == 2 and err == line + "\n"


def test_help_renders_optional_and_empty_defaults_in_words():
    for argv, shown in ((["match", "--help"], "--json PATH"), (["watch", "--help"], "--svg PATH"),
                        (["train", "ppo", "--help"], "--eval-opponents")):
        code, out, _ = run(argv)
        assert code == 0 and "{None}" not in out and "(default: )" not in out, argv
        assert shown in out
    code, out, _ = run(["train", "ppo", "--help"])
    words = " ".join(out.split())  # the text wrapped at any width
    assert "defaults: the thesis" not in words and "--preset {thesis,published,smoke}" in words
    assert "(default: published)" in words and "a trainer command's from its --preset and --game" in words


def test_condense_keeps_any_report_on_one_line():
    assert cliargs.condense("something\n  went wrong\n") == "something went wrong"
    box = "╭─ Odd title ──╮\n│ First part   │\n│ of it.       │\n│ ──────────── │\n│ help text    │\n╰──────────────╯\n"
    assert cliargs.condense(box) == "first part of it"
    plain = " Odd title      \n -------------- \n  First part    \n  of it.        \n  ------------  \n  help text     \n              \n"
    assert cliargs.condense(plain) == "first part of it"  # tyro's box where stdout is not UTF-8
