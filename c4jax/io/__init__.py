"""Files and devices: atomic file writes (``atomic``), Orbax checkpoints with metadata (``checkpoint``),
run logs and plots (``runlog``), tables, JSON, and the device mesh and multi-process start-up
(``devices``)."""
