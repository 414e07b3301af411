// The play page: a Bummerl or a deal against an agent. The server owns the game; this page shows its view.
"use strict";

let gameId = null;
let view = null;
let busy = false;

const $ = (id) => document.getElementById(id);

async function init() {
  markNav("play");
  const meta = await api("GET", "/api/agents");
  $("opponent").replaceChildren(...meta.agents.map((spec) => new Option(spec, spec)));
  $("rules").replaceChildren(...meta.rules.map((name) => new Option(name, name)));
  const offer = () => offerAgentsFor(meta, $("rules").value, [$("opponent")]);
  $("rules").addEventListener("change", offer);
  offer();
  $("player").value = playerName();
  $("start-button").addEventListener("click", startGame);
  $("next-button").addEventListener("click", nextDeal);
  const leave = () => { localStorage.removeItem("sixtysix.game"); history.replaceState(null, "", "/"); showStart(); };
  $("new-button").addEventListener("click", leave);
  $("leave-button").addEventListener("click", leave);  // mid-game: the game stays in the history, resumable
  $("analysis-button").addEventListener("click", analyse);
  // The game in the address, else the one this browser played last; an unknown id in the address is named, and
  // the stored game (another one) is still resumed. A seed link (/?seed=N) asks for a new, reproducible game: it
  // opens the start form, not the stored game.
  const fromAddress = new URLSearchParams(location.search).get("game");
  const stored = new URLSearchParams(location.search).has("seed") ? null : localStorage.getItem("sixtysix.game");
  for (const wanted of new Set([fromAddress, stored].filter(Boolean))) {
    try {
      const data = await api("GET", `/api/games/${encodeURIComponent(wanted)}`);
      return show(data);
    } catch (error) {
      if (wanted === stored) localStorage.removeItem("sixtysix.game");
      if (wanted === fromAddress) history.replaceState(null, "", "/");
      if (error.status !== 404 || wanted === fromAddress) showError(error.message);
    }
  }
  showStart();
}

// A game that moved on elsewhere (another tab: 409) is shown as it is now; one that expired (410) or is unknown
// (404) gives way to the start form. The error message stays on screen either way.
async function recover(error) {
  showError(error.message);
  if (error.status === 409) {
    try { show(await api("GET", `/api/games/${encodeURIComponent(gameId)}`)); } catch (again) { showError(again.message); }
  } else if (error.status === 410 || error.status === 404) {
    localStorage.removeItem("sixtysix.game");
    history.replaceState(null, "", "/");
    showStart();
  }
}

function showStart() {
  $("game").classList.add("hidden");
  $("start").classList.remove("hidden");
}

// After a new deal is shown, the keyboard goes on from the hand (else the focus fell to the page's start); at a
// deal's end, to its next step.
function focusPlay() {
  const next = document.querySelector("#hand .card.legal, #actions button[data-action], #next-button:not(.hidden), " +
                                      "#deal-over:not(.hidden) #analysis-button");
  if (next) next.focus({ preventScroll: true });
}

async function startGame() {
  const name = $("player").value.trim();
  if (!name) { showError("Please enter your name (it keeps your history)."); return; }
  if (busy) return;  // a double click dealt two games, one left in progress for ever
  busy = true;
  $("start-button").disabled = true;
  try {  // the name is kept (show) once the server took it
    const body = { player: name, opponent: $("opponent").value, rules: $("rules").value, bummerl: $("length").value === "bummerl" };
    const params = new URLSearchParams(location.search);  // /?seed=N&seat=0 deals a reproducible game
    if (params.has("seed")) body.seed = pageSeed(params.get("seed"));
    if (params.has("seat")) body.seat = Number(params.get("seat"));
    const data = await api("POST", "/api/games", body);
    show(data);
    markNav("play");
    focusPlay();
  } catch (error) { showError(error.message); } finally { busy = false; $("start-button").disabled = false; }
}

function show(data) {
  gameId = data.id;
  view = data.view;
  localStorage.setItem("sixtysix.game", gameId);
  localStorage.setItem("sixtysix.player", data.player);
  if (new URLSearchParams(location.search).get("game") !== gameId) history.replaceState(null, "", `/?game=${gameId}`);
  $("start").classList.add("hidden");
  $("game").classList.remove("hidden");
  render();
}

