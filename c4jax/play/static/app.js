// c4jax play UI: vanilla JavaScript, no build step, no external resources.
//
// The server is stateless: every request carries the whole game (agent, move list, who moved
// first). The page keeps the game's positions (each with its board, status and the opponent's
// scores and, for search agents, the searched value of each column, as the server computed them) so that ← / → can show any past position without a
// request; history is read-only and → on the last position returns to the live game.
"use strict";

const ROWS = 6, COLS = 7, CELL = 100, TOP = 90, SVG_NS = "http://www.w3.org/2000/svg";
const SCORE_Y = 58, SCORE_Y_WITH_VALUE = 38;  // a search agent's share moves up to make room for its value

const $ = (id) => document.getElementById(id);
const el = {
  board: $("board"), pieces: $("pieces"), marks: $("marks"), columns: $("columns"), scores: $("scores"),
  holes: $("hole-cutouts"), status: $("status"), agent: $("agent"), first: $("first"), restart: $("restart"),
  back: $("back"), forward: $("forward"), ply: $("ply"), error: $("error"), agentName: $("agent-name"),
  legend: $("scores-legend"), timing: $("timing"), hint: $("hint"), hintNote: $("hint-note"),
};

const state = {
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
};

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

function render(opts = {}) {
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
  el.status.textContent = statusText(pos, live);
  el.status.dataset.status = pos.status;
  el.status.classList.toggle("history-view", !live);
  const total = state.positions.length - 1;
  el.ply.textContent = live ? `move ${total} (live)` : `move ${ply} / ${total}`;
  el.back.disabled = ply <= 0;
  el.forward.disabled = live;
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
}

async function newGame() {
  const game = ++state.game;
  const first = el.first.value;
  state.humanFirst = first === "random" ? Math.random() < 0.5 : first === "human";
  state.moves = []; state.positions = []; state.view = null; state.busy = true; state.lastAgentMs = null;
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
  if (state.view !== null || state.busy) return;
  const pos = state.positions[state.positions.length - 1];
  if (!pos || pos.status !== "human_turn" || !pos.legal.includes(c)) return;
  const game = state.game;
  const moves = state.moves.concat([c]);
  state.busy = true;
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
  render();
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
    const info = await api("/api/agents");
    state.agents = info.agents;
    for (const a of info.agents) {
      const opt = document.createElement("option");
      opt.value = a.name;
      opt.textContent = a.name;
      el.agent.appendChild(opt);
    }
    el.agent.value = info.default;
    state.hint = info.hint || { available: false, message: "no hint" };
    el.hint.disabled = !state.hint.available;
    el.hintNote.hidden = state.hint.available;
    el.hintNote.textContent = state.hint.available ? "" : state.hint.message;
    el.hint.addEventListener("change", () => render());
  } catch (e) {
    showError(`cannot reach the server: ${e.message}`);
    return;
  }
  await newGame();
}

init();
