"""A third game is one folder plus one line in the registry (docs/guide/extend.md, "Adding a game").

The test takes the guide's own files of its example game (tic-tac-toe: every code block of that
section that starts with ``# tictactoe/<file>.py``), writes them under a temporary folder only,
adds the registry line, and then runs what the guide promises on it: the conformance suite,
AlphaZero, PPO, REINFORCE and DQN by self-play for a few updates each (PPO and REINFORCE also on whole games, as
on Checkers), a protocol match, a tournament, the
play server's API and a whole game on its page in a real browser (headless Chromium, skipped only
where it or Playwright is missing).
"""

from __future__ import annotations

import os
import shutil

import jax
import pytest

from c4jax import agents, evaluation, games

from browser import game_page, needs_browser
from guide_games import guide_files, registered  # the guide's example games
from playserver import request, serving  # the tests' in-process play server


@pytest.fixture(scope="module")
def tic_tac_toe(tmp_path_factory):
    assert {"tictactoe/game.py", "tictactoe/kit.py", "tictactoe/view.py"} <= set(guide_files("tictactoe"))
    with registered(tmp_path_factory.mktemp("third_game"), "tictactoe", "tic_tac_toe") as game:
        yield game


def test_the_guide_s_game_registers_and_passes_the_conformance_suite(tic_tac_toe):
    from c4jax.games import testing

    assert testing.check(tic_tac_toe).games == 16
    kit = games.kit_of("tic_tac_toe")
    assert testing.check_kit(kit) == "tic_tac_toe" and kit.match.alternating
    assert kit.game == tic_tac_toe and kit.title == "Tic-tac-toe" and games.kit_of(tic_tac_toe) is kit
    assert tic_tac_toe.num_actions == 9 and tic_tac_toe.observation_shape == (3, 3, 2)


@pytest.mark.slow
def test_a_protocol_match_and_pure_mcts_on_the_new_game(tic_tac_toe):
    mcts, rand = agents.load("tic_tac_toe/mcts50:det"), agents.load("tic_tac_toe/random")
    assert agents.game_of(mcts) == agents.game_of(rand) == "tic_tac_toe"
    result = evaluation.match(mcts, rand, jax.random.key(0))
    assert len(result.games) == 100 and result.win_rate >= 0.8, result.win_rate


TINY = {
    "alphazero": ("--games", "4", "--num-simulations", "4", "--max-considered", "4", "--updates-per-iteration", "2",
                  "--eval-every", "2", "--buffer-size", "400", "--batch-size", "8", "--eval-simulations", "0",
                  "--play-simulations", "6", "--tower-blocks", "1", "--tower-channels", "8", "--total-updates", "2"),
    "ppo": ("--envs", "4", "--steps", "4", "--minibatch-size", "8", "--epochs", "1", "--eval-every", "2",
            "--tower-blocks", "1", "--tower-channels", "4", "--total-updates", "2"),
    "reinforce": ("--envs", "4", "--steps", "4", "--eval-every", "1", "--tower-blocks", "1", "--tower-channels", "4",
                  "--total-updates", "2"),
    "dqn": ("--envs", "4", "--steps", "2", "--batch-size", "8", "--buffer-size", "64", "--learning-starts", "8",
            "--updates-per-iteration", "1", "--eval-every", "2", "--tower-blocks", "1", "--tower-channels", "4",
            "--total-updates", "2"),
}


@pytest.mark.slow
def test_the_supervised_stage_on_the_new_game(tic_tac_toe, tmp_path):
    """The kit's teacher (pure MCTS, the default) plays the dataset, the tower learns its moves, and the greedy
    policy plays the protocol matches against the reference agents and the teacher."""
    from c4jax.cli import supervised

    out = tmp_path / "supervised"
    summary = supervised.cli(["--game", "tic_tac_toe", "--out", str(out), "--dataset", str(tmp_path / "d.npz"),
                              "--num-pairs", "300", "--generation-batch", "16", "--epochs", "1", "--batch-size", "16",
                              "--tower-blocks", "1", "--tower-channels", "4", "--no-progress"])
    assert set(summary["metrics"]) >= {"test/accuracy", "eval/vs_random", "eval/vs_mcts100"}
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "tic_tac_toe" and agent.num_simulations == 0


