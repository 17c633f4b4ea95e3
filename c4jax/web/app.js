// The page of the static site (c4jax export-web): play Connect Four and Checkers (rules.js) and the
// games of agents.json's `games` (their rules' ONNX models, onnx_rules.js) against the agents listed
// in agents.json, their ONNX models run by onnxruntime-web (WebAssembly) from ./ort/. Every
// file it loads is in this folder. Links: ?game=checkers&agent=NAME&moves=A,B,C&first=human|agent,
// as the Python play UI's (c4jax.play.links).
import * as ort from "./ort/ort.wasm.min.mjs";
import { GAMES as JS_GAMES } from "./rules.js";
import { onnxGame } from "./onnx_rules.js";
import { search, sampleVisits } from "./search.js";

ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = new URL("./ort/", import.meta.url).href;

const TITLES = { connect_four: "Connect Four", checkers: "Checkers" };
const PLAYER_NAMES = { connect_four: ["red", "yellow"], checkers: ["black", "white"] };
const INPUTS = { connect_four: ["boards"], checkers: ["observations", "legal_action_mask"] };
const GAMES = { ...JS_GAMES }; // and the games of agents.json's `games`, once their rules are loaded
const title = (g) => TITLES[g] || (GAMES[g] && GAMES[g].title) || g;
const playerNames = (g) => PLAYER_NAMES[g] || GAMES[g].sides;
const inputsOf = (g) => INPUTS[g] || INPUTS.checkers; // every other game's network: observations, legal actions
const ARRAYS = { int8: Int8Array, uint8: Uint8Array, bool: Uint8Array, int32: Int32Array, float32: Float32Array };
const RUNTIME = ["ort-wasm-simd-threaded.wasm"]; // the WebAssembly module ort.wasm.min.mjs loads
const NOTE_MS = 1500; // how long a short note ("Copied", "wait ...") stays
const $ = (id) => document.getElementById(id);

class PageError extends Error {}

const ui = {
  manifest: null, gameId: "connect_four", agent: null, mode: "det", sims: 0, humanFirst: true,
  states: [], actions: [], movers: [], agentPlies: [], busy: false, generation: 0, selected: null,
  lastInfo: null, seed: 12345, started: false,
};
const sessions = new Map(); // model file -> Promise<InferenceSession>
const loaded = new Set(); // model files whose session is ready
let queue = Promise.resolve(); // one network call at a time

// ---------------------------------------------------------------- models

function hex(buffer) { return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join(""); }

async function fetchBytes(file, what, entry) {
  let response;
  try {
    response = await fetch(file);
  } catch (e) {
    throw new PageError(`cannot read the ${what} ${file} of ${entry.name}: ${e.message}`);
  }
  if (!response.ok) {
    throw new PageError(`the ${what} file ${file} of ${entry.name} is missing (HTTP ${response.status}); `
      + "rebuild the site with c4jax export-web");
  }
  return new Uint8Array(await response.arrayBuffer());
}

async function checkDigest(bytes, file, sha256, entry) {
  if (!(globalThis.crypto && crypto.subtle && sha256)) return;
  const digest = hex(await crypto.subtle.digest("SHA-256", bytes));
  if (digest !== sha256) {
    throw new PageError(`${file} is not the file exported for ${entry.name} (its SHA-256 differs from `
      + "agents.json): it was changed or damaged; rebuild the site with c4jax export-web");
  }
}

// onnxruntime-web mounts a session's external data files while that session is created, in one table
// that every session shares and that is emptied when a creation ends: creations that overlapped would
// remove each other's files, so they run one after another
let creating = Promise.resolve();
function createSession(bytes, options) {
  const next = creating.then(() => ort.InferenceSession.create(bytes, options));
  creating = next.catch(() => {});
  return next;
}

