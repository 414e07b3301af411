// Watch two agents: the server plays one move per request (stateless); the page keeps the frames to step back.
"use strict";

const $ = (id) => document.getElementById(id);
let deal = null;      // {agents, rules, seed, moves, frames, over}
let position = 0;
let timer = null;

async function init() {
  markNav("watch");
  $("table").innerHTML = OPEN_TABLE_HTML;
  const meta = await api("GET", "/api/agents");
  for (const id of ["agent0", "agent1"]) $(id).replaceChildren(...meta.agents.map((spec) => new Option(spec, spec)));
  if (meta.agents.includes("pimc")) $("agent1").value = "pimc";
  $("rules").replaceChildren(...meta.rules.map((name) => new Option(name, name)));
  $("deal-button").addEventListener("click", start);
  $("step").addEventListener("click", () => step().catch((e) => showError(e.message)));
  $("back").addEventListener("click", () => { stopAuto(); if (position > 0) { position--; render(); } });
  $("auto").addEventListener("click", toggleAuto);
}

async function start() {
  stopAuto();
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
  $("step").disabled = true;
  try {
    const data = await api("POST", "/api/watch/step", { agents: deal.agents, rules: deal.rules, seed: deal.seed, moves: deal.moves });
    deal.moves.push(data.move);
    deal.frames.push(data.frame);
    deal.over = data.over;
    position = deal.frames.length - 1;
    render();
  } finally { $("step").disabled = false; }
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
