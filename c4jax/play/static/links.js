// c4jax play UI: links to a position.
//
// /?agent=dqn&moves=3,3,4 opens the position after those moves against that agent (the menu's
// names; an alias such as "dqn" works as in the API; NAME@N:sto sets the simulations and mode of an
// agent that offers them, as the static site's do). moves: the game's actions, as /api/history
// takes them; first=human|agent: who moved first (default: you take the side to move there);
// game=<id>: the game (the server's first game otherwise). A link that cannot be opened (an
// unknown game or agent, a malformed move list, an illegal move) is said in the status line, and
// a new game starts from the start position instead. c4jax/play/links.py writes these links.
"use strict";

import { agentSpec, chooseAgent, gameBody, newGame, render, reset, sayer, show, state, switchGame } from "./app.js";
import { engine } from "./engine.js";

const LINK_KEYS = ["agent", "moves", "first"];
const $ = (id) => document.getElementById(id);

// The link of the position shown (its first ``ply`` moves), with this game's agent and seats.
export function positionLink(ply) {
  const q = new URLSearchParams();
  if (state.gameId !== state.games[0].id) q.set("game", state.gameId);
  q.set("agent", agentSpec());
  q.set("moves", state.moves.slice(0, ply).join(","));
  q.set("first", state.humanFirst ? "human" : "agent");
  return `?${q.toString().replace(/%2C/g, ",").replace(/%3A/g, ":").replace(/%40/g, "@").replace(/%2F/g, "/")}`;
}

function linkMoves(text) {
  if (text === null || text.trim() === "") return [];
  const parts = text.split(",").map((x) => x.trim());
  if (!parts.every((x) => /^[0-9]{1,4}$/.test(x)))
    throw new Error(`moves=${text.slice(0, 60)} is not a comma-separated list of ${state.page.action}s (their numbers)`);
  return parts.map(Number);
}

export async function openLink(params) {
  let problem = null;
  const wanted = params.get("game");
  const status = $("status");
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
  else status.textContent = state.notice;
  status.dataset.notice = "true";
}

// Open the position of a link's params; throws what is wrong with it.
async function showLink(params) {
  const game = ++state.game;
  const agentMenu = $("agent"), firstMenu = $("first");
  state.busy = true;
  $("status").textContent = "Opening the link…";
  const moves = linkMoves(params.get("moves"));
  const first = params.get("first");
  if (first !== null && first !== "human" && first !== "agent")
    throw new Error(`first=${first.slice(0, 20)}: it must be 'human' or 'agent'`);
  if (first !== null) firstMenu.value = first;  // kept, as the agent, when the moves cannot be shown
  // the agent first (its menu name: the link may use an alias), so that a bad move list falls back to it
  const name = params.has("agent") ? params.get("agent") : agentMenu.value;
  const known = name.replace(/(?:@\d+)?(?::(?:det|sto))?$/i, "");  // a menu name (with the site's @N:mode): chosen
  if (state.agents.some((a) => a.name === known)) { agentMenu.value = state.choice[state.gameId] = known; chooseAgent(name); }
  const say = sayer(game);
  const agent = (await engine.history(gameBody([], true, name), say)).agent;
  agentMenu.value = agent;
  chooseAgent(name);
  state.choice[state.gameId] = agent;
  // who moved first: as the link says, else the side to move there (by the moves' parity, then as the replay says)
  let humanFirst = first !== null ? first === "human" : moves.length % 2 === 0;
  let answer = await engine.history(gameBody(moves, humanFirst), say);
  if (first === null && answer.to_move === "agent") {
    humanFirst = !humanFirst;
    answer = await engine.history(gameBody(moves, humanFirst), say);
  }
  if (game !== state.game) return;
  firstMenu.value = humanFirst ? "human" : "agent";
  reset(humanFirst);
  await show(answer, game);
  if (answer.to_move !== "agent" || game !== state.game) return;
  state.busy = true;  // the agent is to move there (the link says who moved first): it plays
  render();
  const reply = await engine.move(gameBody(moves, humanFirst), say);
  if (game !== state.game) return;
  await show(reply, game);
}