// the model of an agent, with the weights it shares with other models of its game (entry.data:
// ONNX external data, each file checked before the model is built from it)
async function loadModel(entry) {
  const data = entry.data || [];
  const [bytes, ...shared] = await Promise.all([
    fetchBytes(entry.file, "model", entry), ...data.map((d) => fetchBytes(d.file, "weights", entry))]);
  performance.mark(`c4web:fetched:${entry.file}`); // the timeline experiments/bench_export_web.py reads
  for (const [i, d] of data.entries()) await checkDigest(shared[i], d.file, d.sha256, entry);
  const externalData = data.map((d, i) => ({ path: d.file.split("/").pop(), data: shared[i] }));
  let session;
  try {
    session = await createSession(bytes, { executionProviders: ["wasm"], externalData });
  } catch (e) {
    const runtime = await missingRuntime();
    if (runtime) throw new PageError(runtime);
    const why = String(e.message || e).split("\n")[0].slice(0, 160);
    const files = [entry.file, ...data.map((d) => d.file)].join(" with ");
    throw new PageError(`${files} of ${entry.name} is not a readable ONNX model (${why}); `
      + "the file is damaged: rebuild the site with c4jax export-web");
  }
  performance.mark(`c4web:session:${entry.file}`);
  const want = inputsOf(entry.game);
  if (session.inputNames.join() !== want.join()) {
    const other = Object.keys(INPUTS).find((g) => INPUTS[g].join() === session.inputNames.join());
    throw new PageError(`${entry.file} is ${other ? `a ${title(other)} model` : "not a c4jax model"}, `
      + `not one of ${title(entry.game)} (inputs ${session.inputNames.join(", ")}); ${entry.name} cannot play `
      + "with it: rebuild the site with c4jax export-web");
  }
  if (entry.search && !session.outputNames.includes("value")) {
    throw new PageError(`${entry.file} has no value output, which ${entry.name}'s search needs; rebuild the site`);
  }
  await checkDigest(bytes, entry.file, entry.sha256, entry);
  return session;
}

// the WebAssembly files of onnxruntime-web in ./ort/: a message when one is missing, else null
async function missingRuntime() {
  for (const file of RUNTIME) {
    let ok = false;
    try { ok = (await fetch(`ort/${file}`, { method: "HEAD" })).ok; } catch { ok = false; }
    if (!ok) {
      return `the WebAssembly runtime ort/${file} is missing, so no model can run; `
        + "rebuild the site with c4jax export-web";
    }
  }
  return null;
}

// one model call at a time (the page's networks and rules share the WebAssembly runtime)
function runQueued(session, feeds) {
  const run = queue.then(() => session.run(feeds));
  queue = run.catch(() => {});
  return run;
}

// the games of agents.json's `games`, played by their ONNX rules (each file checked by its SHA-256)
async function loadRules(manifest) {
  for (const [id, info] of Object.entries(manifest.games || {})) {
    const entry = { name: `the rules of ${info.title}` };
    const sessions = {};
    for (const which of ["init", "step"]) {
      const { file, sha256 } = info.rules[which];
      const bytes = await fetchBytes(file, "rules", entry);
      await checkDigest(bytes, file, sha256, entry);
      try {
        sessions[which] = await createSession(bytes, { executionProviders: ["wasm"] });
      } catch (e) {
        const runtime = await missingRuntime();
        if (runtime) throw new PageError(runtime);
        throw new PageError(`${file} is not a readable ONNX model (${String(e.message || e).split("\n")[0].slice(0, 160)}); `
          + "rebuild the site with c4jax export-web");
      }
    }
    GAMES[id] = onnxGame(ort, id, info, sessions, runQueued);
  }
}

function model(entry) {
  if (!sessions.has(entry.file)) {
    const p = loadModel(entry);
    p.then(() => loaded.add(entry.file), () => sessions.delete(entry.file)); // a failed load is tried again next time
    sessions.set(entry.file, p);
  }
  return sessions.get(entry.file);
}

// the network on a batch of states: scores float32[B * A] (-inf on illegal actions), value float32[B]
async function runNet(entry, session, states) {
  const game = GAMES[entry.game];
  const size = game.obsShape.reduce((a, b) => a * b, 1);
  const type = states[0].obsType || "int8";
  const obs = new ARRAYS[type](states.length * size);
  states.forEach((s, i) => obs.set(game.observe(s), i * size));
  const feeds = {};
  if (entry.game === "connect_four") {
    feeds.boards = new ort.Tensor("int8", obs, [states.length, ...game.obsShape]);
  } else {
    feeds.observations = new ort.Tensor(type, obs, [states.length, ...game.obsShape]);
    const legal = new Uint8Array(states.length * game.numActions);
    states.forEach((s, i) => legal.set(game.legal(s), i * game.numActions));
    feeds.legal_action_mask = new ort.Tensor("bool", legal, [states.length, game.numActions]);
  }
  const out = await runQueued(session, feeds);
  return { scores: out.scores.data, value: out.value ? out.value.data : null };
}

