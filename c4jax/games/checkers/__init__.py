"""Checkers (English draughts) as a game of :mod:`c4jax.games.base` (design.md "Checkers")."""
