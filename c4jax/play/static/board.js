// c4jax play UI: the board of any game, drawn from its page description (GET /api/agents' games'
// "page", c4jax/games/viewbase.py page()) and a position of the play API.
//
// A board is rows x cols cells of CELL units, under a header row of scores where the page puts
// them there; or, when the page has a "geometry" (c4jax/games/geometry.py), its cells (squares,
// hexagons or circles) at their centres, with its links and the players' sides. Pieces are discs,
// men, kings or marks; a move is a click on a column, on a cell, or on a piece and then a cell.
// Clicks land on a transparent layer of columns or cells on top.
"use strict";

export const CELL = 100, HEADER = 90, SCORE_Y = 58, SCORE_Y_WITH_VALUE = 38;
const SVG_NS = "http://www.w3.org/2000/svg";
const CROWN = "M -17 7 L -17 -9 L -8 -1 L 0 -13 L 8 -1 L 17 -9 L 17 7 Z";

export function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export const sameCell = (a, b) => Boolean(a && b) && a[0] === b[0] && a[1] === b[1];

// A searched value in [-1, 1] for the player to move: "+0.62", "-0.30", "0.00".
export const fmtValue = (v) => (v === null || v === undefined) ? "" : `${v > 0.005 ? "+" : ""}${v.toFixed(2)}`;

export function fmtScore(x, kind) {
  if (x === null || x === undefined) return "";
  if (kind === "lookahead") return Math.abs(x) < 1e4 ? String(Math.round(x)) : x.toExponential(1).replace("e+", "e");
  if (kind === "policy" || kind === "random") return x.toFixed(2);
  if (kind === "perfect") return String(Math.round(x));
  if (kind === "search") return `${Math.round(100 * x)}%`;  // visit share / improved policy
  return Math.abs(x) >= 100 ? x.toExponential(1).replace("e+", "e") : x.toFixed(2);
}

// The score of legal move ``i`` (``move``) of a position: per action or per legal move, as the page says.
export const scoreOf = (page, pos, move, i) =>
  !pos.scores ? null : (page.scores === "legal" ? pos.scores[i] : pos.scores[move.action]);

export class Board {
  // ``root``: the <svg>; ``onColumn(c)`` / ``onCell(r, c)``: a click on a column / a cell.
  constructor(root, page, onColumn, onCell) {
    this.root = root;
    this.page = page;
    root.replaceChildren();
    const header = page.score_place === "header" ? HEADER : 0;
    this.top = header;
    const geo = this.geo = page.geometry || null;
    // each cell's centre in the geometry (CELL per board unit)
    this.centres = new Map(geo ? geo.cells.map((g) => [`${g.cell[0]},${g.cell[1]}`, [g.x * CELL, header + g.y * CELL]]) : []);
    const width = (geo ? geo.width : page.cols) * CELL, height = header + (geo ? geo.height : page.rows) * CELL;
    root.setAttribute("viewBox", `0 0 ${width} ${height}`);
    root.setAttribute("class", `board ${page.board}`);
    const layer = (id) => svg("g", { id }, root);
    if (page.board === "plate") {
      const mask = svg("mask", { id: "holes" }, svg("defs", {}, root));
      svg("rect", { x: 0, y: 0, width, height, fill: "white" }, mask);
      for (let r = 0; r < page.rows; r++)
        for (let c = 0; c < page.cols; c++) svg("circle", { cx: this.x(c), cy: this.y(r), r: 40, fill: "black" }, mask);
      this.scores = layer("scores");
      this.pieces = layer("pieces");
      svg("rect", { class: "plate", x: 0, y: header, width, height: page.rows * CELL, rx: 18, mask: "url(#holes)" }, root);
      this.marks = layer("marks");
    } else if (geo) {
      this.squares = layer("squares");
      this.scores = layer("scores");
      for (const { cell: [r, c] } of geo.cells) {
        const dark = page.board === "squares" && (r + c) % 2 === 1;
        this.cellShape(r, c, { class: page.board === "squares" ? (dark ? "dark" : "light") : "grid-cell",
                               "data-cell": `${r}-${c}` }, this.squares);
      }
      for (const [[r1, c1], [r2, c2]] of geo.links) {
        const [x1, y1] = this.xy(r1, c1), [x2, y2] = this.xy(r2, c2);
        svg("line", { x1, y1, x2, y2, class: "link" }, this.squares);
      }
      geo.sides.forEach((s, i) => svg("line", {
        x1: s.from[0] * CELL, y1: header + s.from[1] * CELL, x2: s.to[0] * CELL, y2: header + s.to[1] * CELL,
        class: `side ${page.seats ? page.seats[s.player] : `p${s.player}`}`, "data-testid": `side-${i}`,
        "data-player": s.player }, this.squares));
      this.marks = layer("marks");
      this.pieces = layer("pieces");
    } else {
      this.squares = layer("squares");
      this.scores = layer("scores");
      for (let r = 0; r < page.rows; r++)
        for (let c = 0; c < page.cols; c++) {
          const dark = page.board === "squares" && (r + c) % 2 === 1;
          svg("rect", { x: c * CELL, y: header + r * CELL, width: CELL, height: CELL,
                        class: page.board === "squares" ? (dark ? "dark" : "light") : "grid-cell" }, this.squares);
          svg("text", { x: c * CELL + 6, y: header + r * CELL + 20, class: "num", "data-r": r, "data-c": c },
              this.squares);
        }
      this.marks = layer("marks");
      this.pieces = layer("pieces");
    }
    this.targets = layer("targets");
    const hits = layer("hits");
    if (header) this.buildHeader();
    if (page.click === "column") {
      for (let c = 0; c < page.cols; c++)
        svg("rect", { x: c * CELL, y: 0, width: CELL, height: height, class: "col", "data-testid": `col-${c}`,
                      "data-col": c, role: "button", "aria-label": `play in column ${c + 1}` }, hits)
          .addEventListener("click", () => onColumn(c));
    } else {
      // the cells a click lands on, in the order of the hits' elements
      this.hitCells = geo ? geo.cells.map((g) => g.cell)
        : Array.from({ length: page.rows * page.cols }, (_, i) => [Math.floor(i / page.cols), i % page.cols]);
      for (const [r, c] of this.hitCells) {
        const attrs = { class: "cell", "data-testid": `cell-${r}-${c}`, role: "button",
                        "aria-label": `cell ${r + 1}, ${c + 1}` };
        (geo ? this.cellShape(r, c, attrs, hits)
          : svg("rect", { x: c * CELL, y: header + r * CELL, width: CELL, height: CELL, ...attrs }, hits))
          .addEventListener("click", () => onCell(r, c));
      }
    }
    this.hits = hits;
  }