function render() {
  const v = view;
  const match = v.match;
  $("deal-info").innerHTML = `Deal ${v.deal} · ${escapeHtml(v.rules)} rules · trump ${suitSpan(v.trump_suit)} · ` +
    (v.dealer === "you" ? "you deal" : "opponent deals");
  $("match-score").textContent = match.bummerl ? `Bummerl: you ${match.scores.you} : ${match.scores.opponent} ${v.opponent}  (to ${match.target})` :
    "single deal";
  $("opponent-name").textContent = `${v.opponent}`;
  $("opponent-points").textContent = `${v.points.opponent} points · ${v.tricks_won.opponent} tricks`;
  $("opponent-known").textContent = v.opponent_known.length ? `known to hold ${cardWords(v.opponent_known.join(" "))}` : "";
  const backs = [];
  for (let i = 0; i < v.opponent_hand_size; i++) backs.push(backElement(true));
  $("opponent-hand").replaceChildren(...backs);
  $("opponent-hand").setAttribute("aria-label", `the opponent holds ${v.opponent_hand_size} cards`);
  $("trump-slot").replaceChildren(v.bottom_card ? cardElement(v.bottom_card) : document.createTextNode(""));
  $("stack-slot").replaceChildren(v.talon_size > 1 ? backElement() : document.createTextNode(""));
  $("talon-count").innerHTML = v.talon_size ? `talon ${v.talon_size}` + (v.closed_by ? ` · closed by ${v.closed_by}` : "")
    : (v.closed_by ? `closed by ${v.closed_by}` : "talon exhausted");
  if (v.table) {
    $("trick-cards").replaceChildren(cardElement(v.table.card));
    $("trick-label").textContent = `${v.table.leader} led`;
    $("trick").classList.remove("last");
  } else if (v.last_trick) {
    $("trick-cards").replaceChildren(cardElement(v.last_trick.lead), cardElement(v.last_trick.follow));
    $("trick-label").textContent = `last trick: ${v.last_trick.winner === "you" ? "yours" : "opponent's"}`;
    $("trick").classList.add("last");
  } else {
    $("trick-cards").replaceChildren();
    $("trick-label").textContent = "table";
  }
  const legalCards = new Map(v.legal.filter((m) => m.id < 24).map((m) => [m.label, m]));
  $("hand").replaceChildren(...v.hand.map((name) => {
    const card = cardElement(name);
    const move = legalCards.get(name);
    if (move) {
      card.classList.add("legal");
      card.tabIndex = 0;  // keyboard: Tab to a card, Enter or Space plays it
      card.setAttribute("role", "button");
      card.setAttribute("aria-label", `play ${cardWords(name)}`);
      card.addEventListener("click", () => play(move.id));
      card.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); play(move.id); }
      });
    } else if (v.to_move === "you") card.classList.add("illegal");
    return card;
  }));
  $("hand").classList.remove("with-hints");
  const buttons = v.legal.filter((m) => m.id >= 24).map((move) => {
    const button = document.createElement("button");
    button.textContent = cardWords(move.label) + (move.id < 32 ? (move.label.endsWith(v.trump_suit) ? " (40)" : " (20)") : "");
    button.dataset.action = move.name;
    button.addEventListener("click", () => play(move.id));
    return button;
  });
  if (v.to_move === "you") {
    const hint = document.createElement("button");
    hint.className = "hintbtn";
    hint.id = "hint-button";
    hint.textContent = "Hint";
    hint.addEventListener("click", askHint);
    buttons.push(hint);
  }
  $("actions").replaceChildren(...buttons);
  const canExchange = v.legal.some((m) => m.name === "exchange");
  const prompts = { lead: "Your turn: lead a card", follow: "Your turn: answer the lead",
                    predraw: "Your trick: draw, or close the talon first",
                    respond_close: canExchange ? "The talon was closed: exchange the trump card or not"
                      : "The talon was closed: you hold no trump nine to exchange" };
  $("turn").textContent = v.result ? "" : v.to_move === "you" ? prompts[v.stage] || "Your turn" : "Opponent to move…";
  $("my-points").textContent = `You: ${v.points.you} points · ${v.tricks_won.you} tricks (as a careful player counts them)`;
  $("log").replaceChildren(...v.events.map((event) => {
    const item = document.createElement("li");
    item.className = (event.player || "") + (event.kind === "result" ? " result" : "");
    item.innerHTML = cardHtml(event.text);
    return item;
  }));
  $("log").scrollTop = $("log").scrollHeight;
  const latest = v.events.length ? v.events[v.events.length - 1].text : "";
  if ($("announce").dataset.text !== latest) {  // a screen reader hears each new move once, not the whole log
    $("announce").dataset.text = latest;
    $("announce").textContent = cardWords(latest);
  }
  $("deals").tBodies[0].replaceChildren(...match.deals.map((deal, index) => {
    const row = document.createElement("tr");
    row.innerHTML = `<td>${index + 1}</td><td>${deal.winner ?? "—"}</td><td class="num">${deal.game_points}</td><td>${escapeHtml(deal.reason)}</td>`;
    return row;
  }));
  const over = Boolean(v.result);
  $("deal-over").classList.toggle("hidden", !over);
  if (over) {
    const r = v.result;
    let headline = r.winner === null ? "Not scored (65:65)" :
      r.winner === "you" ? `You win ${r.game_points} game point${r.game_points > 1 ? "s" : ""}` :
      `${v.opponent} wins ${r.game_points} game point${r.game_points > 1 ? "s" : ""}`;
    if (r.winner !== null) headline += ` — ${r.reason}`;  // an unscored deal's reason is the headline itself
    if (match.over && match.bummerl) headline += match.winner === "you" ? " · You win the Bummerl!" : " · The Bummerl goes to " + v.opponent;
    // R17: a Bummerl lost with no game point counts double
    if (match.over && match.bummerl && match.schneider) headline += " (Schneider: the loser scored no game point, it counts double)";
    $("deal-result").textContent = headline;
    $("deal-points").textContent = `points: you ${r.points.you} · ${v.opponent} ${r.points.opponent}`;
    $("next-button").classList.toggle("hidden", match.over);
    $("replay-link").href = `/replay?game=${gameId}&deal=${v.deal}`;
  } else {
    $("analysis").classList.add("hidden");
  }
  $("hint-list").textContent = v.to_move === "you" ? "Ask for a hint: the search rates each move from what you know." : "";
}

