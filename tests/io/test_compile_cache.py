"""The persistent compilation cache of the command-line programs (c4jax.io.compile_cache): on by default
from their entry points, in the user's cache folder; off with --no-compile-cache, which every command
accepts; JAX's own setting left alone (this test session's cache); never turned on by ``import c4jax``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from scripts import ROOT, run_script

from c4jax.cli import main as c4jax_main
from c4jax.io import compile_cache
from c4jax.play import __main__ as play_main

FLAG = compile_cache.FLAG


def test_default_folder_follows_xdg_cache_home():
    assert compile_cache.default_folder({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/c4jax/jax")
    assert compile_cache.default_folder({}) == Path.home() / ".cache" / "c4jax" / "jax"


@pytest.mark.parametrize("argv, env, mode, folder, why", [
    (["train", "ppo"], {"XDG_CACHE_HOME": "/c"}, "on", "/c/c4jax/jax", "default"),
    (["match", "a", "b"], {"XDG_CACHE_HOME": "/c", "C4JAX_COMPILE_CACHE": "/elsewhere"}, "on", "/elsewhere",
     "C4JAX_COMPILE_CACHE"),
    (["match"], {"C4JAX_COMPILE_CACHE": "Off"}, "off", None, "C4JAX_COMPILE_CACHE=Off"),
    (["match"], {"C4JAX_COMPILE_CACHE": "0"}, "off", None, "C4JAX_COMPILE_CACHE=0"),
    (["match"], {"JAX_COMPILATION_CACHE_DIR": "/j", "C4JAX_COMPILE_CACHE": "/elsewhere"}, "jax", None,
     "JAX_COMPILATION_CACHE_DIR"),
    (["train", FLAG, "ppo"], {"JAX_COMPILATION_CACHE_DIR": "/j"}, "off", None, FLAG),
    ([FLAG], {}, "off", None, FLAG),
])
def test_which_rule_decides(argv, env, mode, folder, why):
    decision, rest = compile_cache.decide(argv, env)
    assert (decision.mode, decision.why) == (mode, why)
    assert decision.folder == (Path(folder) if folder else None)
    assert rest == [a for a in argv if a != FLAG]  # the other arguments, in their order


@pytest.fixture
def cache_settings_restored(monkeypatch):
    """The block may run commands with the flag, which turns this process' cache off: it is back on after."""
    import jax

    monkeypatch.setenv(compile_cache.ENV, os.environ.get(compile_cache.ENV, ""))
    before = jax.config.jax_enable_compilation_cache
    yield
    jax.config.update("jax_enable_compilation_cache", before)


def test_the_flag_is_taken_off_every_command_line_before_its_parser(capsys, monkeypatch, cache_settings_restored):
    # a parser that saw the flag would reject it: exit status 2 instead of the help
    with pytest.raises(SystemExit) as leave:
        c4jax_main.main(["train", "ppo", FLAG, "--help"])
    assert leave.value.code == 0 and capsys.readouterr().out.startswith("usage: c4jax train ppo ")
    monkeypatch.setattr(sys, "argv", ["c4jax-play", FLAG, "--help"])  # c4jax-play, python -m c4jax.play
    with pytest.raises(SystemExit) as leave:
        play_main.main()
    assert leave.value.code == 0 and capsys.readouterr().out.startswith("usage: c4jax-play ")
    for script in ("ppo.py", "dqn.py", "dueling_dqn.py", "reinforce.py", "alphazero.py", "supervised.py",
                   "tournament.py", "yardstick.py", "export_onnx.py", "watch.py", "match.py", "summarize.py",
                   "make_dataset.py", "make_yardstick.py", "reproduce.py"):
        done = run_script(script, FLAG, "--help")
        assert done.returncode == 0 and "usage:" in done.stdout, (script, done.stderr[-500:])


def test_commands_run_in_this_process_keep_jaxs_own_setting():
    # the test session's environment (conftest.py): JAX's own variable set, C4JAX_COMPILE_CACHE=off
    import jax

    assert os.environ["JAX_COMPILATION_CACHE_DIR"] and os.environ["C4JAX_COMPILE_CACHE"] == "off"
    assert c4jax_main.main(["--version"]) == 0
    assert jax.config.jax_compilation_cache_dir == os.environ["JAX_COMPILATION_CACHE_DIR"]
    assert compile_cache.persistent()
    assert compile_cache.compiling("the matches") == "compiling the matches (first run only, then cached) ..."


def test_the_entry_point_turns_it_on_and_import_c4jax_does_not(tmp_path):
    script = textwrap.dedent(f"""
        import json
        import jax, jax.numpy as jnp
        import c4jax, c4jax.learning.loop, c4jax.cli.tournament, c4jax.play.server
        from c4jax.cli import main
        from c4jax.io import compile_cache
        seen = {{"import": [jax.config.jax_compilation_cache_dir, compile_cache.persistent()]}}
        main.main(["--version"])
        seen["entry"] = [jax.config.jax_compilation_cache_dir, compile_cache.persistent(),
                         compile_cache.compiling("the matches")]
        jax.jit(lambda x: x * 2 + 1)(jnp.arange(3.0)).block_until_ready()
        main.main(["{FLAG}", "--version"])
        seen["flag"] = compile_cache.persistent()
        print(json.dumps(seen))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR", "C4JAX_COMPILE_CACHE")}
    env.update(XDG_CACHE_HOME=str(tmp_path), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    folder = tmp_path / "c4jax" / "jax"
    assert seen["import"] == [None, False]
    assert seen["entry"] == [str(folder), True, "compiling the matches (first run only, then cached) ..."]
    assert seen["flag"] is False
    assert any(folder.iterdir())  # the compiled program was written there


def test_the_compile_line_is_said_once_and_only_for_a_program_the_cache_does_not_answer():
    said = []
    announcer = compile_cache._Announcer("compiling it ...", said.append, after=0.05)
    announcer.event(compile_cache._REQUEST)
    announcer.event(compile_cache._HIT)  # read from the cache in time: nothing to say
    announcer.event(compile_cache._REQUEST)
    announcer.duration(compile_cache._COMPILED, 0.01)  # compiled faster than `after`
    time.sleep(0.2)
    assert said == []
    for _ in range(2):  # a long compile, then another one: one line
        announcer.event(compile_cache._REQUEST)
        time.sleep(0.2)
        announcer.duration(compile_cache._COMPILED, 0.2)
    assert said == ["compiling it ..."]


def test_with_the_cache_off_the_line_is_said_at_the_start_of_the_block(monkeypatch):
    monkeypatch.setattr(compile_cache, "persistent", lambda: False)
    said = []
    with compile_cache.announce("the matches", say=said.append):
        assert said == ["compiling the matches ..."]