  x(c) { return c * CELL + CELL / 2; }
  y(r) { return this.top + r * CELL + CELL / 2; }
  // The centre of cell (r, c): the geometry's, else its square's.
  xy(r, c) { return this.centres.get(`${r},${c}`) || [this.x(c), this.y(r)]; }

  // The outline of the geometry's cell (r, c): a hexagon (pointy-top, CELL across its flat sides), a square
  // or a circle (CELL * 0.8 across), with ``attrs``.
  cellShape(r, c, attrs, parent) {
    const [x, y] = this.xy(r, c), shape = this.geo.shape;
    if (shape === "circle") return svg("circle", { cx: x, cy: y, r: 0.4 * CELL, ...attrs }, parent);
    if (shape === "square")
      return svg("rect", { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, ...attrs }, parent);
    const R = CELL / Math.sqrt(3);
    const points = [-90, -30, 30, 90, 150, 210].map((a) => a * Math.PI / 180)
      .map((a) => `${(x + R * Math.cos(a)).toFixed(1)},${(y + R * Math.sin(a)).toFixed(1)}`).join(" ");
    return svg("polygon", { points, ...attrs }, parent);
  }

  // The header: per column its number, the agent's score, a search agent's value under it, and the solver's verdict.
  buildHeader() {
    for (let c = 0; c < this.page.cols; c++) {
      svg("text", { x: this.x(c), y: 16, "text-anchor": "middle", class: "colnum" }, this.scores).textContent = String(c + 1);
      const g = svg("g", { class: "score-col" }, this.scores);
      svg("title", {}, g);
      svg("text", { x: this.x(c), y: SCORE_Y, "text-anchor": "middle", "data-testid": `score-${c}`, class: "score" }, g);
      svg("text", { x: this.x(c), y: 62, "text-anchor": "middle", "data-testid": `value-${c}`, class: "value" }, g);
      const v = svg("g", { class: "verdict-col" }, this.scores);
      svg("title", {}, v);
      svg("text", { x: this.x(c), y: 82, "text-anchor": "middle", "data-testid": `hint-${c}`, class: "verdict" }, v);
    }
  }

