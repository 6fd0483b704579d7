// Wizard Arena web: sortable tables on every page, the match viewer on /matches/ID (and in
// the replay pages `arena leaderboard --export` writes), and the live viewer on /live/ID.
// No library: the server sends each decision's events and totals, this script only draws.
// The card table is table.js (window.WizardTable, loaded before this script on the viewer's
// pages); this script folds the steps into what it draws, the rows, the controls and the timeline.
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

// table.js's, looked up when called: this script also serves pages without the table.
const el = (tag, attrs, ...children) => WizardTable.el(tag, attrs, ...children);

// A card tile of the rows (table.js draws them as on the card table).
const card = (code, extra) => WizardTable.card(code, {extra});

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
  view.rowsBox.replaceChildren(...parts);
}

// ---------------------------------------------------------------- the card table

// What the card table (table.js) draws at this step: the state folded so far, the step's
// totals and the seat that decided. A live page knows how many cards a seat holds, never which.
function tableModel(view, s, step) {
  const extreme = hasTokens();
  return {
    roundText: s.round ? "Round " + s.round : "Before the deal",
    trump: s.trump ? {card: s.trump.card, text: trumpText(s.trump, s.trumpChosen, view.record.bots)} : null,
    dealer: s.dealer, toAct: step.seat === null ? [] : [step.seat],
    tokensShown: extreme,
    seats: view.record.bots.map((_, seat) => ({
      bid: s.bids[seat],
      tokens: extreme && (s.predicted[seat] !== null || Object.keys(s.tokens[seat]).length) ? s.tokens[seat] : null,
      destroyer: s.destroyer === seat, tricks: s.tricks[seat], total: step.totals[seat],
      hand: view.live ? null : s.hands[seat].filter((c) => !s.played.has(c)),
      handCount: view.live ? Math.max(0, s.handSize - s.playedBy[seat]) : null,
    })),
    // A replay's step says who is taking the trick so far (the engine's word); a live one does not.
    trick: s.trick, winning: step.winning === undefined ? null : step.winning, lastTrick: s.lastTrick,
    supply: extreme ? s.supply : null, supplyNote: s.blackExhausted ? "no black left" : "",
  };
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
  // One step forward on the table: its cards move; a jump draws the new step at once.
  const forward = k === view.k + 1 && view.root.dataset.view !== "rows";
  view.k = k;
  const step = view.steps[k];
  const s = stateAt(view.steps, k, view.record.bots.length);
  document.getElementById("step").textContent = k + " / " + last;
  const timeline = document.getElementById("timeline");
  timeline.max = String(last);
  timeline.value = String(k);
  timeline.setAttribute("aria-valuetext", "decision " + k + " of " + last + (s.round ? ", round " + s.round : ""));
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
  // The cards move for most of the time a step shows when playing, never longer than at 1x.
  view.felt.draw(tableModel(view, s, step), {animate: forward, duration: Math.min(MOTION_MS, 0.8 * stepMs(view))});
  drawRounds(view, s);
  // The address follows once stepping pauses: a held arrow key would otherwise replace it
  // faster than the browser allows (it then ignores the calls for a while).
  clearTimeout(view.hashTimer);
  view.hashTimer = setTimeout(() => history.replaceState(null, "", "#d=" + view.k), 200);
}

