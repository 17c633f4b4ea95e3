"""The shell commands of the docs run as written in a clean clone.

Every ```bash block of README.md and docs/guide/*.md is read command by command (``&&``, ``;``,
``|`` and line breaks split them; ``for X in ...; do ...; done`` is expanded; ``NAME=value`` in
front is dropped). A command of the project's own (``python experiments/<x>.py``, ``c4jax <sub>``,
``c4jax-play``, ``python -m c4jax...``) is checked:

- its command line is accepted by that command's own parser: one fresh interpreter parses every
  command in-process with the parse functions patched to stop once they return, so nothing
  trains, loads an agent or compiles (``--help`` answers the same way, tests/cli/test_fast_start.py);
- the folders it reads exist and the ``--out`` it claims is free, after the commands before it on
  the same page ran in a clean clone: a run folder never made, an ``--out`` that holds a shipped
  agent or an earlier command's results (without ``--resume`` / ``--overwrite``), a ``--resume``
  of nothing, are each one problem.

A block that needs more than a laptop is marked in the Markdown, on the line before it, with
``<!-- not run: REASON -->``: it is checked as above but the slow test, which really runs the
other blocks page by page in a temporary folder, skips it and says why.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(.+?)\s*-->\s*$")
FENCE = re.compile(r"^\s*```")
OPERATORS = {"&&", "||", ";", "|", "&", "{", "}", "(", ")"}
TRAINERS = ("ppo", "dqn", "dueling_dqn", "reinforce", "alphazero", "supervised")
AGENT_FIELDS = ("agent", "agent_a", "agent_b", "agents", "init_from", "opponent", "eval_opponents", "teacher")


def doc_files() -> list[Path]:
    """The Markdown files whose commands are checked: README.md and the guide's pages."""
    return [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]


@dataclass(frozen=True)
class Block:
    """A ```bash block: its file, first line number, text, and the reason it is not run (None: run)."""

    path: str
    line: int
    text: str
    not_run: str | None


def bash_blocks(text: str, path: str) -> list[Block]:
    """The ```bash blocks of a Markdown text, each with the ``<!-- not run: ... -->`` reason of the
    line before its fence (None when there is none)."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        if re.match(r"^\s*```bash\s*$", lines[i]):
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            reason = NOT_RUN.match(before)
            j = next(k for k in range(i + 1, len(lines)) if FENCE.match(lines[k]))
            blocks.append(Block(path, i + 1, "\n".join(lines[i + 1:j]), reason.group(1) if reason else None))
            i = j
        i += 1
    return blocks


def commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script as argument lists, in order: continuation lines joined,
    comments dropped, split at the shell's operators, ``for V in A B; do CMD; done`` expanded into
    one CMD per item with ``$V`` replaced, leading ``NAME=value`` assignments dropped."""
    segments: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|(){}")
        lexer.whitespace_split, lexer.commenters = True, "#"
        current: list[str] = []
        for token in lexer:
            if token in OPERATORS:
                segments.append(current)
                current = []
            else:
                current.append(token)
        segments.append(current)
    out, k = [], 0
    segments = [s for s in segments if s]
    while k < len(segments):
        seg = segments[k]
        if seg[0] == "for" and len(seg) >= 3 and seg[2] == "in":
            var, items, body = seg[1], seg[3:], []
            k += 1
            while k < len(segments) and segments[k] != ["done"]:
                body.append(segments[k][1:] if segments[k][0] == "do" else segments[k])
                k += 1
            for item in items:
                out += [[t.replace(f"${{{var}}}", item).replace(f"${var}", item) for t in b] for b in body if b]
        else:
            out.append(seg)
        k += 1
    return [c for c in (_drop_assignments(c) for c in out) if c]


def _drop_assignments(command: list[str]) -> list[str]:
    k = 0
    while k < len(command) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", command[k]):
        k += 1
    return command[k:]


def ours(command: list[str]) -> list[str] | None:
    """``command`` as the project's command line ``[kind, target, *args]`` (kind ``script``,
    ``module`` or ``c4jax``), or None for any other program (pip, tensorboard, http.server ...)."""
    head = command[0]
    if head in ("python", "python3") or head.endswith("/python") or head.endswith("/python3"):
        if len(command) > 2 and command[1] == "-m" and command[2].split(".")[0] == "c4jax":
            return ["module", command[2], *command[3:]]
        if len(command) > 1 and re.fullmatch(r"experiments/\w+\.py", command[1]):
            return ["script", command[1], *command[2:]]
        return None
    if head == "c4jax":
        return ["c4jax", "", *command[1:]]
    if head == "c4jax-play":
        return ["module", "c4jax.play", *command[1:]]
    return None


