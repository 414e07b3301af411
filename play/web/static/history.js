// A player's history: deals and Bummerl against each agent, recent deals (replayable) and games (resumable).
"use strict";

const $ = (id) => document.getElementById(id);

function when(seconds) { return new Date(seconds * 1000).toLocaleString(); }
function signed(value) { return `<span class="${value > 0 ? "pos" : value < 0 ? "neg" : ""}">${value > 0 ? "+" : ""}${value}</span>`; }

async function show() {
  const name = $("player").value.trim();
  if (!name) { showError("Enter a player name."); return; }
  $("summary").classList.add("hidden");  // a failed lookup must not leave another player's results on screen
  // Only dots: browsers tidy "/api/players/../history" into another address (a bare 404), so it is named here.
  if (!name.replace(/[. ]/g, "")) { showError(`bad player name "${name}": not only dots and spaces`); return; }
  try {
    const data = await api("GET", `/api/players/${encodeURIComponent(name)}/history`);
    $("summary").classList.remove("hidden");
    $("title").textContent = `${data.player}: results against each agent`;
    $("agents").tBodies[0].replaceChildren(...data.agents.map((row) => {
      const tr = document.createElement("tr");
      const perDeal = row.deals ? (row.margin / row.deals).toFixed(2) : "—";
      tr.innerHTML = `<td>${escapeHtml(row.opponent)}</td><td class="num">${row.deals}</td><td class="num">${row.deals_won}</td>` +
        `<td class="num">${row.deals_lost}</td><td class="num">${signed(row.margin)}</td><td class="num">${perDeal}</td>` +
        `<td class="num">${row.bummerl_won}</td><td class="num">${row.bummerl_lost}</td>`;
      return tr;
    }));
    $("empty").textContent = data.agents.length ? "" : "No finished deals yet.";
    $("recent").tBodies[0].replaceChildren(...data.recent_deals.map((deal) => {
      const tr = document.createElement("tr");
      tr.innerHTML = `<td>${when(deal.finished)}</td><td>${escapeHtml(deal.opponent)}</td><td class="num">${signed(deal.game_points)}</td>` +
        `<td><a href="/replay?game=${encodeURIComponent(deal.game)}&deal=${deal.number}">replay</a></td>`;
      return tr;
    }));
    $("games").tBodies[0].replaceChildren(...data.games.map((game) => {
      const tr = document.createElement("tr");
      // A single deal tied at 65:65 has no winner (R15): not scored, not lost.
      const result = game.winner === "you" ? "won" : game.winner === null ? "not scored" : "lost";
      const state = game.expired ? "expired" : game.finished ? result : "in progress";
      const link = !game.finished && !game.expired ? `<a href="/?game=${encodeURIComponent(game.game)}">resume</a>` : "";
      tr.innerHTML = `<td>${when(game.updated)}</td><td>${escapeHtml(game.opponent)}</td><td>${state}</td><td>${link}</td>`;
      return tr;
    }));
    localStorage.setItem("sixtysix.player", name);
    history.replaceState(null, "", `/history?player=${encodeURIComponent(name)}`);
  } catch (error) { showError(error.message); }
}

markNav("history");
$("player").value = new URLSearchParams(location.search).get("player") || playerName();
$("show-button").addEventListener("click", show);
if ($("player").value) show();
