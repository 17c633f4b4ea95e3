"""Round-robin tournament of the thesis (§5.1-5.2): Tables 5.1-5.4, ratings, heatmap, report.

``c4jax tournament ARGS`` and ``python experiments/tournament.py ARGS`` run this module (the same flags and
``--help``; docs/guide/evaluate.md). Every unordered pair of agents (all of one game) plays one protocol
match (design.md §9); ``--out`` receives the tables (``.md`` and ``.csv``), ``heatmap.png``,
``tournament.json`` and ``report.md``."""

from __future__ import annotations

import datetime
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

import c4jax
from c4jax import agents, evaluation, games
from c4jax.evaluation.field import default_agents
from c4jax.io import cliargs, compile_cache, interrupt, outdir
from c4jax.io.cliargs import fail
from c4jax.play import links

DEFAULT_OUT = Path("runs/tournament")

@dataclass
class Args:
    """Round-robin tournament (thesis §5.2): Tables 5.1-5.4, ratings, heatmap and report."""

    agents: tuple[str, ...] = default_agents(games.DEFAULT)
    """agents: <agent>[:sto|:det] (random, 1steplA..4steplA, minimax1..minimax7, shipped trained agents) or checkpoint paths"""
    out: Path = DEFAULT_OUT
    """output directory"""
    seed: int = 0
    """seed of the stochastic agents' sampling and of the timing boards"""
    timing: bool = True
    """measure Table 5.1 (seconds per decision)"""
    timing_batch: int = 4096
    """batch size of the batched decision timing"""
    timing_repeats: int = 101
    """timed calls per agent at batch 1 (median reported)"""
    timing_batched_repeats: int = 5
    """timed calls per agent at --timing-batch (median reported)"""
    timing_budget: float = 1.0
    """seconds one batched timing call of a search may take: a search whose --timing-batch decisions would
    take longer is timed at a smaller power-of-two batch, shown in the table (0: every agent at --timing-batch)"""
    per_match: bool = False
    """play one jitted match after another instead of all of them in one program (a game whose player to
    move alternates, on one device); stochastic agents then sample with other keys"""
    self_play: bool = False
    """also play every agent against itself (diagonal of Table 5.4 only)"""
    ratings_ci: Literal["bootstrap", "fisher"] = "bootstrap"
    """95% intervals of the ratings: bootstrap over games, or Fisher information"""
    bootstrap_samples: int = 1000
    """bootstrap resamples for the rating intervals"""
    rating_prior: float = 1.0
    """virtual drawn games per pair that met (keeps all-loss agents finite; 0: plain MLE)"""
    progress: bool = True
    """progress bars"""
    devices: int = 0
    """play on the first N devices at once (0 = all; the CPU has one per core): each decides its share of every
    deterministic agent's games (with --per-match: of every match's 100 games, when N divides 100); the same games"""
    overwrite: bool = False
    """replace the tournament that --out holds (without it, a tournament refuses an --out that holds one)"""
    play_url: str = links.DEFAULT_URL
    """address of the play UI (python -m c4jax.play) in the report's links to example games"""


def _short_label(agent, spec: str) -> str:
    """``agent.name``, with a checkpoint path shortened to its directory name (a ``<game>/<agent>``
    name stays as it is)."""
    name = str(agent.name)
    base, sep, mode = name.rpartition(":")
    if not sep:
        base, mode = name, ""
    head, slash, rest = base.partition("/")
    if slash and head in games.GAMES and "/" not in rest and "\\" not in rest and not Path(base).exists():
        return name
    if "/" in base or "\\" in base:
        base = Path(base.rstrip("/")).name
        return f"{base}:{mode}" if mode else base
    return name


def load_agents(specs: tuple[str, ...]) -> tuple[list, list[str]]:
    """Load every agent before any game; one error line (with the known names) for all bad ones."""
    if len(specs) < 2:
        fail(f"a tournament needs at least two agents, got {list(specs)}")
    loaded, errors = [], []
    for spec in specs:
        try:
            loaded.append(agents.load(spec))
        except (ValueError, OSError) as e:  # unknown name, bad suffix, not a checkpoint
            errors.append(f"{spec!r} ({str(e).split('; known agents')[0]})")
    if errors:
        fail(f"cannot load agent{'s' if len(errors) > 1 else ''} {'; '.join(errors)}; known agents: "
             f"{', '.join(agents.known_names())} (each with an optional :sto or :det suffix), or the path of a "
             "checkpoint directory")
    labels = [_short_label(a, s) for a, s in zip(loaded, specs)]
    from c4jax.evaluation.tournament import game_of as tournament_game

    try:
        tournament_game(loaded, list(specs))
    except ValueError as e:
        fail(f"{e}; a tournament is of one game (<game>/<agent> names another game's agents)")
    if len(set(labels)) != len(labels):
        full = [str(a.name) for a in loaded]
        labels = full if len(set(full)) == len(full) else labels
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        same = ", ".join(repr(s) for s, label in zip(specs, labels) if label in dup)
        fail(f"agent(s) listed twice: {', '.join(dup)} ({same} name the same player)")
    return loaded, labels


