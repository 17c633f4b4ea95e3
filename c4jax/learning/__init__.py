"""Learning: data, losses, buffers, the supervised and RL trainers, and the one host training loop."""
