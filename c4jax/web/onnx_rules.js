// A game of the static site whose rules are its ONNX models (c4jax.agents.rules_export: init takes
// `key` uint32[B, 2], step the state tensors `state.<leaf>` and `action` int32[B]; both return the
// new state `next.<leaf>`, legal_action_mask, observation, done, rewards, current_player), drawn as
// a grid (agents.json's `games` entry, c4jax.cli.website.grid_game).
//
// The game object has rules.js's interface, except that init() and step() return Promises: id,
// numActions, obsShape, init(), step(state, action), legal(state), observe(state),
// done(state) and the state fields current, terminated, truncated, rewards and obsType (the observation's
// ONNX element type); for drawing, title,
// sides, rows, cols, click ("cell" or "column"), board(state) (per cell row-major: 1 player 0's
// piece, -1 player 1's, 0 empty), cellOf(state, action) (the cell a move there fills), cells(state,
// action) ({to: [row, col]}) and actionName(state, action) ("a1" is the bottom left cell).

// `ort`: onnxruntime-web; `info`: the game's agents.json entry; `sessions`: {init, step} of its
// rules; `run(session, feeds)`: the page's queue of model calls (one at a time)
export function onnxGame(ort, id, info, sessions, run) {
  const stateNames = sessions.step.inputNames.filter((n) => n.startsWith("state."));
  const cells = info.rows * info.cols;
  const obsShape = info.planes ? [info.rows, info.cols, 2] : [info.rows, info.cols];

  function wrap(out) {
    const done = out.done.data[0] !== 0 && out.done.data[0] !== false;
    const truncated = out["next.truncated"] ? Boolean(out["next.truncated"].data[0]) : false;
    return {
      tensors: stateNames.map((n) => out[`next.${n.slice("state.".length)}`]),
      legalMask: Uint8Array.from(out.legal_action_mask.data, (x) => (x ? 1 : 0)),
      obs: out.observation.data,
      obsType: out.observation.type,
      current: Number(out.current_player.data[0]),
      rewards: Array.from(out.rewards.data),
      terminated: done && !truncated,
      truncated,
      done,
    };
  }

  const game = {
    id, title: info.title, sides: info.sides, rows: info.rows, cols: info.cols, click: info.click,
    numActions: info.click === "cell" ? cells : info.cols,
    obsShape,
    async init() {
      const key = new ort.Tensor("uint32", new Uint32Array(2), [1, 2]);
      return wrap(await run(sessions.init, { key }));
    },
    async step(s, action) {
      if (s.done) return s;
      const feeds = {};
      stateNames.forEach((n, i) => { feeds[n] = s.tensors[i]; });
      feeds.action = new ort.Tensor("int32", Int32Array.of(action), [1]);
      return wrap(await run(sessions.step, feeds));
    },
    legal(s) { return s.legalMask; },
    observe(s) { return s.obs; },
    done(s) { return s.done; },
    board(s) {
      const sign = s.current === 0 ? 1 : -1; // the observation is the player to move's
      return Int8Array.from({ length: cells }, (_, i) => sign * (info.planes ? s.obs[2 * i] - s.obs[2 * i + 1] : s.obs[i]));
    },
    cellOf(s, action) {
      if (info.click === "cell") return action;
      const b = game.board(s);
      let row = info.rows - 1;
      while (row >= 0 && b[row * info.cols + action] !== 0) row--;
      return row * info.cols + action; // where a piece dropped in the column lands
    },
    cells(s, action) { const cell = game.cellOf(s, action); return { to: [Math.floor(cell / info.cols), cell % info.cols] }; },
    actionName(s, action) {
      const cell = game.cellOf(s, action);
      const row = Math.floor(cell / info.cols), col = cell - row * info.cols;
      return `${String.fromCharCode(97 + col)}${info.rows - row}`;
    },
  };
  return game;
}
