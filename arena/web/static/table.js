// Wizard Arena's card table: one felt drawing for the match viewer of `arena web` and for the
// table of `arena play`. Plain JS, no library; its rules are in table.css. It applies no game
// rule: the page says what lies where, the table draws it and moves the cards.
//
// One global, window.WizardTable:
//
//   const table = WizardTable.create(root, options)
//     root: an empty element (its children are replaced); it becomes the felt.
//     options: {
//       names: ["ann", "bob", ...]  the seats' names, in seat order (their number sets the layout)
//       bottomSeat: 0               the seat drawn at the bottom; the others follow clockwise, as play goes
//       you: null                   a seat to mark as the reader's own (class "you")
//       onCard: null                function(code): called when a playable card of a hand is clicked
//     }
//   table.draw(model, {animate: false, duration: 300})
//     Draws ``model`` (below). With animate (and unless the reader asked for reduced motion) a
//     card that changed place glides there: a card played moves from its seat's hand to the
//     trick, a finished trick moves to its winner's seat.
//   table.seat(seat)   the seat's panel element (.seat[data-seat=N])
//
//   WizardTable.card(code, {extra: "win", button: false, mini: false}) -> a card tile
//     (.pc.s-LETTER, data-card=code): the rank big on the suit's colour, the suit's mark
//     under it, "W" and "J" for a Wizard and a Jester; a <button> with button: true.
//   WizardTable.cardName(code)   "red 7", "Wizard", "Jester": the words of a card code
//   WizardTable.places(players, bottomSeat)   each seat's place, [{x, y}] in percent
//   WizardTable.tokenChips(tokens, cls)   Extreme's tokens ({red: 2, ...}) as coloured chips
//   WizardTable.reducedMotion()   whether the reader asked for reduced motion
//   WizardTable.el(tag, {attr: value, class: "..."}, ...children)   a new element; children are
//     nodes or text, and null, undefined and "" are left out
//
// The model (every field may be left out):
//   {
//     roundText: "Round 3",                      the middle's first line
//     trump: {card: "r5" | null, text: "red (r5 turned up)"},
//     dealer: 2, toAct: [1],                     seats
//     seats: [{                                  one per seat, in seat order
//       bid: "2" | "face down" | null,           classic (null: not bid yet, drawn "–")
//       tokens: {red: 1} | null, destroyer: false,   Extreme (tokens null: nothing predicted yet)
//       tricks: 1, total: 30,
//       hand: ["r5", "W2"] | null,               the cards, face up
//       handCount: 7 | null,                     or how many, face down
//       playable: ["r5"],                        the cards onCard may be called with
//     }],
//     tokensShown: false,                        Extreme: the seats show tokens, not bids
//     trick: [{seat: 1, card: "r5"}],            the trick in progress, in play order
//     winning: 1 | null,                         the seat taking it so far
//     lastTrick: {cards: [{seat, card}], leader: 1, winner: 2} | null,   shown while no card of the next is down
//     supply: {red: 4, ...} | null, supplyNote: "",   Extreme's supply in the middle
//   }
"use strict";

