"""The files of a folder that keeps protocol matches as they are played (:mod:`c4jax.evaluation.resumable`),
named without JAX or NumPy (so that ``c4jax match`` can say what its ``--out`` holds before anything loads)."""

from __future__ import annotations

PAIRS_FILE = "pairs.jsonl"  # each opening pair's two games, one JSON line per pair
IN_FLIGHT_FILE = "in_flight.npz"  # the match in flight
