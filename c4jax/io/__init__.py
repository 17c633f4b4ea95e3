"""Files: Orbax checkpoints with metadata (``checkpoint``), run logs and plots (``runlog``), tables, JSON."""
