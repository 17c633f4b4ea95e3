// c4jax play UI: vanilla JavaScript modules, no build step, no external resources. One page for
// the play server and for the static site of c4jax export-web: it asks only `engine` (engine.js
// beside it), the server's API over HTTP or, in the site, the same answers computed in the browser
// (onnxruntime-web); everything it shows works the same on both.
//
// The engine is stateless: every request carries the whole game (the game, the agent, the move
// list, who moved first). The page keeps the game's positions (each with its board, status, legal
// moves and the opponent's scores, as the engine computed them) so that ← / → can show any past
// position without a request; history is read-only and → on the last position returns to the
// live game. Whose turn it is always comes from the engine's positions (a player may move several
// times in a row).
//
// The page names no game: each game of the engine's agents() comes with its page description (board,
// pieces, how a move is clicked, texts), and board.js draws any of them. A link opens a position:
// /?agent=dqn&moves=3,3,4 (links.js).
"use strict";

import { Board, fmtScore, fmtValue, sameCell, scoreOf } from "./board.js";
import { engine } from "./engine.js";
import { openLink, positionLink } from "./links.js";

const $ = (id) => document.getElementById(id);
const el = {
  board: $("board"), status: $("status"), agent: $("agent"), first: $("first"), restart: $("restart"),
  back: $("back"), forward: $("forward"), ply: $("ply"), error: $("error"), agentName: $("agent-name"),
  legend: $("scores-legend"), timing: $("timing"), hint: $("hint"), hintNote: $("hint-note"),
  game: $("game"), gameChoice: $("game-choice"), gameTitle: $("game-title"), hintLabel: $("hint-label"),
  help: $("help"), recordWrap: $("record-wrap"), recordTitle: $("record-title"), record: $("record"),
  discHuman: $("disc-human"), discAgent: $("disc-agent"), youName: $("you-name"), share: $("share"),
  warming: $("warming"), link: $("link"), note: $("note"), undo: $("undo"), stats: $("stats"), pdn: $("pdn"),
  pdnBox: $("pdn-box"), mode: $("mode"), sims: $("sims"), simsValue: $("sims-value"), modeLabel: $("mode-label"),
  simsLabel: $("sims-label"),
};

