"""How long each command takes to answer ``--help`` and an unknown flag (target 1 s), and to print its
first line when it really runs (target 2 s: a ``--preset smoke`` trainer run, and the other commands on
small inputs), each in a fresh interpreter (the median of ``--repeats`` runs), against its target and
against ``python -c "import jax"`` measured in the same run. A first line is the first output on stdout
or stderr, both a (pseudo-)terminal as where a user types the command; the process is killed then.

    python experiments/bench_cli_start.py              # every command; docs/results/cli_start.md
    python experiments/bench_cli_start.py --repeats 1 --no-first
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 1.0  # --help and an argument error
FIRST_LINE_TARGET_S = 2.0  # a command's first line
TRAINERS = ("ppo", "dqn", "dueling_dqn", "reinforce", "alphazero", "supervised")
COMMANDS = ("tournament", "play", "yardstick", "export-onnx", "export-web", "watch", "match")
SCRIPTS = {"export-onnx": "export_onnx", "export-web": "export_web"}


def seconds(argv: list[str]) -> float:
    """Wall seconds of ``python ARGV`` run to its end in a fresh interpreter."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_line_seconds(argv: list[str]) -> float:
    """Wall seconds until ``python ARGV``, its stdout and stderr a terminal (a pseudo-terminal, as
    where a user types the command), writes its first visible character; the process is killed then."""
    import pty

    start = time.perf_counter()
    main, child = pty.openpty()
    process = subprocess.Popen([sys.executable, "-u", *argv], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=child,
                               stderr=child)
    os.close(child)
    try:
        while True:
            char = os.read(main, 1)
            if not char or char.strip():
                break
    except OSError:  # the command ended without a word
        pass
    took = time.perf_counter() - start
    process.kill()
    process.wait()
    os.close(main)
    return took


def median(measure, argv: list[str], repeats: int) -> float:
    return statistics.median(measure(argv) for _ in range(repeats))


def cases(smoke_out: str) -> list[tuple[str, str, list[str]]]:
    """(what, how it is timed, python arguments) of every measured command line."""
    c4jax = ["-m", "c4jax.cli.main"]
    out = [("c4jax --help", "end", c4jax + ["--help"]), ("c4jax --bogus", "end", c4jax + ["--bogus"])]
    for name in TRAINERS:
        out += [(f"c4jax train {name} --help", "end", c4jax + ["train", name, "--help"]),
                (f"c4jax train {name} --bogus", "end", c4jax + ["train", name, "--bogus"]),
                (f"experiments/{name}.py --help", "end", [f"experiments/{name}.py", "--help"]),
                (f"experiments/{name}.py --bogus", "end", [f"experiments/{name}.py", "--bogus"])]
    for name in COMMANDS:
        script = f"experiments/{SCRIPTS.get(name, name)}.py"
        out += [(f"c4jax {name} --help", "end", c4jax + [name, "--help"]),
                (f"c4jax {name} --bogus", "end", c4jax + [name, "--bogus"])]
        if (ROOT / script).exists():
            out += [(f"{script} --help", "end", [script, "--help"]), (f"{script} --bogus", "end", [script, "--bogus"])]
    play = ["-m", "c4jax.play"]  # c4jax-play
    out += [("python -m c4jax.play --help", "end", play + ["--help"]),
            ("python -m c4jax.play --bogus", "end", play + ["--bogus"])]
    for name in TRAINERS:
        out.append((f"experiments/{name}.py --preset smoke: first line", "first",
                    [f"experiments/{name}.py", "--preset", "smoke", "--out", str(Path(smoke_out, name))]))
    out.append(("experiments/ppo.py (its defaults): first line", "first",
                ["experiments/ppo.py", "--out", str(Path(smoke_out, "ppo_defaults"))]))
    runs = {"tournament": ["--agents", "random", "1steplA", "--no-timing", "--out", str(Path(smoke_out, "tournament"))],
            "yardstick": ["--agents", "random", "--out", str(Path(smoke_out, "yardstick"))],
            "match": ["random", "1steplA"], "watch": ["random", "1steplA"],
            "export-onnx": ["dqn", "--out", str(Path(smoke_out, "dqn.onnx"))],
            "export-web": ["--out", str(Path(smoke_out, "site"))], "play": ["--port", "0"]}
    for name, argv in runs.items():
        out.append((f"c4jax {name} {' '.join(a for a in argv if smoke_out not in a)}: first line", "first",
                    c4jax + [name, *argv]))
    return out
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-first", action="store_true", help="skip the first-line times (commands that run)")
    args = parser.parse_args()
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env_path}" if env_path else str(ROOT)
    jax_s = median(seconds, ["-c", "import jax"], args.repeats)
    bare_s = median(seconds, ["-c", "pass"], args.repeats)
    print(f"python -c pass: {bare_s:.2f} s; python -c 'import jax': {jax_s:.2f} s (median of {args.repeats})")
    print("| command | s | target s | / target | / import jax |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as smoke_out:
        for what, how, argv in cases(smoke_out):
            if how == "first" and args.no_first:
                continue
            took = median(first_line_seconds if how == "first" else seconds, argv, args.repeats)
            target = FIRST_LINE_TARGET_S if how == "first" else TARGET_S
            print(f"| {what} | {took:.2f} | {target:g} | {took / target:.2f} | {took / jax_s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
