"""The game: the jitted environment (``env``), its bitboards (``bitboard``) and the public board (``board``)."""
