// c4jax play UI: vanilla JavaScript, no build step, no external resources.
//
// The server is stateless: every request carries the whole game (agent, move list, who moved
// first). The page keeps the game's positions (each with its board, status and the opponent's
// scores and, for search agents, the searched value of each column, as the server computed them) so that ← / → can show any past position without a
// request; history is read-only and → on the last position returns to the live game.
//
// Two games: Connect Four (the default) and Checkers (the game menu, or ?game=checkers). Checkers
// moves are the server's action indices (one step or one jump each); a multi-jump is several
// moves by the same side in a row, so whose turn it is always comes from the server's position.
//
// A link opens a position: /?agent=dqn&moves=3,3,4 (see "links to a position" below).
"use strict";

const ROWS = 6, COLS = 7, CELL = 100, TOP = 90, SVG_NS = "http://www.w3.org/2000/svg";
const SCORE_Y = 58, SCORE_Y_WITH_VALUE = 38;  // a search agent's share moves up to make room for its value

const $ = (id) => document.getElementById(id);
const el = {
  board: $("board"), pieces: $("pieces"), marks: $("marks"), columns: $("columns"), scores: $("scores"),
  holes: $("hole-cutouts"), status: $("status"), agent: $("agent"), first: $("first"), restart: $("restart"),
  back: $("back"), forward: $("forward"), ply: $("ply"), error: $("error"), agentName: $("agent-name"),
  legend: $("scores-legend"), timing: $("timing"), hint: $("hint"), hintNote: $("hint-note"),
  game: $("game"), gameChoice: $("game-choice"), gameTitle: $("game-title"), hintLabel: $("hint-label"),
  c4Wrap: $("c4-wrap"), c4Help: $("c4-help"), ckWrap: $("ck-wrap"), ckHelp: $("ck-help"), ckBoard: $("ck-board"),
  ckSquares: $("ck-squares"), ckMarks: $("ck-marks"), ckPieces: $("ck-pieces"), ckTargets: $("ck-targets"),
  ckRecordWrap: $("ck-record-wrap"), ckRecord: $("ck-record"), discHuman: $("disc-human"),
  discAgent: $("disc-agent"), youName: $("you-name"), share: $("share"), warming: $("warming"),
};

const state = {
  gameId: "connect_four",  // the game played: "connect_four" or "checkers"
  games: [],           // GET /api/agents' games: [{id, name, agents, default, max_moves}]
  choice: {},          // the opponent last chosen in each game
  agents: [],          // [{name, kind, stochastic, scores_label}]
  game: 0,             // bumped on every restart: answers for an older game are dropped
  humanFirst: true,
  moves: [],
  positions: [],       // positions[ply] = {ply, board, to_move, status, last_move, legal, scores, values, winning_cells}
  view: null,          // null: the live position; else the ply shown
  busy: false,
  lastAgentMs: null,
  hint: { available: false, message: "" },  // GET /api/agents' hint: is the solver on offer
  hints: new Map(),    // moves "3,2,4" -> the /api/hint answer for that position
  // Checkers only
  selected: null,      // [row, col] of the piece the human picked, or null
  record: [],          // the answer's record: [{number, side, by, text, plies}]
  squares: null,       // the PDN number of each cell of the human's view (the answer's squares)
  humanSide: "black",
  notice: "",          // why the page's link could not be opened: shown in the status line until the next move
  loading: false,      // GET /api/agents' loading: the server is still loading agents (the menus grow)
  warmingUp: [],       // GET /api/agents' warming_up: the agents not compiled yet (a first move waits)
};

const isCheckers = () => state.gameId === "checkers";

// ------------------------------------------------------------------ SVG helpers

function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

const cx = (c) => c * CELL + CELL / 2;
const cy = (r) => TOP + r * CELL + CELL / 2;

function buildBoard() {
  for (let r = 0; r < ROWS; r++)
    for (let c = 0; c < COLS; c++) svg("circle", { cx: cx(c), cy: cy(r), r: 40, fill: "black" }, el.holes);
  for (let c = 0; c < COLS; c++) {
    const g = svg("g", { class: "score-col" }, el.scores);
    svg("title", {}, g);
    svg("text", { x: cx(c), y: SCORE_Y, "text-anchor": "middle", "data-testid": `score-${c}`, class: "score" }, g);
    // a search agent's value of the column, under its visit share (empty for other agents)
    svg("text", { x: cx(c), y: 62, "text-anchor": "middle", "data-testid": `value-${c}`, class: "value" }, g);
    const v = svg("g", { class: "verdict-col" }, el.scores);
    svg("title", {}, v);
    svg("text", { x: cx(c), y: 82, "text-anchor": "middle", "data-testid": `hint-${c}`, class: "verdict" }, v);
    const hit = svg("rect", {
      x: c * CELL, y: 0, width: CELL, height: TOP + ROWS * CELL, class: "col",
      "data-testid": `col-${c}`, "data-col": c, role: "button", "aria-label": `drop a piece in column ${c + 1}`,
    }, el.columns);
    hit.addEventListener("click", () => play(c));
  }
}