# the default run trains two of them (the off-policy and an on-policy collection); -m slow every one
@pytest.mark.parametrize("algorithm", [pytest.param(a, marks=[pytest.mark.slow] if a in ("alphazero", "reinforce") else [])
                                       for a in sorted(TINY)])
def test_every_self_play_algorithm_trains_on_the_new_game(tic_tac_toe, algorithm, tmp_path, capsys):
    """Each script trains on the game, saves an agent of its kind (DQN greedy, PPO and REINFORCE
    sampling, AlphaZero searching) and resumes its run to more updates."""
    from c4jax.cli import training

    out = tmp_path / algorithm
    argv = ["--game", "tic_tac_toe", "--out", str(out), *TINY[algorithm], "--eval-opponents", "--select-by", "random",
            "--no-progress"]
    summary = training.cli(algorithm, argv)
    assert summary["best_updates"] >= 1
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "tic_tac_toe"
    assert agent.stochastic == (algorithm in ("ppo", "reinforce"))
    assert (agent.num_simulations > 0) == (algorithm == "alphazero")
    if algorithm == "dqn":  # as the shipped checkers/dqn: greedy Q-values, named by the run directory
        from c4jax.agents import onnx_export

        assert agent.name == f"{out}:det" and agent.output == "q" and agent.describe_scores().kind == "q"
        with pytest.raises(ValueError, match="no sampled"):
            agents.load(f"{out}:sto")
        assert agents.load(f"{out}@2:sto").name == f"{out}@2solve:sto"  # a search samples its visits
        meta = onnx_export.metadata(onnx_export.exportable(agent))  # what an ONNX export records
        assert meta["agent"] == f"{out}:det" and meta["kind"] == "network" and meta["output"] == "q"
        assert "the agent's Q-values per" in meta["output_description"], meta
    assert len(evaluation.match(agent, agents.load("tic_tac_toe/random"), jax.random.key(1)).games) == 100
    capsys.readouterr()
    training.cli(algorithm, [*argv, "--total-updates", "4", "--resume"])  # the run's compiled programs go on
    assert f"resumed {out} at 2 updates" in capsys.readouterr().out


WHOLE_GAMES = {
    "ppo": ("--collect", "games", "--network", "tower", "--games-per-collect", "3", "--buffer-size", "32",
            "--minibatch-size", "16", "--epochs", "1", "--eval-every", "2", "--total-updates", "2"),
    "reinforce": ("--collect", "games", "--network", "tower", "--games-per-collect", "2", "--eval-every", "2",
                  "--total-updates", "2"),
}


# Checkers' runs are slow: tests/learning/test_onpolicy.py's whole-games test plays and checks
# Checkers' whole-games collection (legal moves, rewards, returns) and its PPO script test trains,
# saves and reloads a sampling Checkers agent; the tic-tac-toe runs here train the same loop.
@pytest.mark.parametrize("algorithm", sorted(WHOLE_GAMES))
@pytest.mark.parametrize("game", ["tic_tac_toe", pytest.param("checkers", marks=pytest.mark.slow)])
def test_whole_games_ppo_and_reinforce_train_on_a_game_without_random_starts_or_mirror(tic_tac_toe, game, algorithm,
                                                                                        tmp_path):
    """--collect games plays whole self-play games of any game (its own start position, no mirror, its own
    rewards back-propagated) on the residual tower, and saves a sampling agent of the game."""
    from c4jax.cli import training

    out = tmp_path / f"{game}_{algorithm}"
    summary = training.cli(algorithm, ["--game", game, "--out", str(out), *WHOLE_GAMES[algorithm], "--tower-blocks", "1",
                   "--tower-channels", "4", "--eval-opponents", "--select-by", "random", "--no-progress"])
    assert summary["best_updates"] == 2 and summary["final"]["selfplay/episodes"] >= 2
    assert 1 <= summary["final"]["selfplay/length"] <= games.make(game).max_steps
    agent = agents.load(str(out))
    assert agents.game_of(agent) == game and agent.stochastic and agent.num_simulations == 0


