// Watch two agents: the server plays one move per request (stateless); the page keeps the frames to step back.
"use strict";

const $ = (id) => document.getElementById(id);
let deal = null;      // {agents, rules, seed, moves, frames, over}
let position = 0;
let timer = null;
let generation = 0;   // a new deal's number: a step answered after it started belongs to the old deal
let stepping = false; // a step's request is on its way: Step and Auto-play would both send the same move list

async function init() {
  markNav("watch");
  $("table").innerHTML = OPEN_TABLE_HTML;
  const meta = await api("GET", "/api/agents");
  for (const id of ["agent0", "agent1"]) $(id).replaceChildren(...meta.agents.map((spec) => new Option(spec, spec)));
  if (meta.agents.includes("pimc")) $("agent1").value = "pimc";
  $("rules").replaceChildren(...meta.rules.map((name) => new Option(name, name)));
  const offer = () => offerAgentsFor(meta, $("rules").value, [$("agent0"), $("agent1")]);
  $("rules").addEventListener("change", offer);
  offer();
  $("deal-button").addEventListener("click", start);
  $("step").addEventListener("click", () => step().catch((e) => showError(e.message)));
  $("back").addEventListener("click", () => { stopAuto(); if (position > 0) { position--; render(); } });
  $("auto").addEventListener("click", toggleAuto);
}

async function start() {
  stopAuto();
  generation++;
  const seedText = $("seed").value.trim();
  try {
    const body = { rules: $("rules").value };
    if (seedText) body.seed = pageSeed(seedText);
    const data = await api("POST", "/api/watch/start", body);
    deal = { agents: [$("agent0").value, $("agent1").value], rules: body.rules, seed: data.seed, moves: [], over: false,
             frames: [data.frame] };
    deal.frames[0].names = deal.agents.map((spec, seat) => `${spec} (player ${seat})`);
    $("seed").value = data.seed;
    position = 0;
    $("board").classList.remove("hidden");
    render();
  } catch (error) { showError(error.message); }
}

async function step() {
  if (!deal) return;
  if (position < deal.frames.length - 1) { position++; render(); return; }
  if (deal.over) { stopAuto(); return; }
  if (stepping) return;
  stepping = true;
  $("step").disabled = true;
  const asked = deal;
  const askedIn = generation;
  try {
    const data = await api("POST", "/api/watch/step", { agents: asked.agents, rules: asked.rules, seed: asked.seed, moves: asked.moves });
    if (askedIn !== generation) return;  // Deal was pressed meanwhile: this move is the old deal's
    asked.moves.push(data.move);
    asked.frames.push(data.frame);
    asked.over = data.over;
    position = asked.frames.length - 1;
  } finally {
    stepping = false;
    if (askedIn === generation) render();  // also re-enables Step, unless the deal is over
    else $("step").disabled = false;
  }
}

function toggleAuto() {
  if (timer) { stopAuto(); return; }
  $("auto").textContent = "⏸ Pause";
  const tick = async () => {
    try { await step(); } catch (error) { showError(error.message); stopAuto(); return; }
    if (deal.over && position === deal.frames.length - 1) { stopAuto(); return; }
    if (timer) timer = setTimeout(tick, Number($("speed").max) + Number($("speed").min) - Number($("speed").value));
  };
  timer = setTimeout(tick, 10);
}

function stopAuto() {
  if (timer) clearTimeout(timer);
  timer = null;
  $("auto").textContent = "▶▶ Auto-play";
}

function render() {
  const frame = deal.frames[position];
  renderOpenFrame(frame, $("table"));
  $("position").textContent = `move ${position} of ${deal.frames.length - 1}${deal.over ? " (deal over)" : ""}`;
  $("back").disabled = position === 0;
  $("step").disabled = deal.over && position === deal.frames.length - 1;
  $("log").replaceChildren(...deal.frames.slice(1, position + 1).map((f) => {
    const item = document.createElement("li");
    item.innerHTML = cardHtml(f.text);
    return item;
  }));
  $("log").scrollTop = $("log").scrollHeight;
}

init().catch((error) => showError(error.message));
