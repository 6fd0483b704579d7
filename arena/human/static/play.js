// arena play: the card table a person plays at. The state comes from GET /api/play/state
// (long-polled with ?since=VERSION, ?events=N for only the events the page lacks); the
// person's choices go to POST /api/play/answer. The felt is arena web's card table
// (window.WizardTable, /static/table.js); this script keeps the seat's view, the person's
// hand and controls, the score panel and the pace.
//
// The events the seat receives are queued and shown one at a time, at the pace the person
// chose (remembered in localStorage), so that the rivals' cards can be followed; the
// controls of a decision appear once the queue is empty. Only the options the referee
// sent are offered, and the page knows only the seat's own hand and the public events.
"use strict";

(function () {
  const root = document.getElementById("play");
  const $ = (id) => document.getElementById(id);
  const T = window.WizardTable;
  const PACE_KEY = "wizard-arena.play.pace";
  // How long each kind of step stays on the screen at normal pace (ms); slow and fast scale it.
  const PACES = {slow: 1.8, normal: 1, fast: 0.25};
  const SHOW_MS = {play: 900, trick: 1300, collect: 500, round_end: 2200, bid: 650, bids_revealed: 1000,
                   prediction: 800, destroyer: 800, token_exchange: 600, token_returned: 600, black_taken: 600,
                   black_exhausted: 600, trump: 700, trump_chosen: 800, round_start: 500, bid_made: 350};
  const COLOURS = ["red", "yellow", "green", "blue", "purple"];

  const S = {
    latest: null,      // the last state the server sent
    version: -1,
    game: null,        // which match of the run the page shows
    have: 0,           // events received of this match
    queue: [],         // events received, not shown yet
    busy: false,       // a step is on the screen
    view: null,        // the table as shown so far (folded from the events shown)
    felt: null,
    fullSupply: null,  // Extreme: every token, as a round starts
    shownRequest: null,
    sending: false,
    drawn: null,       // the felt's model as last drawn
  };

  const el = T.el;

  // ------------------------------------------------------------------ words

  const me = () => S.latest.match.seat;
  const names = () => S.latest.match.bots;
  const extreme = () => S.latest.match.variant === "extreme";
  const isMe = (seat) => seat === me();
  const who = (seat) => (isMe(seat) ? "you" : names()[seat]);
  const Who = (seat) => (isMe(seat) ? "You" : names()[seat]);
  const card = (code) => T.cardName(code);
  const plural = (n, one, many) => n + " " + (n === 1 ? one : many);
  const tokensText = (tokens) => Object.entries(tokens || {}).filter(([, n]) => n > 0)
    .map(([colour, n]) => n + " " + colour).join(", ");

  function sentence(e) {
    switch (e.type) {
      case "round_start": return "Round " + e.round + ": " + Who(e.dealer) + (isMe(e.dealer) ? " deal." : " deals.");
      case "hand": return "Your cards: " + e.cards.map(card).join(", ") + ".";
      case "trump":
        if (!e.card) return "No card turned up: no trump this round.";
        return card(e.card) + " turned up: " + (e.suit ? e.suit + " is trump." : e.card.charAt(0) === "W"
          ? "the dealer chooses the trump suit." : "no trump this round.");
      case "trump_chosen": return Who(e.seat) + (isMe(e.seat) ? " choose " : " chooses ") + e.suit + " as trump.";
      case "bid": return Who(e.seat) + " bid " + e.bid + ".";
      case "bid_made": return Who(e.seat) + (isMe(e.seat) ? " have bid." : " has bid (face down).");
      case "bids_revealed": return "Bids revealed: " + e.bids.map((b, s) => who(s) + " " + b).join(", ") + ".";
      case "play": return Who(e.seat) + " played " + card(e.card) + ".";
      case "trick": return isMe(e.winner) ? "You won the trick." : names()[e.winner] + " won the trick.";
      case "round_end": return "Round " + e.round + " over: " + roundWords(e) + ".";
      case "game_over": return "The match is over.";
      case "destroyer": return Who(e.seat) + " took the destroyer.";
      case "prediction": return Who(e.seat) + " predicted " + (tokensText(e.tokens) || "no trick") + ".";
      case "token_exchange": return Who(e.to_seat) + " took a " + e.colour + " token from " + who(e.from_seat) +
        ", who got a white one.";
      case "token_returned": return Who(e.seat) + " returned a " + e.colour + " token.";
      case "black_taken": return Who(e.seat) + " had no token to return and took a black one.";
      case "black_exhausted": return Who(e.seat) + " had no token to return (no black token left).";
      default: return e.type;
    }
  }

  function roundWords(e) {
    if (e.scores) return e.scores.map((p, s) => who(s) + " " + (p > 0 ? "+" : "") + p).join(", ");
    return e.penalties.map((p, s) => who(s) + " " + p).join(", ") + " (penalties)";
  }

  // ------------------------------------------------------------------ the view, folded from events

  function newView(obs) {
    const players = names().length;
    return {
      round: obs ? obs.round : 0, rounds: obs ? obs.rounds : 0, dealer: obs ? obs.dealer : null,
      trumpCard: null, trump: null, bids: Array(players).fill(null), bidMade: Array(players).fill(false),
      tricks: Array(players).fill(0), totals: Array(players).fill(0), handCounts: Array(players).fill(0),
      hand: [], trick: [], winning: null, lastTrick: null, roundResults: [],
      tokens: Array.from({length: players}, () => ({})), predicted: Array(players).fill(false),
      destroyer: null, supply: S.fullSupply ? Object.assign({}, S.fullSupply) : null,
      over: false,
    };
  }

  function sync(view, obs) {
    view.round = obs.round; view.rounds = obs.rounds; view.dealer = obs.dealer;
    view.hand = obs.hand.slice(); view.handCounts = obs.hand_sizes.slice(); view.tricks = obs.tricks_won.slice();
    view.totals = obs.scores.slice(); view.trick = obs.trick.slice();
    if (obs.variant === "classic") {
      view.bids = obs.bids.slice(); view.trumpCard = obs.trump_card; view.trump = obs.trump;
    } else {
      view.tokens = obs.tokens.map((t) => Object.assign({}, t)); view.supply = Object.assign({}, obs.supply);
      view.destroyer = obs.destroyer; view.predicted = obs.predicted.slice();
    }
  }

  function fullSupply(obs) {
    const all = Object.assign({}, obs.supply);
    obs.tokens.forEach((held) => Object.entries(held).forEach(([c, n]) => { all[c] = (all[c] || 0) + n; }));
    return all;
  }

  const add = (tokens, colour, n) => { tokens[colour] = (tokens[colour] || 0) + n; };

  // Apply one event to the view; returns false for the echo of a card the page already moved.
  function apply(view, e) {
    const players = view.bids.length;
    switch (e.type) {
      case "round_start":
        Object.assign(view, {round: e.round, dealer: e.dealer, trumpCard: null, trump: null,
                             bids: Array(players).fill(null), bidMade: Array(players).fill(false),
                             tricks: Array(players).fill(0), trick: [], lastTrick: null, winning: null,
                             handCounts: Array(players).fill(e.hand_size || 15),
                             tokens: Array.from({length: players}, () => ({})), predicted: Array(players).fill(false),
                             destroyer: null, supply: S.fullSupply ? Object.assign({}, S.fullSupply) : null});
        break;
      case "hand": view.hand = e.cards.slice(); break;
      case "trump": view.trumpCard = e.card; view.trump = e.suit; break;
      case "trump_chosen": view.trump = e.suit; break;
      case "bid": view.bids[e.seat] = e.bid; break;
      case "bid_made": view.bidMade[e.seat] = true; break;
      case "bids_revealed": view.bids = e.bids.slice(); break;
      case "play":
        if (view.trick.some((c) => c.card === e.card)) return false;
        view.trick.push({seat: e.seat, card: e.card});
        view.handCounts[e.seat] = Math.max(0, view.handCounts[e.seat] - 1);
        if (isMe(e.seat)) view.hand = view.hand.filter((c) => c !== e.card);
        view.lastTrick = null;
        break;
      case "trick": view.winning = e.winner; break;   // shown with its winner, then collected
      case "collect":
        view.lastTrick = {cards: e.trick.cards, leader: e.trick.leader, winner: e.trick.winner};
        view.trick = []; view.winning = null; view.tricks[e.trick.winner] += 1;
        break;
      case "round_end": view.totals = e.totals.slice(); view.roundResults.push(e); break;
      case "game_over": view.totals = e.totals.slice(); view.over = true; break;
      case "destroyer": view.destroyer = e.seat; view.predicted[e.seat] = true; break;
      case "prediction":
        view.predicted[e.seat] = true;
        Object.entries(e.tokens || {}).forEach(([c, n]) => {
          add(view.tokens[e.seat], c, n);
          if (view.supply) add(view.supply, c, -n);
        });
        break;
      case "token_exchange":
        add(view.tokens[e.from_seat], e.colour, -1); add(view.tokens[e.from_seat], "white", 1);
        if (view.supply) { add(view.supply, e.colour, 1); add(view.supply, "white", -1); }
        break;
      case "token_returned":
        add(view.tokens[e.seat], e.colour, -1); if (view.supply) add(view.supply, e.colour, 1);
        break;
      case "black_taken":
        add(view.tokens[e.seat], "black", 1); if (view.supply) add(view.supply, "black", -1);
        break;
      default: break;
    }
    return true;
  }

  // ------------------------------------------------------------------ drawing

  function trumpModel(view) {
    if (extreme()) return {card: null, text: "red, always"};
    if (!view.round) return null;
    if (view.trump) {
      return {card: view.trumpCard, text: view.trump + (view.trumpCard ? " (" + card(view.trumpCard) + ")" : "")};
    }
    if (view.trumpCard && view.trumpCard.charAt(0) === "W") return {card: view.trumpCard, text: "the dealer chooses"};
    return {card: view.trumpCard, text: "none"};
  }

  function bidText(view, seat) {
    if (view.bids[seat] !== null) return String(view.bids[seat]);
    return view.bidMade[seat] ? "face down" : null;
  }

  function feltModel(view, toAct) {
    return {
      roundText: view.round ? "Round " + view.round + " of " + view.rounds : "Before the deal",
      trump: trumpModel(view), dealer: view.dealer, toAct,
      tokensShown: extreme(),
      seats: names().map((_, seat) => ({
        bid: bidText(view, seat),
        tokens: view.predicted[seat] || Object.values(view.tokens[seat]).some((n) => n) ? view.tokens[seat] : null,
        destroyer: view.destroyer === seat, tricks: view.tricks[seat], total: view.totals[seat],
        hand: null, handCount: isMe(seat) ? null : view.handCounts[seat],
      })),
      trick: view.trick, winning: view.winning, lastTrick: view.lastTrick,
      supply: extreme() ? view.supply : null,
    };
  }

  function drawFelt(animate, toAct) {
    const mine = new Map();
    $("hand").querySelectorAll(".pc[data-card]").forEach((n) => {
      const r = n.getBoundingClientRect(); mine.set(n.dataset.card, {x: r.left + r.width / 2, y: r.top + r.height / 2});
    });
    const duration = Math.round(450 * PACES[pace()]);
    const model = feltModel(S.view, toAct || []);
    // Drawing the same table again would cut short a card still gliding there.
    const key = JSON.stringify(model);
    if (key === S.drawn) return;
    S.drawn = key;
    S.felt.draw(model, {animate, duration});
    // A card the person played glides from their hand (below the felt) to the trick.
    if (animate && !T.reducedMotion()) {
      S.felt.root.querySelectorAll(".trick-card .pc[data-card]").forEach((face) => {
        const from = mine.get(face.dataset.card);
        if (!from) return;
        const r = face.getBoundingClientRect();
        face.animate([{transform: "translate(" + (from.x - r.left - r.width / 2) + "px, " +
                       (from.y - r.top - r.height / 2) + "px)"}, {transform: "none"}], {duration, easing: "ease-out"});
      });
    }
  }

  function drawHand(decision) {
    const hand = $("hand");
    const playing = decision && decision.kind === "play";
    const legal = new Set(playing ? decision.options : []);
    hand.classList.toggle("choosing", Boolean(playing));
    const tiles = S.view.hand.map((code) => {
      const ok = legal.has(code);
      const tile = T.card(code, {button: playing, extra: playing ? (ok ? "legal" : "dim") : ""});
      if (playing) {
        tile.disabled = !ok;
        tile.tabIndex = -1;
        if (ok) tile.addEventListener("click", () => playCard(decision, code));
      }
      return tile;
    });
    hand.replaceChildren(...tiles);
    const first = hand.querySelector("button.legal");
    if (first) first.tabIndex = 0;
  }

  function drawScores() {
    const view = S.view;
    $("bid-head").textContent = extreme() ? "tokens" : "bid";
    const rows = names().map((name, seat) => {
      let bid;
      if (extreme()) {
        bid = view.destroyer === seat ? el("span", {class: "chip destroyer"}, "destroyer") : T.tokenChips(view.tokens[seat]);
      } else {
        bid = bidText(view, seat) === null ? "–" : bidText(view, seat);
      }
      return el("tr", {"data-seat": seat, class: isMe(seat) ? "you" : ""},
                el("th", {scope: "row"}, isMe(seat) && name !== "you" ? name + " (you)" : name),
                el("td", {class: "bid"}, bid), el("td", {class: "tricks"}, view.tricks[seat]),
                el("td", {class: "total", "data-total": view.totals[seat]}, view.totals[seat]));
    });
    document.querySelector("#scores tbody").replaceChildren(...rows);
    $("scoring").textContent = extreme() ? "Penalty points: lower is better. Each token left at the round's end "
      + "costs 2 (white 4, black 3)." : "Points: 20 + 10 a trick for a bid made, −10 a trick it is off by.";
    drawRoundResult();
  }

  function drawRoundResult() {
    const box = $("round-result");
    const last = S.view.roundResults[S.view.roundResults.length - 1];
    box.hidden = !last;
    if (!last) return;
    $("round-result-title").textContent = "Round " + last.round + " result";
    const head = extreme() ? ["player", "penalty", "total"] : ["player", "bid", "took", "points", "total"];
    box.querySelector("thead").replaceChildren(el("tr", {}, ...head.map((h) => el("th", {scope: "col"}, h))));
    box.querySelector("tbody").replaceChildren(...names().map((name, seat) => el("tr", {"data-seat": seat},
      el("th", {scope: "row"}, who(seat)),
      ...(extreme() ? [last.penalties[seat]] : [last.bids[seat], last.tricks[seat],
                                                   (last.scores[seat] > 0 ? "+" : "") + last.scores[seat]])
        .map((v) => el("td", {}, v)),
      el("td", {}, last.totals[seat]))));
  }

  function drawStandings() {
    const state = S.latest;
    const box = $("standings");
    const done = Boolean(state.result) && !S.queue.length && !S.busy;
    box.hidden = !done;
    if (!done) return;
    const unit = extreme() ? "penalty point" : "point";
    const seats = state.result.totals.map((_, seat) => seat)
      .sort((a, b) => state.result.places[a] - state.result.places[b]);
    $("places").replaceChildren(...seats.map((seat) => el("li", {"data-seat": seat, "data-total": state.result.totals[seat],
                                                                 class: isMe(seat) ? "you" : ""},
      el("strong", {}, "#" + state.result.places[seat] + " " + who(seat)),
      " " + plural(state.result.totals[seat], unit, unit + "s"))));
    const stored = $("stored");
    if (state.stored) {
      stored.replaceChildren("Stored as match " + state.stored.match_id + ": ",
                             el("a", {href: state.stored.viewer, id: "viewer-link"}, "watch its replay"),
                             "; later: ", el("code", {}, state.stored.command));
    } else {
      const reason = state.result.reason;
      stored.textContent = reason && reason !== "completed" ? reason : "Storing the match…";
    }
    $("again").disabled = !state.stored || state.again;
  }

  function drawStatus() {
    const state = S.latest;
    const idle = !S.queue.length && !S.busy;
    let text = {starting: "Starting the referee and the bots…", waiting: "The others are playing…",
                your_turn: "Your turn", over: "The match is over", closed: "The play server has stopped.",
                failed: "The match could not be played: " + (state.problem || "")}[state.status] || state.status;
    if (!idle && state.status !== "failed") text = "The others are playing…";
    if (state.status === "your_turn" && idle && state.decision) {
      text += " (" + Math.round(state.decision.deadline_ms / 60000) + " min a decision, "
        + Math.round(state.decision.time_bank_ms / 60000) + " min in the bank)";
    }
    if (state.status === "over" && idle && state.result) {
      const mine = state.result.places[me()];
      text = "The match is over: you are #" + mine + " of " + state.result.places.length;
    }
    $("status").textContent = text;
    root.dataset.status = idle ? state.status : "showing";
    const faults = state.faults || [];
    if (faults.length) showMessage("Fault (" + faults[faults.length - 1].kind + "): " + faults[faults.length - 1].message);
  }

  function showMessage(text) {
    const box = $("message");
    box.textContent = text || "";
    box.hidden = !text;
  }

  // The aria-live line tells the step; "What happened" keeps every line, newest first.
  function say(text) {
    $("say").textContent = text;
    logLine(text);
  }

  function logLine(text) {
    const log = $("events");
    log.insertBefore(el("li", {}, text), log.firstChild);
  }

  // ------------------------------------------------------------------ the person's controls

  const PROMPTS = {bid: "Your bid", trump: "Choose the trump suit", play: "Your turn: play a card",
                   predict: "Your prediction", pay: "Return a token for the trick you won"};

  function choice(option, title, meaning, onClick) {
    const button = el("button", {type: "button", class: "choice", "data-option": option},
                      el("strong", {}, title), el("span", {class: "meaning"}, meaning));
    button.addEventListener("click", onClick);
    return button;
  }

  function drawControls() {
    const state = S.latest;
    const decision = state.decision;
    const idle = !S.queue.length && !S.busy;
    const box = $("controls");
    const show = Boolean(decision) && idle && state.status === "your_turn";
    box.hidden = !show;
    drawHand(show ? decision : null);
    if (!show) { box.removeAttribute("data-request"); S.shownRequest = null; return; }
    if (S.shownRequest === decision.request_id) return;
    S.shownRequest = decision.request_id;
    box.dataset.kind = decision.kind;
    box.dataset.request = decision.request_id;
    $("prompt").textContent = PROMPTS[decision.kind] || decision.kind;
    const obs = state.observation;
    const choices = $("choices");
    const send = (body) => answer(Object.assign({request_id: decision.request_id}, body));
    let help = "";
    let items = [];
    if (decision.kind === "bid") {
      const tricks = obs.hand_size;
      help = "How many of this round's " + plural(tricks, "trick", "tricks") + " will you win? Exactly right scores "
        + "20 + 10 a trick; each trick off costs 10.";
      const all = Array.from({length: tricks + 1}, (_, n) => String(n));
      const missing = all.filter((n) => !decision.options.includes(n));
      if (missing.length) help += " Bid " + missing.join(", ") + " is not allowed: the bids may not add up to "
        + plural(tricks, "trick", "tricks") + ".";
      items = decision.options.map((n) => choice(n, "Bid " + n, n === "0" ? "you expect to win no trick" :
        "you expect to win " + plural(Number(n), "trick", "tricks"), () => send({option: n})));
    } else if (decision.kind === "trump") {
      help = card(obs.trump_card) + " was turned up: as the dealer you choose this round's trump suit.";
      items = decision.options.map((suit) => choice(suit, suit.charAt(0).toUpperCase() + suit.slice(1),
        suit + " cards beat every other suit this round", () => send({option: suit})));
    } else if (decision.kind === "play") {
      const lead = obs.lead_suit;
      help = "The raised cards may be played" + (lead ? " (you must follow " + lead + " if you can)" : "")
        + ": click one, or use the arrow keys and Enter.";
    } else if (decision.kind === "pay") {
      const pay = obs.pay || {};
      help = "You won the trick" + (pay.lead_suit ? " led in " + pay.lead_suit : "") + ": return one token to the supply.";
      items = decision.options.map((colour) => choice(colour, "Return " + colour, colour === "white"
        ? "a joker: a white token left at the round's end costs 4, a coloured one 2"
        : colour === pay.lead_suit ? "the trick's lead colour" : "you won it with a red card",
        () => send({option: colour})));
    } else if (decision.kind === "predict") {
      help = "Take one token per trick you expect to win in that colour (the lead colour; red also counts for "
        + "a trick you win with a red card). Every token still held at the round's end costs 2.";
      items = predictControls(obs, send);
    }
    $("help").textContent = help;
    choices.replaceChildren(...items);
    box.scrollIntoView({block: "nearest"});
    const focusable = decision.kind === "play" ? $("hand").querySelector("button.legal") : choices.querySelector("button");
    if (focusable && (document.activeElement === document.body || $("my-seat").contains(document.activeElement) ||
                      document.activeElement === null)) focusable.focus({preventScroll: true});
  }

  function predictControls(obs, send) {
    const wanted = {};
    const form = el("div", {class: "predict"});
    const summary = el("p", {class: "summary", "aria-live": "polite"});
    const takeFrom = el("div", {class: "take-from"});
    const from = {};
    const holders = (colour) => obs.tokens.map((t, seat) => seat)
      .filter((seat) => !isMe(seat) && obs.tokens[seat][colour] > 0);
    function refresh() {
      const taken = tokensText(wanted);
      summary.textContent = taken ? "You take " + taken + ": you expect to win "
        + plural(Object.values(wanted).reduce((a, b) => a + b, 0), "trick", "tricks") + " with them."
        : "No token: you expect to win no trick.";
      const rows = [];
      COLOURS.forEach((colour) => {
        const short = (wanted[colour] || 0) - (obs.supply[colour] || 0);
        if (short <= 0) { delete from[colour]; return; }
        const select = el("select", {"data-colour": colour},
          el("option", {value: ""}, "clockwise from your left (the default)"),
          ...holders(colour).map((seat) => el("option", {value: String(seat)},
                                              names()[seat] + " (holds " + obs.tokens[seat][colour] + ")")));
        select.value = from[colour] === undefined ? "" : String(from[colour]);
        select.addEventListener("change", () => {
          if (select.value === "") delete from[colour]; else from[colour] = Number(select.value);
        });
        rows.push(el("label", {}, "The supply has " + (obs.supply[colour] || 0) + " " + colour + ": take the other "
          + short + " from ", select, " (they get a white token each)"));
      });
      takeFrom.replaceChildren(...rows);
    }
    COLOURS.forEach((colour) => {
      const most = obs.can_take[colour] || 0;
      wanted[colour] = 0;
      const count = el("output", {class: "count", "aria-live": "polite"}, "0");
      const less = el("button", {type: "button", class: "step", "data-colour": colour, "data-step": "-1",
                                 "aria-label": "one " + colour + " token less"}, "−");
      const more = el("button", {type: "button", class: "step", "data-colour": colour, "data-step": "1",
                                 "aria-label": "one " + colour + " token more"}, "+");
      const set = (n) => {
        wanted[colour] = Math.max(0, Math.min(most, n));
        count.textContent = String(wanted[colour]);
        less.disabled = wanted[colour] === 0; more.disabled = wanted[colour] >= most;
        refresh();
      };
      less.addEventListener("click", () => set(wanted[colour] - 1));
      more.addEventListener("click", () => set(wanted[colour] + 1));
      form.append(el("div", {class: "stepper", "data-colour": colour}, el("span", {class: "chip t-" + colour}, colour),
                     less, count, more,
                     el("span", {class: "note"}, "up to " + most)));
      set(0);
    });
    const items = [form, takeFrom, summary];
    items.push(choice("tokens", "Predict these tokens", "take them and win their tricks to give them back", () => {
      const tokens = {};
      const pairs = [];
      COLOURS.forEach((c) => {
        if (!wanted[c]) return;
        tokens[c] = wanted[c];
        const short = wanted[c] - (obs.supply[c] || 0);
        if (short > 0 && from[c] !== undefined) for (let i = 0; i < short; i++) pairs.push([c, from[c]]);
      });
      send({prediction: {destroyer: false, tokens, take_from: pairs}});
    }));
    if (obs.destroyer_free) {
      const penalty = Math.max(0, obs.destroyer_penalty - obs.black_taken);
      items.push(choice("destroyer", "Take the destroyer", "predict nothing; your tricks move no token, and the "
        + "round costs you " + obs.destroyer_penalty + ", less 1 for each black token the others take (now "
        + penalty + ")", () => send({prediction: {destroyer: true, tokens: {}, take_from: []}})));
    }
    refresh();
    return items;
  }

  function playCard(decision, code) {
    if (S.sending) return;
    answer({request_id: decision.request_id, option: code}, () => {
      // The card goes to the trick at once; the server's own event of it is then not shown twice.
      apply(S.view, {type: "play", seat: me(), card: code});
      drawFelt(true, []);
      drawHand(null);
      say("You played " + card(code) + ".");
    });
  }

  function answer(body, taken) {
    if (S.sending) return;
    S.sending = true;
    showMessage("");
    fetch("/api/play/answer", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)})
      .then((response) => response.json().then((data) => ({ok: response.ok, data})))
      .then(({ok, data}) => {
        S.sending = false;
        if (!ok) { showMessage(data.error || "the answer was refused"); return; }
        $("controls").hidden = true;
        if (taken) taken();
        else drawHand(null);
      }, () => { S.sending = false; showMessage("The play server does not answer."); });
  }

  // Arrow keys move between the playable cards; Enter (or Space) plays the one in focus.
  $("hand").addEventListener("keydown", (event) => {
    const legal = Array.from($("hand").querySelectorAll("button.legal"));
    const at = legal.indexOf(document.activeElement);
    if (at < 0) return;
    const step = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1}[event.key];
    if (!step) return;
    event.preventDefault();
    const next = legal[(at + step + legal.length) % legal.length];
    legal.forEach((b) => { b.tabIndex = b === next ? 0 : -1; });
    next.focus();
  });

  $("again").addEventListener("click", () => {
    $("again").disabled = true;
    fetch("/api/play/again", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})
      .then((response) => response.json().then((data) => { if (!response.ok) showMessage(data.error); }));
  });

  // ------------------------------------------------------------------ pace and the queue

  function pace() {
    const chosen = $("pace").value;
    return PACES[chosen] ? chosen : "normal";
  }
  try {
    const saved = localStorage.getItem(PACE_KEY);
    if (PACES[saved]) $("pace").value = saved;
  } catch (e) { /* no storage: the pace is not remembered */ }
  $("pace").addEventListener("change", () => {
    try { localStorage.setItem(PACE_KEY, pace()); } catch (e) { /* not remembered */ }
  });

  // Show the next queued event, then wait as long as the pace says; the controls come back once none is left.
  function pump() {
    if (S.busy) return;
    if (!S.queue.length) { settle(); return; }
    S.busy = true;
    $("controls").hidden = true;
    const e = S.queue.shift();
    const shown = apply(S.view, e);
    if (e.type === "trick") S.queue.unshift({type: "collect", trick: e});
    let wait = 0;
    if (shown && e.type !== "collect" && e.type !== "hand") {
      say(sentence(e));
      wait = SHOW_MS[e.type] || 300;
    } else if (e.type === "collect") {
      wait = SHOW_MS.collect;
    }
    if (shown) { drawFelt(e.type === "play" || e.type === "collect", []); drawScores(); drawHand(null); }
    drawStatus();
    setTimeout(() => { S.busy = false; pump(); }, Math.round(wait * PACES[pace()]));
  }

  function settle() {
    const state = S.latest;
    if (state.decision && state.observation && !state.over) {
      sync(S.view, state.observation);
    }
    drawFelt(false, state.decision ? [me()] : []);
    drawScores();
    drawStatus();
    drawControls();
    drawStandings();
    root.dataset.version = String(state.version);
  }

  // ------------------------------------------------------------------ the state from the server

  function receive(state, first) {
    if (state.game !== S.game && state.events_from > 0) return load(false, 0);   // another match: from its start
    S.latest = state;
    S.version = state.version;
    if (state.game !== S.game) {
      S.game = state.game; S.have = 0; S.queue = []; S.view = null; S.felt = null; S.shownRequest = null;
      S.drawn = null;
      // Another match: nothing of the last one stays on the page.
      for (const id of ["events", "felt", "hand", "choices", "places"]) $(id).replaceChildren();
      document.querySelector("#scores tbody").replaceChildren();
      for (const id of ["standings", "round-result", "controls"]) $(id).hidden = true;
      $("say").textContent = "";
    }
    S.have = state.events_from + state.events.length;
    root.dataset.game = String(state.game);
    if (!state.match) { drawStatus(); return null; }
    if (state.observation && !S.fullSupply && state.observation.variant === "extreme") {
      S.fullSupply = fullSupply(state.observation);
    }
    if (!S.felt) {
      S.felt = T.create($("felt"), {names: state.match.bots, bottomSeat: state.match.seat, you: state.match.seat});
    }
    if (!S.view) {
      S.view = newView(null);
      if (first) {      // a page opened mid-match: the table as it is now, without replaying it
        state.events.forEach((e) => {
          if (apply(S.view, e) && e.type !== "hand") logLine(sentence(e));
          if (e.type === "trick") apply(S.view, {type: "collect", trick: e});
        });
        const last = $("events").firstChild;
        $("say").textContent = last ? last.textContent : "";
        settle();
        return null;
      }
    }
    S.queue.push(...state.events);
    if (!S.busy) pump();
    return null;
  }

  function load(wait, events) {
    const params = new URLSearchParams({events: String(events)});
    if (wait && S.version >= 0) params.set("since", String(S.version));
    return fetch("/api/play/state?" + params, {cache: "no-store"})
      .then((response) => response.json())
      .then((state) => {
        if (state.version > S.version || state.game !== S.game) receive(state, S.version < 0);
        return state;
      });
  }

  function poll() {
    load(true, S.have).then((state) => {
      if (state.status === "closed" || state.status === "failed") { drawStatus(); return; }
      poll();
    }, () => {
      root.dataset.status = "offline";
      $("status").textContent = "The play server does not answer (stopped?)";
    });
  }

  poll();
}());
