// Wizard Arena web: sortable tables on every page, the match viewer on /matches/ID (and in
// the replay pages `arena leaderboard --export` writes), and the live viewer on /live/ID.
// No library: the server sends each decision's events and totals, this script only draws.
// A live page gets only the referee's public events (no hand is ever sent to it).
"use strict";

// ---------------------------------------------------------------- sortable tables

function cellValue(row, index) {
  const cell = row.cells[index];
  if (!cell) return "";
  return cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
}

function sortTable(table, index, numeric, th) {
  const body = table.tBodies[0];
  const descending = th.classList.contains("asc");   // a second click reverses
  for (const other of table.tHead.rows[0].cells) other.classList.remove("asc", "desc");
  th.classList.add(descending ? "desc" : "asc");
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = cellValue(a, index), y = cellValue(b, index);
    let order;
    if (numeric) {
      const nx = x === "" ? Infinity : parseFloat(x.replace(/[^0-9.+-]/g, ""));
      const ny = y === "" ? Infinity : parseFloat(y.replace(/[^0-9.+-]/g, ""));
      order = nx - ny;
    } else {
      order = x.localeCompare(y);
    }
    return descending ? -order : order;
  });
  for (const row of rows) body.appendChild(row);
}

function makeSortable(table) {
  if (!table.tHead || !table.tBodies.length) return;
  Array.from(table.tHead.rows[0].cells).forEach((th, index) => {
    const numeric = th.dataset.sort === "num";
    th.addEventListener("click", () => sortTable(table, index, numeric, th));
    th.addEventListener("keydown", (e) => { if (e.key === "Enter") sortTable(table, index, numeric, th); });
  });
}

// ---------------------------------------------------------------- the match viewer

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function card(name, extra) {
  return el("span", {class: "card s-" + String(name).charAt(0) + (extra ? " " + extra : "")}, name);
}

// Wizard Extreme's token supply at each deal, from the page (engine SUPPLY_START): "red:5,...".
function supplyAtStart() {
  const root = document.getElementById("viewer");
  const text = root && root.dataset.supply;
  if (!text) return null;
  return Object.fromEntries(text.split(",").map((pair) => { const [c, n] = pair.split(":"); return [c, Number(n)]; }));
}

// The table after steps 0..k: folded from the events, the rules already applied by the server.
// In Wizard Extreme it also follows every token: who holds what, and what is left in the supply.
function stateAt(steps, k, players) {
  const seats = () => Array.from({length: players}, () => null);
  const s = {round: 0, dealer: null, trump: null, trumpChosen: null, bids: seats(), tricks: seats().map(() => 0),
             hands: seats().map(() => []), played: new Set(), trick: [], lastTrick: null,
             handSize: 0, playedBy: seats().map(() => 0),
             tokens: seats(), predicted: seats(), supply: null, destroyer: null, blackExhausted: false, rounds: []};
  const noTokens = () => seats().map(() => ({}));
  const add = (bag, colour, n) => { bag[colour] = (bag[colour] || 0) + n; if (!bag[colour]) delete bag[colour]; };
  for (let i = 0; i <= k; i++) {
    for (const e of steps[i].events) {
      switch (e.type) {
        case "round_start":
          // Wizard Extreme's round_start carries no hand_size: it always deals 15 cards.
          Object.assign(s, {round: e.round, dealer: e.dealer, trump: null, trumpChosen: null, bids: seats(),
                            handSize: e.hand_size !== undefined ? e.hand_size : 15, playedBy: seats().map(() => 0),
                            tricks: seats().map(() => 0), trick: [], lastTrick: null, tokens: noTokens(),
                            predicted: seats(), supply: supplyAtStart(), destroyer: null, blackExhausted: false});
          s.played = new Set();
          break;
        case "hand": s.hands[e.seat] = e.cards; break;
        case "trump": s.trump = e; break;
        case "trump_chosen": s.trumpChosen = e; break;
        case "bid": s.bids[e.seat] = String(e.bid); break;
        case "bid_made": s.bids[e.seat] = "face down"; break;
        case "bids_revealed": s.bids = e.bids.map(String); break;
        case "prediction":
          s.predicted[e.seat] = e.tokens;
          for (const [colour, n] of Object.entries(e.tokens)) {
            add(s.tokens[e.seat], colour, n);
            if (s.supply) s.supply[colour] -= n;
          }
          break;
        case "token_exchange":   // taken from a seat instead of the supply; that seat gets a white one
          add(s.tokens[e.from_seat], e.colour, -1); add(s.tokens[e.from_seat], "white", 1);
          if (s.supply) { s.supply[e.colour] += 1; s.supply.white -= 1; }
          break;
        case "token_returned":
          add(s.tokens[e.seat], e.colour, -1);
          if (s.supply) s.supply[e.colour] += 1;
          break;
        case "black_taken":
          add(s.tokens[e.seat], "black", 1);
          if (s.supply) s.supply.black -= 1;
          break;
        case "black_exhausted": s.blackExhausted = true; break;
        case "destroyer": s.destroyer = e.seat; break;
        case "play": s.trick.push({seat: e.seat, card: e.card}); s.played.add(e.card); s.playedBy[e.seat] += 1; break;
        case "trick":
          s.tricks[e.winner] += 1; s.lastTrick = e; s.trick = [];
          for (const c of e.cards) s.played.add(c.card);
          break;
        case "round_end": s.rounds.push(e); break;
      }
    }
  }
  return s;
}

