"""Play one game between two agents and show it: as text, an animated SVG or a GIF.

``c4jax watch ARGS`` and ``python experiments/watch.py ARGS`` run this module (the same flags and
``--help``; docs/guide/play.md). Prints the final position (every one with ``--every``), the move list,
the result and a play UI link with B as the opponent; a bad agent name is a one-line error (exit 2)."""

from __future__ import annotations

import dataclasses
import functools
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Sequence

import tyro

from c4jax import agents, games
from c4jax.games import drawing
from c4jax.io import cliargs, interrupt
from c4jax.io.cliargs import fail
from c4jax.play import links

GameId = Literal[tuple(games.with_views())]  # the games whose kit has a view


@dataclasses.dataclass(frozen=True)
class Args:
    agent_a: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="A")]
    """Agent A (a name as in agents.load, or a checkpoint directory)."""
    agent_b: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="B")]
    """Agent B (the opponent in the printed play-UI link)."""
    game: GameId = games.DEFAULT
    """The game (one that the play UI has a page for); its own agents, random and pure MCTS (mcts<N>) play it."""
    first: Literal["a", "b"] = "a"
    """Which agent moves first."""
    seed: int = 0
    """Seed of the agents' sampling (deterministic agents play the same game for every seed)."""
    every: bool = False
    """Print every position, not only the final one."""
    svg: cliargs.OptionalPath = None
    """Write the game as an animated SVG to this file (its directory is created)."""
    gif: cliargs.OptionalPath = None
    """Write the game as an animated GIF to this file (its directory is created)."""
    seconds: float = 0.8
    """Seconds per position in the animations (the final one stays four times as long)."""
    url: str = links.DEFAULT_URL
    """Address of the play UI for the printed link."""




# --------------------------------------------------------------------------- playing

def load_for(spec: str, game) -> Any:
    """The agent ``spec`` as a player of ``game``; exit 2 with one line when it cannot be."""
    try:
        agent = agents.load(spec)
    except (ValueError, OSError) as e:
        fail(f"cannot load agent {spec!r}: {' '.join(str(e).split())}")
    playing = agents.for_game(agent, game)  # how the play UI's menus make opponents of a game
    if playing is not None:
        return playing
    name = games.view(game.id).NAME
    fail(f"agent {spec!r} ({agent.name}) cannot play {name}: only random, pure MCTS (mcts<N>) and agents trained "
         f"on {name} can")


@functools.lru_cache(maxsize=None)
def _rollout():
    """:func:`c4jax.agents.arena.rollout`, jitted (once per process)."""
    import jax

    from c4jax.agents import arena

    return jax.jit(arena.rollout, static_argnames=("game", "reward_fn"))


def play(agent_a, agent_b, game, a_first: bool, seed: int) -> tuple[list[int], list[bool], float, list]:
    """One game from the start position: the actions, whether A made each, A's outcome (+1 / 0 /
    -1) and the states before every action and after the last (host side)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from c4jax.agents import arena

    start = arena.initial_states(1, game)
    traj = jax.device_get(_rollout()(agent_a, agent_b, start, jnp.array([a_first]), jax.random.key(seed), game=game))
    valid = np.asarray(traj.valid[0])
    actions = [int(a) for a in np.asarray(traj.actions[0])[valid]]
    by_a = [bool(b) for b in np.asarray(traj.by_a[0])[valid]]
    step = jax.jit(game.step)
    states = [jax.device_get(jax.tree.map(lambda x: x[0], start))]
    for a in actions:
        states.append(jax.device_get(step(states[-1], np.int32(a))))
    return actions, by_a, float(traj.outcome_a[0]), states


def _writable(path: Path | None, flag: str) -> None:
    if path is not None and path.is_dir():
        fail(f"--{flag} {str(path)!r} is a directory; give the path of a file")


def _write(path: Path, flag: str, write: Callable[[Path], Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path)
    except OSError as e:
        fail(f"cannot write --{flag} {str(path)!r}: {e.strerror or e}")


def main(args: Args) -> dict:
    if not args.seconds > 0:
        fail(f"--seconds must be positive, got {args.seconds}")
    _writable(args.svg, "svg")
    _writable(args.gif, "gif")
    cliargs.starting(f"watch: {args.agent_a} vs {args.agent_b} ...")
    import numpy as np

    from c4jax.games.viewbase import movetext

    view = games.view(args.game)
    game = view.GAME
    agent_a, agent_b = load_for(args.agent_a, game), load_for(args.agent_b, game)
    a_first = args.first == "a"
    from c4jax.io import compile_cache

    # on stderr: stdout is the game's record
    with compile_cache.announce("the game", say=lambda line: print(f"watch: {line}", file=sys.stderr, flush=True)):
        actions, by_a, outcome_a, states = play(agent_a, agent_b, game, a_first, args.seed)

    names = {True: f"A {agent_a.name}", False: f"B {agent_b.name}"}
    seat = {0: a_first, 1: not a_first}  # player -> is A
    header = (f"{view.NAME}: {names[seat[0]]} ({view.SIDES[0]}, first) "
              f"vs {names[seat[1]]} ({view.SIDES[1]}), seed {args.seed}")
    moves_text = movetext(view.record(states, actions), view.NUMBERED)
    final = states[-1]
    truncated = bool(np.asarray(final.truncated))
    if outcome_a == 0:
        result = f"draw after {len(actions)} plies" + (" (the game reached its ply cap)" if truncated else "")
    else:
        winner = outcome_a > 0
        result = f"{names[winner]} wins after {len(actions)} plies"
    b_name = agents.canonical_name(agent_b)
    link = links.play_link(actions, b_name, game=args.game, human_first=a_first, url=args.url)

    print(header)
    if args.every:
        print()
        print(view.render(states[0]))
        for ply, action in enumerate(actions):
            player = int(np.asarray(states[ply].current_player))
            print(f"\nply {ply + 1}: {names[seat[player]]} ({view.SIDES[player]}) plays "
                  f"{view.ply_name(states[ply], action)}")
            print(view.render(states[ply + 1]))
    else:
        print()
        print(view.render(final))
    print(f"\nmoves ({view.MOVES_UNIT}): {moves_text}")
    print(f"result: {result}")
    print(f"play it: {link}")

    if args.svg or args.gif:
        scenes = []
        for ply in range(len(states)):
            if ply == 0:
                scenes.append(view.scene(states[0], None, None, "start"))
                continue
            before, action = states[ply - 1], actions[ply - 1]
            player = int(np.asarray(before.current_player))
            name = view.ply_name(before, action)
            scenes.append(view.scene(states[ply], before, action,
                                     f"ply {ply}: {names[seat[player]]} ({view.SIDES[player]}) plays {name}"))
        footer = drawing.wrap(header, view.WRAP) + drawing.wrap(moves_text, view.WRAP) + drawing.wrap(result, view.WRAP)
        hold = 4 * args.seconds
        if args.svg:
            _write(args.svg, "svg", lambda p: p.write_text(
                drawing.animate_svg(scenes, args.seconds, hold, footer, title=f"{header}: {result}")))
            print(f"wrote {args.svg}")
        if args.gif:
            footed = [drawing.with_footer(s, footer) for s in scenes]
            _write(args.gif, "gif", lambda p: drawing.write_gif(footed, p, args.seconds, hold))
            print(f"wrote {args.gif}")
    return {"actions": actions, "by_a": by_a, "outcome_a": outcome_a, "moves": moves_text, "result": result,
            "link": link}


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and run (:mod:`c4jax.cli`)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