PROGRAM = textwrap.dedent('''
    import argparse, dataclasses, json, runpy, sys
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO
    from pathlib import PurePath

    class Parsed(BaseException):
        """Raised with the parsed arguments once the outermost parse function returns."""

    depth = [0]

    def stop_after(parse):
        def wrapped(*args, **kwargs):
            depth[0] += 1
            try:
                result = parse(*args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                raise Parsed(result)
            return result
        return wrapped

    import tyro
    from c4jax.cli import training
    from c4jax.io import cliargs
    tyro.cli = stop_after(tyro.cli)
    argparse.ArgumentParser.parse_args = stop_after(argparse.ArgumentParser.parse_args)
    cliargs.parse = stop_after(cliargs.parse)
    training.parse = stop_after(training.parse)

    def flat(obj, prefix=""):
        """Every leaf setting of a parsed config (dataclasses nested, or a namespace) by its dotted name."""
        items = (vars(obj).items() if isinstance(obj, argparse.Namespace)
                 else ((f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)))
        out = {}
        for name, value in items:
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                out.update(flat(value, f"{prefix}{name}."))
            elif isinstance(value, (tuple, list)):
                out[prefix + name] = [str(v) for v in value]
            elif value is None or isinstance(value, (bool, int, float, str)):
                out[prefix + name] = value
            elif isinstance(value, PurePath):
                out[prefix + name] = str(value)
        return out

    report = []
    for kind, target, *argv in json.loads(sys.argv[1]):
        out, err = StringIO(), StringIO()
        code, settings = None, None
        with redirect_stdout(out), redirect_stderr(err):
            try:
                if kind == "c4jax":
                    from c4jax.cli import main
                    code = main.main(argv)
                elif kind == "module":
                    sys.argv = [target] + argv
                    sys.modules.pop(target + ".__main__", None)
                    runpy.run_module(target, run_name="__main__", alter_sys=True)
                else:
                    sys.argv = [target] + argv
                    runpy.run_path(target, run_name="__main__")
            except Parsed as parsed:
                code, settings = "parsed", flat(parsed.args[0])
            except SystemExit as e:
                code = e.code
        report.append({"code": code, "settings": settings, "err": err.getvalue().strip()[-400:]})
    print(json.dumps(report))
''')