  // One piece of ``kind`` (a board value's abs) for ``owner`` ("human" / "agent") in ``seat``'s colours.
  piece(r, c, kind, owner, seat, falling) {
    const shape = this.page.pieces[String(kind)] || "disc";
    const cls = ["piece", shape, owner];
    if (seat) cls.push(seat);
    const attrs = { class: cls.join(" "), "data-testid": `piece-${r}-${c}`, "data-owner": owner,
                    "data-king": String(shape === "king") };
    const [x, y] = this.xy(r, c);
    let node;
    if (shape === "disc") node = svg("circle", { ...attrs, cx: x, cy: y, r: 43 }, this.pieces);
    else {
      node = svg("g", attrs, this.pieces);
      if (shape === "mark" && seat === "x")
        svg("path", { d: `M ${x - 28} ${y - 28} L ${x + 28} ${y + 28} M ${x + 28} ${y - 28} L ${x - 28} ${y + 28}` },
            node);
      else if (shape === "mark") svg("circle", { cx: x, cy: y, r: 30 }, node);
      else {
        svg("circle", { cx: x, cy: y, r: 38 }, node);
        svg("circle", { cx: x, cy: y, r: 27, class: "rim" }, node);
        if (shape === "king") svg("path", { d: CROWN, transform: `translate(${x} ${y})`, class: "crown" }, node);
      }
    }
    if (falling) {  // start above the board, then let the CSS transition drop it into its cell
      node.style.transform = `translateY(${-(r + 1) * CELL - this.top + 20}px)`;
      node.getBoundingClientRect();
      node.classList.add("falling");
      node.style.transitionDuration = `${0.18 + 0.06 * (r + 1)}s`;
      requestAnimationFrame(() => { node.style.transform = "translateY(0px)"; });
    }
    return node;
  }

  // Draw position ``pos``. ``v``: {playable, selected, seats: [human's, agent's] classes or null,
  // squares (a number per cell or null), agent: {name, kind}, animate}.
  draw(pos, v) {
    const page = this.page;
    const moves = v.playable ? pos.legal_moves || [] : [];
    const fromTo = page.click === "from_to";
    const movable = fromTo ? moves.map((m) => m.from) : [];
    const newest = pos.marked && pos.marked.length ? pos.marked[pos.marked.length - 1] : null;
    const fall = page.drop && v.animate ? newest : null;
    if (this.squares)
      this.squares.querySelectorAll("text.num").forEach((t) => {
        const n = v.squares ? v.squares[Number(t.dataset.r)][Number(t.dataset.c)] : null;
        t.textContent = n === null || n === undefined ? "" : String(n);
      });

    this.pieces.replaceChildren();
    pos.board.forEach((row, r) => row.forEach((value, c) => {
      if (value === 0) return;
      const owner = value > 0 ? "human" : "agent";
      const seat = v.seats ? v.seats[owner === "human" ? 0 : 1] : null;
      const node = this.piece(r, c, Math.abs(value), owner, seat, sameCell(fall, [r, c]));
      if (movable.some((m) => sameCell(m, [r, c]))) node.classList.add("movable");
      if (v.playable && sameCell(v.selected, [r, c])) node.classList.add("selected");
    }));
    if (pos.jumper) svg("circle", { cx: this.xy(...pos.jumper)[0], cy: this.xy(...pos.jumper)[1], r: 45,
                                    class: "jumper" }, this.pieces);

    // the last move's cells, what it took, a winning line
    this.marks.replaceChildren();
    for (const [r, c] of pos.marked || []) {
      if (page.board === "plate") {
        if (!sameCell(newest, [r, c])) continue;
        svg("circle", { cx: this.x(c), cy: this.y(r), r: 8, "data-testid": "last-move",
                        class: fall ? "last-move after-fall" : "last-move" }, this.marks);
      } else if (this.geo) this.cellShape(r, c, { class: "last-cell", "data-testid": "last-move" }, this.marks);
      else svg("rect", { x: c * CELL, y: this.top + r * CELL, width: CELL, height: CELL, class: "last-cell",
                           "data-testid": "last-move" }, this.marks);
    }
    for (const [r, c] of pos.taken || []) {
      const [x, y] = this.xy(r, c);
      svg("path", { d: `M ${x - 14} ${y - 14} L ${x + 14} ${y + 14} M ${x + 14} ${y - 14} L ${x - 14} ${y + 14}`,
                    class: "taken" }, this.marks);
    }
    for (const [r, c] of pos.winning_cells || [])
      svg("circle", { cx: this.xy(r, c)[0], cy: this.xy(r, c)[1], r: 30, class: "win-mark", "data-testid": "win-mark" }, this.marks);

    // the moves on offer and their scores on their cells: the selected piece's, or every legal move
    this.targets.replaceChildren();
    if (page.score_place === "target" || fromTo) {
      (pos.legal_moves || []).forEach((m, i) => {
        if (fromTo && !(v.playable && sameCell(m.from, v.selected))) return;
        const [x, y] = this.xy(m.to[0], m.to[1]);
        if (fromTo)
          svg("circle", { cx: x, cy: y, r: 16, class: "target", "data-testid": `target-${m.to[0]}-${m.to[1]}`,
                          "data-action": m.action, "data-pdn": m.pdn || "" }, this.targets);
        const score = page.score_place === "target" ? scoreOf(page, pos, m, i) : null;
        if (score !== null && score !== undefined)
          svg("text", { x, y: fromTo ? y + 38 : y + 8, "text-anchor": "middle", class: "cell-score",
                        "data-testid": `score-${m.to[0]}-${m.to[1]}`, "data-value": score }, this.targets)
            .textContent = fmtScore(score, v.agent.kind);
      });
    }
    if (page.score_place === "header") this.drawHeader(pos, v.agent);

    this.root.classList.toggle("playable", v.playable);
    if (page.click === "column")
      this.hits.querySelectorAll("rect").forEach((rect, c) =>
        rect.classList.toggle("disabled", !moves.some((m) => m.to[1] === c)));
    else  // each cell's square number, the action a click there plays, whether the piece picked goes there
      Array.from(this.hits.children).forEach((rect, i) => {
        const cell = this.hitCells[i], n = v.squares ? v.squares[cell[0]][cell[1]] : null;
        const move = !fromTo && moves.find((m) => sameCell(m.to, cell));
        if (n === null || n === undefined) rect.removeAttribute("data-square"); else rect.dataset.square = n;
        if (move) rect.dataset.action = move.action; else rect.removeAttribute("data-action");
        rect.classList.toggle("target", fromTo && moves.some((m) => sameCell(m.from, v.selected) && sameCell(m.to, cell)));
      });
  }