// The round's trump in words, from its "trump" event (the card turned up, or null when every
// card is dealt; the suit, null for none) and, after a Wizard, the dealer's "trump_chosen":
// "red (r5 turned up)", "none (J2 turned up)", "red, chosen by seat 3 (ann) (W1 turned up)".
function trumpText(turned, chosen, bots) {
  const card = turned.card ? " (" + turned.card + " turned up)" : " (every card is dealt: nothing turned up)";
  if (chosen) return chosen.suit + ", chosen by seat " + chosen.seat + " (" + bots[chosen.seat] + ")" + card;
  if (turned.suit) return turned.suit + card;
  if (String(turned.card).startsWith("W")) return "the dealer chooses" + card;   // a Wizard, not chosen yet
  return "none" + card;
}

function tokensText(tokens) {
  if (!tokens) return "";
  const parts = Object.entries(tokens).map(([colour, n]) => n + " " + colour);
  return parts.length ? parts.join(", ") : "none";
}

// A seat's Extreme cell: the tokens it holds now, what it predicted, or that it took the destroyer.
function extremeCell(s, seat) {
  if (s.destroyer === seat) return "destroyer" + (Object.keys(s.tokens[seat]).length ? " · " + tokensText(s.tokens[seat]) : "");
  if (s.predicted[seat] === null) return "";
  return tokensText(s.tokens[seat]) + " (predicted " + tokensText(s.predicted[seat]) + ")";
}

// The variant's facts, from the page (arena.web.pages: the engine's variant record).
function viewerData() {
  const root = document.getElementById("viewer");
  return root ? root.dataset : {};
}
const hasTokens = () => Boolean(viewerData().supply);
const lowerIsBetter = () => viewerData().lowerIsBetter === "1";

function drawTable(view, s, step) {
  const {record} = view;
  const extreme = hasTokens();
  const head = el("tr", {}, el("th", {}, "Seat"), el("th", {}, "Bot"),
                  el("th", {}, extreme ? "Tokens held (predicted)" : "Bid"), el("th", {}, "Tricks"),
                  el("th", {}, "Hand"), el("th", {}, "On the table"), el("th", {}, "Total"));
  const body = el("tbody");
  const onTable = s.trick.length ? s.trick : (s.lastTrick ? s.lastTrick.cards : []);
  for (let seat = 0; seat < record.bots.length; seat++) {
    const hand = el("td");
    if (view.live) {
      // Live: the page knows only how many cards a seat still holds, never which.
      const left = Math.max(0, s.handSize - s.playedBy[seat]);
      hand.append(el("span", {class: "face-down", "data-cards-left": left}, left + " face down"));
    }
    // A space between cards: the hand reads as card names in the page's text too.
    for (const c of s.hands[seat]) hand.append(card(c, s.played.has(c) ? "played" : ""), " ");
    const played = el("td");
    for (const c of onTable) {
      if (c.seat === seat) {
        const won = !s.trick.length && s.lastTrick && s.lastTrick.winner === seat;
        played.append(card(c.card, won ? "win" : ""));
      }
    }
    const bid = extreme ? extremeCell(s, seat) : (s.bids[seat] === null ? "" : s.bids[seat]);
    const classes = [step.seat === seat ? "to-act" : "", s.dealer === seat ? "dealer" : ""].join(" ").trim();
    body.append(el("tr", classes ? {class: classes} : {}, el("td", {}, seat), el("td", {}, record.bots[seat]),
                   el("td", extreme ? {class: "tokens", "data-tokens": JSON.stringify(s.tokens[seat])} : {}, bid),
                   el("td", {}, s.tricks[seat]), hand, played,
                   el("td", {}, step.totals[seat])));
  }
  const trump = s.trump ? trumpText(s.trump, s.trumpChosen, record.bots) : "";
  const info = el("p", {class: "meta"}, "Round " + s.round + (trump ? " · trump: " + trump : ""));
  const parts = [info, el("table", {}, el("thead", {}, head), body)];
  if (extreme && s.supply) {
    const left = Object.entries(s.supply).map(([colour, n]) => colour + " " + n).join(" · ");
    parts.push(el("p", {class: "meta", id: "supply", "data-supply": JSON.stringify(s.supply)},
                  "Supply: " + left + (s.blackExhausted ? " (a winner found no black token left)" : "")));
  }
  view.table.replaceChildren(...parts);
}