function mulberry32(seed) { // the page's own random numbers (sampled moves), reproducible per game
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
let random = mulberry32(ui.seed);

// A search's prior from a network's scores: its probabilities, or softmax of a Q network's values
// (0 on illegal actions, whose scores are -inf).
function prior(entry, scores) {
  if (entry.output !== "q") return Float64Array.from(scores, (x) => (Number.isFinite(x) ? x : 0));
  const top = Math.max(...Array.from(scores).filter(Number.isFinite));
  const w = Float64Array.from(scores, (x) => (Number.isFinite(x) ? Math.exp(x - top) : 0));
  const total = w.reduce((s, x) => s + x, 0);
  return w.map((x) => x / total);
}

// The agent's move in `state`: its search's (an AlphaZero network with sims > 0) or its network's
// (the best legal score, the lowest action on ties, or sampled from the scores).
export async function agentMove(entry, state, { sims = 0, mode = "det", onProgress } = {}) {
  const game = GAMES[entry.game];
  const session = await model(entry);
  if (entry.search && sims > 0) {
    const evaluate = async (s) => {
      const { scores, value } = await runNet(entry, session, [s]);
      return { prior: prior(entry, scores), value: value[0] };
    };
    const result = await search(game, evaluate, state, sims,
      { cInit: entry.search.c_init, cBase: entry.search.c_base, solve: entry.search.solve, onProgress });
    return { action: mode === "sto" ? sampleVisits(result, random()) : result.best, search: result };
  }
  const { scores } = await runNet(entry, session, [state]);
  const legal = game.legal(state);
  let action = -1;
  if (mode === "sto") {
    const w = Array.from(scores, (x, a) => (legal[a] ? Math.max(x, 1e-30) : 0));
    const total = w.reduce((s, x) => s + x, 0);
    let u = random() * total;
    for (let a = 0; a < w.length && action < 0; a++) if (w[a] > 0 && (u -= w[a]) < 0) action = a;
  }
  if (action < 0) {
    for (let a = 0; a < legal.length; a++) if (legal[a] && (action < 0 || scores[a] > scores[action])) action = a;
  }
  return { action, scores: Array.from(scores) };
}

// ---------------------------------------------------------------- the game

const game = () => GAMES[ui.gameId];
const current = () => ui.states[ui.states.length - 1];
const agentsOf = (gameId) => ui.manifest.agents.filter((a) => a.game === gameId);
const humanPlayer = () => (ui.humanFirst ? 0 : 1);

function showError(message) {
  $("error").hidden = !message;
  $("error").textContent = message || "";
}

// a new game after `actions` (a link's moves); false when an undo or another new game came meanwhile
async function newGame(actions = []) {
  const generation = ++ui.generation;
  const start = await game().init();
  if (generation !== ui.generation) return false;
  ui.states = [start];
  ui.actions = [];
  ui.movers = [];
  ui.agentPlies = [];
  ui.selected = null;
  ui.lastInfo = null;
  random = mulberry32(ui.seed);
  for (const a of actions) {
    const s = current();
    if (game().done(s) || !game().legal(s)[a]) throw new PageError(`the link's move ${a} is not legal there`);
    if (!(await play(a, false))) return false;
  }
  return true;
}

// the move `action` played in the current position; false when an undo or a new game came meanwhile
// (a game of onnx_rules.js steps asynchronously)
async function play(action, byAgent) {
  const s = current();
  const generation = ui.generation;
  const next = await game().step(s, action);
  if (generation !== ui.generation) return false;
  ui.movers.push(s.current);
  if (byAgent) ui.agentPlies.push(ui.actions.length);
  ui.actions.push(action);
  ui.states.push(next);
  ui.selected = null;
  return true;
}

async function agentTurn() {
  const s = current();
  if (game().done(s) || s.current === humanPlayer() || !ui.agent) return;
  const generation = ui.generation;
  setBusy(true);
  const sims = ui.agent.search ? ui.sims : 0;
  try {
    if (!loaded.has(ui.agent.file)) {
      $("status").textContent = `loading ${ui.agent.name}'s model...`;
      await model(ui.agent);
      if (generation !== ui.generation) return;
    }
    $("status").textContent = `${ui.agent.name} is thinking${sims ? ` (${sims} simulations)` : ""}...`;
    const onProgress = sims ? (n) => { if (n % 64 === 0) $("status").textContent = `${ui.agent.name}: ${n} / ${sims} simulations`; } : null;
    const out = await agentMove(ui.agent, s, { sims, mode: ui.mode, onProgress });
    if (generation !== ui.generation) return;
    if (!(await play(out.action, true))) return;
    performance.mark("c4web:moved");
    ui.lastInfo = { ...out, state: s };
    showError("");
  } catch (e) {
    if (generation !== ui.generation) return;
    showError(e instanceof PageError ? e.message : `the agent could not move: ${e.message || e}`);
    setBusy(false);
    render();
    $("status").textContent = `${ui.agent.name} cannot play (see the message above); choose another opponent`;
    return;
  }
  setBusy(false);
  render();
  await agentTurn(); // a multi-jump goes on
}

function setBusy(busy) {
  ui.busy = busy;
  document.body.dataset.busy = String(busy);
  $("board").dataset.busy = String(busy);
}

function note(text) { // a short note under the status line, gone after NOTE_MS
  const box = $("note");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(note.timer);
  note.timer = setTimeout(() => { box.hidden = true; }, NOTE_MS);
}

async function humanMove(action) {
  if (ui.busy) { note(`wait: ${ui.agent ? ui.agent.name : "the agent"} is still moving`); return; }
  if (game().done(current())) { note("the game is over: New game starts another"); return; }
  if (current().current !== humanPlayer()) return;
  if (!game().legal(current())[action]) return;
  setBusy(true); // until the move is played (a game of onnx_rules.js steps asynchronously)
  const played = await play(action, false);
  setBusy(false);
  if (!played) return;
  render();
  agentTurn();
}

function undo() {
  ui.generation++;
  setBusy(false);
  const pop = () => {
    ui.states.pop();
    ui.actions.pop();
    ui.movers.pop();
    while (ui.agentPlies.length && ui.agentPlies[ui.agentPlies.length - 1] >= ui.actions.length) ui.agentPlies.pop();
  };
  const last = () => ui.movers[ui.movers.length - 1];
  // the agent's reply, then the human's last move (every jump of it)
  while (ui.actions.length && last() !== humanPlayer()) pop();
  while (ui.actions.length && last() === humanPlayer()) pop();
  ui.selected = null;
  ui.lastInfo = null;
  render();
  agentTurn();
}

// ---------------------------------------------------------------- drawing

function statusText() {
  const s = current();
  const names = playerNames(ui.gameId);
  if (game().done(s)) {
    if (s.truncated) return `Game over: draw (the ${s.plies}-ply cap)`;
    const winner = s.rewards[0] > s.rewards[1] ? 0 : s.rewards[1] > s.rewards[0] ? 1 : -1;
    if (winner < 0) return "Game over: draw";
    return winner === humanPlayer() ? `Game over: you win (${names[winner]})` : `Game over: ${ui.agent.name} wins (${names[winner]})`;
  }
  const who = s.current === humanPlayer() ? `your move (${names[s.current]})` : `${ui.agent ? ui.agent.name : "the agent"} to move`;
  return ui.gameId === "checkers" && s.jumper ? `${who}: the same piece jumps on` : who[0].toUpperCase() + who.slice(1);
}

// the cells (row * 7 + column) of every line of four of one player in Connect Four's `cells`
function fours(cells) {
  const out = new Set();
  for (let r = 0; r < 6; r++) {
    for (let c = 0; c < 7; c++) {
      for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
        const line = [0, 1, 2, 3].map((k) => [r + k * dr, c + k * dc]);
        if (line.some(([y, x]) => y < 0 || y > 5 || x < 0 || x > 6)) continue;
        const v = cells[r * 7 + c];
        if (v && line.every(([y, x]) => cells[y * 7 + x] === v)) line.forEach(([y, x]) => out.add(y * 7 + x));
      }
    }
  }
  return out;
}

