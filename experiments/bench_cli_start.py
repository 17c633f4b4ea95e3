"""How long each command takes to answer ``--help`` and an unknown flag, and a ``--preset smoke`` trainer
run and the play server to print their first line, each in a fresh interpreter (the median of ``--repeats`` runs), against the
1 s target and against ``python -c "import jax"`` measured in the same run.

    python experiments/bench_cli_start.py              # every command; docs/results/cli_start.md
    python experiments/bench_cli_start.py --repeats 1 --no-smoke
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
TARGET_S = 1.0
TRAINERS = ("ppo", "dqn", "dueling_dqn", "reinforce", "alphazero", "supervised")
COMMANDS = ("tournament", "play", "yardstick", "export-onnx", "export-web", "watch", "match")
SCRIPTS = {"export-onnx": "export_onnx", "export-web": "export_web"}


def seconds(argv: list[str]) -> float:
    """Wall seconds of ``python ARGV`` run to its end in a fresh interpreter."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_line_seconds(argv: list[str]) -> float:
    """Wall seconds until ``python ARGV`` prints its first stdout line; the process is killed then."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-u", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    process.stdout.readline()
    took = time.perf_counter() - start
    process.kill()
    process.wait()
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
    out.append(("c4jax play --port 0: first line (serving on ...)", "first", c4jax + ["play", "--port", "0"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-smoke", action="store_true", help="skip the first-line times of the smoke runs")
    args = parser.parse_args()
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env_path}" if env_path else str(ROOT)
    jax_s = median(seconds, ["-c", "import jax"], args.repeats)
    bare_s = median(seconds, ["-c", "pass"], args.repeats)
    print(f"python -c pass: {bare_s:.2f} s; python -c 'import jax': {jax_s:.2f} s (median of {args.repeats})")
    print(f"| command | s | / {TARGET_S:g} s target | / import jax |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as smoke_out:
        for what, how, argv in cases(smoke_out):
            if how == "first" and args.no_smoke:
                continue
            took = median(first_line_seconds if how == "first" else seconds, argv, args.repeats)
            print(f"| {what} | {took:.2f} | {took / TARGET_S:.2f} | {took / jax_s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