// ---------------------------------------------------------------- the card table

// Each suit or token colour by its code letter: a name, and a mark of its own shape, so that
// the colour is never the only clue (colour-blind readers, greyscale prints).
const SUITS = {
  r: {name: "red", mark: "\u2665"},       // ♥
  y: {name: "yellow", mark: "\u2605"},    // ★
  g: {name: "green", mark: "\u2663"},     // ♣
  b: {name: "blue", mark: "\u2660"},      // ♠
  p: {name: "purple", mark: "\u25C6"},    // ◆
  W: {name: "Wizard", mark: "\u2726"},    // ✦
  J: {name: "Jester", mark: "\u263A"},    // ☺
};
const TOKEN_MARKS = {white: "\u25CB", black: "\u25CF"};   // ○ ●

// A card face: the rank big, the suit's mark under it; Wizards and Jesters show W and J.
// data-card names the card, so a step can find it again to animate it.
function faceCard(code, extra) {
  const letter = String(code).charAt(0);
  const suit = SUITS[letter] || {name: letter, mark: "?"};
  const special = letter === "W" || letter === "J";
  const rank = special ? letter : String(code).slice(1);
  return el("span", {class: "pc s-" + letter + (extra ? " " + extra : ""), "data-card": code,
                     title: special ? suit.name : suit.name + " " + rank},
            el("span", {class: "pc-rank"}, rank), el("span", {class: "pc-mark", "aria-hidden": "true"}, suit.mark));
}

// A face-down hand of ``left`` cards (the live view: which cards, nobody may see yet).
function backs(left) {
  const shown = Array.from({length: Math.min(left, 20)}, () => el("span", {class: "pc back", "aria-hidden": "true"}));
  return el("span", {class: "backs"}, ...shown, el("span", {class: "backs-count"}, left + " face down"));
}

// Tokens as round chips of their colour with its mark and the count: "held" by a seat or
// left in the supply. Colours with none are left out.
function tokenChips(tokens, cls) {
  const chips = Object.entries(tokens || {}).filter(([, n]) => n > 0).map(([colour, n]) =>
    el("span", {class: "chip t-" + colour, title: n + " " + colour},
       el("span", {class: "chip-mark", "aria-hidden": "true"}, TOKEN_MARKS[colour] || (SUITS[colour.charAt(0)] || {}).mark || ""),
       el("span", {class: "chip-n"}, n)));
  return el("span", {class: "chips " + (cls || "")}, ...(chips.length ? chips : [el("span", {class: "note"}, "none")]));
}

// A seat's box: name (dealer, to act), its bid or tokens, tricks taken, total, and its hand.
function drawSeat(view, box, s, step, seat) {
  const name = el("div", {class: "seat-name"}, view.record.bots[seat],
                  s.dealer === seat ? el("span", {class: "badge", title: "dealer"}, "D") : "");
  const facts = el("div", {class: "seat-facts"});
  if (hasTokens()) {
    if (s.destroyer === seat) facts.append(el("span", {class: "chip destroyer", title: "took the destroyer"}, "\u2716 destroyer"));
    if (s.predicted[seat] !== null || Object.keys(s.tokens[seat]).length) facts.append(tokenChips(s.tokens[seat], "held"));
  } else {
    facts.append(el("span", {class: "fact"}, "bid " + (s.bids[seat] === null ? "–" : s.bids[seat])));
  }
  facts.append(el("span", {class: "fact"}, "tricks " + s.tricks[seat]),
               el("span", {class: "fact total", "data-total": step.totals[seat]}, "total " + step.totals[seat]));
  const hand = el("div", {class: "hand"});
  if (view.live) hand.append(backs(Math.max(0, s.handSize - s.playedBy[seat])));
  else hand.append(...s.hands[seat].filter((c) => !s.played.has(c)).map((c) => faceCard(c)));
  box.classList.toggle("to-act", step.seat === seat);
  box.replaceChildren(name, facts, hand);
}

