// The rules of Connect Four and Checkers for the static site (design.md §1 and "Checkers"): the
// same states, actions, observations and results as c4jax.games.make("connect_four" / "checkers"),
// checked against them by tests/web/test_rules.py (random games, both games).
//
// A game object has: id, numActions, obsShape, init(), step(state, action) -> new state (the old
// one is left as it is), legal(state) -> Uint8Array of numActions flags, observe(state) -> Int8Array
// (the network's input, row-major over obsShape), done(state), and state fields current (player to
// move, 0 or 1), terminated, truncated, rewards ([r0, r1]). For the page (engine.js draws a position
// as the play server's views do): rows, cols, board(state) (per cell row-major, > 0 player 0's
// pieces, abs the kind), cells(state, action) ({to, from, captured}: [row, col]) and actionName.

// ---------------------------------------------------------------- Connect Four

const ROWS = 6, COLS = 7;
// the 69 lines of four cells (row-major cell indices, row 0 on top)
const LINES = (() => {
  const out = [];
  for (let r = 0; r < ROWS; r++) {
    for (let c = 0; c < COLS; c++) {
      for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
        const er = r + 3 * dr, ec = c + 3 * dc;
        if (er < 0 || er >= ROWS || ec < 0 || ec >= COLS) continue;
        out.push([0, 1, 2, 3].map((k) => (r + k * dr) * COLS + c + k * dc));
      }
    }
  }
  return out;
})();

function wins(cells, player, at) {
  // whether the stone just dropped at cell `at` completes a line of `player` (1 or 2)
  for (const line of LINES) {
    if (line.includes(at) && line.every((i) => cells[i] === player)) return true;
  }
  return false;
}

export const connectFour = {
  id: "connect_four",
  numActions: COLS,
  obsShape: [ROWS, COLS],
  rows: ROWS,
  cols: COLS,
  init() {
    // cells: 0 empty, 1 the first player's stone, 2 the second's
    return { cells: new Int8Array(ROWS * COLS), current: 0, terminated: false, truncated: false,
             rewards: [0, 0], plies: 0 };
  },
  legal(s) {
    const out = new Uint8Array(COLS);
    if (s.terminated || s.truncated) return out;
    for (let c = 0; c < COLS; c++) out[c] = s.cells[c] === 0 ? 1 : 0;
    return out;
  },
  // the row a stone dropped in column c lands in, -1 when the column is full
  landing(s, c) {
    for (let r = ROWS - 1; r >= 0; r--) if (s.cells[r * COLS + c] === 0) return r;
    return -1;
  },
  step(s, action) {
    if (s.terminated || s.truncated) return s;
    const mover = s.current;
    const r = action >= 0 && action < COLS ? this.landing(s, action) : -1;
    if (r < 0) { // an illegal move disqualifies its mover (design.md §1): board unchanged, -5 / +5
      const rewards = mover === 0 ? [-5, 5] : [5, -5];
      return { ...s, terminated: true, rewards };
    }
    const cells = s.cells.slice();
    const at = r * COLS + action;
    cells[at] = mover + 1;
    const plies = s.plies + 1;
    const won = wins(cells, mover + 1, at);
    const full = plies === ROWS * COLS;
    const rewards = won ? (mover === 0 ? [1, -1] : [-1, 1]) : [0, 0];
    return { cells, current: 1 - mover, terminated: won || full, truncated: false, rewards, plies };
  },
  // the public board of the player to move: 1 own stone, -1 the opponent's, 0 empty (int8[6, 7])
  observe(s) {
    const out = new Int8Array(ROWS * COLS);
    const own = s.current + 1;
    for (let i = 0; i < out.length; i++) out[i] = s.cells[i] === 0 ? 0 : s.cells[i] === own ? 1 : -1;
    return out;
  },
  done(s) { return s.terminated || s.truncated; },
  actionName(_s, a) { return String(a + 1); },
  board(s) { return Int8Array.from(s.cells, (v) => (v === 0 ? 0 : v === 1 ? 1 : -1)); },
  cells(s, a) { return { to: [this.landing(s, a), a] }; },
  // the cells of every line of four of one player
  winCells(s) {
    const out = new Set();
    for (const line of LINES) if (s.cells[line[0]] && line.every((i) => s.cells[i] === s.cells[line[0]])) line.forEach((i) => out.add(i));
    return [...out].sort((a, b) => a - b).map((i) => [Math.floor(i / COLS), i % COLS]);
  },
};