(function () {
  // Each suit or token colour by its code letter: a name and a mark of its own shape.
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

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value; else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined || child === "") continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function cardName(code) {
    const letter = String(code).charAt(0);
    const suit = SUITS[letter];
    if (!suit) return String(code);
    return letter === "W" || letter === "J" ? suit.name : suit.name + " " + String(code).slice(1);
  }

  function card(code, opts) {
    const o = opts || {};
    const letter = String(code).charAt(0);
    const suit = SUITS[letter] || {mark: "?"};
    const rank = letter === "W" || letter === "J" ? letter : String(code).slice(1);
    const classes = ["pc", "s-" + letter, o.mini ? "mini" : "", o.extra || ""].filter(Boolean).join(" ");
    const attrs = {class: classes, "data-card": code, title: cardName(code)};
    if (o.button) Object.assign(attrs, {type: "button", "aria-label": cardName(code)});
    return el(o.button ? "button" : "span", attrs,
              el("span", {class: "pc-rank"}, rank), el("span", {class: "pc-mark", "aria-hidden": "true"}, suit.mark));
  }

  function tokenChips(tokens, cls) {
    const chips = Object.entries(tokens || {}).filter(([, n]) => n > 0).map(([colour, n]) =>
      el("span", {class: "chip t-" + colour, title: n + " " + colour},
         el("span", {class: "chip-mark", "aria-hidden": "true"},
            TOKEN_MARKS[colour] || (SUITS[colour.charAt(0)] || {}).mark || ""),
         el("span", {class: "chip-n"}, n)));
    return el("span", {class: "chips " + (cls || "")}, ...(chips.length ? chips : [el("span", {class: "note"}, "none")]));
  }

  // Seat ``bottomSeat`` at the bottom, the others clockwise on screen (y grows downwards),
  // on an ellipse 39% of the width and 38% of the height out from the middle.
  function places(players, bottomSeat) {
    return Array.from({length: players}, (_, seat) => {
      const angle = Math.PI / 2 + 2 * Math.PI * (seat - (bottomSeat || 0)) / players;
      return {x: 50 + 39 * Math.cos(angle), y: 50 + 38 * Math.sin(angle)};
    });
  }

  const reducedMotion = () => Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);

  function create(root, options) {
    const o = options || {};
    const names = o.names || [];
    const where = places(names.length, o.bottomSeat || 0);
    root.classList.remove(...Array.from(root.classList).filter((c) => c.startsWith("players-")));
    root.classList.add("felt", "players-" + names.length);
    const center = el("div", {class: "felt-center"});
    const seats = names.map((name, seat) => el("div", {
      class: "seat" + (o.you === seat ? " you" : ""), "data-seat": seat,
      style: "--x:" + where[seat].x.toFixed(1) + "%;--y:" + where[seat].y.toFixed(1) + "%"}));
    root.replaceChildren(center, ...seats);
    const table = {root, names, where, center, seats, options: o};
    return {
      draw: (model, drawOptions) => draw(table, model || {}, drawOptions || {}),
      seat: (seat) => seats[seat],
      root,
    };
  }

  // ------------------------------------------------------------------ drawing

  function drawSeat(table, seat, model) {
    const box = table.seats[seat];
    const m = (model.seats || [])[seat] || {};
    const head = el("div", {class: "seat-head"}, el("span", {class: "seat-name"}, table.names[seat]),
                    model.dealer === seat ? el("span", {class: "badge", title: "dealer"}, "D") : null);
    const last = model.lastTrick;
    if (!(model.trick || []).length && last && last.winner === seat) {
      head.append(el("span", {class: "seat-won", title: "won the last trick"},
                     ...last.cards.map((c) => card(c.card, {mini: true}))));
    }
    const facts = el("div", {class: "seat-facts"});
    if (model.tokensShown) {
      if (m.destroyer) facts.append(el("span", {class: "chip destroyer", title: "took the destroyer"}, "\u2716 destroyer"));
      if (m.tokens) facts.append(tokenChips(m.tokens, "held"));
    } else {
      facts.append(el("span", {class: "fact bid"}, "bid " + (m.bid === null || m.bid === undefined ? "–" : m.bid)));
    }
    facts.append(el("span", {class: "fact tricks"}, "tricks " + (m.tricks === undefined ? 0 : m.tricks)));
    if (m.total !== undefined && m.total !== null) {
      facts.append(el("span", {class: "fact total", "data-total": m.total}, "total " + m.total));
    }
    const hand = el("div", {class: "hand"});
    if (m.hand) {
      const playable = new Set(m.playable || []);
      for (const code of m.hand) {
        const button = Boolean(table.options.onCard) && playable.has(code);
        const tile = card(code, {button, extra: button ? "legal" : ""});
        if (button) tile.addEventListener("click", () => table.options.onCard(code));
        hand.append(tile);
      }
    } else if (m.handCount !== undefined && m.handCount !== null) {
      // At most 6 backs, which fit a seat's box; the count beside them (or under, where
      // the box is narrow) says how many.
      const shown = Array.from({length: Math.min(m.handCount, 6)}, () => el("span", {class: "pc back", "aria-hidden": "true"}));
      hand.append(el("span", {class: "backs", "data-cards-left": m.handCount}, ...shown,
                     el("span", {class: "backs-count"}, m.handCount + " face down")));
    }
    box.classList.toggle("to-act", (model.toAct || []).includes(seat));
    box.replaceChildren(head, facts, hand);
  }

  // Where a seat's card lies in the trick's area: towards that seat, -1 to 1 each way.
  function direction(table, seat) {
    const p = table.where[seat];
    return "--dx:" + ((p.x - 50) / 39).toFixed(2) + ";--dy:" + ((p.y - 50) / 38).toFixed(2);
  }

  function caption(table, model) {
    const names = table.names;
    const trick = model.trick || [];
    if (trick.length) {
      const winning = model.winning === undefined || model.winning === null ? "" : " · " + names[model.winning] + " taking it so far";
      return "led by " + names[trick[0].seat] + winning;
    }
    if (model.lastTrick) return "led by " + names[model.lastTrick.leader] + " · won by " + names[model.lastTrick.winner];
    return "";
  }

  function drawCenter(table, model) {
    const parts = [el("p", {class: "felt-round"}, model.roundText || "")];
    if (model.trump) {
      parts.push(el("div", {class: "trump"}, model.trump.card ? card(model.trump.card, {extra: "trump-card"}) : null,
                    el("span", {class: "trump-text"}, "trump: " + model.trump.text)));
    }
    const area = el("div", {class: "trick-area"});
    (model.trick || []).forEach((c, i) => {
      area.append(el("div", {class: "trick-card" + (i === 0 ? " led" : ""), "data-seat": c.seat, style: direction(table, c.seat)},
                     card(c.card, {extra: c.seat === model.winning ? "win" : ""}),
                     el("span", {class: "who"}, table.names[c.seat])));
    });
    parts.push(area, el("p", {class: "trick-text"}, caption(table, model)));
    if (model.supply) {
      parts.push(el("div", {class: "supply"}, el("span", {class: "note"}, "supply "), tokenChips(model.supply, "supply-chips"),
                    model.supplyNote ? el("span", {class: "note"}, " " + model.supplyNote) : null));
    }
    table.center.replaceChildren(...parts);
  }

  // ------------------------------------------------------------------ motion

  const middleOf = (node) => { const r = node.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; };

  // Where every card tile and every seat's hand is now, to move the cards from there.
  function placesNow(table) {
    const cards = new Map();
    table.root.querySelectorAll(".pc[data-card]").forEach((node) => {
      if (!node.closest(".trump")) cards.set(node.dataset.card, middleOf(node));
    });
    const hands = table.seats.map((box) => middleOf(box.querySelector(".hand") || box));
    return {cards, hands};
  }

  // Each card in the trick or in a won pile glides from where it was: from its place on the
  // table, or (a card just played) from its seat's hand.
  function animate(table, before, duration) {
    table.root.querySelectorAll(".trick-card, .seat-won").forEach((holder) => {
      holder.querySelectorAll(".pc[data-card]").forEach((face) => {
        const code = face.dataset.card;
        let from = before.cards.get(code);
        if (!from && holder.classList.contains("trick-card")) from = before.hands[Number(holder.dataset.seat)];
        if (!from) return;
        const to = middleOf(face);
        const dx = from.x - to.x, dy = from.y - to.y;
        if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
        face.animate([{transform: "translate(" + dx + "px, " + dy + "px)"}, {transform: "none"}],
                     {duration, easing: "ease-out"});
      });
    });
  }

  function draw(table, model, opts) {
    const before = opts.animate && !reducedMotion() ? placesNow(table) : null;
    table.seats.forEach((_, seat) => drawSeat(table, seat, model));
    drawCenter(table, model);
    if (before) animate(table, before, opts.duration || 300);
  }

  window.WizardTable = {create, card, cardName, places, tokenChips, reducedMotion, el};
}());