// Where a seat's trick card lies: between the seat and the middle of the table (``share``
// of the way out), from the seat's place the server wrote (--x, --y).
function spotOf(view, seat, share) {
  const box = view.felt.querySelector('.seat[data-seat="' + seat + '"]');
  const x = parseFloat(box.style.getPropertyValue("--x")), y = parseFloat(box.style.getPropertyValue("--y"));
  return "--tx:" + (50 + share * (x - 50)).toFixed(1) + "%;--ty:" + (50 + share * (y - 50)).toFixed(1) + "%";
}

// The trick in the middle: the current one, each card before the seat that played it, the
// card taking it so far marked (the step says whose: the engine's, the page applies no
// rule); or, once it is won, the last one gathered before its winner, marked.
function trickCards(view, s, winning) {
  const bots = view.record.bots;
  if (s.trick.length) {
    return s.trick.map((c, i) => el("div", {class: "trick-card" + (i === 0 ? " led" : ""), style: spotOf(view, c.seat, 0.45)},
                                    faceCard(c.card, c.seat === winning ? "win" : ""), el("span", {class: "who"}, bots[c.seat])));
  }
  if (!s.lastTrick) return [];
  // The pile fans out around its place (--i: each card's offset from the pile's middle);
  // who played which card is in each card's title, the middle's words say who won.
  const pile = spotOf(view, s.lastTrick.winner, 0.45);
  const middle = (s.lastTrick.cards.length - 1) / 2;
  return s.lastTrick.cards.map((c, i) => {
    const face = faceCard(c.card, c.seat === s.lastTrick.winner ? "win" : "");
    face.title += ", played by " + bots[c.seat];
    return el("div", {class: "trick-card won", style: pile + ";--i:" + (i - middle)}, face);
  });
}

// The middle's words: round, trump (its card), who led, who won; Extreme's supply.
function drawCenter(view, s, winning) {
  const bots = view.record.bots;
  const parts = [el("p", {class: "felt-round"}, s.round ? "Round " + s.round : "Before the deal")];
  if (s.trump) {
    parts.push(el("div", {class: "trump"}, s.trump.card ? faceCard(s.trump.card, "trump-card") : "",
                  el("span", {class: "trump-text"}, "trump: " + trumpText(s.trump, s.trumpChosen, bots))));
  }
  let trick = "";
  if (s.trick.length) {
    trick = "led by " + bots[s.trick[0].seat] + (winning === null ? "" : " · " + bots[winning] + " taking it so far");
  }
  else if (s.lastTrick) trick = "led by " + bots[s.lastTrick.leader] + " · won by " + bots[s.lastTrick.winner];
  if (trick) parts.push(el("p", {class: "trick-text", id: "trick-text"}, trick));
  if (hasTokens() && s.supply) {
    parts.push(el("div", {class: "supply"}, el("span", {class: "note"}, "supply "), tokenChips(s.supply, "supply-chips"),
                  s.blackExhausted ? el("span", {class: "note"}, " no black left") : ""));
  }
  view.center.replaceChildren(...parts);
}

function drawFelt(view, s, step) {
  view.felt.querySelectorAll(".seat").forEach((box) => drawSeat(view, box, s, step, Number(box.dataset.seat)));
  view.felt.querySelectorAll(".trick-card").forEach((node) => node.remove());
  // A replay's step says who is taking the trick so far; the live view's events do not.
  const winning = step && step.winning !== undefined ? step.winning : null;
  view.felt.append(...trickCards(view, s, winning));
  drawCenter(view, s, winning);
}

// ---------------------------------------------------------------- moving cards

const reducedMotion = () => window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// Where the cards on the table are now (their centres), and each seat's hand: read before a
// step is drawn, to move the cards from there afterwards.
function cardPlaces(view) {
  const centre = (node) => { const r = node.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; };
  const cards = new Map(), hands = new Map();
  view.felt.querySelectorAll(".pc[data-card]").forEach((node) => cards.set(node.dataset.card, centre(node)));
  view.felt.querySelectorAll(".seat").forEach((box) => hands.set(Number(box.dataset.seat), centre(box.querySelector(".hand") || box)));
  return {cards, hands};
}

