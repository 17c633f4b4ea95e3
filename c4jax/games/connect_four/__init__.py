"""Connect Four: the jitted environment (``env``), its bitboards (``bitboard``), the public board
(``board``) and the game protocol's object (``game.GAME``)."""