// The timeline's marks: the decisions at which a round starts (its round_start is among the
// step's events), from ``from`` on (a live match adds steps as they come).
function markRounds(view, from) {
  const marks = document.getElementById("round-starts");
  if (from === 0) marks.replaceChildren();
  for (let k = from; k < view.steps.length; k++) {
    const start = view.steps[k].events.find((e) => e.type === "round_start");
    if (start) marks.append(el("option", {value: k, label: "round " + start.round}));
  }
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

// ---------------------------------------------------------------- playing

// A step every 0.8 s at 1x; the speed menu multiplies the pace. The motion of one step lasts at most MOTION_MS.
const STEP_MS = 800;
const MOTION_MS = 300;
const stepMs = (view) => STEP_MS / view.speed;

function stopPlaying(view) {
  if (view.timer !== null) { clearInterval(view.timer); view.timer = null; }
  const button = document.getElementById("play");
  button.textContent = "Play";
  button.setAttribute("aria-pressed", "false");
  view.root.dataset.playing = "false";
}

function startPlaying(view) {
  if (view.timer !== null) clearInterval(view.timer);
  if (view.k >= view.steps.length - 1 && !view.live) show(view, 0);
  const button = document.getElementById("play");
  button.textContent = "Pause";
  button.setAttribute("aria-pressed", "true");
  view.root.dataset.playing = "true";
  view.timer = setInterval(() => {
    if (view.k >= view.steps.length - 1) { if (!view.live) stopPlaying(view); return; }
    show(view, view.k + 1);
  }, stepMs(view));
}

function setSpeed(view, speed) {
  view.speed = speed > 0 ? speed : 1;
  view.root.dataset.stepMs = String(stepMs(view));
  if (view.timer !== null) startPlaying(view);     // the new pace from now on
}

// The speed last chosen, kept between visits like the table-or-rows choice.
const SPEED_KEY = "wizard-arena.viewer.speed";

function savedSpeed(select) {
  let saved = null;
  try { saved = localStorage.getItem(SPEED_KEY); } catch (e) { /* storage refused: the page's default */ }
  return [...select.options].some((o) => o.value === saved) ? saved : select.value;
}

// The buttons, the timeline, the speed and the keys of both viewers; ``view.steps`` may
// grow while they are used (live).
function wireControls(view) {
  const go = (k) => { stopPlaying(view); show(view, k); };
  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(view.k - 1));
  document.getElementById("next").addEventListener("click", () => go(view.k + 1));
  document.getElementById("last").addEventListener("click", () => go(view.steps.length - 1));
  document.getElementById("play").addEventListener("click", () => {
    if (view.timer !== null) stopPlaying(view); else startPlaying(view);
  });
  const timeline = document.getElementById("timeline");
  timeline.addEventListener("input", () => go(Number(timeline.value)));
  const speed = document.getElementById("speed");
  speed.value = savedSpeed(speed);
  speed.addEventListener("change", () => {
    setSpeed(view, Number(speed.value));
    try { localStorage.setItem(SPEED_KEY, speed.value); } catch (e) { /* storage refused: not remembered */ }
  });
  setSpeed(view, Number(speed.value));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    if (e.key === "ArrowRight") { go(view.k + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { go(view.k - 1); e.preventDefault(); }
    else if (e.key === "Home") { go(0); e.preventDefault(); }
    else if (e.key === "End") { go(view.steps.length - 1); e.preventDefault(); }
  });
  window.addEventListener("hashchange", () => { const k = hashStep(); if (k !== null && k !== view.k) go(k); });
}

function newView(record, steps, live) {
  const felt = WizardTable.create(document.getElementById("felt"), {names: record.bots});
  return {record, steps, k: 0, timer: null, hashTimer: null, speed: 1, live, root: document.getElementById("viewer"), felt,
          rowsBox: document.getElementById("table"), events: document.getElementById("events"),
          rounds: document.getElementById("rounds")};
}

// Until the first step is drawn, #loading says what is coming; if it cannot come, why.
function loadingFailed(message) {
  const loading = document.getElementById("loading");
  loading.classList.add("error");
  loading.textContent = message;
}

function startViewer(root) {
  loadMatch(root).then((data) => {
    const view = newView(data.record, data.steps, false);
    wireControls(view);
    markRounds(view, 0);
    show(view, hashStep() ?? 0);
    root.dataset.ready = "true";
  }).catch((error) => loadingFailed(error.message));
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
    if (!wired) { wireControls(view); wired = true; }
    markRounds(view, 0);
    show(view, following ? view.steps.length - 1 : view.k);
    root.dataset.steps = String(view.steps.length);
    root.dataset.ready = "true";
  });
  source.addEventListener("end", (message) => {
    source.close();
    stopPlaying(view);
    const data = JSON.parse(message.data);
    root.dataset.over = "true";
    status.replaceChildren("The match is over. ", el("a", {href: data.replay, id: "replay-link"},
                                                     "Its replay, with every hand face up"), ".");
  });
  source.addEventListener("failure", (message) => {
    source.close();
    stopPlaying(view);
    root.dataset.over = "failed";
    const problem = JSON.parse(message.data).message;
    if (root.dataset.ready !== "true") loadingFailed(problem);
    status.replaceChildren(el("span", {class: "error"}, problem));
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  const root = document.getElementById("viewer");
  if (root) wireToggle(root);
  if (root && root.dataset.live) startLive(root);
  else if (root) startViewer(root);
});