// One step forward: each card on the table glides from where it was (a hand, or its place in
// the trick) to where it is now: the card played goes from hand to table, a trick won goes to
// its winner. Nothing moves for people who ask for reduced motion, or on a jump.
function animateStep(view, before, step) {
  if (!before || reducedMotion()) return;
  const played = new Map(step.events.filter((e) => e.type === "play").map((e) => [e.card, e.seat]));
  view.felt.querySelectorAll(".trick-card").forEach((node) => {
    const face = node.querySelector(".pc[data-card]");
    const code = face.dataset.card;
    const from = played.has(code) ? (before.cards.get(code) || before.hands.get(played.get(code))) : before.cards.get(code);
    if (!from) return;
    const r = face.getBoundingClientRect();
    const dx = from.x - (r.left + r.width / 2), dy = from.y - (r.top + r.height / 2);
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
    face.animate([{transform: "translate(" + dx + "px, " + dy + "px)"}, {transform: "none"}],
                 {duration: 280, easing: "ease-out"});
  });
}

// ---------------------------------------------------------------- table or rows

const VIEW_KEY = "wizard-arena.viewer";

function savedView() {
  try { return localStorage.getItem(VIEW_KEY) === "rows" ? "rows" : "table"; } catch (e) { return "table"; }
}

// Show the card table or the rows (both are drawn at every step), and remember the choice.
function setView(root, which, remember) {
  root.dataset.view = which;
  const toggle = document.getElementById("view-toggle");
  toggle.textContent = which === "rows" ? "Table view" : "Rows view";
  toggle.setAttribute("aria-pressed", String(which === "rows"));
  if (remember) { try { localStorage.setItem(VIEW_KEY, which); } catch (e) { /* storage refused: not remembered */ } }
}

function wireToggle(root) {
  setView(root, savedView(), false);
  document.getElementById("view-toggle").addEventListener("click", () =>
    setView(root, root.dataset.view === "rows" ? "table" : "rows", true));
}

function drawRounds(view, s) {
  const {record} = view;
  if (!s.rounds.length) { view.rounds.replaceChildren(el("p", {class: "note"}, "No round scored yet.")); return; }
  const head = el("tr", {}, el("th", {}, "Round"), ...record.bots.map((b) => el("th", {}, b)));
  const rows = s.rounds.map((r) => el("tr", {}, el("td", {}, r.round), ...record.bots.map((_, seat) => {
    const score = r.scores ? r.scores[seat] : r.penalties[seat];
    const detail = r.bids ? " (bid " + r.bids[seat] + ", took " + r.tricks[seat] + ")" : "";
    return el("td", {}, score + detail + " → " + r.totals[seat]);
  })));
  view.rounds.replaceChildren(el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows)));
}

function show(view, k) {
  const last = view.steps.length - 1;
  k = Math.max(0, Math.min(last, k));
  // One step forward on the table: note where the cards are, to move them from there.
  const before = view.drawn && k === view.k + 1 && view.root.dataset.view !== "rows" ? cardPlaces(view) : null;
  view.k = k;
  const step = view.steps[k];
  const s = stateAt(view.steps, k, view.record.bots.length);
  document.getElementById("step").textContent = k + " / " + last;
  const decision = document.getElementById("decision");
  if (step.seat === null) {
    decision.textContent = "before the first decision";
  } else if (view.live) {
    decision.textContent = step.events[0].text;
  } else {
    const latency = step.latency_ms === null ? "played by the referee" : step.latency_ms.toFixed(1) + " ms";
    const faults = step.faults.length ? " · faults: " + step.faults.map((f) => f.kind).join(", ") : "";
    decision.textContent = "decision " + k + ": " + view.record.bots[step.seat] + " (seat " + step.seat + ") → "
      + JSON.stringify(step.action) + " · " + latency + faults;
  }
  const totals = document.getElementById("totals");
  totals.dataset.totals = step.totals.join(",");
  totals.textContent = "Totals: " + view.record.bots.map((b, i) => b + " " + step.totals[i]).join(" · ")
    + (lowerIsBetter() ? " (penalty points: lower is better)" : "");
  view.events.replaceChildren(...step.events.map((e) => el("li", {class: "new"}, e.text)));
  drawTable(view, s, step);
  drawFelt(view, s, step);
  animateStep(view, before, step);
  view.drawn = true;
  drawRounds(view, s);
  history.replaceState(null, "", "#d=" + k);
}

