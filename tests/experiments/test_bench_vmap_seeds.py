"""experiments/bench_vmap_seeds.py: flags are checked, and a tiny run measures both modes."""


import pytest

from scripts import load_experiment, run_script

bench_vmap_seeds = load_experiment("bench_vmap_seeds")


@pytest.mark.parametrize("argv", [["--seeds", "1"], ["--chunks", "0"], ["--algo", "a2c"]])
def test_bad_flags_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        bench_vmap_seeds.main(argv)
    assert e.value.code == 2


def test_a_missing_init_checkpoint_is_one_error_line(tmp_path):
    proc = run_script("bench_vmap_seeds.py", "--init-from", tmp_path / "none")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_tiny_run_counts_updates_of_both_modes(capsys):
    res = bench_vmap_seeds.main(["--algo", "reinforce", "--seeds", "2", "--chunks", "1"])
    out = capsys.readouterr().out
    assert "ratio vmapped / sequential" in out
    # REINFORCE: one update per episode, 100 episodes per chunk -> 2 x 100 updates per mode and round
    assert "sequential 200 updates" in out and "vmapped 200 updates" in out
    assert res["sequential_updates_per_s"] > 0 and res["vmapped_updates_per_s"] > 0
