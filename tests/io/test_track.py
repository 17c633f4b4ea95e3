"""--track tensorboard / wandb: every metric row, the config, steps/s; one stream per seed; a
resumed run logs each step once. And the curves show the raw points behind the smoothed line."""

from __future__ import annotations

import glob
import json
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from c4jax.io import runlog, track
from scripts import run_script

PPO = ("--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2", "--eval-every", "16", "--no-progress")


def _tfrecords(path: Path):
    """The records of a TFRecord file (TensorBoard's event format): length, crc, data, crc."""
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        (length,) = struct.unpack("<Q", data[pos:pos + 8])
        yield data[pos + 12:pos + 12 + length]
        pos += 12 + length + 4


def _events(tb: Path) -> tuple[dict[str, list[tuple[int, float]]], dict[str, str]]:
    """(scalars by tag: [(step, value)], texts by tag) of every event file in ``tb``."""
    from tensorboardX.proto import event_pb2

    scalars, texts = {}, {}
    for f in sorted(tb.glob("events.out.tfevents.*")):
        for rec in _tfrecords(f):
            ev = event_pb2.Event.FromString(rec)
            for v in ev.summary.value:
                if v.metadata.plugin_data.plugin_name == "text":
                    texts[v.tag] = v.tensor.string_val[0].decode()
                elif v.WhichOneof("value") == "simple_value":
                    scalars.setdefault(v.tag, []).append((ev.step, v.simple_value))
    return scalars, texts


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_tensorboard_gets_every_row_the_config_and_steps_per_second_once_per_step_after_resume(tmp_path):
    out = tmp_path / "run"
    first = run_script("ppo.py", "--out", out, "--total-updates", "20", "--track", "tensorboard", *PPO)
    assert first.returncode == 0, first.stderr[-3000:]
    run_script_rows = _rows(out / "metrics.jsonl")
    scalars, texts = _events(out / "tb")
    for key in ("eval/vs_1steplA", "train/loss", "selfplay/length", "time/wall_s"):
        assert scalars[key] == [(r["step"], pytest.approx(r[key], rel=1e-6)) for r in run_script_rows], key
    assert all(v > 0 for _, v in scalars[track.STEPS_PER_S])
    config = json.loads(texts["config/text_summary"].split("```")[1])
    assert config["total_updates"] == 20 and config["buffer_size"] == 256 and config["track"] == ["tensorboard"]

    # a kill after the last row was logged but before its checkpoint: that row is played again on resume
    resumed = run_script("ppo.py", "--out", out, "--total-updates", "40", "--resume", "--track", "tensorboard", *PPO)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = _rows(out / "metrics.jsonl")
    scalars, _ = _events(out / "tb")
    steps = [s for s, _ in scalars["eval/vs_1steplA"]]
    assert steps == [r["step"] for r in rows] and len(rows) > len(run_script_rows)
    assert max(Counter(steps).values()) == 1


