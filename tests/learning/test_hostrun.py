"""The host-loop pieces that the RL loop and the supervised trainer share: the settings a resumable
state was saved with, a new run's cleanup, and the end of a run's log."""

import json

import numpy as np

from c4jax.io import checkpoint, runlog
from c4jax.learning import hostrun


def _save(last, meta):
    checkpoint.save(last, {"w": np.zeros(2, np.float32)}, meta, keep_previous=True)


def test_saved_config_reads_the_latest_save_then_the_one_before(tmp_path):
    last = tmp_path / hostrun.LAST
    assert hostrun.saved_config(last) is None  # nothing saved
    _save(last, {"config": {"seed": 1}})
    _save(last, {"config": {"seed": 2}})
    assert hostrun.saved_config(last) == {"seed": 2}
    (last / checkpoint.METADATA_FILE).unlink()  # a kill between the two renames: the save before remains
    assert hostrun.saved_config(last) == {"seed": 1}


def test_saved_config_inside_a_section_and_without_one(tmp_path):
    last = tmp_path / hostrun.LAST
    _save(last, {"progress": {"epoch": 3, "config": {"epochs": 5}}})
    assert hostrun.saved_config(last, "progress") == {"epochs": 5}
    assert hostrun.saved_config(last) is None  # no top-level config: nothing to compare


def test_clear_state_removes_the_state_and_the_named_files_only(tmp_path):
    _save(tmp_path / hostrun.LAST, {})
    (tmp_path / "portable").mkdir()
    (tmp_path / "portable" / "x").write_text("x")
    (tmp_path / hostrun.SUMMARY).write_text("{}")
    (tmp_path / "keep.txt").write_text("mine")
    hostrun.clear_state(tmp_path, "portable", hostrun.SUMMARY, "absent")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_finish_writes_csv_curves_and_summary_with_the_command(tmp_path):
    log = runlog.RunLog(tmp_path)
    log.log(1, {"loss": 0.5})
    drawn = []
    summary = hostrun.finish(log, drawn.append, {"metrics": {"a": 1}})
    assert drawn == [[{"step": 1, "loss": 0.5}]]
    assert (tmp_path / runlog.METRICS_CSV).read_text().splitlines() == ["step,loss", "1,0.5"]
    saved = json.loads((tmp_path / hostrun.SUMMARY).read_text())
    assert saved == summary and list(saved) == ["metrics", "command"] and saved["metrics"] == {"a": 1}


def test_finish_of_a_log_that_does_not_write_writes_nothing(tmp_path):
    log = runlog.RunLog(tmp_path / "other", write=False)
    log.log(1, {"loss": 0.5})
    assert hostrun.finish(log, lambda rows: 1 / 0, {"metrics": {}}) == {}
    assert not (tmp_path / "other").exists()
