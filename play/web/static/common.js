// Shared helpers of the Sixty-six pages: the API, card drawing, the navigation bar.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RED = { D: true, H: true };

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {  // the browser's own words ("Failed to fetch") say nothing of what happened
    throw new Error("the server did not answer (is sixtysix serve still running?)");
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = { error: `bad response (${response.status})` }; }
  if (!response.ok) {
    const error = new Error(data && data.error ? data.error : `request failed (${response.status})`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function rankText(name) { return name[0] === "T" ? "10" : name[0]; }

// A face-up card element for "QH" style names.
function cardElement(name, small) {
  const card = document.createElement("div");
  card.className = "card" + (RED[name[1]] ? " red" : "") + (small ? " small" : "");
  card.dataset.card = name;
  card.title = name;
  card.innerHTML = `<div class="corner">${rankText(name)}<small>${SUITS[name[1]]}</small></div>` +
                   `<div class="pip">${SUITS[name[1]]}</div>`;
  return card;
}

function backElement(small) {
  const card = document.createElement("div");
  card.className = "card back" + (small ? " small" : "");
  return card;
}

// "marry KH" -> "marry K♥": card names inside a text drawn with suit symbols (as HTML-safe text).
function cardWords(text) {
  return String(text).replace(/\b([9JQKTA])([CDHS])\b/g, (match, rank, suit) => (rank === "T" ? "10" : rank) + SUITS[suit]);
}

// Text with card names drawn as coloured rank+suit, as HTML (the text is escaped first).
function cardHtml(text) {
  return escapeHtml(text).replace(/\b([9JQKTA])([CDHS])\b/g, (match, rank, suit) =>
    `<span class="cardword${RED[suit] ? " red" : ""}">${rank === "T" ? "10" : rank}${SUITS[suit]}</span>`);
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function suitSpan(suit) {
  return `<span style="color:${RED[suit] ? "#ff8a80" : "#fff"}">${SUITS[suit]}</span>`;
}

function showError(message) {
  const box = document.getElementById("error");
  if (!box) { alert(message); return; }
  box.textContent = message;
  box.classList.remove("hidden");
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => box.classList.add("hidden"), 6000);
}

// A seed typed into a page: a whole number JavaScript holds exactly (a larger one would be rounded to another deck).
function pageSeed(text) {
  const seed = Number(text);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`seed must be a whole number from 0 to 2^53-1, got "${text}"`);
  return seed;
}

// The agent selects offer what a game accepts under the rules chosen: an agent that cannot play them (a network
// fitted for other rules, R19-R20; meta.plays from /api/agents) stays listed, greyed and saying which it plays, and
// a select left on it moves to the first agent that can.
function offerAgentsFor(meta, rules, selects) {
  for (const select of selects) {
    for (const option of select.options) {
      const plays = (meta.plays || {})[option.value];
      option.disabled = rules !== null && Array.isArray(plays) && !plays.includes(rules);  // null: rules unknown
      option.textContent = option.disabled ? `${option.value} (plays ${plays.join(", ") || "none of these"})` : option.value;
    }
    if (select.selectedOptions.length && select.selectedOptions[0].disabled) {
      const usable = [...select.options].find((option) => !option.disabled);
      if (usable) select.value = usable.value;
    }
  }
}

function playerName() { return localStorage.getItem("sixtysix.player") || ""; }

function markNav(page) {
  document.querySelectorAll("header.top nav a").forEach((link) => {
    if (link.dataset.page === page) link.classList.add("active");
  });
  const who = document.querySelector("header.top .who");
  if (who && playerName()) who.textContent = `playing as ${playerName()}`;
}

// Draw a frame with all cards open (watch and replay pages): two seats, or three for an R21 deal.
function renderOpenFrame(frame, root) {
  const q = (selector) => root.querySelector(selector);
  const seats = frame.hands.length;
  q('[data-seat="2"]').classList.toggle("hidden", seats < 3);
  for (let player = 0; player < seats; player++) {
    const hand = q(`[data-seat="${player}"] .hand`);
    hand.replaceChildren(...frame.hands[player].map((name) => cardElement(name)));
    q(`[data-seat="${player}"] .name`).textContent = frame.names[player] + (frame.dealer === player ? " · dealer" : "");
    q(`[data-seat="${player}"] .points`).textContent =
      `${frame.points[player]} points · ${frame.tricks_won[player]} tricks` + (frame.to_move === player ? " · to move" : "");
  }
  q(".trump-slot").replaceChildren(frame.bottom_card ? cardElement(frame.bottom_card) : document.createTextNode(""));
  q(".stack-slot").replaceChildren(frame.talon_size > 1 ? backElement() : document.createTextNode(""));
  const trump = frame.trump_suit ? `trump ${suitSpan(frame.trump_suit)}` : "trump not named yet";
  q(".count").innerHTML = (seats < 3 ? `talon ${frame.talon_size} · ` : "") + trump +
    (frame.closed_by !== null ? ` · closed by ${escapeHtml(frame.names[frame.closed_by])}` : "");
  const shown = frame.table || frame.last_trick;
  q(".trick-cards").replaceChildren(...(shown ? shown.cards.map((name) => cardElement(name)) : []));
  q(".trick .label").textContent = frame.table ? `${frame.names[frame.table.leader]} led` :
    frame.last_trick ? `trick to ${frame.names[frame.last_trick.winner]}` : "table";
  q(".frame-text").innerHTML = cardHtml(frame.text);
}

const OPEN_TABLE_HTML = `
  <div class="felt open-table">
    <div class="seat hidden" data-seat="2"><div class="info"><b class="name"></b><br><span class="points"></span></div><div class="hand"></div></div>
    <div class="seat" data-seat="1"><div class="info"><b class="name"></b><br><span class="points"></span></div><div class="hand"></div></div>
    <div class="middle">
      <div class="talon"><div class="trump trump-slot"></div><div class="stack stack-slot"></div><div class="count"></div></div>
      <div class="trick"><span class="label">table</span><div class="trick-cards row"></div></div>
    </div>
    <div class="frame-text"></div>
    <div class="seat" data-seat="0"><div class="info"><b class="name"></b><br><span class="points"></span></div><div class="hand"></div></div>
  </div>`;
