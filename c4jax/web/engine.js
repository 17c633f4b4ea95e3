// The static site's engine (c4jax export-web): the play server's answers (c4jax/play/answers.py and
// the games' views) computed in the browser, so that the page (app.js) cannot tell it from the
// server's engine.js (fetch() to the play API): the games with their page descriptions, positions
// with board, status, legal moves and the agent's scores, the agent's moves. The rules are rules.js's
// (Connect Four, Checkers) or a game's exported ONNX rules (onnx_rules.js); the agents are the ONNX
// models of agents.json run by onnxruntime-web (WebAssembly, ../ort/), AlphaZero's search search.js's.
// Every file it loads is in the site's folder.
import * as ort from "../ort/ort.wasm.min.mjs";
import { GAMES as JS_GAMES } from "./rules.js";
import { onnxGame } from "./onnx_rules.js";
import { search, sampleVisits } from "./search.js";

ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = new URL("../ort/", import.meta.url).href;

const INPUTS = { connect_four: ["boards"], checkers: ["observations", "legal_action_mask"] };
const inputsOf = (g) => INPUTS[g] || INPUTS.checkers; // every other game's network: observations, legal actions
const ARRAYS = { int8: Int8Array, uint8: Uint8Array, bool: Uint8Array, int32: Int32Array, float32: Float32Array };
const RUNTIME = ["ort-wasm-simd-threaded.wasm"]; // the WebAssembly module ort.wasm.min.mjs loads
const GAMES = { ...JS_GAMES }; // and the games played by their ONNX rules, once loaded
let manifest = null;
const title = (g) => (manifest.games[g] || {}).name || g;
const agentsOf = (g) => manifest.agents.filter((a) => a.game === g);
const sessions = new Map(); // model file -> Promise<InferenceSession>
const loaded = new Set(); // model files whose session is ready
let queue = Promise.resolve(); // one model call at a time

// ---------------------------------------------------------------- models

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

async function fetchBytes(file, what, owner) {
  let response;
  try {
    response = await fetch(file);
  } catch (e) {
    throw new Error(`cannot read the ${what} ${file} of ${owner}: ${e.message}`);
  }
  if (!response.ok)
    throw new Error(`the ${what} file ${file} of ${owner} is missing (HTTP ${response.status}); rebuild the site with c4jax export-web`);
  return new Uint8Array(await response.arrayBuffer());
}