// ------------------------------------------------------------------ formatting

// A searched value in [-1, 1] for the player to move: "+0.62", "-0.30", "0.00".
const fmtValue = (v) => (v === null || v === undefined) ? "" : `${v > 0.005 ? "+" : ""}${v.toFixed(2)}`;

function fmtScore(x, kind) {
  if (x === null || x === undefined) return "";
  if (kind === "lookahead") {
    const a = Math.abs(x);
    if (a < 1e4) return String(Math.round(x));
    return x.toExponential(1).replace("e+", "e");
  }
  if (kind === "policy" || kind === "random") return x.toFixed(2);
  if (kind === "perfect") return String(Math.round(x));
  if (kind === "search") return `${Math.round(100 * x)}%`;  // visit share / improved policy
  return Math.abs(x) >= 100 ? x.toExponential(1).replace("e+", "e") : x.toFixed(2);
}

// The chosen opponent's description ({name, kind, scores_label}); the name is what requests send.
const currentAgent = () => state.agents.find((a) => a.name === el.agent.value)
  || { name: el.agent.value, kind: "other", scores_label: "the agent's score for each column" };

function statusText(pos, live) {
  const total = state.positions.length - 1;
  const prefix = live ? "" : `Move ${pos.ply} of ${total} (history, read-only — → returns to the game): `;
  switch (pos.status) {
    case "human_turn": return prefix + (live ? "Your turn — click a column." : "you to move.");
    case "agent_turn": return prefix + (live ? `${currentAgent().name} is thinking…` : `${currentAgent().name} to move.`);
    case "human_won": return prefix + "You won!";
    case "agent_won": return prefix + `${currentAgent().name} won.`;
    case "draw": return prefix + "Draw — the board is full.";
    default: return prefix + pos.status;
  }
}

// ------------------------------------------------------------------ rendering

function piece(r, c, who, falling) {
  const node = svg("circle", { cx: cx(c), cy: cy(r), r: 43, class: `piece ${who}`, "data-row": r, "data-col": c }, el.pieces);
  if (falling) {
    // Start above the board, then let the CSS transition drop it into its cell.
    node.style.transform = `translateY(${-(r + 1) * CELL - TOP + 20}px)`;
    node.getBoundingClientRect();  // flush the start position before the transition
    node.classList.add("falling");
    node.style.transitionDuration = `${0.18 + 0.06 * (r + 1)}s`;
    requestAnimationFrame(() => { node.style.transform = "translateY(0px)"; });
  }
  return node;
}

// The status line and the history controls, the same for every game.
function showStatus(text, pos, ply, live) {
  el.status.textContent = state.notice ? `${state.notice} ${text}` : text;
  el.status.dataset.status = pos.status;
  el.status.dataset.notice = state.notice ? "true" : "false";
  el.share.href = positionLink(ply);
  el.status.classList.toggle("history-view", !live);
  const total = state.positions.length - 1;
  el.ply.textContent = live ? `move ${total} (live)` : `move ${ply} / ${total}`;
  el.back.disabled = ply <= 0;
  el.forward.disabled = live;
}