function renderConnectFour(board) {
  const s = current();
  board.className = "c4";
  const last = ui.actions.length ? ui.actions[ui.actions.length - 1] : -1;
  const lastRow = last >= 0 ? game().landing(ui.states[ui.states.length - 2], last) : -1;
  const won = fours(s.cells);
  for (let c = 0; c < 7; c++) { // the column numbers of the move list
    const label = document.createElement("span");
    label.className = "colnum";
    label.textContent = String(c + 1);
    label.addEventListener("click", () => humanMove(c));
    board.append(label);
  }
  for (let r = 0; r < 6; r++) {
    for (let c = 0; c < 7; c++) {
      const cell = document.createElement("button");
      const v = s.cells[r * 7 + c];
      cell.className = `cell${v ? ` p${v - 1}` : ""}${r === lastRow && c === last ? " last" : ""}`
        + `${won.has(r * 7 + c) ? " win" : ""}`;
      cell.dataset.col = String(c);
      cell.setAttribute("aria-label", `column ${c + 1}`);
      cell.addEventListener("click", () => humanMove(c));
      board.append(cell);
    }
  }
}

// a game of onnx_rules.js: its grid, a piece per cell (player 0's X, player 1's O: the sides' initials);
// a click on a cell plays it, or its column
function renderGrid(board) {
  const g = game(), s = current();
  board.className = "grid";
  board.style.gridTemplateColumns = `repeat(${g.cols}, 3rem)`;
  const cells = g.board(s);
  const last = ui.actions.length ? g.cellOf(ui.states[ui.states.length - 2], ui.actions[ui.actions.length - 1]) : -1;
  cells.forEach((v, i) => {
    const cell = document.createElement("button");
    cell.type = "button";
    const row = Math.floor(i / g.cols), col = i - row * g.cols;
    const action = g.click === "cell" ? i : col;
    cell.className = `cell${v ? ` p${v > 0 ? 0 : 1}` : ""}${i === last ? " last" : ""}`;
    cell.textContent = v ? g.sides[v > 0 ? 0 : 1].slice(0, 1) : "";
    cell.dataset.action = String(action);
    cell.setAttribute("aria-label", `${g.click} ${String.fromCharCode(97 + col)}${g.rows - row}`);
    cell.addEventListener("click", () => humanMove(action));
    board.append(cell);
  });
}

