// AlphaZero's search in the page: the PUCT search with proven wins and losses of
// c4jax.agents.search.run(rule="puct", solve=True), which agents.load("alphazero@N") plays, with
// the network (onnxruntime-web) as the evaluator. Tested against the JAX agent by
// tests/web/test_export_web_browser.py.
//
// One simulation walks from the root to an edge that has no node yet (PUCT: the children's Q
// rescaled to [0, 1] between the lowest and highest of the node's value and its visited children's
// Q, plus c(N) * prior * sqrt(N) / (1 + n), c(N) = c_init + log((N + c_base + 1) / c_base)), steps
// the game along it, evaluates the new node (one network call for the leaf: the JAX search also
// evaluates one leaf per simulation, and evaluating several leaves together would change which
// edges later simulations pick) and backs its value up the path, negated at every change of the
// player to move. A finished position is worth 0 (its result is the reward of the edge into it);
// reaching it again backs up that result once more. Proven values (MCTS-Solver): an edge that ends
// the game is proven by its result, another one by its child; a node is a proven win when one legal
// edge is, a proven loss when all its edges are expanded and proven lost; a proven node backs up
// its exact value. Selection takes a proven win first and a proven loss last. Exact ties pick the
// lowest action (the JAX search breaks them with 1e-7 of noise).

function newNode(state, legal, prior, value, parent, action) {
  const n = legal.length;
  return { state, legal, prior, visits: 1, value, parent, action, proven: 0,
           kids: new Array(n).fill(null), kidVisits: new Int32Array(n), kidReward: new Float64Array(n),
           kidDiscount: new Float64Array(n), kidValue: new Float64Array(n) };
}

function q(node, a) { return node.kidReward[a] + node.kidDiscount[a] * node.kidValue[a]; }

// each edge's proven value for the node's player to move (0: not proven or no child yet)
function edgeProven(node) {
  const out = new Float64Array(node.legal.length);
  for (let a = 0; a < out.length; a++) {
    const kid = node.kids[a];
    if (!kid) continue;
    out[a] = node.kidDiscount[a] === 0 ? Math.sign(node.kidReward[a]) : node.kidDiscount[a] * kid.proven;
  }
  return out;
}

function nodeProven(node) {
  const edges = edgeProven(node);
  let anyLegal = false, allLost = true;
  for (let a = 0; a < edges.length; a++) {
    if (!node.legal[a]) continue;
    anyLegal = true;
    if (edges[a] > 0) return 1;
    if (!(edges[a] < 0)) allLost = false;
  }
  return anyLegal && allLost ? -1 : 0;
}

function select(node, cInit, cBase, solve) {
  const n = node.visits;
  const c = cInit + Math.log((n + cBase + 1) / cBase);
  let lo = node.value, hi = node.value;
  for (let a = 0; a < node.legal.length; a++) {
    if (node.kidVisits[a] > 0) { const v = q(node, a); lo = Math.min(lo, v); hi = Math.max(hi, v); }
  }
  const proven = solve ? edgeProven(node) : null;
  let best = -1, bestScore = -Infinity;
  for (let a = 0; a < node.legal.length; a++) {
    if (!node.legal[a]) continue;
    const visits = node.kidVisits[a];
    const value = visits > 0 ? (q(node, a) - lo) / Math.max(hi - lo, 1e-8) : 0;
    let score = value + Math.sqrt(n) * c * node.prior[a] / (visits + 1);
    if (solve && proven[a] > 0) score = 2e9;
    else if (solve && proven[a] < 0) score -= 1e3;
    if (score > bestScore) { bestScore = score; best = a; }
  }
  return best;
}