// ---------------------------------------------------------------- Checkers

// Squares: the 32 dark squares in the canonical frame of the player to move, q on row q >> 2 (row
// 0 on top, the mover's promotion row) and column 2 * (q & 3) + (row even ? 1 : 0). The other
// player's frame is this one turned by 180 degrees: q -> 31 - q, a reversal of the 32-bit word.
const EVEN_ROWS = 0x0f0f0f0f, ODD_ROWS = 0xf0f0f0f0, EVEN_RIGHT = 0x08080808, ODD_LEFT = 0x10101010;
const TOP_ROW = 0x0000000f;
const UP_LEFT = 0, UP_RIGHT = 1, DOWN_LEFT = 2, DOWN_RIGHT = 3;
const OPPOSITE = [DOWN_RIGHT, DOWN_LEFT, UP_RIGHT, UP_LEFT];
// design.md's rules: 100 plies without a capture or a man's move draw; a game is cut after 512 plies
export const CHECKERS_RULES = { quietLimit: 100, maxSteps: 512 };

const u = (x) => x >>> 0;

function shift(b, d) { // every piece of b one square in direction d (leaving the board: gone)
  if (d === UP_LEFT) return u(((b & EVEN_ROWS) >>> 4) | ((b & (ODD_ROWS & ~ODD_LEFT)) >>> 5));
  if (d === UP_RIGHT) return u(((b & (EVEN_ROWS & ~EVEN_RIGHT)) >>> 3) | ((b & ODD_ROWS) >>> 4));
  if (d === DOWN_LEFT) return u(((b & EVEN_ROWS) << 4) | ((b & (ODD_ROWS & ~ODD_LEFT)) << 3));
  return u(((b & (EVEN_ROWS & ~EVEN_RIGHT)) << 5) | ((b & ODD_ROWS) << 4));
}

function rotate(b) { // square q -> 31 - q
  let r = 0;
  for (let i = 0; i < 32; i++) if ((b >>> i) & 1) r |= 1 << (31 - i);
  return u(r);
}

function popcount(b) { let n = 0; for (; b; b = u(b & (b - 1))) n++; return n; }

// legal moves as 8 words: the squares each move kind (0-3 a step, 4-7 a jump, direction kind & 3)
// may start from; men go up only, jumping is mandatory, a multi-jump goes on with its jumper only
function moves(cur, opp, kings, jumper) {
  const empty = u(~(cur | opp));
  const ownKings = u(cur & kings);
  const steps = [], jumps = [];
  for (let d = 0; d < 4; d++) {
    const back = OPPOSITE[d];
    const src = d === UP_LEFT || d === UP_RIGHT ? cur : ownKings;
    steps.push(u(src & shift(empty, back)));
    jumps.push(u(src & shift(u(opp & shift(empty, back)), back)));
  }
  const anyJump = (jumps[0] | jumps[1] | jumps[2] | jumps[3]) !== 0;
  const stepOk = anyJump || jumper !== 0 ? 0 : 0xffffffff;
  const jumpOk = jumper !== 0 ? jumper : 0xffffffff;
  return [...steps.map((s) => u(s & stepOk)), ...jumps.map((j) => u(j & jumpOk))];
}

function jumpsFrom(piece, isKing, opp, empty) {
  const out = [0, 0, 0, 0];
  for (let d = 0; d < 4; d++) {
    if (!isKing && (d === DOWN_LEFT || d === DOWN_RIGHT)) continue;
    if (u(shift(u(shift(piece, d) & opp), d) & empty) !== 0) out[d] = piece;
  }
  return out;
}