function render(opts = {}) {
  if (isCheckers()) { ckRender(); return; }
  const live = state.view === null;
  const ply = live ? state.positions.length - 1 : state.view;
  const pos = state.positions[ply];
  if (!pos) return;
  const agent = currentAgent();

  // pieces; the newest one may fall
  el.pieces.replaceChildren();
  const fall = opts.animate && pos.last_move !== null ? pos.last_move : null;
  let fallRow = null;
  if (fall !== null) for (let r = 0; r < ROWS; r++) if (pos.board[r][fall] !== 0) { fallRow = r; break; }
  for (let r = 0; r < ROWS; r++)
    for (let c = 0; c < COLS; c++) {
      const v = pos.board[r][c];
      if (v !== 0) piece(r, c, v === 1 ? "human" : "agent", r === fallRow && c === fall);
    }

  // last move and winning four
  el.marks.replaceChildren();
  if (pos.last_move !== null) {
    for (let r = 0; r < ROWS; r++) if (pos.board[r][pos.last_move] !== 0) {
      svg("circle", { cx: cx(pos.last_move), cy: cy(r), r: 8, "data-testid": "last-move",
                      class: fall !== null ? "last-move after-fall" : "last-move" }, el.marks);
      break;
    }
  }
  for (const [r, c] of pos.winning_cells || [])
    svg("circle", { cx: cx(c), cy: cy(r), r: 30, class: "win-mark", "data-testid": "win-mark" }, el.marks);

  // scores above the columns
  const finite = pos.scores.filter((x) => x !== null);
  const best = finite.length ? Math.max(...finite) : null;
  const values = Array.isArray(pos.values) ? pos.values : null;  // search agents only
  el.scores.querySelectorAll("g.score-col").forEach((g, c) => {
    const x = pos.scores[c], t = g.querySelector("text.score"), vt = g.querySelector("text.value");
    const v = values ? values[c] : null;
    g.querySelector("title").textContent = x === null
      ? "no score: the column is full or the game is over"
      : values
        ? `${agent.name}, column ${c + 1}: ${(100 * x).toFixed(1)}% of the search (${x}); ` +
          `searched value ${v === null ? "none" : v} for the player to move (-1 loss … +1 win)`
        : `${agent.name}'s score for column ${c + 1}: ${x}`;
    t.textContent = fmtScore(x, agent.kind);
    t.setAttribute("y", values ? SCORE_Y_WITH_VALUE : SCORE_Y);
    t.classList.toggle("best", x !== null && x === best);
    t.dataset.value = x === null ? "" : String(x);
    vt.textContent = fmtValue(v);
    vt.setAttribute("class", `value${v === null ? "" : v > 0.005 ? " pos" : v < -0.005 ? " neg" : ""}`);
    vt.dataset.value = v === null ? "" : String(v);
  });

  // status, history controls, flags for tests
  showStatus(statusText(pos, live), pos, ply, live);
  const playable = live && !state.busy && pos.status === "human_turn";
  el.board.classList.toggle("playable", playable);
  el.board.dataset.busy = String(state.busy);
  el.board.dataset.ply = String(ply);
  el.board.dataset.live = String(live);
  el.board.dataset.status = pos.status;
  el.columns.querySelectorAll("rect").forEach((rect, c) => {
    rect.classList.toggle("disabled", !(playable && pos.legal.includes(c)));
  });
  const side = (pos.to_move === "human"
    ? `Shown on your turn: what ${agent.name} would score each column if it were to move here`
    : `${agent.name}'s scores for the position it is to move in`)
    + (values ? " (its values are for the player to move here: + good for them, − bad)." : ".");
  el.legend.textContent = `Numbers above the columns: ${agent.scores_label}. ${pos.to_move ? side : ""}`;
  el.legend.title = "The opponent's scores(board) for the position shown, from the point of view of the player to move.";
  el.timing.textContent = state.lastAgentMs === null ? "" : `(answered in ${state.lastAgentMs.toFixed(1)} ms)`;
  renderHint(pos);
}

// ------------------------------------------------------------------ the solver's hint

const movesKey = (ply) => state.moves.slice(0, ply).join(",");

function renderHint(pos) {
  // The perfect player's verdict per column, on the human's turn, when asked for and on offer.
  const want = state.hint.available && el.hint.checked && pos.to_move === "human";
  const answer = want ? state.hints.get(movesKey(pos.ply)) : undefined;
  el.scores.querySelectorAll("g.verdict-col").forEach((g, c) => {
    const t = g.querySelector("text");
    const score = answer ? answer.scores[c] : null;
    const outcome = answer ? answer.outcomes[c] : null;
    t.textContent = score === null ? "" : (outcome === "draw" ? "draw" : `${outcome} ${score > 0 ? "+" : ""}${score}`);
    t.setAttribute("class", `verdict ${outcome || ""}${answer && answer.best.includes(c) ? " best" : ""}`);
    t.dataset.value = score === null ? "" : String(score);
    g.querySelector("title").textContent = score === null ? "" :
      `perfect play: column ${c + 1} ${outcome === "win" ? "wins" : outcome === "loss" ? "loses" : "draws"} (solver score ${score})`;
  });
  if (want && !answer) fetchHint(pos.ply);
}

async function fetchHint(ply) {
  const key = movesKey(ply), game = state.game;
  if (state.hints.has(key)) return;
  state.hints.set(key, undefined);  // one request per position
  try {
    const answer = await api("/api/hint", { moves: state.moves.slice(0, ply) });
    state.hints.set(key, answer);
    if (game === state.game) render();
  } catch (e) {
    state.hints.delete(key);
    showError(`hint: ${e.message}`);
  }
}

function showError(message) {
  el.error.hidden = !message;
  el.error.textContent = message || "";
}

// ------------------------------------------------------------------ server calls