@pytest.mark.slow  # the single-seed TensorBoard test keeps tracking in the default run
def test_vmap_seeds_write_one_tensorboard_stream_per_seed(tmp_path):
    out = tmp_path / "run"
    proc = run_script("ppo.py", "--out", out, "--total-updates", "20", "--vmap-seeds", "2", "--track", "tensorboard",
                      *PPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (out / "tb").exists()
    streams = []
    for s in (0, 1):
        scalars, _ = _events(out / f"seed_{s}" / "tb")
        rows = _rows(out / f"seed_{s}" / "metrics.jsonl")
        assert [v for _, v in scalars["train/loss"]] == pytest.approx([r["train/loss"] for r in rows], rel=1e-6)
        streams.append([v for _, v in scalars["train/loss"]])
    assert streams[0] != streams[1]


BLOCK = 32768


def _wandb_records(path: Path):
    """The protobuf records of a W&B ``.wandb`` file (a LevelDB-style log: 7-byte file header, 32 KiB
    blocks of chunks with a 7-byte header: crc32, length, type 1 full / 2 first / 3 middle / 4 last)."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        left = BLOCK - pos % BLOCK
        if left < 7:
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0 and length == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        buf = chunk if kind in (1, 2) else buf + chunk
        if kind in (1, 4):
            rec = wandb_internal_pb2.Record()
            rec.ParseFromString(buf)
            yield rec


@pytest.mark.slow  # two training runs with W&B's service; the TensorBoard test keeps tracking in the default run
def test_wandb_offline_gets_config_group_and_resumes_the_same_run(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    out = tmp_path / "myrun"
    proc = run_script("ppo.py", "--out", out, "--total-updates", "20", "--vmap-seeds", "2", "--track", "wandb", *PPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_script("ppo.py", "--out", out, "--total-updates", "40", "--vmap-seeds", "2", "--track", "wandb",
                      "--resume", *PPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ids = set()
    for s in (0, 1):
        run_dir = out / f"seed_{s}"
        state = json.loads((run_dir / "wandb" / track.WANDB_STATE).read_text())
        files = sorted(glob.glob(str(run_dir / "wandb" / "offline-run-*" / "run-*.wandb")))
        assert len(files) == 2, files  # the first launch and the resumed one
        logged, runs = [], []
        for f in files:
            for rec in _wandb_records(Path(f)):
                kind = rec.WhichOneof("record_type")
                if kind == "run":
                    runs.append(rec.run)
                elif kind == "history":
                    items = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in rec.history.item}
                    logged.append((rec.history.step.num, items))
        assert {r.run_id for r in runs} == {state["id"]} and {r.run_group for r in runs} == {"myrun"}
        assert {r.display_name for r in runs} == {f"seed_{s}"}
        config = {i.key: json.loads(i.value_json) for i in runs[0].config.update}
        assert config["seed"] == s and config["buffer_size"] == 256
        rows = _rows(run_dir / "metrics.jsonl")
        assert [step for step, _ in logged] == [r["step"] for r in rows]  # each step once, across the resume
        for (step, items), row in zip(logged, rows):
            assert items["eval/vs_1steplA"] == pytest.approx(row["eval/vs_1steplA"])
        assert state["step"] == rows[-1]["step"]
        ids.add(state["id"])
    assert len(ids) == 2


def test_an_unknown_tracker_is_refused_in_one_line(tmp_path):
    proc = run_script("ppo.py", "--out", tmp_path / "x", "--track", "mlflow", *PPO)
    assert proc.returncode == 2 and "mlflow" in proc.stderr


def test_curves_draw_the_raw_points_behind_the_smoothed_line(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figures.append(fig))
    ys = [0.5, 0.5, 0.5, 3.0, 0.5, 0.5]  # one outlier
    rows = [{"step": i, "loss": y} for i, y in enumerate(ys)]
    runlog.plot_panels(rows, [("loss", ["loss"], "loss")], tmp_path / "c.png", smooth_window=3)
    (ax,) = [a for a in figures[0].axes if a.lines]
    raw, smoothed = ax.lines
    np.testing.assert_array_equal(raw.get_ydata(), ys)
    np.testing.assert_allclose(smoothed.get_ydata(), runlog.smooth(ys, 3))
    assert raw.get_color() == smoothed.get_color() and raw.get_alpha() < 1 and raw.get_marker() == "."
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["loss (mean of 3)"]


def test_supervised_sends_every_epoch_to_tensorboard(tmp_path):
    out = tmp_path / "sup"
    args = ("--dataset", tmp_path / "ds.npz", "--num-pairs", "2000", "--chunk-steps", "10", "--no-eval-matches",
            "--no-progress")
    proc = run_script("supervised.py", "--out", out, "--epochs", "2", "--track", "tensorboard", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(out / "metrics.jsonl")
    scalars, texts = _events(out / "tb")
    assert [s for s, _ in scalars["val/accuracy"]] == [1, 2]
    assert [v for _, v in scalars["train/loss"]] == pytest.approx([r["train/loss"] for r in rows], rel=1e-6)
    assert json.loads(texts["config/text_summary"].split("```")[1])["epochs"] == 2
