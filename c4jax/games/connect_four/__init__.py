"""Connect Four, a game folder: its rules (the jitted environment ``env``, its bitboards
``bitboard``, the public board ``board``, the game protocol's object ``game.GAME``, ``notation``,
``svg``, ``view`` and the kit ``kit``), which import only ``c4jax.games``, and its extensions on the
upper layers: its own agents (``lookahead``: N-step lookahead; ``perfect``: the solver's perfect
player; ``reference``: the thesis' plain-Python lookahead; ``openspiel_mcts``; ``agents``: their
``agents.load`` names), PettingZoo's and pgx's observations as its boards (``interop``) and the
shipped AlphaZero network as a pgx-style baseline (``pgx_baseline``)."""