async function api(path, body) {
  const res = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data;
  try { data = await res.json(); } catch { data = { error: `HTTP ${res.status}` }; }
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function accept(answer) {
  // The answer's positions start at the last position the request sent.
  for (const p of answer.positions) state.positions[p.ply] = p;
  state.positions.length = answer.moves.length + 1;
  state.moves = answer.moves;
  if (answer.agent_ms !== null) state.lastAgentMs = answer.agent_ms;
  if (answer.record) state.record = answer.record;
  if (answer.human_side) state.humanSide = answer.human_side;
}

async function newGame() {
  if (isCheckers()) return ckNewGame();
  const game = ++state.game;
  const first = el.first.value;
  state.humanFirst = first === "random" ? Math.random() < 0.5 : first === "human";
  state.moves = []; state.positions = []; state.view = null; state.busy = true; state.lastAgentMs = null;
  state.notice = "";
  showError("");
  el.board.dataset.busy = "true";
  el.agentName.textContent = currentAgent().name;
  el.status.textContent = state.humanFirst ? "You play first." : `${currentAgent().name} plays first…`;
  try {
    const answer = await api("/api/move", { agent: currentAgent().name, moves: [], human_first: state.humanFirst });
    if (game !== state.game) return;
    accept(answer);
    state.busy = false;
    render({ animate: answer.agent_move !== null });
  } catch (e) {
    if (game !== state.game) return;
    state.busy = false;
    showError(e.message);
    el.board.dataset.busy = "false";
  }
}

async function play(c) {
  if (isCheckers() || state.view !== null || state.busy) return;
  const pos = state.positions[state.positions.length - 1];
  if (!pos || pos.status !== "human_turn" || !pos.legal.includes(c)) return;
  const game = state.game;
  const moves = state.moves.concat([c]);
  state.busy = true;
  state.notice = "";
  showError("");
  // Show the human's piece at once (the server confirms it), falling.
  const optimistic = { ...pos, ply: pos.ply + 1, board: pos.board.map((row) => row.slice()), last_move: c,
                       to_move: "agent", status: "agent_turn", legal: [], scores: Array(COLS).fill(null), values: null,
                       winning_cells: [] };
  for (let r = ROWS - 1; r >= 0; r--) if (optimistic.board[r][c] === 0) { optimistic.board[r][c] = 1; break; }
  state.positions.push(optimistic);
  render({ animate: true });
  const started = performance.now();
  try {
    const answer = await api("/api/move", { agent: currentAgent().name, moves, human_first: state.humanFirst });
    if (game !== state.game) return;
    await sleep(Math.max(0, 420 - (performance.now() - started)));  // let the human's piece land first
    if (game !== state.game) return;
    accept(answer);
    state.busy = false;
    state.view = null;
    render({ animate: answer.agent_move !== null });
  } catch (e) {
    if (game !== state.game) return;
    state.positions.pop();
    state.busy = false;
    showError(e.message);
    render();
  }
}

function step(delta) {
  if (state.busy || state.positions.length === 0) return;
  const last = state.positions.length - 1;
  const cur = state.view === null ? last : state.view;
  const next = Math.min(last, Math.max(0, cur + delta));
  state.view = next === last ? null : next;
  state.selected = null;
  render();
}

// ------------------------------------------------------------------ Checkers

const CK = 100;  // one square of the 800 x 800 Checkers board
const CROWN = "M -17 7 L -17 -9 L -8 -1 L 0 -13 L 8 -1 L 17 -9 L 17 7 Z";
const sameCell = (a, b) => a !== null && b !== null && a[0] === b[0] && a[1] === b[1];
const ckCenter = ([r, c]) => [c * CK + CK / 2, r * CK + CK / 2];

function ckBuildBoard() {
  if (el.ckSquares.childElementCount) return;
  for (let r = 0; r < 8; r++)
    for (let c = 0; c < 8; c++) {
      const dark = (r + c) % 2 === 1;
      const sq = svg("rect", { x: c * CK, y: r * CK, width: CK, height: CK, class: dark ? "ck-dark" : "ck-light" },
                     el.ckSquares);
      if (!dark) continue;
      sq.setAttribute("data-testid", `ck-cell-${r}-${c}`);
      sq.addEventListener("click", () => ckClick(r, c));
      svg("text", { x: c * CK + 6, y: r * CK + 20, class: "ck-num", "data-row": r, "data-col": c }, el.ckSquares);
    }
}

// The PDN number (1-32) of a cell of the human's view.
const ckNumber = (cell) => (state.squares && cell ? state.squares[cell[0]][cell[1]] : null);

function ckStatusText(pos, live) {
  const total = state.positions.length - 1;
  const prefix = live ? "" : `Move ${pos.ply} of ${total} (history, read-only — → returns to the game): `;
  const name = currentAgent().name;
  const max = (state.games.find((g) => g.id === "checkers") || {}).max_moves || 512;
  switch (pos.status) {
    case "human_turn":
      if (!live) return prefix + "you to move.";
      return pos.jumper ? `Your turn (${state.humanSide}) — keep jumping: ${ckNumber(pos.jumper)} must jump on.`
        : `Your turn (${state.humanSide}) — click a piece, then where it goes.`;
    case "agent_turn": return prefix + (live ? `${name} is thinking…` : `${name} to move.`);
    case "sending": return "…";
    case "human_won": return prefix + "You won!";
    case "agent_won": return prefix + `${name} won.`;
    case "draw": return prefix + ({
      repetition: "Draw by threefold repetition.",
      fifty_moves: "Draw by the fifty-move rule: 100 plies without a capture or a man's move.",
      cap: `Draw: the game reached the ${max}-ply cap.`,
    }[pos.draw_reason] || "Draw.");
    default: return prefix + pos.status;
  }
}

function ckRender() {
  const live = state.view === null;
  const ply = live ? state.positions.length - 1 : state.view;
  const pos = state.positions[ply];
  if (!pos) return;
  const agent = currentAgent();
  const playable = live && !state.busy && pos.status === "human_turn";
  const moves = playable ? pos.legal_moves : [];
  const movable = moves.map((m) => m.from);
  if (playable && state.selected === null && new Set(movable.map(String)).size === 1) state.selected = movable[0];

  el.ckSquares.querySelectorAll("text.ck-num").forEach((t) => {
    const n = ckNumber([Number(t.dataset.row), Number(t.dataset.col)]);
    t.textContent = n === null ? "" : String(n);
  });

  // the last move: its squares and the piece it took
  el.ckMarks.replaceChildren();
  if (pos.last_move) {
    for (const cell of [pos.last_move.from, pos.last_move.to])
      svg("rect", { x: cell[1] * CK, y: cell[0] * CK, width: CK, height: CK, class: "ck-last",
                    "data-testid": "ck-last-move" }, el.ckMarks);
    if (pos.last_move.captured) {
      const [x, y] = ckCenter(pos.last_move.captured);
      svg("path", { d: `M ${x - 14} ${y - 14} L ${x + 14} ${y + 14} M ${x + 14} ${y - 14} L ${x - 14} ${y + 14}`,
                    class: "ck-taken" }, el.ckMarks);
    }
  }

  // the pieces: yours in your colour at the bottom; rings on the ones that can move
  el.ckPieces.replaceChildren();
  const agentSide = state.humanSide === "black" ? "white" : "black";
  for (let r = 0; r < 8; r++)
    for (let c = 0; c < 8; c++) {
      const v = pos.board[r][c];
      if (v === 0) continue;
      const owner = v > 0 ? "human" : "agent";
      const [x, y] = ckCenter([r, c]);
      const cls = ["ck-piece", owner, owner === "human" ? state.humanSide : agentSide];
      if (movable.some((m) => sameCell(m, [r, c]))) cls.push("movable");
      if (playable && sameCell(state.selected, [r, c])) cls.push("selected");
      const g = svg("g", { class: cls.join(" "), "data-testid": `ck-piece-${r}-${c}`, "data-owner": owner,
                           "data-king": String(Math.abs(v) === 2) }, el.ckPieces);
      svg("circle", { cx: x, cy: y, r: 38 }, g);
      svg("circle", { cx: x, cy: y, r: 27, class: "ck-rim" }, g);
      if (Math.abs(v) === 2) svg("path", { d: CROWN, transform: `translate(${x} ${y})`, class: "ck-crown" }, g);
    }
  if (pos.jumper) {
    const [x, y] = ckCenter(pos.jumper);
    svg("circle", { cx: x, cy: y, r: 45, class: "ck-jumper" }, el.ckPieces);
  }

  // where the selected piece may go, with the opponent's score of each move
  el.ckTargets.replaceChildren();
  if (playable && state.selected) {
    pos.legal_moves.forEach((m, i) => {
      if (!sameCell(m.from, state.selected)) return;
      const [x, y] = ckCenter(m.to);
      svg("circle", { cx: x, cy: y, r: 16, class: "ck-target", "data-testid": `ck-target-${m.to[0]}-${m.to[1]}`,
                      "data-action": m.action, "data-pdn": m.pdn }, el.ckTargets);
      const score = pos.scores ? pos.scores[i] : null;
      if (score !== null && score !== undefined)
        svg("text", { x, y: y + 38, "text-anchor": "middle", class: "ck-score", "data-value": score }, el.ckTargets)
          .textContent = fmtScore(score, agent.kind);
    });
  }

  showStatus(ckStatusText(pos, live), pos, ply, live);
  el.ckBoard.classList.toggle("playable", playable);
  el.ckBoard.dataset.busy = String(state.busy);
  el.ckBoard.dataset.ply = String(ply);
  el.ckBoard.dataset.live = String(live);
  el.ckBoard.dataset.status = pos.status;
  el.discHuman.className = `disc ck-${state.humanSide}`;
  el.discAgent.className = `disc ck-${agentSide}`;
  el.youName.textContent = `you (${state.humanSide})`;
  el.legend.textContent = pos.scores
    ? `Numbers under the marked squares (click a piece): ${agent.scores_label}.`
    : `${agent.name} shows no scores for Checkers.`;
  el.timing.textContent = state.lastAgentMs === null ? "" : `(answered in ${state.lastAgentMs.toFixed(1)} ms)`;
  ckRenderRecord(ply);
}

// The move list in PDN, one line per move number (black's move, then white's); a multi-jump is
// one entry (15x22x29). The move that led to the position shown is marked.
function ckRenderRecord(ply) {
  el.ckRecord.replaceChildren();
  let line = null, number = null;
  for (const m of state.record) {
    if (m.number !== number || line === null) {
      number = m.number;
      line = document.createElement("li");
      line.value = number;
      el.ckRecord.appendChild(line);
      if (m.side === "white") line.appendChild(document.createTextNode("… "));
    }
    const span = document.createElement("span");
    span.textContent = m.text;
    span.className = `ck-move ${m.by}`;
    span.dataset.plies = m.plies.join("-");
    if (m.plies[0] < ply && ply - 1 <= m.plies[1]) span.classList.add("current");
    if (m.plies[0] >= ply) span.classList.add("future");
    line.appendChild(span);
    line.appendChild(document.createTextNode(" "));
  }
}

function ckClick(r, c) {
  if (!isCheckers() || state.view !== null || state.busy) return;
  const pos = state.positions[state.positions.length - 1];
  if (!pos || pos.status !== "human_turn") return;
  const move = state.selected
    && pos.legal_moves.find((m) => sameCell(m.from, state.selected) && sameCell(m.to, [r, c]));
  if (move) { ckPlay(move); return; }
  if (pos.legal_moves.some((m) => sameCell(m.from, [r, c]))) state.selected = [r, c];
  else if (!pos.jumper) state.selected = null;
  ckRender();
}

// Show an answer; the agent's moves (several in a multi-jump) one position at a time.
async function ckShow(answer, game) {
  accept(answer);
  state.squares = answer.squares;
  const full = state.positions;
  const first = answer.moves.length - answer.agent_moves.length;
  if (answer.agent_moves.length) {
    for (let k = first; k < full.length - 1; k++) {
      state.positions = full.slice(0, k + 1);
      ckRender();
      await sleep(k === first ? 150 : 350);
      if (game !== state.game) return;
    }
    state.positions = full;
  }
  state.busy = false;
  state.view = null;
  ckRender();
}

async function ckPlay(m) {
  const pos = state.positions[state.positions.length - 1];
  const game = state.game;
  const moves = state.moves.concat([m.action]);
  state.busy = true;
  state.selected = null;
  state.notice = "";
  showError("");
  // Move the piece at once (the server confirms it).
  const board = pos.board.map((row) => row.slice());
  board[m.to[0]][m.to[1]] = board[m.from[0]][m.from[1]];
  board[m.from[0]][m.from[1]] = 0;
  if (m.captured) board[m.captured[0]][m.captured[1]] = 0;
  state.positions.push({ ...pos, ply: pos.ply + 1, board, last_move: m, status: "sending", to_move: null,
                         legal: [], legal_moves: [], scores: null, jumper: null });
  ckRender();
  try {
    const answer = await api("/api/move", { game: "checkers", agent: currentAgent().name, moves,
                                            human_first: state.humanFirst });
    if (game !== state.game) return;
    await ckShow(answer, game);
  } catch (e) {
    if (game !== state.game) return;
    state.positions.pop();
    state.busy = false;
    showError(e.message);
    ckRender();
  }
}

async function ckNewGame() {
  const game = ++state.game;
  const first = el.first.value;
  state.humanFirst = first === "random" ? Math.random() < 0.5 : first === "human";
  state.humanSide = state.humanFirst ? "black" : "white";
  state.moves = []; state.positions = []; state.record = []; state.view = null; state.busy = true;
  state.lastAgentMs = null; state.selected = null; state.notice = "";
  showError("");
  el.ckBoard.dataset.busy = "true";
  el.agentName.textContent = currentAgent().name;
  el.ckRecord.replaceChildren();
  el.status.textContent = state.humanFirst ? "You play black and move first."
    : `You play white: ${currentAgent().name} moves first…`;
  try {
    const answer = await api("/api/move", { game: "checkers", agent: currentAgent().name, moves: [],
                                            human_first: state.humanFirst });
    if (game !== state.game) return;
    await ckShow(answer, game);
  } catch (e) {
    if (game !== state.game) return;
    state.busy = false;
    showError(e.message);
    el.ckBoard.dataset.busy = "false";
  }
}

// ------------------------------------------------------------------ links to a position
//
// /?agent=dqn&moves=3,3,4 opens the position after those moves against that agent (the menu's
// names; an alias such as "dqn" works as in the API). moves: as /api/history takes them, Connect
// Four columns 0-6 or Checkers action indices 0-255; first=human|agent: who moved first (default:
// you take the side to move there); game=checkers: the game. A link that cannot be opened (an
// unknown game or agent, a malformed move list, an illegal move) is said in the status line, and
// a new game starts from the start position instead. c4jax/play/links.py writes these links.

const LINK_KEYS = ["agent", "moves", "first"];

// The link of the position shown (its first ``ply`` moves), with this game's agent and seats.
function positionLink(ply) {
  const q = new URLSearchParams();
  if (isCheckers()) q.set("game", "checkers");
  q.set("agent", currentAgent().name);
  q.set("moves", state.moves.slice(0, ply).join(","));
  q.set("first", state.humanFirst ? "human" : "agent");
  return `?${q.toString().replace(/%2C/g, ",").replace(/%3A/g, ":")}`;
}

function linkMoves(text) {
  if (text === null || text.trim() === "") return [];
  const parts = text.split(",").map((x) => x.trim());
  if (!parts.every((x) => /^[0-9]{1,3}$/.test(x)))
    throw new Error(`moves=${text.slice(0, 60)} is not a comma-separated list of ` +
                    (isCheckers() ? "Checkers action indices (0-255)" : "columns (0-6)"));
  return parts.map(Number);
}

async function openLink(params) {
  let problem = null;
  const wanted = params.get("game");
  if (wanted !== null && !switchGame(wanted))
    problem = `this server plays no game '${wanted.slice(0, 40)}' (it plays ${state.games.map((g) => g.id).join(", ")})`;
  else if (LINK_KEYS.some((k) => params.has(k))) {
    const game = state.game;
    try {
      await showLink(params);
      return;
    } catch (e) {
      if (state.game !== game + 1) return;  // a newer game took over meanwhile
      problem = e.message;
    }
  }
  await newGame();
  if (problem === null) return;
  state.notice = `This link cannot be opened: ${problem}. A new game instead:`;
  if (state.positions.length) render();
  else el.status.textContent = state.notice;
  el.status.dataset.notice = "true";
}

// Open the position of a link's params; throws what is wrong with it.
async function showLink(params) {
  const game = ++state.game;
  state.busy = true;
  el.status.textContent = "Opening the link…";
  const moves = linkMoves(params.get("moves"));
  const first = params.get("first");
  if (first !== null && first !== "human" && first !== "agent")
    throw new Error(`first=${first.slice(0, 20)}: it must be 'human' or 'agent'`);
  if (first !== null) el.first.value = first;  // kept, as the agent, when the moves cannot be shown
  const extra = isCheckers() ? { game: "checkers" } : {};
  // the agent first (its menu name: the link may use an alias), so that a bad move list falls back to it
  const name = params.has("agent") ? params.get("agent") : el.agent.value;
  const agent = (await api("/api/history", { ...extra, agent: name, moves: [], human_first: true })).agent;
  el.agent.value = agent;
  state.choice[state.gameId] = agent;
  const body = (humanFirst) => ({ ...extra, agent, moves, human_first: humanFirst });
  let humanFirst = first !== null ? first === "human" : (isCheckers() || moves.length % 2 === 0);
  let answer = await api("/api/history", body(humanFirst));
  if (first === null && answer.to_move === "agent") {  // Checkers: only the replay says whose turn it is
    humanFirst = !humanFirst;
    answer = await api("/api/history", body(humanFirst));
  }
  if (game !== state.game) return;
  el.first.value = humanFirst ? "human" : "agent";
  el.agentName.textContent = agent;
  state.humanFirst = humanFirst;
  state.humanSide = humanFirst ? "black" : "white";
  state.moves = []; state.positions = []; state.record = []; state.view = null; state.lastAgentMs = null;
  state.selected = null; state.notice = "";
  showError("");
  if (isCheckers()) await ckShow(answer, game);
  else { accept(answer); state.busy = false; render(); }
  if (answer.to_move !== "agent" || game !== state.game) return;
  state.busy = true;  // the agent is to move there (the link says who moved first): it plays
  render();
  const reply = await api("/api/move", body(humanFirst));
  if (game !== state.game) return;
  if (isCheckers()) await ckShow(reply, game);
  else { accept(reply); state.busy = false; render({ animate: reply.agent_move !== null }); }
}

// ------------------------------------------------------------------ start-up

async function init() {
  buildBoard();
  el.restart.addEventListener("click", newGame);
  el.agent.addEventListener("change", newGame);
  el.first.addEventListener("change", newGame);
  el.back.addEventListener("click", () => step(-1));
  el.forward.addEventListener("click", () => step(+1));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowLeft") { step(-1); e.preventDefault(); }
    else if (e.key === "ArrowRight") { step(+1); e.preventDefault(); }
    else if (/^[1-7]$/.test(e.key)) play(Number(e.key) - 1);
  });
  try {
    let info = await api("/api/agents");
    while (!info.agents.length && info.loading) {  // just started: wait for the first agents
      showWarming(info);
      await sleep(500);
      info = await api("/api/agents");
    }
    state.agents = info.agents;
    fillAgents(info.agents, info.default);
    state.hint = info.hint || { available: false, message: "no hint" };
    el.hint.disabled = !state.hint.available;
    el.hintNote.hidden = state.hint.available;
    el.hintNote.textContent = state.hint.available ? "" : state.hint.message;
    el.hint.addEventListener("change", () => render());
    state.games = info.games
      || [{ id: "connect_four", name: "Connect Four", agents: info.agents, default: info.default }];
    fillGames();
    showWarming(info);
    el.game.addEventListener("change", () => { if (switchGame(el.game.value)) newGame(); });
    el.agent.addEventListener("change", () => { state.choice[state.gameId] = el.agent.value; });
  } catch (e) {
    showError(`cannot reach the server: ${e.message}`);
    return;
  }
  const params = new URLSearchParams(location.search);
  // a link to a game whose agents are still loading: wait for them before judging it
  while (params.has("game") && !state.games.some((g) => g.id === params.get("game")) && state.loading) {
    await sleep(1000);
    await refreshAgents(false);
  }
  await openLink(params);
  if (state.loading || state.warmingUp.length) setTimeout(refreshAgents, WARMING_POLL_MS);
}