function squareCell(n) { // printed row and column of PDN square n, square 1 top left (white at the bottom)
  const row = (n - 1) >> 2;
  return [row, 2 * ((n - 1) % 4) + (row % 2 === 0 ? 1 : 0)];
}

function checkersMoves(s) { // legal actions by start square: {from: [{to, action}]}
  const out = {};
  const legal = game().legal(s);
  for (let a = 0; a < legal.length; a++) {
    if (!legal[a]) continue;
    const [from, to] = game().actionName(s, a).split(/[-x]/).map(Number);
    (out[from] ||= []).push({ to, action: a });
  }
  return out;
}

function renderCheckers(board) {
  const s = current();
  board.className = "checkers";
  const pieces = game().pieces(s);
  const moves = humanPlayer() === s.current && !ui.busy ? checkersMoves(s) : {};
  const targets = new Map((moves[ui.selected] || []).map((m) => [m.to, m.action]));
  const lastMove = ui.actions.length ? game().actionName(ui.states[ui.states.length - 2], ui.actions[ui.actions.length - 1]) : "";
  const moved = new Set(lastMove.split(/[-x]/).map(Number));
  const flip = humanPlayer() === 0; // the human's side at the bottom
  const cells = new Array(64).fill(0);
  for (let n = 1; n <= 32; n++) {
    const [r, c] = squareCell(n);
    cells[flip ? (7 - r) * 8 + 7 - c : r * 8 + c] = n;
  }
  cells.forEach((n) => {
    const sq = document.createElement("button");
    sq.type = "button";
    sq.className = `sq ${n ? "dark" : "light"}`;
    if (!n) { sq.disabled = true; board.append(sq); return; }
    sq.dataset.square = String(n);
    if (n === ui.selected) sq.classList.add("selected");
    if (targets.has(n)) sq.classList.add("target");
    if (moved.has(n)) sq.classList.add("moved");
    const num = document.createElement("span");
    num.className = "num";
    num.textContent = String(n);
    sq.append(num);
    if (pieces[n]) {
      const p = document.createElement("span");
      p.className = `piece p${pieces[n][0]}`;
      p.textContent = pieces[n][1] ? "K" : "";
      sq.append(p);
    }
    sq.addEventListener("click", () => {
      if (ui.busy || game().done(s)) { humanMove(-1); return; } // says why nothing moves
      if (targets.has(n)) { humanMove(targets.get(n)); return; }
      ui.selected = moves[n] ? n : null;
      render();
    });
    board.append(sq);
  });
  board.dataset.moves = Object.entries(moves).flatMap(([f, ms]) => ms.map((m) => `${f}:${m.to}:${m.action}`)).join(",");
}

