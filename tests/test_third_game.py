"""A third game is one folder plus one line in the registry (docs/guide.md, "Adding a game").

The test takes the guide's own files of its example game (tic-tac-toe: every code block of that
section that starts with ``# tictactoe/<file>.py``), writes them under a temporary folder only,
adds the registry line, and then runs what the guide promises on it: the conformance suite,
AlphaZero, PPO, REINFORCE and DQN by self-play for a few updates each, a protocol match and a tournament.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jax
import pytest

from c4jax import agents, evaluation, games

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"


def _guide_files() -> dict[str, str]:
    """``{relative path: text}`` of the code blocks of "Adding a game" that name their file."""
    text = GUIDE.read_text()
    section = text[text.index("\n## Adding a game"):]
    section = section[:section.index("\n## ", 1)]
    files = {}
    for block in re.findall(r"```python\n(.*?)```", section, flags=re.S):
        first = block.splitlines()[0]
        match = re.fullmatch(r"# (tictactoe/\w+\.py)(:.*)?", first)
        if match:
            files[match.group(1)] = block
    return files


@pytest.fixture(scope="module")
def tic_tac_toe(tmp_path_factory):
    root = tmp_path_factory.mktemp("third_game")
    files = _guide_files()
    assert {"tictactoe/game.py", "tictactoe/kit.py"} <= set(files), sorted(files)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tictactoe" / "__init__.py").touch()
    sys.path.insert(0, str(root))
    games.GAMES["tic_tac_toe"] = "tictactoe.kit:KIT"  # the registry line
    try:
        yield games.make("tic_tac_toe")
    finally:
        del games.GAMES["tic_tac_toe"]
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "tictactoe" or m.startswith("tictactoe.")]:
            del sys.modules[name]


def test_the_guide_s_game_registers_and_passes_the_conformance_suite(tic_tac_toe):
    from c4jax.games import testing

    assert testing.check(tic_tac_toe).games == 16
    kit = games.kit_of("tic_tac_toe")
    assert kit.game == tic_tac_toe and kit.title == "Tic-tac-toe" and games.kit_of(tic_tac_toe) is kit
    assert tic_tac_toe.num_actions == 9 and tic_tac_toe.observation_shape == (3, 3, 2)


def test_a_protocol_match_and_pure_mcts_on_the_new_game(tic_tac_toe):
    mcts, rand = agents.load("tic_tac_toe/mcts50:det"), agents.load("tic_tac_toe/random")
    assert agents.game_of(mcts) == agents.game_of(rand) == "tic_tac_toe"
    result = evaluation.match(mcts, rand, jax.random.key(0))
    assert len(result.games) == 100 and result.win_rate >= 0.8, result.win_rate


TINY = {
    "alphazero": ("--games", "4", "--num-simulations", "4", "--max-considered", "4", "--updates-per-iteration", "2",
                  "--iterations-per-eval", "1", "--buffer-size", "400", "--batch-size", "8", "--eval-simulations", "4",
                  "--play-simulations", "6", "--tower-blocks", "1", "--tower-channels", "8", "--total-updates", "2"),
    "ppo": ("--envs", "4", "--steps", "4", "--minibatch-size", "8", "--epochs", "1", "--collects-per-eval", "1",
            "--tower-blocks", "1", "--tower-channels", "4", "--total-updates", "2"),
    "reinforce": ("--envs", "4", "--steps", "4", "--eval-every", "1", "--tower-blocks", "1", "--tower-channels", "4",
                  "--total-updates", "2"),
    "dqn": ("--envs", "4", "--steps", "2", "--batch-size", "8", "--buffer-size", "64", "--learning-starts", "8",
            "--updates-per-iteration", "1", "--iterations-per-eval", "2", "--tower-blocks", "1", "--tower-channels", "4",
            "--total-updates", "2"),
}


@pytest.mark.parametrize("algorithm", sorted(TINY))
def test_every_self_play_algorithm_trains_on_the_new_game(tic_tac_toe, algorithm, tmp_path):
    from c4jax.cli import alphazero, dqn, ppo, reinforce

    cli = {"alphazero": alphazero.cli, "ppo": ppo.cli, "reinforce": reinforce.cli, "dqn": dqn.cli}[algorithm]
    out = tmp_path / algorithm
    summary = cli(["--game", "tic_tac_toe", "--out", str(out), *TINY[algorithm], "--eval-opponents",
                   "--select-by", "random", "--no-progress"])
    assert summary["best_updates"] >= 1
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "tic_tac_toe"
    assert len(evaluation.match(agent, agents.load("tic_tac_toe/random"), jax.random.key(1)).games) == 100


def test_a_tournament_on_the_new_game(tic_tac_toe, tmp_path):
    from c4jax.cli import tournament

    out = tmp_path / "t"
    tournament.cli(["--agents", "tic_tac_toe/random", "tic_tac_toe/mcts20:det", "--out", str(out), "--no-progress"])
    assert (out / "tournament.json").is_file()