// ------------------------------------------------------------------ agents warming up
//
// Right after start-up the server answers while it loads and compiles its agents: GET /api/agents
// lists the agents loaded so far (``loading``: more to come) and those not compiled yet
// (``warming_up``; a first move against one waits for its compile). The page says which, and asks
// again every few seconds until all are ready, adding the agents and games that arrived.

const WARMING_POLL_MS = 2000;

// The game menu: a choice for every game on offer besides Connect Four (already there).
function fillGames() {
  const have = new Set(Array.from(el.game.options, (o) => o.value));
  for (const g of state.games) {
    if (have.has(g.id)) continue;
    const opt = document.createElement("option");
    opt.value = g.id;
    opt.textContent = g.name;
    el.game.appendChild(opt);
  }
  el.gameChoice.hidden = state.games.length < 2;
}

function showWarming(info) {
  state.loading = Boolean(info.loading);
  state.warmingUp = info.warming_up || [];
  const g = (info.games || []).find((x) => x.id === state.gameId);
  const names = g ? (g.warming_up || []) : state.warmingUp;
  const parts = [];
  if (names.length) parts.push(`Still warming up: ${names.join(", ")} (a first move against one of them waits for its compile).`);
  if (state.loading) parts.push("More agents are loading.");
  el.warming.textContent = parts.join(" ");
  el.warming.hidden = parts.length === 0;
}