function renderStats() {
  const info = ui.lastInfo;
  const box = $("stats");
  box.replaceChildren();
  if (!info) return;
  const name = (a) => game().actionName(info.state, a);
  const rows = [];
  if (info.search) {
    const r = info.search;
    const order = r.counts.map((c, a) => [c, a]).filter(([c, a]) => c > 0 || (r.shares[a] > 0)).sort((x, y) => y[0] - x[0]);
    for (const [c, a] of order.slice(0, 10)) rows.push([name(a), String(c), r.qvalues[a].toFixed(2)]);
    box.dataset.visits = r.counts.join(",");
    const head = `${ui.agent.name}'s search: visits and Q (value for it) of its moves; it played ${name(r.best)}`;
    box.append(table(head, ["move", "visits", "Q"], rows));
  } else if (info.scores) {
    const order = info.scores.map((x, a) => [x, a]).filter(([x]) => Number.isFinite(x)).sort((x, y) => y[0] - x[0]);
    for (const [x, a] of order.slice(0, 10)) rows.push([name(a), x.toFixed(3)]);
    const what = ui.agent.output === "q" ? "Q-value" : "probability";
    box.append(table(`${ui.agent.name}'s network: ${what} of its moves`, ["move", what], rows));
  }
}

function table(caption, head, rows) {
  const box = document.createElement("figure");
  const cap = document.createElement("figcaption");
  cap.textContent = caption;
  const t = document.createElement("table");
  box.append(cap, t);
  const tr = document.createElement("tr");
  head.forEach((h) => { const th = document.createElement("th"); th.textContent = h; tr.append(th); });
  t.append(tr);
  for (const row of rows) {
    const r = document.createElement("tr");
    row.forEach((v) => { const td = document.createElement("td"); td.textContent = v; r.append(td); });
    t.append(r);
  }
  return box;
}

// the moves as the players make them: a Checkers multi-jump is one move ("15x22x29")
function moveTexts() {
  const out = [];
  for (let i = 0; i < ui.actions.length; i++) {
    const name = game().actionName(ui.states[i], ui.actions[i]);
    const prev = out[out.length - 1];
    if (ui.gameId === "checkers" && i > 0 && ui.states[i].jumper && ui.movers[i] === ui.movers[i - 1]) {
      prev.text += name.slice(name.indexOf("x"));
    } else {
      out.push({ text: name, player: ui.movers[i] });
    }
  }
  return out;
}

function pdnText(moves) {
  const s = current();
  let result = "*";
  if (game().done(s)) result = s.rewards[0] > s.rewards[1] ? "1-0" : s.rewards[1] > s.rewards[0] ? "0-1" : "1/2-1/2";
  const players = ui.humanFirst ? ["you", ui.agent.name] : [ui.agent.name, "you"];
  const tags = `[Event "c4jax export-web"]\n[Black "${players[0]}"]\n[White "${players[1]}"]\n[Result "${result}"]\n`;
  const body = [];
  moves.forEach((m, i) => body.push(i % 2 === 0 ? `${i / 2 + 1}. ${m.text}` : m.text));
  return `${tags}\n${body.join(" ")} ${result}`;
}

