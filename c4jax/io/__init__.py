"""Files, devices and the process: atomic writes, checkpoints and their metadata, run logs and plots,
tables, JSON, the device mesh, Ctrl-C and SIGTERM, one-line command-line errors and the compilation cache."""
