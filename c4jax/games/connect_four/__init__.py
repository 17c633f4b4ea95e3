"""Connect Four, a game folder: its rules (the jitted environment ``env``, its bitboards
``bitboard``, the public board ``board``, the game protocol's object ``game.GAME``, ``notation``,
``svg``, ``view`` and the kit ``kit``) and its own players as pure functions (``lookahead``: N-step
lookahead; ``minimax``: seed 002's opponent; ``perfect``: the solver's perfect player; ``reference``:
the thesis' plain-Python lookahead; ``openspiel_mcts``), which the kit names and the agents layer
plays (:mod:`c4jax.agents.players`), PettingZoo's and pgx's observations as its boards (``interop``)
and the thesis' dataset text (``dataset``). It imports only ``c4jax.games``."""
