/* arena play: the table drawn from GET /api/play/state (long-polled with ?since=VERSION),
   the person's clicks sent to POST /api/play/answer. Only the options the referee sent
   are clickable; the hand, bids and tricks are the seat's own observation. */
(function () {
  "use strict";
  var root = document.getElementById("play");
  var SUITS = { b: "blue", g: "green", r: "red", y: "yellow", p: "purple" };
  var version = -1;
  var sending = false;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function cardName(code) {
    var suit = code.charAt(0);
    if (suit === "W") return "Wizard";
    if (suit === "J") return "Jester";
    return (SUITS[suit] || suit) + " " + code.slice(1);
  }
  function cardLabel(code) {
    var suit = code.charAt(0);
    if (suit === "W") return "W";
    if (suit === "J") return "J";
    return suit.toUpperCase() + code.slice(1);
  }
  function card(code, button) {
    var node = el(button ? "button" : "span", { "class": "card s-" + code.charAt(0), title: cardName(code),
                                                "data-card": code }, cardLabel(code));
    if (button) node.type = "button";
    return node;
  }
  function who(state, seat) {
    var bots = state.match ? state.match.bots : [];
    var name = bots[seat] !== undefined ? bots[seat] : "seat " + seat;
    if (!state.match || seat !== state.match.seat) return name;
    return name.toLowerCase() === "you" ? name : name + " (you)";
  }
  function tokenText(held) {
    return Object.keys(held || {}).filter(function (c) { return held[c]; })
      .map(function (c) { return held[c] + " " + c; }).join(", ");
  }

  function describe(state, e) {
    var name = function (seat) { return who(state, seat); };
    // "You play", "heuristic plays": the person's own moves read in the second person.
    var does = function (seat, third, second) {
      return state.match && seat === state.match.seat ? "You " + second : name(seat) + " " + third;
    };
    switch (e.type) {
      case "round_start": return "Round " + e.round + ": " + does(e.dealer, "deals", "deal");
      case "hand": return "Your cards: " + e.cards.map(cardName).join(", ");
      case "trump": return e.card ? "Turned up " + cardName(e.card) + (e.suit ? ": trump is " + e.suit : "") :
        "No card turned up: no trump";
      case "trump_chosen": return does(e.seat, "chooses", "choose") + " " + e.suit + " as trump";
      case "bid": return does(e.seat, "bids", "bid") + " " + e.bid;
      case "bid_made": return does(e.seat, "has bid", "have bid");
      case "bids_revealed": return "Bids: " + e.bids.join(", ");
      case "play": return does(e.seat, "plays", "play") + " " + cardName(e.card);
      case "trick": return does(e.winner, "wins", "win") + " the trick";
      case "round_end": return "Round " + e.round + " scored: " + e.totals.map(function (t, s) {
        return name(s) + " " + t; }).join(", ");
      case "game_over": return "Game over";
      case "destroyer": return does(e.seat, "takes", "take") + " the destroyer";
      case "prediction": return does(e.seat, "predicts", "predict") + " " + (tokenText(e.tokens) || "nothing");
      case "token_exchange": return does(e.to_seat, "takes", "take") + " a " + e.colour + " token from " +
        name(e.from_seat);
      case "token_returned": return does(e.seat, "returns", "return") + " a " + e.colour + " token";
      case "black_taken": return does(e.seat, "takes", "take") + " a black token";
      case "black_exhausted": return does(e.seat, "has", "have") + " nothing to return (no black token left)";
      default: return e.type;
    }
  }

  function drawStatus(state) {
    var status = $("status");
    var text = {
      starting: "Starting the referee and the bots…",
      waiting: "The others are playing…",
      your_turn: "Your turn",
      over: "The match is over",
      failed: "The match could not be played: " + (state.problem || "")
    }[state.status] || state.status;
    if (state.status === "your_turn" && state.decision) {
      var limit = Math.round(state.decision.deadline_ms / 60000);
      text += " (" + limit + " min per decision, bank " + Math.round(state.decision.time_bank_ms / 60000) + " min)";
    }
    status.textContent = text;
    status.className = state.status === "your_turn" ? "your-turn" : "";
    root.setAttribute("data-status", state.status);
  }

  function drawRound(state) {
    var obs = state.observation;
    var box = clear($("round"));
    if (!obs) return;
    var parts = ["Round " + obs.round + " of " + obs.rounds, "dealer " + who(state, obs.dealer)];
    if (obs.variant === "classic") {
      parts.push("trump " + (obs.trump || "none") + (obs.trump_card ? " (" + cardName(obs.trump_card) + " turned up)" : ""));
      parts.push(obs.bidding + " bidding");
    } else {
      parts.push("red is trump");
      if (obs.supply) parts.push("supply: " + tokenText(obs.supply));
      if (obs.destroyer !== null && obs.destroyer !== undefined) parts.push("destroyer: " + who(state, obs.destroyer));
    }
    box.textContent = parts.join(" · ");
  }

  function drawSeats(state) {
    var obs = state.observation;
    var body = clear(document.querySelector("#seats tbody"));
    if (!state.match) return;
    $("bid-head").textContent = state.match.variant === "extreme" ? "tokens" : "bid";
    state.match.bots.forEach(function (bot, seat) {
      var row = el("tr", { "data-seat": seat });
      if (seat === state.match.seat) row.classList.add("you");
      if (obs && obs.to_act.indexOf(seat) >= 0) row.classList.add("to-act");
      var bid = "";
      if (obs && obs.variant === "classic") {
        bid = obs.bids[seat] === null ? "–" : obs.bids[seat];
      } else if (obs && obs.tokens) {
        bid = obs.destroyer === seat ? "destroyer" : tokenText(obs.tokens[seat]) || "–";
      }
      var cells = [seat, who(state, seat) + (obs && obs.dealer === seat ? " · dealer" : ""), bid,
                   obs ? obs.tricks_won[seat] : "", obs ? obs.hand_sizes[seat] : "", obs ? obs.scores[seat] : ""];
      cells.forEach(function (value) { row.appendChild(el("td", {}, value)); });
      body.appendChild(row);
    });
  }

  function drawTrick(state) {
    var obs = state.observation;
    var trick = clear($("trick"));
    $("last-trick").textContent = "";
    if (!obs) return;
    obs.trick.forEach(function (played) {
      var box = el("span", { "class": "seat-card" });
      box.appendChild(card(played.card, false));
      box.appendChild(el("span", {}, who(state, played.seat)));
      trick.appendChild(box);
    });
    if (!obs.trick.length) trick.appendChild(el("span", { "class": "note" }, "no card played yet"));
    if (obs.last_trick) {
      $("last-trick").textContent = "Last trick: " + obs.last_trick.cards.map(function (c) {
        return cardName(c.card); }).join(", ") + " — won by " + who(state, obs.last_trick.winner);
    }
  }

  function drawHand(state) {
    var hand = clear($("hand"));
    var obs = state.observation;
    if (!obs) return;
    var decision = state.decision;
    var playing = decision && decision.kind === "play";
    obs.hand.forEach(function (code) {
      var node = card(code, true);
      var legal = playing && decision.options.indexOf(code) >= 0;
      node.disabled = !legal;
      if (legal) {
        node.classList.add("legal");
        node.addEventListener("click", function () { send({ request_id: decision.request_id, option: code }); });
      }
      hand.appendChild(node);
    });
  }

  var PROMPTS = { bid: "Your bid: how many tricks will you take?", play: "Play a card from your hand",
                  trump: "A Wizard was turned up: choose the trump suit", pay: "Return a token for the trick you won",
                  predict: "Predict: take tokens, or the destroyer" };

  function drawDecision(state) {
    var decision = state.decision;
    var box = $("decision");
    var options = clear($("options"));
    box.hidden = !decision;
    if (!decision) return;
    box.setAttribute("data-kind", decision.kind);
    $("prompt").textContent = PROMPTS[decision.kind] || decision.kind;
    if (decision.kind === "play") {
      options.appendChild(el("span", { "class": "note" }, "The cards you may play are outlined in your hand."));
    } else if (decision.kind === "predict") {
      drawPredict(state, options);
    } else {
      decision.options.forEach(function (option) {
        var button = el("button", { type: "button", "class": "option", "data-option": option }, option);
        button.addEventListener("click", function () { send({ request_id: decision.request_id, option: option }); });
        options.appendChild(button);
      });
    }
  }

  function drawPredict(state, options) {
    var obs = state.observation;
    var decision = state.decision;
    var form = el("form", { "class": "predict" });
    var inputs = {};
    Object.keys(obs.can_take || {}).forEach(function (colour) {
      var label = el("label", {}, colour + " ");
      var input = el("input", { type: "number", min: "0", max: String(obs.can_take[colour]), value: "0",
                                name: colour });
      inputs[colour] = input;
      label.appendChild(input);
      label.appendChild(el("span", { "class": "note" }, " (up to " + obs.can_take[colour] + ")"));
      form.appendChild(label);
    });
    var take = el("button", { type: "submit", "class": "option", "data-option": "tokens" }, "Take these tokens");
    form.appendChild(take);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var tokens = {};
      Object.keys(inputs).forEach(function (c) { var n = parseInt(inputs[c].value, 10); if (n > 0) tokens[c] = n; });
      send({ request_id: decision.request_id, prediction: { destroyer: false, tokens: tokens, take_from: [] } });
    });
    options.appendChild(form);
    if (obs.destroyer_free) {
      var destroyer = el("button", { type: "button", "class": "option", "data-option": "destroyer" },
                         "Take the destroyer");
      destroyer.addEventListener("click", function () {
        send({ request_id: decision.request_id, prediction: { destroyer: true, tokens: {}, take_from: [] } });
      });
      options.appendChild(destroyer);
    }
  }

  function drawResult(state) {
    var box = $("result");
    box.hidden = !state.result;
    if (!state.result) return;
    var body = clear(document.querySelector("#totals tbody"));
    var seats = state.result.totals.map(function (total, seat) { return seat; });
    seats.sort(function (a, b) { return state.result.places[a] - state.result.places[b]; });
    seats.forEach(function (seat) {
      var row = el("tr", { "data-seat": seat });
      [state.result.places[seat], who(state, seat), state.result.totals[seat]].forEach(function (v) {
        row.appendChild(el("td", {}, v));
      });
      body.appendChild(row);
    });
    var higher = state.result.result && state.result.result.higher_is_better;
    $("scoring").textContent = (higher === false ? "Penalty points: lower is better." : "Points: higher is better.") +
      (state.result.forfeited ? " You forfeited (too many faults)." : "") +
      (state.result.reason && state.result.reason !== "completed" ? " " + state.result.reason : "");
    var stored = clear($("stored"));
    if (state.stored) {
      stored.appendChild(document.createTextNode("Stored as match " + state.stored.match_id + ": "));
      stored.appendChild(el("a", { href: state.stored.viewer, id: "viewer-link" }, "watch its replay"));
      stored.appendChild(document.createTextNode("; later: " + state.stored.command));
    } else {
      stored.textContent = "Storing the match…";
    }
  }

  function drawEvents(state) {
    var list = clear($("events"));
    var events = state.events.slice(-60).reverse();
    events.forEach(function (e) { list.appendChild(el("li", {}, describe(state, e))); });
    (state.faults || []).forEach(function (f) {
      list.insertBefore(el("li", { "class": "message" }, "Fault (" + f.kind + "): " + f.message), list.firstChild);
    });
  }

  function draw(state) {
    var over = state.status === "over";
    // After the end the last observation is the one of the last decision: the result replaces it.
    ["round", "board", "hand-box"].forEach(function (id) { $(id).hidden = over; });
    drawStatus(state);
    drawRound(state);
    drawSeats(state);
    drawTrick(state);
    drawHand(state);
    drawDecision(state);
    drawResult(state);
    drawEvents(state);
    root.setAttribute("data-version", String(state.version));
  }

  function showMessage(text) {
    var box = $("message");
    box.textContent = text || "";
    box.hidden = !text;
  }

  function send(answer) {
    if (sending) return;
    sending = true;
    document.querySelectorAll("#hand button, #options button").forEach(function (b) { b.disabled = true; });
    fetch("/api/play/answer", { method: "POST", headers: { "Content-Type": "application/json" },
                                body: JSON.stringify(answer) })
      .then(function (response) {
        return response.json().then(function (body) {
          showMessage(response.ok ? "" : body.error);
        });
      })
      .catch(function () { showMessage("The play server does not answer."); })
      .then(function () { sending = false; return load(false); });
  }

  function load(wait) {
    var url = "/api/play/state" + (wait && version >= 0 ? "?since=" + version : "");
    return fetch(url, { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        if (state.version > version) { version = state.version; draw(state); }
        return state;
      });
  }

  function poll() {
    load(true).then(function (state) {
      if (state.status === "over" && state.stored) return;   // nothing changes any more
      if (state.status === "failed") return;
      poll();
    }, function () {
      root.setAttribute("data-status", "offline");
      $("status").textContent = "The play server does not answer (stopped?)";
    });
  }

  poll();
}());