def test_a_tournament_on_the_new_game(tic_tac_toe, tmp_path):
    from c4jax.cli import tournament

    out = tmp_path / "t"
    # the protocol match's two agents in its order: the match program compiled there plays the pair here
    tournament.cli(["--agents", "tic_tac_toe/mcts50:det", "tic_tac_toe/random", "--out", str(out), "--no-progress"])
    assert (out / "tournament.json").is_file()
    # Table 5.1 times the game's agents on its own random positions, in the report too
    table = (out / "report.md").read_text().split("## Table 5.1", 1)[1].split("\n## ", 1)[0]
    assert "Not measured" not in table and "random unfinished tic_tac_toe positions" in table, table
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()
            if line.startswith("| tic_tac_toe/")]
    assert [row[0] for row in rows] == ["tic_tac_toe/mcts50:det", "tic_tac_toe/random"], table
    assert all(float(x.replace(",", "")) > 0 for row in rows for x in row[1:]), rows


# --------------------------------------------------------------------------- the play UI

@pytest.fixture(scope="module")
def port(tic_tac_toe):
    from c4jax.play.catalogue import Catalogue

    catalogue = Catalogue(["random"], game_agents={"tic_tac_toe": ["tic_tac_toe/random", "tic_tac_toe/mcts50:det"]},
                          log=lambda *a: None)
    with serving(catalogue) as p:
        yield p