async function checkDigest(bytes, file, sha256, owner) {
  if (!(globalThis.crypto && crypto.subtle && sha256)) return;
  if (hex(await crypto.subtle.digest("SHA-256", bytes)) !== sha256)
    throw new Error(`${file} is not the file exported for ${owner} (its SHA-256 differs from agents.json): it was `
      + "changed or damaged; rebuild the site with c4jax export-web");
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

// The smallest ONNX model (y = Identity(x), float32[1]): creating its session as the page starts
// fetches and compiles onnxruntime's WebAssembly while agents.json and the first model are fetched
const RUNTIME_PROBE = Uint8Array.from(atob("CAcSADo3ChAKAXgSAXkiCElkZW50aXR5EgF3Wg8KAXgSCgoICAESBAoCCAFiDwoBeRIKCggIARIECgIIAUIECgAQDQ=="),
  (c) => c.charCodeAt(0));
let runtimeStarted = false;
function startRuntime() {
  if (runtimeStarted) return;
  runtimeStarted = true;
  createSession(RUNTIME_PROBE, { executionProviders: ["wasm"] }).catch(() => {}); // a failure: the model's own session says why
}

// a session of a model file; a failure names the runtime's missing file, else the model as damaged
async function session(bytes, options, files) {
  try {
    return await createSession(bytes, { executionProviders: ["wasm"], ...options });
  } catch (e) {
    for (const file of RUNTIME) {
      let ok = false;
      try { ok = (await fetch(`ort/${file}`, { method: "HEAD" })).ok; } catch { ok = false; }
      if (!ok) throw new Error(`the WebAssembly runtime ort/${file} is missing, so no model can run; rebuild the site with c4jax export-web`);
    }
    throw new Error(`${files} is not a readable ONNX model (${String(e.message || e).split("\n")[0].slice(0, 160)}); `
      + "the file is damaged: rebuild the site with c4jax export-web");
  }
}

// the model of an agent, with the weights it shares with other models of its game (entry.data:
// ONNX external data, each file checked before the model is built from it)
async function loadModel(entry) {
  const data = entry.data || [];
  const [bytes, ...shared] = await Promise.all([
    fetchBytes(entry.file, "model", entry.name), ...data.map((d) => fetchBytes(d.file, "weights", entry.name))]);
  performance.mark(`c4web:fetched:${entry.file}`); // the timeline experiments/bench_export_web.py reads
  for (const [i, d] of data.entries()) await checkDigest(shared[i], d.file, d.sha256, entry.name);
  const externalData = data.map((d, i) => ({ path: d.file.split("/").pop(), data: shared[i] }));
  const made = await session(bytes, { externalData }, `${[entry.file, ...data.map((d) => d.file)].join(" with ")} of ${entry.name}`);
  performance.mark(`c4web:session:${entry.file}`);
  const want = inputsOf(entry.game);
  if (made.inputNames.join() !== want.join()) {
    const other = Object.keys(INPUTS).find((g) => INPUTS[g].join() === made.inputNames.join());
    throw new Error(`${entry.file} is ${other ? `a ${title(other)} model` : "not a c4jax model"}, not one of `
      + `${title(entry.game)} (inputs ${made.inputNames.join(", ")}); ${entry.name} cannot play with it: rebuild the site with c4jax export-web`);
  }
  if (entry.search && !made.outputNames.includes("value"))
    throw new Error(`${entry.file} has no value output, which ${entry.name}'s search needs; rebuild the site`);
  await checkDigest(bytes, entry.file, entry.sha256, entry.name);
  return made;
}

// the agent's model; `say` tells the page while it loads
function model(entry, say) {
  if (!sessions.has(entry.file)) {
    const p = loadModel(entry);
    p.then(() => loaded.add(entry.file), () => sessions.delete(entry.file)); // a failed load is tried again next time
    sessions.set(entry.file, p);
  }
  if (say && !loaded.has(entry.file)) say(`loading ${entry.name}'s model…`);
  return sessions.get(entry.file);
}

function runQueued(s, feeds) { // one model call at a time (the networks and rules share the runtime)
  const run = queue.then(() => s.run(feeds));
  queue = run.catch(() => {});
  return run;
}

// the network on a batch of states: scores float32[B * A] (-inf on illegal actions), value float32[B]
async function runNet(entry, made, states) {
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
  const out = await runQueued(made, feeds);
  return { scores: out.scores.data, value: out.value ? out.value.data : null };
}

// A search's prior from a network's scores: its probabilities, or softmax of a Q network's values
function prior(entry, scores) {
  if (entry.output !== "q") return Float64Array.from(scores, (x) => (Number.isFinite(x) ? x : 0));
  const top = Math.max(...Array.from(scores).filter(Number.isFinite));
  const w = Float64Array.from(scores, (x) => (Number.isFinite(x) ? Math.exp(x - top) : 0));
  const total = w.reduce((s, x) => s + x, 0);
  return w.map((x) => x / total);
}

const searching = (a) => Boolean(a.entry.search) && a.sims > 0;

// The agent `a` ({entry, sims, mode}) to move in `state`: its search's move (an AlphaZero network with
// sims > 0; scores: the visit shares, values: the Q-values) or its network's (the best legal score, the
// lowest action on ties, or sampled from the scores)
async function decide(a, state, say) {
  const game = GAMES[a.entry.game];
  const made = await model(a.entry, say);
  if (say) say(`${a.entry.name} is thinking${searching(a) ? ` (${a.sims} simulations)` : ""}…`);
  if (searching(a)) {
    const evaluate = async (s) => {
      const { scores, value } = await runNet(a.entry, made, [s]);
      return { prior: prior(a.entry, scores), value: value[0] };
    };
    const { c_init: cInit, c_base: cBase, solve } = a.entry.search;
    const r = await search(game, evaluate, state, a.sims, { cInit, cBase, solve });
    return { action: a.mode === "sto" ? sampleVisits(r, Math.random()) : r.best, scores: r.shares, values: r.qvalues, counts: r.counts };
  }
  const scores = Array.from((await runNet(a.entry, made, [state])).scores);
  const legal = game.legal(state);
  let action = -1;
  if (a.mode === "sto") {
    const w = scores.map((x, i) => (legal[i] ? Math.max(x, 1e-30) : 0));
    let u = Math.random() * w.reduce((s, x) => s + x, 0);
    for (let i = 0; i < w.length && action < 0; i++) if (w[i] > 0 && (u -= w[i]) < 0) action = i;
  }
  if (action < 0) for (let i = 0; i < legal.length; i++) if (legal[i] && (action < 0 || scores[i] > scores[action])) action = i;
  return { action, scores, values: null };
}

// ---------------------------------------------------------------- requests and positions

// agents.json's agent of `text` (NAME[@simulations][:det|:sto], as the page's links name it) in game `g`
function agentOf(g, text) {
  const m = String(text ?? "").trim().match(/^(.*?)(?:@(\d+))?(?::(det|sto))?$/i);
  const name = m[1].toLowerCase();
  const entry = agentsOf(g).find((a) => a.name.toLowerCase() === name || a.name.toLowerCase() === `${g}/${name}`);
  if (!entry) throw new Error(`this site has no ${title(g)} agent ${JSON.stringify(m[1])}`);
  return { entry, sims: entry.search ? Math.min(m[2] ? Number(m[2]) : entry.search.simulations, 1024) : 0,
           mode: m[3] ? m[3].toLowerCase() : entry.mode };
}

async function replay(game, moves) {
  const states = [await game.init()];
  for (const [i, a] of moves.entries()) {
    const s = states[i];
    if (game.done(s)) throw new Error(`move ${i} (action ${a}): the game is already over after ${i} moves`);
    if (!(Number.isInteger(a) && a >= 0 && a < game.numActions && game.legal(s)[a]))
      throw new Error(`illegal move ${i}: action ${a} is not legal there`);
    states.push(await game.step(s, a));
  }
  return states;
}

const number = (x) => (Number.isFinite(x) ? Number(x.toPrecision(7)) : null);

// A position as the server's views give it, for a viewer playing `human` (0 moves first)
function position(game, page, states, moves, ply, human) {
  const s = states[ply], over = game.done(s), flip = game.rotate && human === 0;
  const at = ([r, c]) => (flip ? [game.rows - 1 - r, game.cols - 1 - c] : [r, c]);
  const cells = game.board(s), sign = human === 0 ? 1 : -1;
  const board = Array.from({ length: game.rows }, (_, r) => Array.from({ length: game.cols }, (_, c) => {
    const [y, x] = at([r, c]);
    return sign * cells[y * game.cols + x];
  }));
  let status = s.current === human ? "human_turn" : "agent_turn";
  if (over) status = s.rewards[human] > 0 ? "human_won" : s.rewards[human] < 0 ? "agent_won" : "draw";
  const legal = game.legal(s).reduce((out, x, a) => (x ? [...out, a] : out), []);
  const move = (t, a) => {
    const c = game.cells(t, a);
    return c.from ? { action: a, pdn: game.actionName(t, a), from: at(c.from), to: at(c.to), captured: c.captured && at(c.captured) }
      : { action: a, to: at(c.to) };
  };
  const last = ply ? move(states[ply - 1], moves[ply - 1]) : null;
  return { ply, board, status, to_move: over ? null : status === "human_turn" ? "human" : "agent",
           side: over ? null : page.sides[s.current], draw_reason: status === "draw" && game.drawReason ? game.drawReason(s) : null,
           last_move: last, legal, legal_moves: legal.map((a) => move(s, a)),
           marked: !last ? [] : last.from ? [last.from, last.to] : [last.to], taken: last && last.captured ? [last.captured] : [],
           winning_cells: over && game.winCells ? game.winCells(s).map(at) : [],
           jumper: game.jumperCell && game.jumperCell(s) ? at(game.jumperCell(s)) : null, scores: null, values: null };
}

// one row of numbers over the actions as the page shows it: per action, or per legal move
function numbers(page, pos, row) {
  if (!row) return null;
  if (page.scores === "legal") return pos.legal.map((a) => number(row[a]));
  const legal = new Set(pos.legal);
  return Array.from(row, (x, a) => (legal.has(a) ? number(x) : null));
}

function request(body) {
  const info = manifest.games[body.game];
  if (!info || !agentsOf(body.game).length) throw new Error(`this site has no game ${JSON.stringify(body.game)}`);
  if (!Array.isArray(body.moves)) throw new Error("'moves' must be a list of actions");
  return { id: body.game, game: GAMES[body.game], page: info.page, a: agentOf(body.game, body.agent),
           moves: body.moves.slice(), human: body.human_first ? 0 : 1 };
}

// The answer of POST /api/move (`play`: the agent moves until the human is to move or the game is
// over) or /api/history; `say(text)` tells the page what is going on (the model loading, the thinking)
async function answer(body, play, say) {
  const { id, game, page, a, moves, human } = request(body);
  const states = await replay(game, moves);
  const n = moves.length, known = {}, agentMoves = [];
  let agentMs = null;
  const t = performance.now();
  while (play && !game.done(states[states.length - 1]) && states[states.length - 1].current !== human) {
    const s = states[states.length - 1];
    const d = await decide(a, s, say);
    known[states.length - 1] = d;
    agentMoves.push(d.action);
    moves.push(d.action);
    states.push(await game.step(s, d.action));
  }
  if (agentMoves.length) { agentMs = Math.round((performance.now() - t) * 1e3) / 1e3; performance.mark("c4web:moved"); }
  const first = play ? n : 0;
  const positions = states.slice(first).map((_, k) => position(game, page, states, moves, first + k, human));
  // the agent's scores where it did not move: its network's (a search runs only where the agent moves)
  const open = positions.filter((p) => !game.done(states[p.ply]) && !known[p.ply]);
  if (open.length && !searching(a)) {
    const { scores } = await runNet(a.entry, await model(a.entry, say), open.map((p) => states[p.ply]));
    open.forEach((p, i) => { known[p.ply] = { scores: scores.slice(i * game.numActions, (i + 1) * game.numActions), values: null }; });
  }
  for (const p of positions) {
    const k = known[p.ply];
    if (game.done(states[p.ply])) p.scores = page.scores === "legal" ? [] : new Array(game.numActions).fill(null);
    else if (k) { p.scores = numbers(page, p, k.scores); p.values = numbers(page, p, k.values); }
  }
  const record = [];
  let count = 0;
  moves.forEach((m, ply) => {
    const s = states[ply], name = game.actionName(s, m), prev = record[record.length - 1];
    if (game.joins && ply && states[ply - 1].current === s.current) { // a multi-jump goes on
      prev.text += name.slice(name.indexOf("x"));
      prev.plies[1] = ply;
      return;
    }
    if (s.current === 0 || !record.length) count++;
    record.push({ number: count, side: page.sides[s.current], by: s.current === human ? "human" : "agent", text: name, plies: [ply, ply] });
  });
  const last = positions[positions.length - 1];
  const grid = game.numbers && game.numbers();
  return { game: id, agent: a.entry.name, human_first: human === 0, human_side: page.sides[human] || "", moves, record,
           agent_move: agentMoves.length ? agentMoves[0] : null, agent_moves: agentMoves, agent_ms: agentMs,
           status: last.status, to_move: last.to_move, positions,
           squares: grid ? Array.from({ length: game.rows }, (_, r) => Array.from({ length: game.cols }, (_, c) =>
             (game.rotate && human === 0 ? grid[(game.rows - 1 - r) * game.cols + game.cols - 1 - c] : grid[r * game.cols + c]))) : null };
}

// ---------------------------------------------------------------- the site

// agents.json, and the rules of the games that rules.js does not write (each file checked by its SHA-256)
async function load() {
  const response = await fetch("agents.json").catch((e) => ({ ok: false, status: e.message }));
  if (!response.ok) throw new Error(`cannot read the site's agents.json (HTTP ${response.status}); rebuild the site with c4jax export-web`);
  const read = await response.json();
  for (const [id, info] of Object.entries(read.games)) {
    if (GAMES[id] || !info.rules) continue;
    const owner = `the rules of ${info.name}`, made = {};
    for (const which of ["init", "step"]) {
      const { file, sha256 } = info.rules[which];
      const bytes = await fetchBytes(file, "rules", owner);
      await checkDigest(bytes, file, sha256, owner);
      made[which] = await session(bytes, {}, file);
    }
    GAMES[id] = onnxGame(ort, id, info, made, runQueued);
  }
  manifest = window.c4web.ui.manifest = read;
}

const describe = (e, page) => ({
  name: e.name, mode: e.mode, stochastic: e.mode === "sto", search: e.search ? { simulations: e.search.simulations } : null,
  kind: e.search ? "search" : e.output === "q" ? "q" : "policy",
  scores_label: e.search ? `its search's share of each ${page.action} (its network's probability with 0 simulations)`
    : `${e.output === "q" ? "its Q-value" : "the probability"} of each ${page.action}`,
});

export const engine = {
  async agents() {
    performance.mark("c4web:start");
    startRuntime();
    if (!manifest) await load();
    const games = Object.entries(manifest.games).filter(([id]) => agentsOf(id).length && GAMES[id]).map(([id, g]) => ({
      id, name: g.name, page: g.page, max_moves: g.max_moves, agents: agentsOf(id).map((e) => describe(e, g.page)),
      default: agentsOf(id)[0].name, warming_up: [] }));
    return { games, agents: games[0].agents, loading: false, warming_up: [], hint: { available: false, game: null, message: "" } };
  },
  move: (body, say) => answer(body, true, say),
  history: (body, say) => answer(body, false, say),
  prepare: (body) => model(agentOf(body.game, body.agent).entry), // the agent's model loaded ahead of its first move
};

window.c4web = {
  ui: { manifest: null }, GAMES, createSession,
  // the page agent's move after `actions` of `game` (tests, benchmarks): {action, counts}
  async move(name, game, actions, { sims = 0, mode = "det" } = {}) {
    const states = await replay(GAMES[game], actions);
    const out = await decide({ ...agentOf(game, name), sims, mode }, states[states.length - 1]);
    return { action: out.action, counts: out.counts || null };
  },
};
