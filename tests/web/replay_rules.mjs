// Replays games with the site's JS rules (c4jax/web/rules.js) for tests/web/test_rules.py.
// stdin: {"game": id, "rules": null | {quietLimit, maxSteps} (Checkers), "games": [{"start": null | [cur, opp, kings, player], "actions": [...]}, ...]}
// stdout: per game and per state after each action (the start included): legal actions, player to
// move, terminated, truncated, rewards and the observation, as flat lists.
import { readFileSync } from "node:fs";
import { GAMES, makeCheckers } from "../../c4jax/web/rules.js";

const input = JSON.parse(readFileSync(0, "utf8"));
const game = input.rules ? makeCheckers(input.rules) : GAMES[input.game];
const out = input.games.map(({ start, actions }) => {
  let s = start ? game.fromBoard(start[0], start[1], start[2], 0, start[3]) : game.init();
  const rows = { legal: [], current: [], terminated: [], truncated: [], rewards: [], obs: [] };
  const record = () => {
    const legal = game.legal(s);
    rows.legal.push([...legal.keys()].filter((a) => legal[a]));
    rows.current.push(s.current);
    rows.terminated.push(s.terminated);
    rows.truncated.push(s.truncated);
    rows.rewards.push(s.rewards);
    rows.obs.push(Array.from(game.observe(s)));
  };
  record();
  for (const a of actions) { s = game.step(s, a); record(); }
  return rows;
});
process.stdout.write(JSON.stringify(out));