def test_the_new_game_s_view_and_its_play_api(port):
    view = games.view("tic_tac_toe")
    status, info = request(port, "GET", "/api/agents")
    game = next(g for g in info["games"] if g["id"] == "tic_tac_toe")
    assert status == 200 and game["name"] == "Tic-tac-toe" and game["max_moves"] == 9
    assert [a["name"] for a in game["agents"]] == ["tic_tac_toe/random", "tic_tac_toe/mcts50:det"]
    assert game["page"] == view.PAGE and (game["page"]["rows"], game["page"]["cols"]) == (3, 3)
    assert game["page"]["click"] == "cell" and game["page"]["sides"] == ["X", "O"]

    body = {"game": "tic_tac_toe", "agent": "tic_tac_toe/random", "moves": [4], "human_first": True}
    status, a = request(port, "POST", "/api/move", body)
    assert status == 200 and a["moves"][0] == 4 and len(a["moves"]) == 2 and a["status"] == "human_turn"
    reply = a["agent_move"]
    assert a["agent_moves"] == [reply] and a["human_side"] == "X"
    assert [m["text"] for m in a["record"]] == ["b2", view.ply_name(view.replay([4]).state(1), reply)]
    last = a["positions"][-1]
    expected = [[0] * 3 for _ in range(3)]
    expected[1][1], expected[reply // 3][reply % 3] = 1, -1
    assert last["board"] == expected and last["marked"] == [[reply // 3, reply % 3]]
    assert sorted(m["action"] for m in last["legal_moves"]) == last["legal"] == sorted(set(range(9)) - {4, reply})
    assert all(m["to"] == [m["action"] // 3, m["action"] % 3] for m in last["legal_moves"])
    assert sum(s for s in last["scores"] if s is not None) == pytest.approx(1.0)  # Random: uniform
    assert [s is None for s in last["scores"]] == [k in (4, reply) for k in range(9)]

    # the opponent first, a won game, and bad requests
    status, a = request(port, "POST", "/api/history", {**body, "moves": [0, 3, 1, 4, 2], "human_first": False})
    assert status == 200 and a["status"] == "agent_won" and a["to_move"] is None and a["legal"] == []
    assert a["human_side"] == "O" and [m["text"] for m in a["record"]] == ["a3", "a2", "b3", "b2", "c3"]
    assert [p["status"] for p in a["positions"][:2]] == ["agent_turn", "human_turn"]
    for moves, why in (([4, 4], "illegal move 1: action 4 is not legal there"),
                       ([9], "illegal move 0: action 9 is outside 0..8"),
                       ([0, 3, 1, 4, 2, 5], "move 5 (action 5): the game is already over after 5 moves")):
        status, data = request(port, "POST", "/api/move", {**body, "moves": moves})
        assert status == 400 and data == {"error": why}, data
    status, data = request(port, "POST", "/api/move", {**body, "agent": "1steplA"})
    assert status == 400 and "unknown agent" in data["error"]

    # the text diagram and the picture that `watch` shows
    state = view.replay([4, 0]).state(2)
    assert view.render(state) == "O . .\n. X .\n. . ."
    assert len(view.scene(state, view.replay([4]).state(1), 0, "ply 2").shapes) == 9 + 2 + 1


@needs_browser()
def test_a_whole_game_on_the_new_game_s_page_in_the_browser(port, tmp_path):
    from playwright import sync_api  # a `test` extra dependency

    with game_page(port, "tic_tac_toe", "tic_tac_toe/mcts50:det") as (pg, problems, idle):
        board = "[data-testid=board]"
        status = pg.locator("[data-testid=status]")
        sync_api.expect(status).to_have_text("Your turn (X) — click a cell.")
        assert pg.input_value("[data-testid=game-select]") == "tic_tac_toe"
        assert pg.locator("[data-testid^=cell-]").count() == 9 and pg.locator("[data-testid^=piece-]").count() == 0
        assert pg.locator("[data-testid^=score-]").count() == 9  # the agent's score on every empty cell
        assert "Tic-tac-toe" in pg.title()
        clicks = 0
        while pg.get_attribute(board, "data-status") == "human_turn":
            free = next((r, c) for r in range(3) for c in range(3)
                        if pg.locator(f"[data-testid=piece-{r}-{c}]").count() == 0)
            before = int(pg.get_attribute(board, "data-ply"))
            pg.click(f"[data-testid=cell-{free[0]}-{free[1]}]")
            pg.wait_for_selector(f'{idle}:not([data-ply="{before}"])')
            clicks += 1
            assert pg.locator(f"[data-testid=piece-{free[0]}-{free[1]}].x.human").count() == 1
            ply = int(pg.get_attribute(board, "data-ply"))
            assert pg.locator("[data-testid^=piece-]").count() == ply
            assert pg.locator("[data-testid=move-list] .move").count() == ply
            assert clicks <= 5
        final = pg.get_attribute(board, "data-status")
        assert final in ("agent_won", "draw"), final  # perfect-enough play does not lose
        sync_api.expect(status).to_have_text({"agent_won": "tic_tac_toe/mcts50:det won.", "draw": "Draw."}[final])
        assert pg.locator(".piece.o.agent").count() == int(pg.get_attribute(board, "data-ply")) - clicks
        pg.keyboard.press("ArrowLeft")  # history
        assert pg.get_attribute(board, "data-live") == "false"
        sync_api.expect(status).to_contain_text("(history, read-only")
        assert pg.locator(".move.future").count() == 1
        share = pg.get_attribute("[data-testid=share-link]", "href")
        assert "game=tic_tac_toe" in share and "first=human" in share
        pg.screenshot(path=str(tmp_path / "tic_tac_toe.png"), full_page=True)
        if os.environ.get("C4JAX_PLAY_THIRD_SCREENSHOT"):
            shutil.copy(tmp_path / "tic_tac_toe.png", os.environ["C4JAX_PLAY_THIRD_SCREENSHOT"])
        assert not problems, problems