function hashStep() {
  const found = /^#d=(\d+)$/.exec(location.hash);
  return found ? parseInt(found[1], 10) : null;
}

// The match's data: embedded in the page by `arena leaderboard --export` (read from disk,
// no server), else asked of /api/matches/ID.
function loadMatch(root) {
  const embedded = document.getElementById("match-data");
  if (embedded) return Promise.resolve(JSON.parse(embedded.textContent));
  return fetch(root.dataset.api).then((response) => {
    if (!response.ok) throw new Error("the match could not be loaded (" + response.status + ")");
    return response.json();
  });
}

// The buttons and keys of both viewers; ``view.steps`` may grow while they are used (live).
function wireControls(view) {
  const playButton = document.getElementById("play");
  const stop = () => { if (view.timer !== null) { clearInterval(view.timer); view.timer = null; } playButton.textContent = "Play"; };
  const go = (k) => show(view, k);
  document.getElementById("first").addEventListener("click", () => { stop(); go(0); });
  document.getElementById("prev").addEventListener("click", () => { stop(); go(view.k - 1); });
  document.getElementById("next").addEventListener("click", () => { stop(); go(view.k + 1); });
  document.getElementById("last").addEventListener("click", () => { stop(); go(view.steps.length - 1); });
  playButton.addEventListener("click", () => {
    if (view.timer !== null) { stop(); return; }
    if (view.k >= view.steps.length - 1) go(0);
    playButton.textContent = "Pause";
    view.timer = setInterval(() => {
      if (view.k >= view.steps.length - 1) { stop(); return; }
      go(view.k + 1);
    }, 400);
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement) return;
    if (e.key === "ArrowRight") { stop(); go(view.k + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { stop(); go(view.k - 1); e.preventDefault(); }
    else if (e.key === "Home") { stop(); go(0); e.preventDefault(); }
    else if (e.key === "End") { stop(); go(view.steps.length - 1); e.preventDefault(); }
  });
  window.addEventListener("hashchange", () => { const k = hashStep(); if (k !== null && k !== view.k) go(k); });
}

function newView(record, steps, live) {
  return {record, steps, k: 0, timer: null, live, drawn: false, root: document.getElementById("viewer"),
          felt: document.getElementById("felt"), center: document.getElementById("felt-center"),
          table: document.getElementById("table"), events: document.getElementById("events"),
          rounds: document.getElementById("rounds")};
}

function startViewer(root) {
  loadMatch(root).then((data) => {
    const view = newView(data.record, data.steps, false);
    wireControls(view);
    root.dataset.ready = "true";
    show(view, hashStep() ?? 0);
  }).catch((error) => {
    root.prepend(el("p", {class: "error"}, error.message));
  });
}

// A running match: the server relays the referee's public events as Server-Sent Events.
// "steps" replaces the steps from data.start on (the open step grows; a reconnect starts
// again at 0); the page follows the newest step unless the reader stepped back.
function startLive(root) {
  const record = {bots: JSON.parse(root.dataset.bots), variant: root.dataset.variant};
  const view = newView(record, [], true);
  const status = document.getElementById("live-status");
  const source = new EventSource(root.dataset.live);
  let wired = false;
  source.addEventListener("steps", (message) => {
    const data = JSON.parse(message.data);
    const following = view.k >= view.steps.length - 1;
    view.steps.length = Math.min(view.steps.length, data.start);
    view.steps.push(...data.steps);
    if (!wired) { wireControls(view); wired = true; root.dataset.ready = "true"; }
    show(view, following ? view.steps.length - 1 : view.k);
    root.dataset.steps = String(view.steps.length);
  });
  source.addEventListener("end", (message) => {
    source.close();
    const data = JSON.parse(message.data);
    root.dataset.over = "true";
    status.replaceChildren("The match is over. ", el("a", {href: data.replay, id: "replay-link"},
                                                     "Its replay, with every hand face up"), ".");
  });
  source.addEventListener("failure", (message) => {
    source.close();
    root.dataset.over = "failed";
    status.replaceChildren(el("span", {class: "error"}, JSON.parse(message.data).message));
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  const root = document.getElementById("viewer");
  if (root) wireToggle(root);
  if (root && root.dataset.live) startLive(root);
  else if (root) startViewer(root);
});