// evaluate(state) -> Promise<{prior: probabilities over the actions (0 on illegal ones), value}>
// for an unfinished state, the value for its player to move in [-1, 1].
export async function search(game, evaluate, root, simulations, { cInit, cBase, solve = true, onProgress } = {}) {
  const rootEval = await evaluate(root);
  const tree = newNode(root, game.legal(root), rootEval.prior, rootEval.value, null, -1);
  for (let sim = 0; sim < simulations; sim++) {
    let node = tree, action = -1;
    for (;;) {
      if (game.done(node.state)) { action = -1; break; } // a finished position: back up its result again
      action = select(node, cInit, cBase, solve);
      if (!node.kids[action]) break;
      node = node.kids[action];
    }
    let leaf = node;
    if (action >= 0) {
      const before = node.state;
      const after = await game.step(before, action); // a Promise for a game of onnx_rules.js
      const done = game.done(after);
      const reward = after.rewards[before.current] || 0; // +0 for a -0
      const discount = done ? 0 : after.current === before.current ? 1 : -1;
      let prior, value = 0;
      if (done) prior = new Float64Array(game.numActions);
      else ({ prior, value } = await evaluate(after));
      leaf = newNode(after, game.legal(after), prior, value, node, action);
      node.kids[action] = leaf;
      node.kidReward[action] = reward;
      node.kidDiscount[action] = discount;
    } else {
      leaf.value = (leaf.value * leaf.visits) / (leaf.visits + 1);
      leaf.visits += 1;
    }
    backUp(leaf, solve);
    if (onProgress) onProgress(sim + 1);
  }
  return summary(tree, solve);
}

function backUp(leaf, solve) {
  let value = leaf.value, index = leaf;
  while (index.parent) {
    if (solve && index.proven !== 0) value = index.proven;
    const parent = index.parent, a = index.action;
    const count = parent.visits;
    value = parent.kidReward[a] + parent.kidDiscount[a] * value;
    parent.value = (parent.value * count + value) / (count + 1);
    parent.visits = count + 1;
    parent.kidValue[a] = index.value;
    parent.kidVisits[a] += 1;
    if (solve) parent.proven = nodeProven(parent);
    index = parent;
  }
}

// the root's statistics: visit counts, the shares a move is taken from (proven wins if any, else the
// moves not proven lost), Q-values (exact where proven) and the move played: the most visited of
// those, ties to the higher Q, then the lower action
function summary(root, solve) {
  const n = root.legal.length;
  const proven = solve ? edgeProven(root) : new Float64Array(n);
  const counts = Array.from(root.kidVisits, (v, a) => (root.legal[a] ? v : 0));
  const legal = Array.from(root.legal, (x) => x === 1);
  const win = legal.map((l, a) => l && proven[a] > 0);
  const alive = legal.map((l, a) => l && !(proven[a] < 0));
  const take = win.some(Boolean) ? win : alive.some(Boolean) ? alive : legal;
  let kept = counts.map((c, a) => (take[a] ? c : 0));
  if (kept.reduce((s, x) => s + x, 0) === 0) {
    const visited = counts.reduce((s, x) => s + x, 0) > 0;
    kept = take.map((t) => (t && visited ? 1 : 0));
  }
  const total = kept.reduce((s, x) => s + x, 0);
  const shares = kept.map((k) => (total > 0 ? k / total : 0));
  const qvalues = counts.map((c, a) => (c > 0 ? (proven[a] !== 0 ? proven[a] : q(root, a)) : 0));
  let best = -1;
  for (let a = 0; a < n; a++) {
    if (!take[a]) continue;
    if (best < 0 || counts[a] > counts[best] || (counts[a] === counts[best] && qvalues[a] > qvalues[best])) best = a;
  }
  return { counts, shares, qvalues, proven: Array.from(proven), best,
           value: root.proven !== 0 ? root.proven : root.value };
}

// a move sampled from the visit counts of the shares (temperature 1), uniform u in [0, 1)
export function sampleVisits(result, u) {
  const weights = result.shares.map((s, a) => (s > 0 ? Math.max(result.counts[a], 1) : 0));
  const total = weights.reduce((s, x) => s + x, 0);
  let acc = 0;
  for (let a = 0; a < weights.length; a++) {
    acc += weights[a];
    if (weights[a] > 0 && u * total < acc) return a;
  }
  return result.best;
}