def parse_all(lines: list[list[str]]) -> list[dict]:
    """Each command line parsed in one fresh interpreter (cwd: the repository): ``code`` is
    ``"parsed"`` with its ``settings`` (dotted name -> value), or the exit status with ``err``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               C4JAX_COMPILE_CACHE="off")
    proc = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(lines)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@cache
def tracked() -> frozenset[str]:
    """The files of a clean clone and every folder above them (git's list; relative POSIX paths)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    paths = set()
    for f in files.splitlines():
        parts = f.split("/")
        paths.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    return frozenset(paths)


def in_clone(path: str) -> bool:
    """Whether ``path`` (relative to the repository, links such as checkpoints/ followed) exists in a
    clean clone."""
    real = os.path.relpath(os.path.realpath(ROOT / path), ROOT)
    return not real.startswith("..") and Path(real).as_posix() in tracked()


def _norm(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def claim_kind(line: list[str]):
    """The :mod:`c4jax.io.outdir` kind of results a command line claims its ``--out`` for (None: none)."""
    from c4jax.io import outdir

    kind, target, *argv = line
    name = Path(target).stem if kind == "script" else (argv[1] if argv[:1] == ["train"] and len(argv) > 1
                                                        else argv[0] if argv else "")
    return {**dict.fromkeys(TRAINERS, outdir.RUN), "make_dataset": outdir.DATASET, "tournament": outdir.TOURNAMENT,
            "yardstick": outdir.YARDSTICK, "reproduce": outdir.REPRODUCTION, "match": outdir.RUN}.get(name)


def _setting(settings: dict, name: str):
    """The value of the setting called ``name`` at any depth (``run.out`` or ``out``), or None."""
    return next((v for k, v in settings.items() if k.split(".")[-1] == name), None)


def agent_paths(settings: dict) -> list[str]:
    """The folders that the agent names of a command line read: a name with a path (``runs/x@64``),
    not a shipped name with its game in front (``checkers/ppo``)."""
    from c4jax import games

    paths = []
    for key, value in settings.items():
        if key.split(".")[-1] not in AGENT_FIELDS or not value:
            continue
        for spec in value if isinstance(value, list) else [value]:
            base = spec.split("@")[0].split(":")[0]
            if "/" not in base or (base.count("/") == 1 and base.split("/")[0] in games.GAMES):
                continue
            paths.append(_norm(base))
    return paths


def page_problems(page: list[tuple[Block, list[str], dict]]) -> list[str]:
    """The problems of one page's command lines, in order: ``page`` holds each command's block, its
    command line and its parse result. A clean clone's files plus what earlier commands wrote is the
    state each command meets."""
    from c4jax.io import outdir

    made: set[str] = set()
    problems = []
    for block, line, result in page:
        shown = {"c4jax": ["c4jax"], "script": ["python", line[1]], "module": ["python", "-m", line[1]]}[line[0]]
        where = f"{block.path}:{block.line}: {shlex.join(shown + line[2:])}"
        if result["code"] != "parsed":
            if result["code"] == 0 and ("--help" in line or "-h" in line):
                continue
            problems.append(f"{where}: its parser refuses it (exit {result['code']}): "
                            f"{(result['err'].splitlines() or [''])[-1]}")
            continue
        settings = result["settings"]
        for path in agent_paths(settings):
            if path not in made and not in_clone(path):
                problems.append(f"{where}: reads {path}, which no command before it on the page made")
        dataset = _setting(settings, "dataset")
        if isinstance(dataset, str) and dataset and _norm(dataset) not in made and not in_clone(_norm(dataset)):
            problems.append(f"{where}: reads the dataset {dataset}, which no command before it on the page made")
        out = _setting(settings, "out")
        if not out or (_setting(settings, "process_id") or 0) > 0:  # only process 0 writes --out
            continue
        out = _norm(out)
        kind = claim_kind(line)
        resume, overwrite = bool(_setting(settings, "resume")), bool(_setting(settings, "overwrite"))
        if kind is not None and not overwrite:
            if resume and out not in made and not in_clone(out):
                problems.append(f"{where}: --resume of {out}, which no command before it on the page made")
            elif not resume and out in made:
                problems.append(f"{where}: --out {out} holds an earlier command's results on this page: refused")
            elif not resume and in_clone(out) and outdir.found(ROOT / out, kind):
                problems.append(f"{where}: --out {out} holds results in a clean clone "
                                f"({', '.join(outdir.found(ROOT / out, kind))}): refused")
        made.add(out)
    return problems


def check(pages: dict[str, str]) -> tuple[list[str], list[Block]]:
    """Every problem of the pages' commands (``pages``: path -> Markdown text; one interpreter parses
    them all) and the blocks marked not to be run."""
    parts, lines = [], []
    for path, text in pages.items():
        for block in bash_blocks(text, path):
            for command in commands(block.text):
                line = ours(command)
                if line is not None:
                    parts.append((path, block, line))
                    lines.append(line)
    results = parse_all(lines) if lines else []
    by_page: dict[str, list] = {}
    for (path, block, line), result in zip(parts, results):
        by_page.setdefault(path, []).append((block, line, result))
    problems = [p for page in by_page.values() for p in page_problems(page)]
    skipped = [b for path, text in pages.items() for b in bash_blocks(text, path) if b.not_run]
    return problems, skipped


# A page with every fault the check looks for, next to commands that are right.
PLANTED = """\
```bash
c4jax train ppo --learning-rte 1e-4            # a misspelt flag
python experiments/supervised.py --out checkpoints/supervised
c4jax watch dqn 2steplA --svg game.svg
c4jax export-onnx runs/checkers/ppo --out x.onnx
python experiments/ppo.py --out runs/mine --resume
```

<!-- not run: needs a GPU -->
```bash
for lr in 1e-4 3e-4; do python experiments/ppo.py --learning-rate $lr --out runs/lr$lr; done
python experiments/ppo.py --out runs/lr1e-4    # the loop made it
python experiments/ppo.py --out runs/lr3e-4 --resume && c4jax export-onnx runs/lr3e-4@8 --out y.onnx
python experiments/alphazero.py --num-processes 2 --process-id 1 --coordinator-address h:1 --out runs/lr1e-4
c4jax train ppo --gamma 2                      # out of its range
```
"""


@cache
def checked() -> tuple[tuple[str, ...], tuple[Block, ...], tuple[str, ...]]:
    """One parse of every docs command and the planted page's: (the docs' problems, the docs' blocks
    marked not run, the planted page's problems)."""
    pages = {str(p.relative_to(ROOT)): p.read_text() for p in doc_files()}
    pages["planted.md"] = PLANTED
    problems, skipped = check(pages)
    docs = tuple(p for p in problems if not p.startswith("planted.md"))
    planted = tuple(p for p in problems if p.startswith("planted.md"))
    return docs, tuple(b for b in skipped if b.path != "planted.md"), planted


def test_the_commands_are_split_as_the_shell_splits_them():
    script = ("python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/python experiments/reproduce.py \\\n"
              "  --eval-only   # the main job\n"
              "for s in 1 2; do WANDB_MODE=offline c4jax train ppo --seed $s --out runs/p$s; done\n"
              "c4jax export-web --out site/ | tee log; python -m http.server -d site 8000\n")
    got = commands(script)
    assert got == [["python3", "-m", "venv", ".venv"], [".venv/bin/pip", "install", "-q", "-e", "."],
                   [".venv/bin/python", "experiments/reproduce.py", "--eval-only"],
                   ["c4jax", "train", "ppo", "--seed", "1", "--out", "runs/p1"],
                   ["c4jax", "train", "ppo", "--seed", "2", "--out", "runs/p2"],
                   ["c4jax", "export-web", "--out", "site/"], ["tee", "log"],
                   ["python", "-m", "http.server", "-d", "site", "8000"]]
    assert [ours(c) for c in got] == [None, None, ["script", "experiments/reproduce.py", "--eval-only"],
                                      ["c4jax", "", "train", "ppo", "--seed", "1", "--out", "runs/p1"],
                                      ["c4jax", "", "train", "ppo", "--seed", "2", "--out", "runs/p2"],
                                      ["c4jax", "", "export-web", "--out", "site/"], None, None]
    blocks = bash_blocks("text\n<!-- not run: needs npm -->\n```bash\nc4jax play\n```\n\n```bash\nls\n```\n", "a.md")
    assert [(b.line, b.text, b.not_run) for b in blocks] == [(3, "c4jax play", "needs npm"), (7, "ls", None)]


def test_the_checks_find_what_they_look_for():
    """The planted page: a misspelt flag, an --out that holds a shipped agent, a run read that was never
    made, a --resume of nothing, an --out an earlier command on the page filled, a value out of range;
    the rest of it (a loop's runs read later, another host's process) passes."""
    _, _, planted = checked()
    assert len(planted) == 6, "\n".join(planted)
    expected = ["planted.md:1: c4jax train ppo --learning-rte 1e-4: its parser refuses it (exit 2)",
                "planted.md:1: python experiments/supervised.py --out checkpoints/supervised: --out checkpoints/supervised "
                "holds results in a clean clone",
                "planted.md:1: c4jax export-onnx runs/checkers/ppo --out x.onnx: reads runs/checkers/ppo, which no command",
                "planted.md:1: python experiments/ppo.py --out runs/mine --resume: --resume of runs/mine",
                "planted.md:10: python experiments/ppo.py --out runs/lr1e-4: --out runs/lr1e-4 holds an earlier command's",
                "planted.md:10: c4jax train ppo --gamma 2: its parser refuses it (exit 2)"]
    for problem, start in zip(planted, expected):
        assert problem.startswith(start), (problem, start)
    assert "learning" in planted[0]  # the parser's own line names the flag


def test_every_docs_command_runs_as_written():
    problems, skipped, _ = checked()
    reasons = {}
    for block in skipped:
        reasons.setdefault(block.not_run, []).append(f"{block.path}:{block.line}")
    print(f"{len(skipped)} blocks are not run by the slow test:")
    for reason, where in sorted(reasons.items()):
        print(f"  {reason}: {', '.join(where)}")
    assert problems == (), "\n".join(problems)


def test_every_docs_page_has_commands_checked():
    """The guide's task pages each hold commands of the project (so the check cannot pass by finding none)."""
    for page in ("train.md", "evaluate.md", "play.md", "export.md"):
        lines = [ours(c) for b in bash_blocks((ROOT / "docs" / "guide" / page).read_text(), page)
                 for c in commands(b.text)]
        assert any(lines), page


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in doc_files()], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_runnable_blocks_run(page, tmp_path):
    """Each block not marked ``not run`` runs, in order, in a temporary folder that holds
    ``experiments/`` (the package comes from the repository): every command of the project in it ends
    with exit status 0. Other programs (pip, a server, tensorboard) are left out."""
    blocks = bash_blocks(page.read_text(), str(page.relative_to(ROOT)))
    runnable = [b for b in blocks if not b.not_run]
    if not runnable:
        pytest.skip(f"every block is marked not run: {sorted({b.not_run for b in blocks})}")
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    ran = 0
    for block in runnable:
        for command in commands(block.text):
            line = ours(command)
            if line is None:
                continue
            kind, target, *argv = line
            argv_of = {"script": [sys.executable, target], "module": [sys.executable, "-m", target],
                       "c4jax": [sys.executable, "-m", "c4jax.cli.main"]}[kind] + argv
            proc = subprocess.run(argv_of, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
            assert proc.returncode == 0, f"{block.path}:{block.line}: {shlex.join(command)}\n{proc.stderr[-2000:]}"
            ran += 1
    if not ran:
        pytest.skip("no command of the project outside the blocks marked not run")