// the agent as the links name it: NAME[@simulations][:det|:sto], each part only when not its default
function agentSpec() {
  const sims = ui.agent.search && ui.sims !== ui.agent.search.simulations ? `@${ui.sims}` : "";
  return `${ui.agent.name}${sims}${ui.mode !== ui.agent.mode ? `:${ui.mode}` : ""}`;
}

function link() {
  const params = new URLSearchParams();
  if (ui.gameId !== "connect_four") params.set("game", ui.gameId);
  params.set("agent", ui.agent ? agentSpec() : "");
  params.set("moves", ui.actions.join(","));
  params.set("first", ui.humanFirst ? "human" : "agent");
  return `${location.origin}${location.pathname}?${params.toString().replace(/%2C/g, ",").replace(/%2F/g, "/")
    .replace(/%40/g, "@").replace(/%3A/g, ":")}`;
}

function render() {
  const board = $("board");
  board.replaceChildren();
  board.removeAttribute("data-moves");
  board.style.gridTemplateColumns = "";
  if (ui.gameId === "connect_four") renderConnectFour(board);
  else if (ui.gameId === "checkers") renderCheckers(board);
  else renderGrid(board);
  board.dataset.busy = String(ui.busy);
  board.dataset.actions = ui.actions.join(",");
  board.dataset.agentPlies = ui.agentPlies.join(",");
  board.dataset.legal = Array.from(game().legal(current())).flatMap((x, a) => (x ? [a] : [])).join(",");
  board.dataset.done = String(game().done(current()));
  board.dataset.win = ui.gameId === "connect_four" ? [...fours(current().cells)].sort((a, b) => a - b).join(",") : "";
  const status = $("status");
  status.textContent = ui.busy ? status.textContent : statusText();
  status.classList.toggle("over", game().done(current()));
  const moves = moveTexts();
  $("moves").replaceChildren(...moves.map((m) => {
    const li = document.createElement("li");
    li.textContent = `${playerNames(ui.gameId)[m.player]}: ${m.text}`;
    return li;
  }));
  $("pdn-box").hidden = ui.gameId !== "checkers";
  if (ui.gameId === "checkers" && ui.agent) $("pdn").textContent = pdnText(moves);
  if (ui.agent) $("link").href = link();
  renderStats();
}

// ---------------------------------------------------------------- controls

function fillAgents() {
  const select = $("agent");
  select.replaceChildren(...agentsOf(ui.gameId).map((a) => new Option(a.name, a.name)));
  if (ui.agent && ui.agent.game === ui.gameId) select.value = ui.agent.name;
  chooseAgent(select.value);
}

function chooseAgent(name) {
  ui.agent = ui.manifest.agents.find((a) => a.name === name && a.game === ui.gameId) || null;
  if (!ui.agent) return;
  ui.mode = ui.agent.mode;
  $("mode").value = ui.mode;
  $("sims-label").hidden = !ui.agent.search;
  if (ui.agent.search) setSims(ui.agent.search.simulations);
  // loaded ahead of its first move; at start-up the agent's first move loads it (a link may choose another)
  if (ui.started) model(ui.agent).catch((e) => showError(e instanceof PageError ? e.message : String(e)));
}

function setSims(n) {
  ui.sims = n;
  $("sims").value = String(n);
  $("sims-value").textContent = String(n);
}

async function restart() { if (await newGame()) { render(); agentTurn(); } }

function wire() {
  $("game").replaceChildren(...Object.keys(GAMES).filter((g) => agentsOf(g).length)
    .map((g) => new Option(title(g), g)));
  if (!agentsOf(ui.gameId).length && $("game").value) ui.gameId = $("game").value; // a site without this game
  $("game").addEventListener("change", () => { ui.gameId = $("game").value; fillAgents(); restart(); });
  $("agent").addEventListener("change", () => { chooseAgent($("agent").value); restart(); });
  $("mode").addEventListener("change", () => { ui.mode = $("mode").value; render(); });
  $("side").addEventListener("change", () => { ui.humanFirst = $("side").value === "first"; restart(); });
  $("sims").addEventListener("input", () => setSims(Number($("sims").value)));
  $("sims").addEventListener("change", render);
  $("new").addEventListener("click", restart);
  $("undo").addEventListener("click", undo);
  $("share").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(link());
      $("share").textContent = "Copied";
      setTimeout(() => { $("share").textContent = "Copy link"; }, NOTE_MS);
    } catch { $("link").focus(); }
  });
}

