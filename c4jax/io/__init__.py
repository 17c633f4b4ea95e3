"""Files, devices and the process: atomic file writes (``atomic``), Orbax checkpoints with metadata
(``checkpoint``; its metadata, read without JAX: ``metadata``), run logs and plots (``runlog``), tables, JSON, the device mesh and multi-process
start-up (``devices``), Ctrl-C and SIGTERM (``interrupt``), command lines whose errors are one line
(``cliargs``) and the programs' persistent compilation cache (``compile_cache``)."""
