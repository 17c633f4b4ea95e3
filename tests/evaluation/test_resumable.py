"""c4jax.evaluation.resumable and ``c4jax match --out/--resume``: a match kept in a folder as it is played,
stopped after some opening pairs and continued, ends with the result of an uninterrupted match (stochastic
agents and compact Checkers matches included); its pairs file keeps each pair once, past a torn line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import jax
import pytest

from c4jax import agents, evaluation
from c4jax.evaluation import resumable
from command import run_command as run  # c4jax ARGV in this process
from scripts import ROOT
from command import error_of


class _Stop(Exception):
    pass


def _stop_after(pairs: int):
    def check(done: int) -> None:
        if done >= pairs:
            raise _Stop
    return check


# slow: test_sigterm_during_a_match_names_what_is_kept_and_resume_finishes_it stops and resumes a Checkers match
# (a compact one) to the uninterrupted result in the default run
@pytest.mark.parametrize("a, b", [("reinforce:sto", "1steplA"),
                                  pytest.param("checkers/random", "checkers/random", marks=pytest.mark.slow)])
def test_a_stopped_match_continues_to_the_uninterrupted_result(tmp_path, a, b):
    agent_a, agent_b = agents.load(a), agents.load(b)
    key = jax.random.key(4)
    with pytest.raises(_Stop):
        resumable.play(agent_a, agent_b, key, tmp_path, on_progress=_stop_after(3))
    kept = resumable.read_pairs(tmp_path)
    assert 3 <= len(kept) < 50 and (tmp_path / resumable.IN_FLIGHT_FILE).is_file()
    with open(tmp_path / resumable.PAIRS_FILE, "a") as f:
        f.write('{"match": 0, "open')  # a line cut by a kill
    resumed = resumable.play(agent_a, agent_b, key, tmp_path)
    assert resumed == evaluation.match(agent_a, agent_b, key)
    lines = resumable.read_pairs(tmp_path)
    assert sorted(line["opening"] for line in lines) == list(range(50))
    assert lines[:len(kept)] == kept
    assert not (tmp_path / resumable.IN_FLIGHT_FILE).exists()
    # a finished match is rebuilt from its pairs
    assert resumable.play(agent_a, agent_b, key, tmp_path) == resumed


def test_the_command_keeps_the_matches_and_refuses_a_resume_with_other_flags(tmp_path):
    out = tmp_path / "m"
    code, stdout, err = run("match", "random", "1steplA", "--keys", "2", "--out", out, "--json", tmp_path / "plain.json")
    assert code == 0, err
    code, _, err = run("match", "random", "1steplA", "--keys", "2", "--json", tmp_path / "one_call.json")
    assert code == 0, err
    kept = json.loads((out / "match.json").read_text())
    assert kept == json.loads((tmp_path / "one_call.json").read_text()) == json.loads((tmp_path / "plain.json").read_text())
    assert len(resumable.read_pairs(out)) == 100
    assert run("match", "random", "1steplA", "--keys", "2", "--out", out, "--resume")[0] == 0
    for argv, says in [
        (("random", "1steplA", "--keys", "2", "--out", out), "already holds a match"),
        (("random", "1steplA", "--keys", "3", "--out", out, "--resume"), "other settings (--keys 2)"),
        (("random", "2steplA", "--keys", "2", "--out", out, "--resume"), "other settings (B '1steplA')"),
        (("random", "1steplA", "--resume"), "--resume needs --out"),
        (("random", "1steplA", "--out", tmp_path / "empty", "--resume"), "holds no match"),
    ]:
        code, _, err = run("match", *argv)
        assert code == 2 and says in error_of(err), (argv, err)


@pytest.mark.slow
def test_sigterm_during_a_match_names_what_is_kept_and_resume_finishes_it(tmp_path):
    out = tmp_path / "m"
    argv = ["checkers/random", "checkers/random", "--seed", "2", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, str(ROOT / "experiments" / "match.py"), *argv],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JAX_PLATFORMS": "cpu"})
    reader = threading.Thread(target=proc.stdout.read, daemon=True)
    reader.start()
    pairs = out / resumable.PAIRS_FILE
    deadline = time.monotonic() + 300
    while not (pairs.is_file() and pairs.stat().st_size > 0):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "no opening pair was kept"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    err = proc.stderr.read().strip().splitlines()
    assert proc.returncode == 143 and len(err) == 1, err
    assert err[0].startswith(f"terminated: {out} holds ") and "of 50 opening pairs" in err[0] and "--resume" in err[0]
    code, _, stderr = run("match", *argv, "--resume")
    assert code == 0, stderr
    plain = evaluation.match(agents.load("checkers/random"), agents.load("checkers/random"),
                             jax.random.split(jax.random.key(2), 1)[0])
    assert json.loads((out / "match.json").read_text())["matches"] == [plain.to_dict()]
