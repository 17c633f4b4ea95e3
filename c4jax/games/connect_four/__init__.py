"""Connect Four: its rules (``env``, ``bitboard``, ``board``, ``game``), its view and pictures, its kit and
its own players as pure functions (``lookahead``, ``minimax``, ``perfect``, ``reference``, ``openspiel_mcts``),
other libraries' observations as boards (``interop``) and the thesis' dataset text (``dataset``)."""