// Ask for the menus again; ``again``: keep asking while agents are loading or warming up.
async function refreshAgents(again = true) {
  let info;
  try {
    info = await api("/api/agents");
  } catch (e) {
    if (again) setTimeout(refreshAgents, WARMING_POLL_MS);
    return;
  }
  if (info.games) {
    state.games = info.games;
    fillGames();
    const g = state.games.find((x) => x.id === state.gameId);
    if (g && g.agents.map((a) => a.name).join() !== state.agents.map((a) => a.name).join()) {
      state.agents = g.agents;
      fillAgents(g.agents, el.agent.value || state.choice[state.gameId] || g.default);
    } else if (g) state.agents = g.agents;
  }
  showWarming(info);
  if (again && (state.loading || state.warmingUp.length)) setTimeout(refreshAgents, WARMING_POLL_MS);
}

// The opponent menu: the agents of the game played, ``chosen`` selected.
function fillAgents(agents, chosen) {
  el.agent.replaceChildren();
  for (const a of agents) {
    const opt = document.createElement("option");
    opt.value = a.name;
    opt.textContent = a.name;
    el.agent.appendChild(opt);
  }
  el.agent.value = chosen;
}

// Show game ``id`` (its board, menu and help); false if the server does not offer it.
function switchGame(id) {
  const g = state.games.find((x) => x.id === id);
  if (!g) return false;
  state.choice[state.gameId] = el.agent.value;
  state.gameId = id;
  el.game.value = id;
  state.agents = g.agents;
  fillAgents(g.agents, state.choice[id] || g.default);
  if (state.loading || state.warmingUp.length) refreshAgents(false);  // the warming note of this game
  const ck = isCheckers();
  el.c4Wrap.hidden = ck;
  el.c4Help.hidden = ck;
  el.hintLabel.hidden = ck;
  el.hintNote.hidden = ck || state.hint.available;
  el.ckWrap.hidden = !ck;
  el.ckHelp.hidden = !ck;
  el.ckRecordWrap.hidden = !ck;
  el.gameTitle.textContent = g.name;
  document.title = `c4jax — play ${g.name}`;
  el.discHuman.className = "disc human";
  el.discAgent.className = "disc agent";
  el.youName.textContent = "you";
  if (ck) ckBuildBoard();
  return true;
}

init();