  drawHeader(pos, agent) {
    const scores = pos.scores || [];
    const finite = scores.filter((x) => x !== null);
    const best = finite.length ? Math.max(...finite) : null;
    const values = Array.isArray(pos.values) ? pos.values : null;  // search agents only
    const what = this.page.action;
    this.scores.querySelectorAll("g.score-col").forEach((g, c) => {
      const x = scores[c] === undefined ? null : scores[c], val = values ? values[c] : null;
      const t = g.querySelector("text.score"), vt = g.querySelector("text.value");
      g.querySelector("title").textContent = x === null
        ? `no score: the ${what} is not playable or the game is over`
        : values
          ? `${agent.name}, ${what} ${c + 1}: ${(100 * x).toFixed(1)}% of the search (${x}); ` +
            `searched value ${val === null ? "none" : val} for the player to move (-1 loss … +1 win)`
          : `${agent.name}'s score for ${what} ${c + 1}: ${x}`;
      t.textContent = fmtScore(x, agent.kind);
      t.setAttribute("y", values ? SCORE_Y_WITH_VALUE : SCORE_Y);
      t.classList.toggle("best", x !== null && x === best);
      t.dataset.value = x === null ? "" : String(x);
      vt.textContent = fmtValue(val);
      vt.setAttribute("class", `value${val === null ? "" : val > 0.005 ? " pos" : val < -0.005 ? " neg" : ""}`);
      vt.dataset.value = val === null ? "" : String(val);
    });
  }

  // The solver's verdict per column (``answer``: a /api/hint answer, or undefined for none).
  drawHint(answer) {
    this.scores.querySelectorAll("g.verdict-col").forEach((g, c) => {
      const t = g.querySelector("text");
      const score = answer ? answer.scores[c] : null;
      const outcome = answer ? answer.outcomes[c] : null;
      t.textContent = score === null ? "" : (outcome === "draw" ? "draw" : `${outcome} ${score > 0 ? "+" : ""}${score}`);
      t.setAttribute("class", `verdict ${outcome || ""}${answer && answer.best.includes(c) ? " best" : ""}`);
      t.dataset.value = score === null ? "" : String(score);
      g.querySelector("title").textContent = score === null ? "" :
        `perfect play: ${this.page.action} ${c + 1} ${outcome === "win" ? "wins" : outcome === "loss" ? "loses" : "draws"}` +
        ` (solver score ${score})`;
    });
  }
}