// ?game=&agent=NAME[@N][:det|:sto]&moves=&first=
function openLink() {
  const q = new URLSearchParams(location.search);
  if (!["agent", "moves", "game", "first"].some((k) => q.has(k))) return [];
  const gameId = q.get("game") || "connect_four";
  if (!GAMES[gameId] || !agentsOf(gameId).length) throw new PageError(`this site has no game ${JSON.stringify(gameId)}`);
  ui.gameId = gameId;
  $("game").value = gameId;
  fillAgents();
  let mode = null, sims = null;
  let name = (q.get("agent") || "").trim();
  const m = name.match(/^(.*?)(?:@(\d+))?(?::(det|sto))?$/i);
  if (m) { name = m[1]; sims = m[2] ? Number(m[2]) : null; mode = m[3] ? m[3].toLowerCase() : null; }
  if (name) {
    const entry = agentsOf(gameId).find((a) => a.name.toLowerCase() === name.toLowerCase()
      || a.name.toLowerCase() === `${gameId}/${name.toLowerCase()}`);
    if (!entry) throw new PageError(`this site has no ${title(gameId)} agent ${JSON.stringify(name)}`);
    $("agent").value = entry.name;
    chooseAgent(entry.name);
  }
  if (mode) { ui.mode = mode; $("mode").value = mode; }
  if (sims !== null && ui.agent && ui.agent.search) setSims(Math.min(sims, 1024));
  const text = (q.get("moves") || "").trim();
  const actions = text ? text.split(",").map((x) => (/^\d+$/.test(x.trim()) ? Number(x) : NaN)) : [];
  if (actions.some(Number.isNaN)) throw new PageError(`the link's moves ${JSON.stringify(text)} are not a list of action numbers`);
  const first = q.get("first");
  if (first && first !== "human" && first !== "agent") throw new PageError(`the link's first=${first} is not human or agent`);
  return { actions, first };
}

async function start() {
  performance.mark("c4web:start");
  let manifest;
  try {
    const response = await fetch("agents.json");
    if (!response.ok) throw new PageError(`agents.json is missing (HTTP ${response.status})`);
    manifest = await response.json();
  } catch (e) {
    showError(`cannot read the site's agents.json: ${e.message}; rebuild the site with c4jax export-web`);
    $("status").textContent = "No agents";
    return;
  }
  ui.manifest = manifest;
  try {
    await loadRules(manifest);
  } catch (e) {
    showError(e instanceof PageError ? e.message : `cannot load a game's rules: ${e.message || e}`);
  }
  wire();
  fillAgents();
  let linked = [];
  try {
    linked = openLink();
  } catch (e) {
    showError(`${e.message}; a new game starts instead`);
  }
  try {
    if (linked.actions) {
      const gameNew = await game().init();
      let mover = gameNew.current;
      let s = gameNew;
      for (const a of linked.actions) { if (!game().done(s) && game().legal(s)[a]) s = await game().step(s, a); mover = s.current; }
      ui.humanFirst = linked.first ? linked.first === "human" : mover === 0;
      $("side").value = ui.humanFirst ? "first" : "second";
    }
    await newGame(linked.actions || []);
  } catch (e) {
    showError(`${e.message}; a new game starts instead`);
    await newGame();
  }
  setBusy(false);
  render();
  ui.started = true;
  if (ui.agent && current().current === humanPlayer()) { // the human moves first: load the agent meanwhile
    model(ui.agent).catch((e) => showError(e instanceof PageError ? e.message : String(e)));
  }
  agentTurn();
}

window.c4web = {
  ready: null, ui, GAMES, agentMove, createSession,
  // the page agent's move after `actions` of `gameId` (tests): {action, counts}
  async move(name, gameId, actions, { sims = 0, mode = "det" } = {}) {
    const entry = ui.manifest.agents.find((a) => a.name === name && a.game === gameId);
    let s = await GAMES[gameId].init();
    for (const a of actions) s = await GAMES[gameId].step(s, a);
    const out = await agentMove(entry, s, { sims, mode });
    return { action: out.action, counts: out.search ? out.search.counts : null };
  },
};
window.c4web.ready = start();
