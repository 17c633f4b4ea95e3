// The play server's engine: its HTTP API (c4jax/play/server.py). The page (app.js) asks only an
// `engine`: this one, or in the static site of c4jax export-web the engine.js that computes the same
// answers in the browser (c4jax/web/engine.js). Each call is async and answers the API's JSON.
"use strict";

async function api(path, body) {
  let res;
  try {
    res = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new Error(`cannot reach the server: ${e.message}`);
  }
  let data;
  try { data = await res.json(); } catch { data = { error: `HTTP ${res.status}` }; }
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

export const engine = {
  agents: () => api("/api/agents"),  // the games, each with its page description and agents
  move: (body) => api("/api/move", body),  // the agent's moves after the body's, their positions
  history: (body) => api("/api/history", body),  // every position of the body's moves
  hint: (body) => api("/api/hint", body),  // the solver's verdict on each move
};
