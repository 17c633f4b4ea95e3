"""experiments/bench_minimax.py runs end to end on a tiny setting and writes its Markdown tables."""

from __future__ import annotations


from scripts import load_experiment

bench_minimax = load_experiment("bench_minimax")


def test_the_benchmark_writes_its_tables(tmp_path):
    out = tmp_path / "bench.md"
    text = bench_minimax.main(["--depths", "1", "2", "--positions", "2", "--repeats", "1", "--batched", "2x4",
                               "--python-depths", "2", "--out", str(out)])
    assert out.read_text() == text
    assert "| 2 | 49 |" in text and "| 2 | 4 |" in text and "python experiments/bench_minimax.py --depths 1 2" in text
    assert "seed 002" not in text  # no depth-7 line without depth 7 timed