export const state = {
  gameId: null,        // the game played (an id of GET /api/agents' games)
  page: null,          // its page description
  board: null,         // its Board
  games: [],           // GET /api/agents' games: [{id, name, agents, default, max_moves, page}]
  choice: {},          // the opponent last chosen in each game
  agents: [],          // [{name, kind, stochastic, scores_label}]
  game: 0,             // bumped on every restart: answers for an older game are dropped
  humanFirst: true,
  humanSide: "",       // the answer's human_side, where the game names its sides
  moves: [],
  positions: [],       // positions[ply]: the API's positions
  record: [],          // the answer's move list, where the game has one: [{number, side, by, text, plies}]
  squares: null,       // the answer's number of each cell, where the game numbers them
  view: null,          // null: the live position; else the ply shown
  busy: false,
  selected: null,      // [row, col] of the piece picked (moves from a cell to a cell)
  lastAgentMs: null,
  hint: { available: false, message: "" },  // GET /api/agents' hint: is the solver on offer, for which game
  hints: new Map(),    // moves "3,2,4" -> the /api/hint answer for that position
  notice: "",          // why the page's link could not be opened: shown in the status line until the next move
  loading: false,      // GET /api/agents' loading: the server is still loading agents (the menus grow)
  warmingUp: [],       // GET /api/agents' warming_up: the agents not compiled yet (a first move waits)
  mode: "det",         // the agent's moves (det / sto) and simulations, for agents that offer them (the site's)
  sims: 0,
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ texts

// The chosen opponent's description ({name, kind, scores_label}); the name is what requests send.
export const currentAgent = () => state.agents.find((a) => a.name === el.agent.value)
  || { name: el.agent.value, kind: "other", scores_label: `the agent's score for each ${state.page.action}` };

// The agent as requests and links name it: NAME[@simulations][:det|:sto], each part only when the
// agent offers it and it is not its default.
export function agentSpec() {
  const a = currentAgent();
  if (!a.mode) return a.name;
  const sims = a.search && state.sims !== a.search.simulations ? `@${state.sims}` : "";
  return `${a.name}${sims}${state.mode !== a.mode ? `:${state.mode}` : ""}`;
}

// The chosen agent's own settings; then those of ``spec`` (a link's name of it) where it gives them.
export function chooseAgent(spec = "") {
  const a = currentAgent(), m = String(spec).match(/(?:@(\d+))?(?::(det|sto))?$/i);
  el.modeLabel.hidden = !a.mode;
  el.simsLabel.hidden = !a.search;
  if (!a.mode) return;
  state.mode = el.mode.value = (m[2] || a.mode).toLowerCase();
  if (a.search) setSims(Math.min(m[1] ? Number(m[1]) : a.search.simulations, 1024));
}

function setSims(n) {
  state.sims = n;
  el.sims.value = el.simsValue.textContent = String(n);
}

const seats = () => {
  const s = state.page.seats;
  return s ? (state.humanFirst ? [s[0], s[1]] : [s[1], s[0]]) : null;
};

// A template of the page's texts filled in.
function say(template, pos = {}, extra = {}) {
  const g = state.games.find((x) => x.id === state.gameId) || {};
  const fill = { side: state.humanSide, agent: currentAgent().name, action: state.page.action, max: g.max_moves,
                 jumper: pos.jumper && state.squares ? state.squares[pos.jumper[0]][pos.jumper[1]] : "", ...extra };
  return (template || "").replace(/\{(\w+)\}/g, (_, k) => (fill[k] === undefined ? "" : String(fill[k])));
}

function statusText(pos, live) {
  const t = state.page.texts, name = currentAgent().name;
  const prefix = live ? "" : `Move ${pos.ply} of ${state.positions.length - 1} (history, read-only — → returns to the game): `;
  switch (pos.status) {
    case "human_turn":
      if (!live) return prefix + "you to move.";
      return say(pos.jumper && t.turn_jumper ? t.turn_jumper : t.turn, pos);
    case "agent_turn": return prefix + (live ? `${name} is thinking…` : `${name} to move.`);
    case "human_won": return prefix + say(t.won, pos);
    case "agent_won": return prefix + say(t.lost, pos);
    case "draw": return prefix + say(t.draw[pos.draw_reason || ""] || t.draw[""], pos);
    default: return prefix + pos.status;
  }
}

function legendText(pos) {
  const agent = currentAgent(), t = state.page.texts, values = Array.isArray(pos.values);
  if (!pos.scores) return say(t.no_scores, pos);
  const side = !pos.to_move ? "" : (pos.to_move === "human"
    ? `Shown on your turn: what ${agent.name} would score each ${state.page.action} if it were to move here`
    : `${agent.name}'s scores for the position it is to move in`)
    + (values ? " (its values are for the player to move here: + good for them, − bad)." : ".");
  return say(t.legend, pos, { label: agent.scores_label, side });
}

// ------------------------------------------------------------------ rendering

export function render(opts = {}) {
  const live = state.view === null;
  const ply = live ? state.positions.length - 1 : state.view;
  const pos = state.positions[ply];
  if (!pos || !state.board) return;
  const playable = live && !state.busy && pos.status === "human_turn";
  if (playable && state.page.click === "from_to" && state.selected === null) {
    const from = new Set(pos.legal_moves.map((m) => String(m.from)));
    if (from.size === 1) state.selected = pos.legal_moves[0].from;  // one piece can move: it is picked
  }
  state.board.draw(pos, { playable, selected: state.selected, seats: seats(), squares: state.squares,
                          agent: currentAgent(), animate: opts.animate });
  el.status.textContent = state.notice ? `${state.notice} ${statusText(pos, live)}` : statusText(pos, live);
  el.status.dataset.status = pos.status;
  el.status.dataset.notice = state.notice ? "true" : "false";
  el.status.classList.toggle("history-view", !live);
  el.link.href = positionLink(ply);
  const total = state.positions.length - 1;
  el.ply.textContent = live ? `move ${total} (live)` : `move ${ply} / ${total}`;
  el.back.disabled = ply <= 0;
  el.forward.disabled = live;
  Object.assign(el.board.dataset, { busy: String(state.busy), ply: String(ply), live: String(live), status: pos.status });
  const s = seats();
  el.discHuman.className = `disc human${s ? ` ${s[0]}` : ""}`;
  el.discAgent.className = `disc agent${s ? ` ${s[1]}` : ""}`;
  el.youName.textContent = state.humanSide ? `you (${state.humanSide})` : "you";
  el.legend.textContent = legendText(pos);
  el.legend.title = "The opponent's scores for the position shown, from the point of view of the player to move.";
  el.timing.textContent = state.lastAgentMs === null ? "" : `(answered in ${state.lastAgentMs.toFixed(1)} ms)`;
  renderRecord(ply);
  renderHint(pos);
  renderStats(ply);
  // the game as data for tests and scripts: its moves, the agent's plies, what can be played
  const last = state.positions[total], cols = state.page.cols;
  const square = (cell) => (state.squares ? state.squares[cell[0]][cell[1]] : `${cell}`);
  Object.assign(el.board.dataset, {
    actions: state.moves.join(","), agentPlies: agentPlies().join(","), done: String(!last.to_move),
    legal: playable ? pos.legal_moves.map((m) => m.action).join(",") : "",
    win: (pos.winning_cells || []).map(([r, c]) => r * cols + c).sort((a, b) => a - b).join(","),
    moves: playable && state.page.click === "from_to"
      ? pos.legal_moves.map((m) => `${square(m.from)}:${square(m.to)}:${m.action}`).join(",") : "" });
  el.pdnBox.hidden = !state.page.record;
  if (state.page.record) el.pdn.textContent = recordText(last);
}

// The plies the agent played (position k's player to move made move k).
const agentPlies = () => state.positions.slice(0, state.moves.length).flatMap((p, k) => (p && p.to_move === "agent" ? [k] : []));

// A move's name: its notation where the engine gives one, its column, or its cell ("a1" bottom left).
const moveName = (m) => m.pdn || (state.page.click === "column" ? String(m.to[1] + 1)
  : `${String.fromCharCode(97 + m.to[1])}${state.page.rows - m.to[0]}`);

// The agent's numbers of its last move up to the position shown: a table of its best-scored moves.
function renderStats(ply) {
  el.stats.replaceChildren();
  let k = Math.min(ply, state.moves.length) - 1;
  while (k >= 0 && !(state.positions[k] && state.positions[k].to_move === "agent")) k--;
  const pos = state.positions[k];
  if (!pos || !pos.scores) return;
  const agent = currentAgent(), values = Array.isArray(pos.values);
  const rows = pos.legal_moves.map((m, i) => [m, scoreOf(state.page, pos, m, i),
    values ? (state.page.scores === "legal" ? pos.values[i] : pos.values[m.action]) : null])
    .filter((r) => r[1] !== null).sort((a, b) => b[1] - a[1]).slice(0, 10);
  const figure = document.createElement("figure"), caption = document.createElement("figcaption");
  const played = pos.legal_moves.find((m) => m.action === state.moves[k]);
  caption.textContent = `${agent.name}: ${agent.scores_label}${values ? ", and its searched values" : ""}, where it played ${played ? moveName(played) : "?"}`;
  const table = document.createElement("table");
  const line = (cells, tag) => {
    const tr = document.createElement("tr");
    for (const c of cells) { const td = document.createElement(tag); td.textContent = c; tr.appendChild(td); }
    table.appendChild(tr);
  };
  line([state.page.action, "score", ...(values ? ["value"] : [])], "th");
  for (const [m, x, v] of rows) line([moveName(m), fmtScore(x, agent.kind), ...(values ? [fmtValue(v)] : [])], "td");
  figure.append(caption, table);
  el.stats.appendChild(figure);
}

// The record as text with its players and result, as portable game notations write it: [Black "you"] ... 1. 11-15 *
function recordText(pos) {
  const sides = state.page.sides, human = state.humanFirst ? 0 : 1;
  const won = { human_won: human, agent_won: 1 - human }[pos.status];
  const result = won === undefined ? (pos.status === "draw" ? "1/2-1/2" : "*") : won === 0 ? "1-0" : "0-1";
  const tags = sides.map((s, i) => `[${s.charAt(0).toUpperCase()}${s.slice(1)} "${i === human ? "you" : currentAgent().name}"]`);
  const moves = state.record.map((m, k) => (m.side === sides[0] || k === 0
    ? `${m.number}.${m.side === sides[0] ? "" : " ..."} ` : "") + m.text);
  return `${tags.join("\n")}\n[Result "${result}"]\n\n${moves.join(" ")} ${result}`;
}

// A short note under the status line (why a click plays nothing), gone after a moment.
function note(text) {
  el.note.textContent = text;
  el.note.hidden = false;
  clearTimeout(note.timer);
  note.timer = setTimeout(() => { el.note.hidden = true; }, 1500);
}

// The move list, one line per move number; the move that led to the position shown is marked.
function renderRecord(ply) {
  el.record.replaceChildren();
  let line = null, number = null;
  for (const m of state.record) {
    if (m.number !== number || line === null) {
      number = m.number;
      line = document.createElement("li");
      line.value = number;
      el.record.appendChild(line);
    }
    const span = document.createElement("span");
    span.textContent = m.text;
    span.className = `move ${m.by}`;
    span.dataset.plies = m.plies.join("-");
    if (m.plies[0] < ply && ply - 1 <= m.plies[1]) span.classList.add("current");
    if (m.plies[0] >= ply) span.classList.add("future");
    line.appendChild(span);
    line.appendChild(document.createTextNode(" "));
  }
}

// ------------------------------------------------------------------ the solver's hint

const hintHere = () => state.hint.game === state.gameId && state.page.score_place === "header";
const movesKey = (ply) => state.moves.slice(0, ply).join(",");

function renderHint(pos) {
  // The perfect player's verdict per column, on the human's turn, when asked for and on offer.
  if (!hintHere()) return;
  const want = state.hint.available && el.hint.checked && pos.to_move === "human";
  const answer = want ? state.hints.get(movesKey(pos.ply)) : undefined;
  state.board.drawHint(answer);
  if (want && !answer) fetchHint(pos.ply);
}

async function fetchHint(ply) {
  const key = movesKey(ply), game = state.game;
  if (state.hints.has(key)) return;
  state.hints.set(key, undefined);  // one request per position
  try {
    const answer = await engine.hint({ moves: state.moves.slice(0, ply) });
    state.hints.set(key, answer);
    if (game === state.game) render();
  } catch (e) {
    state.hints.delete(key);
    showError(`hint: ${e.message}`);
  }
}

export function showError(message) {
  el.error.hidden = !message;
  el.error.textContent = message || "";
}

// ------------------------------------------------------------------ the engine's answers

// A request of the game played: the whole game so far.
export const gameBody = (moves, humanFirst, agent = agentSpec()) =>
  ({ game: state.gameId, agent, moves, human_first: humanFirst });

// What the engine says meanwhile (a model loading, the agent thinking), while game ``game`` is on.
export const sayer = (game) => (text) => { if (game === state.game) el.status.textContent = text; };

function accept(answer) {
  // The answer's positions start at the last position the request sent.
  for (const p of answer.positions) state.positions[p.ply] = p;
  state.positions.length = answer.moves.length + 1;
  state.moves = answer.moves;
  if (answer.agent_ms !== null) state.lastAgentMs = answer.agent_ms;
  state.record = answer.record || [];
  state.squares = answer.squares || null;
  state.humanSide = answer.human_side || "";
}

// Show an answer: the agent's moves one position at a time (a falling piece lands first).
export async function show(answer, game, started = null) {
  accept(answer);
  const count = answer.agent_moves ? answer.agent_moves.length : (answer.agent_move === null ? 0 : 1);
  if (state.page.drop) {
    if (started !== null) await sleep(Math.max(0, 420 - (performance.now() - started)));  // let the human's piece land
  } else if (count) {
    const full = state.positions, first = answer.moves.length - count;
    for (let k = first; k < full.length - 1; k++) {
      state.positions = full.slice(0, k + 1);
      render();
      await sleep(k === first ? 150 : 350);
      if (game !== state.game) return;
    }
    state.positions = full;
  }
  if (game !== state.game) return;
  state.busy = false;
  state.view = null;
  render({ animate: count > 0 });
}

// Start a fresh game of the chosen agent and seats.
export function reset(humanFirst) {
  state.humanFirst = humanFirst;
  state.moves = []; state.positions = []; state.record = []; state.view = null; state.lastAgentMs = null;
  state.selected = null; state.notice = ""; state.squares = null;
  showError("");
  el.agentName.textContent = currentAgent().name;
  renderRecord(0);
}

export async function newGame() {
  const game = ++state.game;
  const first = el.first.value;
  reset(first === "random" ? Math.random() < 0.5 : first === "human");
  state.busy = true;
  el.board.dataset.busy = "true";
  const t = state.page.texts;
  el.status.textContent = say(state.humanFirst ? t.start_human : t.start_agent, {},
                              { side: sidesOf(state.humanFirst) });
  try {
    await show(await engine.move(gameBody([], state.humanFirst), sayer(game)), game);
  } catch (e) {
    if (game !== state.game) return;
    state.busy = false;
    showError(e.message);
    el.board.dataset.busy = "false";
  }
}

// The name of the viewer's side before the first answer names it.
const sidesOf = (humanFirst) => state.page.sides[humanFirst ? 0 : 1];

async function play(move) {
  const pos = state.positions[state.positions.length - 1];
  const game = state.game;
  state.busy = true;
  state.selected = null;
  state.notice = "";
  showError("");
  // Show the human's move at once (the server confirms it).
  const board = pos.board.map((row) => row.slice());
  const [r, c] = move.to;
  board[r][c] = move.from ? board[move.from[0]][move.from[1]] : 1;
  if (move.from) board[move.from[0]][move.from[1]] = 0;
  if (move.captured) board[move.captured[0]][move.captured[1]] = 0;
  state.positions.push({ ...pos, ply: pos.ply + 1, board, marked: move.from ? [move.from, move.to] : [move.to],
                         taken: move.captured ? [move.captured] : [], winning_cells: [], jumper: null,
                         to_move: "agent", status: "agent_turn", legal: [], legal_moves: [],
                         scores: pos.scores && pos.scores.map(() => null), values: null });
  render({ animate: true });
  const started = performance.now();
  try {
    const answer = await engine.move(gameBody(state.moves.concat([move.action]), state.humanFirst), sayer(game));
    if (game !== state.game) return;
    await show(answer, game, started);
  } catch (e) {
    if (game !== state.game) return;
    state.positions.pop();
    state.busy = false;
    showError(e.message);
    render();
  }
}

// The human's turn at the live position, or null (a note says why a click plays nothing).
function liveTurn() {
  if (state.view !== null) return null;
  const pos = state.positions[state.positions.length - 1];
  if (state.busy) note(`wait: ${currentAgent().name} is still moving`);
  else if (pos && !pos.to_move) note("the game is over: RESTART starts another");
  return !state.busy && pos && pos.status === "human_turn" ? pos : null;
}

// Take back the human's last move and the agent's reply (the agent moves again where it is to move).
async function undo() {
  const game = ++state.game;
  let k = state.moves.length;
  while (k && state.positions[k - 1].to_move === "agent") k--;
  while (k && state.positions[k - 1].to_move === "human") k--;
  state.moves = state.moves.slice(0, k);
  state.positions.length = k + 1;
  state.record = state.record.filter((m) => m.plies[1] < k);
  Object.assign(state, { busy: false, view: null, selected: null, notice: "" });
  showError("");
  render();
  if (state.positions[k].status !== "agent_turn") return;
  state.busy = true;
  render();
  try {
    await show(await engine.move(gameBody(state.moves, state.humanFirst), sayer(game)), game);
  } catch (e) {
    if (game !== state.game) return;
    state.busy = false;
    showError(e.message);
    render();
  }
}

function onColumn(c) {
  const pos = liveTurn();
  const move = pos && pos.legal_moves.find((m) => m.to[1] === c);
  if (move) play(move);
}

function onCell(r, c) {
  const pos = liveTurn();
  if (!pos) return;
  if (state.page.click !== "from_to") {
    const move = pos.legal_moves.find((m) => sameCell(m.to, [r, c]));
    if (move) play(move);
    return;
  }
  const move = state.selected && pos.legal_moves.find((m) => sameCell(m.from, state.selected) && sameCell(m.to, [r, c]));
  if (move) { play(move); return; }
  if (pos.legal_moves.some((m) => sameCell(m.from, [r, c]))) state.selected = [r, c];
  else if (!pos.jumper) state.selected = null;
  render();
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

// ------------------------------------------------------------------ games and menus

// Show game ``id`` (its board, menu and help); false if the server does not offer it.
export function switchGame(id) {
  const g = state.games.find((x) => x.id === id);
  if (!g) return false;
  if (state.gameId !== null) state.choice[state.gameId] = el.agent.value;
  const changed = state.gameId !== id;
  state.gameId = id;
  state.page = g.page;
  el.game.value = id;
  state.agents = g.agents;
  fillAgents(g.agents, state.choice[id] || g.default);
  chooseAgent();
  if (state.loading || state.warmingUp.length) refreshAgents(false);  // the warming note of this game
  if (changed || !state.board) state.board = new Board(el.board, g.page, onColumn, onCell);
  el.board.dataset.game = id;
  el.board.setAttribute("aria-label", `${g.name} board`);
  const hint = hintHere();
  el.hintLabel.hidden = !hint;
  el.hintNote.hidden = !hint || state.hint.available;
  el.help.textContent = say(g.page.texts.help);
  el.recordWrap.hidden = !g.page.record;
  el.recordTitle.textContent = g.page.record || "";
  el.gameTitle.textContent = g.name;
  document.title = `c4jax — play ${g.name}`;
  return true;
}

// The game menu: a choice for every game on offer.
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

// The opponent menu: the agents of the game played, ``chosen`` selected.
function fillAgents(agents, chosen) {
  el.agent.replaceChildren();
  for (const a of agents) {
    const opt = document.createElement("option");
    opt.value = opt.textContent = a.name;
    el.agent.appendChild(opt);
  }
  el.agent.value = chosen;
}

// ------------------------------------------------------------------ agents warming up
//
// Right after start-up the server answers while it loads and compiles its agents: GET /api/agents
// lists the agents loaded so far (``loading``: more to come) and those of its warm set not compiled yet
// (``warming_up``; a first move against one waits for its compile). The page says which, and asks
// again every few seconds until all are ready, adding the agents and games that arrived.

const WARMING_POLL_MS = 2000;

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
export async function refreshAgents(again = true) {
  let info;
  try {
    info = await engine.agents();
  } catch (e) {
    if (again) setTimeout(refreshAgents, WARMING_POLL_MS);
    return;
  }
  state.games = info.games;
  fillGames();
  const g = state.games.find((x) => x.id === state.gameId);
  if (g && g.agents.map((a) => a.name).join() !== state.agents.map((a) => a.name).join()) {
    state.agents = g.agents;
    fillAgents(g.agents, el.agent.value || state.choice[state.gameId] || g.default);
  } else if (g) state.agents = g.agents;
  showWarming(info);
  if (again && (state.loading || state.warmingUp.length)) setTimeout(refreshAgents, WARMING_POLL_MS);
}

// ------------------------------------------------------------------ start-up

async function init() {
  el.restart.addEventListener("click", newGame);
  el.agent.addEventListener("change", () => { chooseAgent(); newGame(); });
  el.first.addEventListener("change", newGame);
  el.undo.addEventListener("click", undo);
  el.mode.addEventListener("change", () => { state.mode = el.mode.value; render(); });
  el.sims.addEventListener("input", () => setSims(Number(el.sims.value)));
  el.sims.addEventListener("change", () => render());
  el.share.addEventListener("click", async () => {  // the link, absolute, to the clipboard
    try {
      await navigator.clipboard.writeText(el.link.href);
      el.share.textContent = "Copied";
      setTimeout(() => { el.share.textContent = "Copy link"; }, 1500);
    } catch { el.link.focus(); }
  });
  el.back.addEventListener("click", () => step(-1));
  el.forward.addEventListener("click", () => step(+1));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowLeft") { step(-1); e.preventDefault(); }
    else if (e.key === "ArrowRight") { step(+1); e.preventDefault(); }
    else if (state.page && state.page.keys && /^[1-9]$/.test(e.key) && Number(e.key) <= state.page.cols)
      onColumn(Number(e.key) - 1);
  });
  try {
    let info = await engine.agents();
    while (!info.agents.length && info.loading) {  // just started: wait for the first agents
      showWarming(info);
      await sleep(500);
      info = await engine.agents();
    }
    state.hint = info.hint || { available: false, message: "no hint" };
    el.hint.disabled = !state.hint.available;
    el.hintNote.textContent = state.hint.available ? "" : state.hint.message;
    el.hint.addEventListener("change", () => render());
    state.games = info.games;
    fillGames();
    showWarming(info);
    switchGame(state.games[0].id);
    el.game.addEventListener("change", () => { if (switchGame(el.game.value)) newGame(); });
    el.agent.addEventListener("change", () => { state.choice[state.gameId] = el.agent.value; });
  } catch (e) {
    showError(e.message);
    el.status.textContent = "No agents";
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

init();