// [row, col] of PDN square n in the printed diagram (square 1 top left, white at the bottom)
const pdnCell = (n) => { const r = (n - 1) >> 2; return [r, 2 * ((n - 1) % 4) + (r % 2 === 0 ? 1 : 0)]; };
const bitIndex = (word) => 31 - Math.clz32(word);

export function squareRowCol(q) { const r = q >> 2; return [r, 2 * (q & 3) + (r % 2 === 0 ? 1 : 0)]; }

// PDN number (1-32) of canonical square q in player's frame, and back
export function pdnNumber(q, player) { return player === 0 ? 32 - q : q + 1; }
export function canonicalSquare(n, player) { return player === 0 ? 32 - n : n - 1; }

function positionKey(s) { // the position as the repetition rule compares it: pieces, kings, player to move
  return `${s.current}:${s.cur}:${s.opp}:${s.kings}`;
}

function fromBoard(cur, opp, kings, jumper, player) {
  const legal = moves(cur, opp, kings, jumper);
  const lost = legal.every((w) => w === 0);
  const winner = lost ? 1 : 0; // for the player who just moved
  const s = { cur: u(cur), opp: u(opp), kings: u(kings & (cur | opp)), jumper: u(jumper),
              legalWords: lost ? [0, 0, 0, 0, 0, 0, 0, 0] : legal, current: player,
              rewards: player === 0 ? [-winner, winner] : [winner, -winner],
              terminated: lost, truncated: false, plies: 0, quiet: 0, history: [] };
  s.history = [positionKey(s)];
  return s;
}

// Checkers with `rules` ({quietLimit, maxSteps}; CHECKERS_RULES by default)
export function makeCheckers(rules = CHECKERS_RULES) {
  return { ...checkersRules, ...rules };
}