def plot_heatmap(t: evaluation.Tournament, path: Path) -> Path:
    """Table 5.2 as an annotated matrix: win rate of the row agent playing first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    m = t.first_player_matrix()
    n = t.n
    size = max(4.0, 0.9 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#d9d9d9")
    im = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            text = "–" if np.isnan(m[i, j]) else f"{m[i, j]:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=9,
                    color="white" if not np.isnan(m[i, j]) and (m[i, j] < 0.12 or m[i, j] > 0.88) else "black")
    ax.set_xticks(range(n), t.names, rotation=45, ha="right")
    ax.set_yticks(range(n), t.names)
    ax.set_xlabel("column agent (plays second)")
    ax.set_ylabel("row agent (plays first)")
    ax.set_title("Win rate of the row agent when it plays first (Table 5.2)")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="win rate")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _section(table: evaluation.Table) -> str:
    return f"## {table.title}\n\n{table.to_markdown(title=False)}\n{table.note}\n"


def example_games(t: evaluation.Tournament, url: str = links.DEFAULT_URL, specs: dict[str, str] | None = None) -> str:
    """The report's example games: per match, its game with A moving first as a play UI link (B the
    opponent); ``specs``: the ``agents.load`` name of each tournament name. Empty for a game without a page."""
    specs = specs or {}
    if t.game not in games.with_views():
        return ""
    rows = []
    for m in t.matches:
        game = next((g for g in m.games if g.opening == 0 and g.a_first), None)
        if game is None:
            continue
        result = {1: f"`{m.agent_a}` won", 0: "draw", -1: f"`{m.agent_b}` won"}[game.outcome_a]
        link = links.play_link(game.moves, specs.get(m.agent_b, m.agent_b), game=t.game, human_first=True, url=url)
        rows.append(f"| `{m.agent_a}` | `{m.agent_b}` | {result} after {len(game.moves)} moves | [open]({link}) |")
    if not rows:
        return ""
    start = "the start position"
    return "\n".join([
        "## Example games", "",
        f"One game of each match: the one from {start} with the first agent moving first. The links open "
        f"it in the play UI (`python -m c4jax.play`, at <{url}>) with the second agent as the opponent; ← / → "
        "step through it. A server that does not offer that agent (`--agents`, `--agent PATH`) says so and "
        "starts a new game instead.", "",
        "| first agent | second agent | result | game |", "| --- | --- | --- | --- |", *rows, ""])


def _say(line: str) -> None:
    print("tournament: " + line, flush=True)


def main(args: Args, command: str | None = None) -> dict:
    """Run the tournament and write every output; returns a summary (paths, tables, ratings)."""
    command = command or "python experiments/tournament.py " + shlex.join(sys.argv[1:])
    counts = [("--timing-batch", args.timing_batch), ("--timing-repeats", args.timing_repeats),
              ("--timing-batched-repeats", args.timing_batched_repeats)] if args.timing else []
    counts += [("--bootstrap-samples", args.bootstrap_samples)] if args.ratings_ci == "bootstrap" else []
    for flag, value in counts:
        if value < 1:
            fail(f"{flag} must be at least 1, got {value}")
    for flag, value in (("--timing-budget", args.timing_budget), ("--rating-prior", args.rating_prior)):
        if not value >= 0:
            fail(f"{flag} must be >= 0, got {value}")
    n = len(args.agents)
    pairs = n * (n - 1) // 2
    cliargs.starting(f"tournament: {n} agents, {pairs} match{'es' * (pairs != 1)} into {args.out} ...")
    import jax

    from c4jax.evaluation import ratings
    from c4jax.io import devices

    try:
        n_devices = len(devices.select(args.devices))
    except devices.DeviceError as e:
        fail(str(e))
    loaded, labels = load_agents(tuple(args.agents))  # fails before any game
    try:
        out = outdir.claim(args.out, outdir.TOURNAMENT, overwrite=args.overwrite)
    except outdir.OutputError as e:
        fail(str(e))
    key = jax.random.key(args.seed)
    match_key, timing_key = jax.random.split(key)
    started = time.perf_counter()

    with compile_cache.announce("the matches", say=_say):
        t = evaluation.round_robin(loaded, match_key, progress=args.progress, self_play=args.self_play, names=labels,
                                   per_match=args.per_match, devices=args.devices)
    play_s = time.perf_counter() - started
    rt = ratings.from_tournament(t, ci=args.ratings_ci, samples=args.bootstrap_samples, seed=args.seed,
                                 prior=args.rating_prior)

    timing = None
    if args.timing:
        with compile_cache.announce("the agents' decisions for Table 5.1", say=_say):
            timing = evaluation.time_decisions(loaded, timing_key, batch=args.timing_batch,
                                               repeats=args.timing_repeats,
                                               batched_repeats=args.timing_batched_repeats, names=labels,
                                               budget_s=args.timing_budget, progress=args.progress)

    tables = ([timing.table()] if timing else []) + t.tables()
    files = {}
    for table in tables:
        files[table.name + ".md"] = out / f"{table.name}.md"
        files[table.name + ".md"].write_text(table.to_markdown())
        files[table.name + ".csv"] = table.to_csv(out / f"{table.name}.csv")
    files["ratings.md"] = out / "ratings.md"
    files["ratings.md"].write_text(rt.to_markdown())
    files["ratings.csv"] = rt.to_csv(out / "ratings.csv")
    files["heatmap.png"] = plot_heatmap(t, out / "heatmap.png")

    info = {
        "command": command,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": args.seed,
        "agents": [{"spec": s, "name": n} for s, n in zip(args.agents, labels)],
        "c4jax_version": c4jax.__version__,
        "jax_version": jax.__version__,
        "device": evaluation.device_description(),
        "devices": n_devices,
        "play_seconds": round(play_s, 2),
        "protocol": (f"{evaluation.GAMES_PER_MATCH} games of {t.game} per match: the {evaluation.NUM_OPENINGS} openings "
                     f"(the start position + {evaluation.NUM_OPENINGS - 1} two-ply openings), each agent once as first player"),
    }
    files["tournament.json"] = t.save_json(out / "tournament.json", **info, ratings=rt.to_dict(),
                                           timing=timing.to_dict() if timing else None)

    report = [
        "# Tournament report",
        "",
        "```bash",
        command,
        "```",
        "",
        f"- Agents ({t.n}): " + ", ".join(f"`{n}`" + (f" (`{s}`)" if s != n else "") for s, n in zip(args.agents, labels)),
        f"- Protocol: {info['protocol']}; {len(t.matches)} matches, {sum(len(m.games) for m in t.matches)} games "
        f"(each unordered pair once, nobody against itself{'; plus self matches for Table 5.4' if t.self_matches else ''}).",
        f"- Seed {args.seed}; c4jax {c4jax.__version__}, jax {jax.__version__}, {info['device']}; "
        f"{info['created']}; games played in {play_s:.1f} s.",
        "",
    ]
    if timing:
        report.append(_section(timing.table()))
    else:  # --no-timing (time_decisions times the agents of any game, on random positions where it has no boards)
        report += ["## Table 5.1: time to choose an action", "", "Not measured (`--no-timing`).", ""]
    report += [_section(t.table_5_2()), "![Table 5.2 heatmap](heatmap.png)", "", _section(t.table_5_3()),
               "## Ratings (Bradley–Terry, Elo scale)", "", rt.to_markdown(title=False), rt.description(), "",
               _section(t.table_5_4())]
    examples = example_games(t, args.play_url, dict(zip(labels, args.agents)))
    if examples:
        report.append(examples)
    report.append("Every game (openings, moves, outcomes) is in `tournament.json`; each table is also a CSV file.")
    files["report.md"] = out / "report.md"
    files["report.md"].write_text("\n".join(report) + "\n")
    return {"files": {k: str(v) for k, v in files.items()}, "tournament": t, "ratings": rt, "timing": timing}


def aligned(markdown: str) -> str:
    """A Markdown table (as :meth:`c4jax.io.tables.Table.to_markdown` writes it, without its title) as
    aligned text for a terminal: columns padded, numeric (``---:``) ones right-aligned."""
    rows = [[cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            for line in markdown.splitlines() if line.startswith("|")]
    header, rule, body = rows[0], rows[1], rows[2:]
    right = [cell.endswith(":") for cell in rule]
    widths = [max(len(row[c]) for row in [header, *body]) for c in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, body)])


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and play the tournament; ``prog`` names the
    command in ``--help`` and in the report (default: ``python experiments/tournament.py``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = cliargs.parse(Args, argv, prog, description=__doc__.split("\n")[0])
    command = (prog or "python experiments/tournament.py") + " " + shlex.join(argv)
    with interrupt.guard():
        summary = main(args, command)
    print(f"\n{summary['ratings'].table().title}\n\n{aligned(summary['ratings'].to_markdown(title=False))}\n")
    print(f"wrote {len(summary['files'])} files to {args.out}/ (report: {summary['files']['report.md']})")
    return summary
