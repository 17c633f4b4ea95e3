"""The trainers' settings: frozen config dataclasses that the commands parse (tyro) and check, one module per
trainer plus the shared ones; they import neither JAX nor the networks, so a command refuses a bad command
line before anything heavy loads."""
