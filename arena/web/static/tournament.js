// Wizard Arena web: the tournament page of a running tournament redraws itself.
// Every 2 s it asks /api/tournaments/ID and redraws the status, the progress, the
// board's rows and the matches being played now (links to their live viewer); it stops
// once the tournament is no longer running (then a reload shows its games, or the
// resume command when it was interrupted).
"use strict";

(function () {
  const root = document.getElementById("tournament");
  if (!root || root.dataset.status !== "running") return;
  const api = root.dataset.api;

  function text(tag, value, cls) {
    const cell = document.createElement(tag);
    cell.textContent = value;
    if (cls) cell.className = cls;
    return cell;
  }

  // A rating as the server's page writes it (arena.web.pages.rating_text): "≤757" when it
  // is only a bound, " [B]" after it in comparison group B.
  const BOUND_SIGNS = {lower: "\u2265", upper: "\u2264", none: "~"};
  function ratingText(r) {
    const group = r.group === null || r.group === undefined ? ""
      : " [" + (r.group <= 26 ? String.fromCharCode(64 + r.group) : String(r.group)) + "]";
    return (BOUND_SIGNS[r.bound] || "") + r.rating.toFixed(0) + group;
  }

  function intervalText(r) {
    if (r.bound) return "\u2013";
    return r.interval === null ? "?" : "\u00b1" + r.interval.toFixed(0);
  }

  function drawBoard(rows) {
    const body = document.querySelector("#tournament-board tbody");
    if (!body) return;
    body.replaceChildren(...rows.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.bot = r.bot;
      const bot = text("td", "", "bot");
      const link = text("a", r.bot, "bot-link");
      link.href = "/bots/" + encodeURIComponent(r.bot);
      bot.appendChild(link);
      tr.append(text("td", String(r.rank)), bot, text("td", ratingText(r)),
                text("td", intervalText(r)), text("td", String(r.games)),
                text("td", r.avg_score.toFixed(1)), text("td", r.avg_place.toFixed(2)), text("td", String(r.faults)));
      return tr;
    }));
  }

  // The tournament's matches being played now, each linking to its live viewer.
  function drawLive(matches) {
    const box = document.getElementById("tournament-live");
    if (!box || !matches) return;
    if (!matches.length) {
      box.replaceChildren(text("p", "No match is being played right now.", "note"));
      return;
    }
    const body = document.createElement("tbody");
    for (const m of matches) {
      const tr = document.createElement("tr");
      const cell = text("td", "");
      if (m.private) {
        // Its deal is played again by other matches: its cards are hands still to come.
        cell.append(m.match_id + " ", text("span", "private until every game of its deal is played", "note"));
      } else {
        const link = text("a", m.match_id, "live-link");
        link.href = "/live/" + encodeURIComponent(m.match_id);
        cell.appendChild(link);
      }
      tr.append(cell, text("td", m.variant), text("td", m.bots.map((b, i) => b + " " + m.totals[i]).join(", ")));
      body.appendChild(tr);
    }
    const head = document.createElement("thead");
    const row = document.createElement("tr");
    row.append(text("th", "Match"), text("th", "Variant"), text("th", "Bots and totals so far"));
    head.appendChild(row);
    const table = document.createElement("table");
    table.className = "list live";
    table.append(head, body);
    box.replaceChildren(table);
  }

  function draw(data) {
    const scheduled = data.games_scheduled;
    document.getElementById("status").textContent = data.status;
    document.getElementById("progress").textContent =
      scheduled ? `${data.games_stored} / ${scheduled}` : String(data.games_stored);
    document.getElementById("games-stored").textContent = String(data.games_stored);
    const bar = document.getElementById("progress-bar");
    if (bar && scheduled) bar.value = Math.min(100, (100 * data.games_stored) / scheduled);
    if (data.last_game_at) document.getElementById("last-game").textContent = data.last_game_at.slice(0, 19);
    if (data.first_game_at) document.getElementById("first-game").textContent = data.first_game_at.slice(0, 19);
    drawBoard(data.board);
    drawLive(data.live);
    root.dataset.status = data.status;
  }

  async function poll() {
    try {
      const answer = await fetch(api, { cache: "no-store" });
      if (answer.ok) draw(await answer.json());
    } catch (error) {
      // The server went away for a moment: try again at the next tick.
    }
    if (root.dataset.status === "running") setTimeout(poll, 2000);
    else root.dataset.polling = "stopped";
  }

  setTimeout(poll, 2000);
})();