async function play(action) {
  if (busy) return;
  busy = true;
  // Played from the keyboard: focus goes back to the hand after the redraw, not to the page's start.
  const fromKeyboard = Boolean(document.activeElement && document.activeElement.closest("#hand, #actions"));
  try {
    // deal and move_number: the server refuses the move (409) if another tab moved since this view.
    const data = await api("POST", `/api/games/${gameId}/move`, { action, deal: view.deal, move_number: view.move_number });
    view = data.view;
    render();
    if (fromKeyboard) focusPlay();
  } catch (error) { await recover(error); } finally { busy = false; }
}

async function nextDeal() {
  if (busy) return;  // a double click would ask for the deal after next while the first is dealt
  busy = true;
  try {
    const data = await api("POST", `/api/games/${gameId}/next`);
    view = data.view;
    render();
    focusPlay();
  } catch (error) { await recover(error); } finally { busy = false; }
}

async function askHint() {
  if (busy) return;  // a move on its way: the hint would be for the position it leaves (a 409)
  $("hint-list").textContent = "thinking…";
  const asked = view;
  try {
    // As a move: the hint is for the position on screen, refused (409) if another tab moved since.
    const data = await api("POST", `/api/games/${gameId}/hint`, { deal: asked.deal, move_number: asked.move_number });
    if (view !== asked) return;  // a move made while the search thought: its hint is for a position gone
    const best = data.hints[0].value;
    const table = document.createElement("table");
    table.className = "data";
    table.id = "hint-table";
    table.innerHTML = "<thead><tr><th>move</th><th class='num'>expected game points</th></tr></thead>";
    const body = document.createElement("tbody");
    for (const row of data.hints) {
      const tr = document.createElement("tr");
      tr.innerHTML = `<td>${cardHtml(row.label)}</td><td class="num ${row.value >= 0 ? "pos" : "neg"}">${row.value >= 0 ? "+" : ""}${row.value.toFixed(2)}</td>`;
      body.appendChild(tr);
      const card = document.querySelector(`#hand .card[data-card="${row.label}"]`);
      if (card) {
        const badge = document.createElement("span");
        badge.className = "badge" + (row.value === best ? " best" : "");
        badge.textContent = (row.value >= 0 ? "+" : "") + row.value.toFixed(2);
        card.appendChild(badge);
      }
    }
    table.appendChild(body);
    $("hand").classList.add("with-hints");
    $("hint-list").replaceChildren(table);
  } catch (error) {
    if (view !== asked) return;  // the move made meanwhile answered for itself
    $("hint-list").textContent = "";
    await recover(error);
  }
}

async function analyse() {
  $("analysis").classList.remove("hidden");
  $("analysis-headline").textContent = "Solving the deal with all cards open…";
  $("analysis-table").tBodies[0].replaceChildren();
  try {
    const data = await api("POST", `/api/games/${gameId}/deals/${view.deal}/analysis`);
    $("analysis-headline").innerHTML = cardHtml(data.headline);
    const rows = data.analysis.open.moves.map((open, index) => {
      const search = data.analysis.search[index];
      const tr = document.createElement("tr");
      const before = open.value_before, after = open.value_after;
      const openText = before === null ? "not solved in time" : `${before > 0 ? "+" : ""}${before} → ${after > 0 ? "+" : ""}${after}`;
      const cost = search.forced ? "forced" : search.cost.toFixed(2);
      tr.innerHTML = `<td>${cardHtml(open.move)}</td><td class="${before !== null && after < before ? "neg" : ""}">${openText}</td>` +
        `<td class="num ${!search.forced && search.cost > 0.25 ? "neg" : ""}">${cost}</td><td>${search.forced ? "" : cardHtml(search.best_moves.join(", "))}</td>`;
      return tr;
    });
    $("analysis-table").tBodies[0].replaceChildren(...rows);
  } catch (error) { $("analysis-headline").textContent = ""; showError(error.message); }
}

init().catch((error) => showError(error.message));