const checkersRules = {
  id: "checkers",
  numActions: 256,
  obsShape: [8, 8, 2],
  rows: 8,
  cols: 8,
  rotate: true, // the page shows black's side at the bottom: the diagram turned for black
  joins: true, // a multi-jump's plies are one move of the record
  init() { return fromBoard(0xfff00000, 0x00000fff, 0, 0, 0); },
  fromBoard,
  legal(s) {
    const out = new Uint8Array(256);
    for (let kind = 0; kind < 8; kind++) {
      const w = s.legalWords[kind];
      for (let q = 0; q < 32; q++) if ((w >>> q) & 1) out[8 * q + kind] = 1;
    }
    return out;
  },
  // the start, end and jumped squares (bits) of an action; end 0 when it leaves the board
  decode(action) {
    const q = action >> 3, kind = action & 7, d = kind & 3;
    const start = u(1 << q);
    const one = shift(start, d);
    const two = shift(one, d);
    const jump = kind >= 4;
    return { start, end: jump ? two : one, over: jump && two !== 0 ? one : 0, jump };
  },
  step(s, action) {
    if (s.terminated || s.truncated) return s;
    const mover = s.current;
    const ok = Number.isInteger(action) && action >= 0 && action < 256
      && ((s.legalWords[action & 7] >>> (action >> 3)) & 1) === 1;
    if (!ok) { // an illegal action disqualifies its mover: -1 / +1, board unchanged
      return { ...s, legalWords: [0, 0, 0, 0, 0, 0, 0, 0], rewards: mover === 0 ? [-1, 1] : [1, -1],
               terminated: true };
    }
    const { start, end, over } = this.decode(action);
    const wasKing = (s.kings & start) !== 0;
    const crowned = !wasKing && (end & TOP_ROW) !== 0;
    const capture = over !== 0;
    const cur = u((s.cur ^ start) | end);
    const opp = u(s.opp & ~over);
    const kings = u((s.kings & ~(start | over)) | (wasKing || crowned ? end : 0));
    const plies = s.plies + 1;
    const progress = capture || !wasKing;
    const quiet = progress ? 0 : s.quiet + 1;
    const again = jumpsFrom(end, wasKing, opp, u(~(cur | opp)));
    let next;
    if (capture && !crowned && again.some((w) => w !== 0)) { // the same piece jumps on
      next = { cur, opp, kings, jumper: end, legalWords: [0, 0, 0, 0, ...again], current: mover,
               rewards: [0, 0], terminated: false, truncated: false, plies, quiet, history: s.history };
    } else { // the turn passes: the board turned to the opponent's frame
      const nCur = rotate(opp), nOpp = rotate(cur), nKings = rotate(kings);
      const nLegal = moves(nCur, nOpp, nKings, 0);
      const blocked = nLegal.every((w) => w === 0);
      next = { cur: nCur, opp: nOpp, kings: nKings, jumper: 0, legalWords: nLegal, current: 1 - mover,
               rewards: [0, 0], terminated: false, truncated: false, plies, quiet, history: null };
      const key = positionKey(next);
      const history = progress ? [key] : [...s.history, key];
      const seen = history.slice(0, -1).filter((k) => k === key).length;
      const draw = seen >= 2 || quiet >= this.quietLimit;
      next.history = history;
      if (blocked || draw) {
        const r = blocked ? 1 : 0;
        next.rewards = mover === 0 ? [r, -r] : [-r, r];
        next.terminated = true;
        next.legalWords = [0, 0, 0, 0, 0, 0, 0, 0];
      }
    }
    if (!next.terminated && plies >= this.maxSteps) {
      next.truncated = true;
      next.legalWords = [0, 0, 0, 0, 0, 0, 0, 0];
    }
    return next;
  },
  // int8[8, 8, 2]: channel 0 the board of the player to move (own man 1, own king 3, the opponent's
  // -1 / -3), channel 1 the piece that must jump on
  observe(s) {
    const out = new Int8Array(128);
    for (let q = 0; q < 32; q++) {
      const [r, c] = squareRowCol(q);
      const bit = 1 << q;
      const value = s.kings & bit ? 3 : 1;
      const cell = (r * 8 + c) * 2;
      if (s.cur & bit) out[cell] = value;
      else if (s.opp & bit) out[cell] = -value;
      if (s.jumper & bit) out[cell + 1] = 1;
    }
    return out;
  },
  done(s) { return s.terminated || s.truncated; },
  // PDN name of an action for the player to move: "11-15" (a step) or "15x22" (one jump)
  actionName(s, a) {
    const { start, end, jump } = this.decode(a);
    const from = pdnNumber(31 - Math.clz32(start), s.current);
    const to = pdnNumber(31 - Math.clz32(end), s.current);
    return `${from}${jump ? "x" : "-"}${to}`;
  },
  cells(s, a) {
    const { start, end, over } = this.decode(a);
    const cell = (word) => pdnCell(pdnNumber(bitIndex(word), s.current));
    return { from: cell(start), to: cell(end), captured: over ? cell(over) : null };
  },
  board(s) {
    const out = new Int8Array(64);
    for (const [n, [player, king]] of Object.entries(this.pieces(s))) {
      const [r, c] = pdnCell(Number(n));
      out[r * 8 + c] = (player === 0 ? 1 : -1) * (king ? 2 : 1);
    }
    return out;
  },
  // the PDN number of every cell of the diagram (null on the light squares)
  numbers() {
    const out = new Array(64).fill(null);
    for (let n = 1; n <= 32; n++) { const [r, c] = pdnCell(n); out[r * 8 + c] = n; }
    return out;
  },
  jumperCell(s) { return s.jumper ? pdnCell(pdnNumber(bitIndex(s.jumper), s.current)) : null; },
  drawReason(s) { return s.truncated ? "cap" : s.quiet >= this.quietLimit ? "fifty_moves" : "repetition"; },
  // every piece by PDN number: {n: [player, isKing]}
  pieces(s) {
    const out = {};
    for (let q = 0; q < 32; q++) {
      const bit = 1 << q;
      const isKing = (s.kings & bit) !== 0;
      if (s.cur & bit) out[pdnNumber(q, s.current)] = [s.current, isKing];
      else if (s.opp & bit) out[pdnNumber(q, s.current)] = [1 - s.current, isKing];
    }
    return out;
  },
  popcount,
};

export const checkers = makeCheckers();

export const GAMES = { connect_four: connectFour, checkers };
