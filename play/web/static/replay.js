// Replay viewer: step back and forth through a game record, a finished game of this server or a deals.json entry.
"use strict";

const $ = (id) => document.getElementById(id);
let frames = [];
let record = null;
let position = 0;

async function init() {
  markNav("replay");
  $("table").innerHTML = OPEN_TABLE_HTML;
  const meta = await api("GET", "/api/agents");
  for (const id of ["agent0", "agent1"]) $(id).replaceChildren(...meta.agents.map((spec) => new Option(spec, spec)));
  $("file").addEventListener("change", () => offerForFile(meta).catch(() => {}));  // a bad file is named at Load
  $("load-button").addEventListener("click", () => load().catch((e) => showError(e.message)));
  $("first").addEventListener("click", () => go(0));
  $("back").addEventListener("click", () => go(position - 1));
  $("forward").addEventListener("click", () => go(position + 1));
  $("last").addEventListener("click", () => go(frames.length - 1));
  $("slider").addEventListener("input", () => go(Number($("slider").value)));
  $("download").addEventListener("click", download);
  document.addEventListener("keydown", (event) => {
    // the arrows of a text field, a drop-down (the agents) or the slider are theirs
    if (!frames.length || ["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName)) return;
    if (event.key === "ArrowRight") go(position + 1);
    if (event.key === "ArrowLeft") go(position - 1);
  });
  const params = new URLSearchParams(location.search);
  if (params.get("game") && params.get("deal")) {
    const data = await api("GET", `/api/games/${encodeURIComponent(params.get("game"))}/deals/${encodeURIComponent(params.get("deal"))}`);
    shown(data.frames, data.record);
  }
}

// A deal file is played by the two agents chosen: grey out those that cannot play its rules (a preset's; custom
// rules are left to the server to judge).
async function offerForFile(meta) {
  const file = $("file").files[0];
  const document_ = file ? JSON.parse(await file.text()) : null;
  const rules = document_ !== null && document_.format === "sixtysix-deals" ? document_.rules : null;
  const within = (a, b) => Object.keys(b).every((key) => a[key] === b[key]);
  const preset = rules && Object.keys(meta.presets || {}).find((name) => within(meta.presets[name], rules) &&
                                                                         within(rules, meta.presets[name]));
  offerAgentsFor(meta, preset || null, [$("agent0"), $("agent1")]);
}

async function load() {
  const file = $("file").files[0];
  if (!file) { showError("Choose a JSON game record or a deals.json file first."); return; }
  let document_;
  try { document_ = JSON.parse(await file.text()); } catch (error) { showError(`${file.name} is not JSON: ${error.message}`); return; }
  let body = { record: document_ };
  if (document_ !== null && document_.format === "sixtysix-deals") {  // null: the server names a bad record
    // The page counts deals from 1, the API from 0: a bad number is named here as the person typed it.
    const count = Array.isArray(document_.deals) ? document_.deals.length : 0;
    const number = Number($("index").value);
    if (count && !(Number.isInteger(number) && number >= 1 && number <= count)) {
      showError(`${file.name} holds deals 1 to ${count}: deal number ${$("index").value} is not one of them`);
      return;
    }
    body = { deals: document_, index: number - 1, agents: [$("agent0").value, $("agent1").value] };
  }
  $("load-button").disabled = true;
  try {
    const data = await api("POST", "/api/replay", body);
    shown(data.frames, data.record);
  } finally { $("load-button").disabled = false; }
}

function shown(newFrames, newRecord) {
  frames = newFrames;
  record = newRecord;
  $("board").classList.remove("hidden");
  $("slider").max = frames.length - 1;
  $("log").replaceChildren(...frames.slice(1).map((frame, index) => {
    const item = document.createElement("li");
    item.innerHTML = cardHtml(frame.text);
    item.style.cursor = "pointer";
    item.addEventListener("click", () => go(index + 1));
    return item;
  }));
  go(0);
}

function go(index) {
  if (!frames.length) return;
  position = Math.max(0, Math.min(frames.length - 1, index));
  renderOpenFrame(frames[position], $("table"));
  $("slider").value = position;
  $("position").textContent = `move ${position} of ${frames.length - 1}`;
  $("first").disabled = $("back").disabled = position === 0;
  $("forward").disabled = $("last").disabled = position === frames.length - 1;
  $("log").querySelectorAll("li").forEach((item, i) => { item.style.fontWeight = i + 1 === position ? "700" : ""; });
}

function download() {
  const blob = new Blob([JSON.stringify(record, null, 2)], { type: "application/json" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "sixtysix-deal.json";
  link.click();
}

init().catch((error) => showError(error.message));
