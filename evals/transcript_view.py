"""The transcript view of ``report.html``: a filterable, paginated list and one negotiation at a time.

The transcripts (``evals.transcripts``) are embedded once, as gzip-compressed JSON in
base64 (a 1,152 x 3 report: about 9 MB of JSON, 1 MB embedded), unpacked by the
browser's ``DecompressionStream`` and rendered on demand by the small script below: 50
rows per page, one transcript when it is opened. The state lives in the URL
(``#transcripts?arm=...&buyer=...&open=EPISODE_ID``), so the report's tables link to it
and a transcript can be linked to. No network, no library.
"""

from __future__ import annotations

import base64
import gzip
from urllib.parse import urlencode

from .transcripts import embed_json

PAGE_SIZE = 50


def transcripts_href(**filters: str | None) -> str:
    """The report-internal link that opens the transcript list with ``filters`` (arm, buyer, persona, ...)."""
    query = urlencode({k: v for k, v in filters.items() if v is not None})
    return "#transcripts" + (f"?{query}" if query else "")


def pack(data: dict) -> str:
    """The embedded form: compact JSON, gzip (deterministic: no timestamp), base64."""
    return base64.b64encode(gzip.compress(embed_json(data).encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def transcripts_section(data: dict) -> str:
    n = len(data["episodes"])
    return f"""
<h2 id="transcripts">Transcripts</h2>
<p class="note">Every negotiation of every arm ({n:,}): pick filters, open one to read its moves, the worth of each
offer to the seller (U<sub>s</sub>) and to the buyer (U<sub>b</sub>), what the guard changed, the invalid answers and
the outcome. The rows of the tables above open the matching transcripts.</p>
<div id="transcript-view" data-page-size="{PAGE_SIZE}">
  <form class="filters" data-testid="filters" onsubmit="return false">
    <label>arm <select name="arm" data-testid="filter-arm"></select></label>
    <label>buyer <select name="buyer" data-testid="filter-buyer"></select></label>
    <label>persona <select name="persona" data-testid="filter-persona"></select></label>
    <label>family <select name="family" data-testid="filter-family"></select></label>
    <label>outcome <select name="outcome" data-testid="filter-outcome"></select></label>
    <label>showing <select name="flag" data-testid="filter-flag"></select></label>
    <label>scenario <input name="scenario" data-testid="filter-scenario" placeholder="id or product" size="16"></label>
    <label>order <select name="sort" data-testid="sort"></select></label>
    <a href="#transcripts" data-testid="clear">clear</a>
  </form>
  <p class="status" data-role="status" data-testid="status">Unpacking {n:,} transcripts&hellip;</p>
  <div data-role="list"></div>
  <div data-role="detail"></div>
</div>
<script type="application/octet-stream" id="transcript-data" data-encoding="gzip+base64">{pack(data)}</script>
<script>{SCRIPT}</script>
"""


CSS = """
#transcript-view .filters { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; font-size: .9rem;
  background: #f8f8f8; padding: .5rem .7rem; border: 1px solid #e4e4e4; }
#transcript-view select, #transcript-view input { font: inherit; }
#transcript-view .status { color: #555; font-size: .9rem; }
#transcript-view tr.row { cursor: pointer; } #transcript-view tr.row:hover td { background: #f3f7ff; }
#transcript-view .pager { display: flex; gap: 1rem; align-items: center; font-size: .9rem; margin: .3rem 0 1rem; }
#transcript-view .scroll { overflow-x: auto; max-width: 100%; }
#transcript-view table.moves td { vertical-align: top; } #transcript-view table.moves th { white-space: normal; }
#transcript-view table.prefs td { white-space: normal; }
#transcript-view table.moves th.msg { text-align: left; }
#transcript-view table.moves td.msg { text-align: left; white-space: normal; min-width: 16rem; max-width: 30rem; }
#transcript-view tr.seller td { background: #fbf7ee; } #transcript-view tr.buyer td { background: #eef5f0; }
#transcript-view tr.guard td { background: #fff4d6; font-size: .85rem; }
#transcript-view tr.invalid td { background: #fdecec; font-size: .85rem; text-align: left; white-space: normal; }
#transcript-view .below { color: #a00; } #transcript-view .held { color: #888; font-style: italic; }
#transcript-view pre { white-space: pre-wrap; word-break: break-word; margin: .2rem 0; font-size: .8rem; }
#transcript-view .box { border: 1px solid #ddd; padding: .5rem .8rem; margin: .6rem 0; }
#transcript-view .outcome.deal { border-left: 4px solid #2d7a46; } #transcript-view .outcome.nodeal { border-left: 4px solid #888; }
#transcript-view .outcome.error { border-left: 4px solid #b00020; }
#transcript-view .nav { display: flex; gap: 1rem; font-size: .9rem; }
tr[data-href] { cursor: pointer; } tr[data-href]:hover td { background: #f3f7ff; }
"""

# Vanilla JS, no build step. Every string from the data goes through esc() before it
# reaches innerHTML: messages and raw model output are untrusted text.
SCRIPT = r"""
(async () => {
const view = document.getElementById("transcript-view");
const $ = (role) => view.querySelector(`[data-role=${role}]`);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const PAGE = Number(view.dataset.pageSize);
let D;
try {
  const bin = atob(document.getElementById("transcript-data").textContent.trim());
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  D = JSON.parse(await new Response(stream).text());
} catch (err) {
  $("status").textContent = "This browser could not unpack the transcripts (it needs DecompressionStream: Chrome 80, " +
    "Firefox 113, Safari 16.4 or later): " + err;
  return;
}
const E = D.episodes, S = D.scenarios, ARMS = D.arms;
const byId = new Map(E.map((e, i) => [e.id, i]));
const byNegotiation = new Map();
for (const e of E) { if (!byNegotiation.has(e.n)) byNegotiation.set(e.n, []); byNegotiation.get(e.n).push(e); }

const OUTCOMES = {deal: "deal", no_deal: "no deal (any)", walk_away: "walked away", deadline: "deadline", error: "error"};
const FLAGS = {guard: "guard intervened", invalid: "invalid answers", fallback: "fallbacks"};
const SORTS = {suite: "scenario", "score-asc": "seller score, lowest first", "score-desc": "seller score, highest first",
               "rounds-desc": "rounds, most first", "guard-desc": "guard interventions, most first"};
const KEYS = ["arm", "buyer", "persona", "family", "outcome", "flag", "scenario", "sort", "page", "open"];
const outcomeOf = (e) => e.o === "accept" ? "deal" : e.o;

function readState() {
  const h = location.hash;
  const q = new URLSearchParams(h.startsWith("#transcripts?") ? h.slice("#transcripts?".length) : "");
  const st = {};
  for (const k of KEYS) if (q.get(k)) st[k] = q.get(k);
  return st;
}
function link(st) {
  const q = new URLSearchParams();
  for (const k of KEYS) if (st[k] !== undefined && st[k] !== null && st[k] !== "") q.set(k, st[k]);
  const s = q.toString();
  return "#transcripts" + (s ? "?" + s : "");
}
function matches(e, st) {
  if (st.arm && ARMS[e.a] !== st.arm) return false;
  if (st.buyer && e.b !== st.buyer) return false;
  if (st.persona && e.p !== st.persona) return false;
  if (st.family && e.f !== st.family) return false;
  if (st.outcome === "no_deal") { if (e.o === "accept" || e.o === "error") return false; }
  else if (st.outcome && outcomeOf(e) !== st.outcome) return false;
  if (st.flag === "guard" && !e.x.guard_interventions) return false;
  if (st.flag === "invalid" && !e.x.invalid_actions) return false;
  if (st.flag === "fallback" && !e.x.fallbacks) return false;
  if (st.scenario) {
    const s = S[e.s], q = st.scenario.toLowerCase();
    if (!s.id.toLowerCase().includes(q) && !s.product.toLowerCase().includes(q)) return false;
  }
  return true;
}
const SORTERS = {
  "score-asc": (a, b) => (a.x.seller_score ?? 0) - (b.x.seller_score ?? 0),
  "score-desc": (a, b) => (b.x.seller_score ?? 0) - (a.x.seller_score ?? 0),
  "rounds-desc": (a, b) => b.x.rounds - a.x.rounds,
  "guard-desc": (a, b) => b.x.guard_interventions - a.x.guard_interventions,
};
function selected(st) {
  const out = E.filter((e) => matches(e, st));
  const sorter = SORTERS[st.sort];
  return sorter ? out.sort(sorter) : out;  // Array.prototype.sort is stable: ties keep the scenario order
}

// --- filters -------------------------------------------------------------------------
const form = view.querySelector(".filters");
function counted(values) {
  const c = new Map();
  for (const v of values) c.set(v, (c.get(v) || 0) + 1);
  return [...c.entries()].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}
function fill(name, entries, all) {
  const sel = form.elements[name];
  sel.innerHTML = `<option value="">${esc(all)}</option>` +
    entries.map(([v, label]) => `<option value="${esc(v)}">${esc(label)}</option>`).join("");
}
fill("arm", ARMS.map((a, i) => [a, `${a} (${E.filter((e) => e.a === i).length})`]), "all arms");
fill("buyer", counted(E.map((e) => e.b)).map(([v, n]) => [v, `${v} (${n})`]), "all buyers");
fill("persona", counted(E.map((e) => e.p)).map(([v, n]) => [v, `${v} (${n})`]), "all personas");
fill("family", counted(E.map((e) => e.f)).map(([v, n]) => [v, `${v} (${n})`]), "all families");
fill("outcome", Object.entries(OUTCOMES).map(([v, label]) => {
  const n = E.filter((e) => matches(e, {outcome: v})).length;
  return [v, `${label} (${n})`];
}), "any outcome");
fill("flag", Object.entries(FLAGS).map(([v, label]) => [v, `${label} (${E.filter((e) => matches(e, {flag: v})).length})`]), "all negotiations");
fill("sort", Object.entries(SORTS), "");
form.elements.sort.options[0].remove();
form.addEventListener("change", (ev) => {
  const st = readState();
  st[ev.target.name] = ev.target.value;
  delete st.page; delete st.open;
  if (st.sort === "suite") delete st.sort;
  location.hash = link(st);
});

// --- formatting ----------------------------------------------------------------------
const num = (x, d = 3) => x === null || x === undefined ? "-" : Number(x).toFixed(d);
function value(issue, v) {
  if (v === null || v === undefined) return "-";
  return typeof v === "number" ? v.toLocaleString("en-US", {maximumFractionDigits: 2}) : String(v);
}
function termsText(s, t) {
  return s.issues.map((issue, i) => `${issue.title}: ${value(issue, t[i])}${issue.unit ? " " + issue.unit : ""}`).join(", ");
}
function worth(u, s) {
  if (!u) return "<td>-</td><td>-</td>";
  const cell = (x, r, who) => x < r - 1e-9
    ? `<td class="below" title="below the ${who}'s reservation ${num(r)}">${num(x)}</td>` : `<td>${num(x)}</td>`;
  return cell(u[0], s.seller.r, "seller") + cell(u[1], s.buyer.r, "buyer");
}
function outcomeText(e) {
  const by = e.by ? ` by the ${e.by}` : "";
  const when = ` in round ${e.x.rounds} of ${S[e.s].max_rounds}`;
  return {accept: `Deal, accepted${by}${when}`, walk_away: `No deal: walked away${by}${when}`,
          deadline: `No deal: the ${S[e.s].max_rounds} rounds ran out`, error: `Error: the negotiation stopped${when}`}[e.o] || e.o;
}

// --- the list ------------------------------------------------------------------------
function renderList(st) {
  const rows = selected(st);
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  const page = Math.min(Math.max(1, Number(st.page) || 1), pages);
  const shown = rows.slice((page - 1) * PAGE, page * PAGE);
  const body = shown.map((e) => {
    const s = S[e.s];
    return `<tr class="row" data-testid="transcript-row" data-id="${esc(e.id)}">` +
      `<td><a href="${esc(link({...st, open: e.id}))}">${esc(s.product)}</a> <span class="note">${esc(s.id)}</span></td>` +
      `<td>${esc(ARMS[e.a])}</td><td>${esc(e.b)}</td><td>${esc(e.p)}</td>` +
      `<td data-testid="row-outcome">${esc(outcomeOf(e).replace("_", " "))}</td><td>${e.x.rounds}</td>` +
      `<td data-testid="row-score">${num(e.x.seller_score)}</td><td>${num(e.x.buyer_score)}</td>` +
      `<td>${e.x.guard_interventions}</td><td>${e.x.invalid_actions}</td></tr>`;
  }).join("");
  const from = rows.length ? (page - 1) * PAGE + 1 : 0;
  const pager = `<div class="pager" data-testid="pager">` +
    (page > 1 ? `<a href="${esc(link({...st, page: page - 1}))}" data-testid="prev-page">&lsaquo; previous</a>` : "") +
    `<span data-testid="count">${from.toLocaleString("en-US")}&ndash;${(from ? from + shown.length - 1 : 0).toLocaleString("en-US")} of ${rows.length.toLocaleString("en-US")} negotiations, page ${page} of ${pages}</span>` +
    (page < pages ? `<a href="${esc(link({...st, page: page + 1}))}" data-testid="next-page">next &rsaquo;</a>` : "") + "</div>";
  $("list").innerHTML = pager + (rows.length ? `<table class="transcripts"><thead><tr><th>scenario</th><th>arm</th>` +
    `<th>buyer</th><th>persona</th><th>outcome</th><th>rounds</th><th>seller score</th><th>buyer score</th>` +
    `<th>guard</th><th>invalid</th></tr></thead><tbody>${body}</tbody></table>` : "<p>No negotiation matches these filters.</p>");
  $("detail").innerHTML = "";
}
view.addEventListener("click", (ev) => {
  const row = ev.target.closest("tr.row");
  if (row && !ev.target.closest("a")) location.hash = link({...readState(), open: row.dataset.id});
});

// --- one transcript ------------------------------------------------------------------
function valueFunction(issue, v) {
  if (Array.isArray(v)) return `${esc(value(issue, v[0]))} &rarr; ${esc(value(issue, v[1]))} (worst &rarr; best)`;
  return issue.options.map((o) => `${esc(o)}: ${num(v[String(o)], 2)}`).join(", ");
}
function scenarioBox(s) {
  const rows = s.issues.map((issue, i) => `<tr><td>${esc(issue.title)}</td>` +
    `<td>${issue.kind === "numeric" ? esc(`${value(issue, issue.low)}..${value(issue, issue.high)} ${issue.unit}`) : esc(issue.options.join(", ") + (issue.unit ? " " + issue.unit : ""))}</td>` +
    `<td>${num(s.seller.w[i], 2)}</td><td>${valueFunction(issue, s.seller.v[i])}</td>` +
    `<td>${num(s.buyer.w[i], 2)}</td><td>${valueFunction(issue, s.buyer.v[i])}</td></tr>`).join("");
  const L = s.limits, limits = [
    ...Object.entries(L.minimum || {}).map(([k, v]) => `${k} &ge; ${esc(value(null, v))}`),
    ...Object.entries(L.maximum || {}).map(([k, v]) => `${k} &le; ${esc(value(null, v))}`),
    ...Object.entries(L.forbidden || {}).map(([k, v]) => `${k} never ${esc(v.join(" or "))}`),
    ...(L.min_utility != null ? [`U<sub>s</sub> &ge; ${num(L.min_utility)}`] : []),
  ].join(", ") || "none";
  return `<div class="box" data-testid="scenario"><strong>${esc(s.product)}</strong> ${esc(s.description)}` +
    (s.list_price != null ? ` List price ${esc(value(null, s.list_price))} ${esc(s.currency)}.` : "") +
    ` The ${esc(s.opener)} opens; at most ${s.max_rounds} rounds. Reservation utilities: seller ${num(s.seller.r)}, buyer ${num(s.buyer.r)}.` +
    ` The business's hard limits: ${limits}.` +
    `<div class="scroll"><table class="prefs"><thead><tr><th>issue</th><th>range</th><th>seller weight</th><th>seller value</th><th>buyer weight</th>` +
    `<th>buyer value</th></tr></thead><tbody>${rows}</tbody></table></div></div>`;
}
function termCells(s, t, cls = "") {
  return s.issues.map((issue, i) => `<td class="${cls}">${t ? esc(value(issue, t[i])) : ""}</td>`).join("");
}
function movesTable(e, s) {
  const cols = 7 + s.issues.length;
  const standing = {s: null, b: null};
  const ACT = {o: "offer", a: "accept", w: "walk away"};
  const rows = e.m.map((m, i) => {
    const who = m.p === "s" ? "seller" : "buyer";
    let out = "";
    if (m.i) {
      out += `<tr class="invalid" data-testid="invalid"><td colspan="${cols}"><details><summary>${m.i.length} invalid answer${m.i.length > 1 ? "s" : ""} ` +
        `from the ${who} before move ${i + 1}</summary><ol>` +
        m.i.map(([raw, err]) => `<li><pre data-testid="invalid-raw">${esc(raw)}</pre><div data-testid="invalid-error">&rarr; ${esc(err)}</div></li>`).join("") +
        `</ol></details></td></tr>`;
    }
    let terms = m.t, u = m.u, cls = "";
    if (m.a === "a") {  // an accept takes the other side's standing offer: show those terms
      const other = standing[m.p === "s" ? "b" : "s"];
      if (other) { terms = other.t; u = other.u; cls = "held"; }
    }
    const action = ACT[m.a] || m.a;
    out += `<tr class="${who}" data-testid="move" data-party="${who}" data-action="${esc(action)}"><td>${i + 1}</td><td>${Math.floor(i / 2) + 1}</td>` +
      `<td>${who}</td><td>${esc(action)}${m.fb ? ' <span class="held" title="no valid answer: a safe default was used">(fallback)</span>' : ""}</td>` +
      termCells(s, terms, cls) + worth(u, s) + `<td class="msg">${esc(m.m)}</td></tr>`;
    if (m.g) {
      const o = m.g.o;
      const reasons = Object.entries(m.g.r).map(([k, v]) => `${esc(k)}: ${esc(v)}`).join("; ");
      out += `<tr class="guard" data-testid="guard"><td colspan="3">guard: ${esc(m.g.k.join(", ").replaceAll("_", " "))}</td>` +
        `<td>model wanted: ${esc(ACT[o.a] || o.a)}</td>${termCells(s, o.t)}${worth(o.u, s)}` +
        `<td class="msg"><span data-testid="guard-message">${esc(o.m)}</span>${reasons ? `<div data-testid="guard-reasons">why: ${reasons}</div>` : ""}</td></tr>`;
    }
    if (m.a === "o") standing[m.p] = {t: m.t, u: m.u};
    return out;
  }).join("");
  const head = s.issues.map((issue) => `<th>${esc(issue.title)}${issue.unit ? ` <span class="note">(${esc(issue.unit)})</span>` : ""}</th>`).join("");
  return `<div class="scroll"><table class="moves" data-testid="moves"><thead><tr><th>#</th><th>round</th><th>who</th><th>action</th>${head}` +
    `<th title="the seller's utility of the terms">U<sub>s</sub></th><th title="the buyer's utility of the terms">U<sub>b</sub></th>` +
    `<th class="msg">message</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}
function outcomeBox(e, s) {
  const x = e.x;
  const cls = e.o === "accept" ? "deal" : e.o === "error" ? "error" : "nodeal";
  const terms = e.t ? `<div>Terms: <span data-testid="agreed">${esc(termsText(s, e.t))}</span></div>` : "";
  const err = e.e ? `<div data-testid="error">${esc(e.e.type)}${e.e.party ? ` (${esc(e.e.party)})` : ""}: ${esc(e.e.message)}</div>` : "";
  return `<div class="box outcome ${cls}" data-testid="outcome"><strong data-testid="outcome-text">${esc(outcomeText(e))}</strong>` +
    `${terms}${err}<div>seller score <strong data-testid="seller-score">${num(x.seller_score)}</strong> ` +
    `(U<sub>s</sub> ${num(x.seller_utility)}, reservation ${num(x.seller_reservation)}) &middot; buyer score ` +
    `<strong data-testid="buyer-score">${num(x.buyer_score)}</strong> (U<sub>b</sub> ${num(x.buyer_utility)}, reservation ${num(x.buyer_reservation)}) ` +
    `&middot; joint utility ${num(x.joint_utility)} &middot; Pareto distance ${num(x.pareto_distance)} &middot; Nash distance ${num(x.nash_distance)}</div>` +
    `<div class="note">guard interventions ${x.guard_interventions} &middot; invalid answers ${x.invalid_actions} &middot; fallbacks ${x.fallbacks}` +
    ` &middot; tokens ${(x.prompt_tokens + x.completion_tokens).toLocaleString("en-US")} &middot; cost $${num(x.cost_usd, 4)}</div></div>`;
}
function renderDetail(st) {
  const idx = byId.get(st.open);
  if (idx === undefined) { $("list").innerHTML = ""; $("detail").innerHTML = `<p>No negotiation ${esc(st.open)} in this report. <a href="${esc(link({...st, open: undefined}))}">Back to the list</a></p>`; return; }
  const e = E[idx], s = S[e.s];
  const rows = selected(st);
  const pos = rows.indexOf(e);
  const back = {...st, open: undefined, page: pos >= 0 ? Math.floor(pos / PAGE) + 1 : st.page};
  const nav = `<div class="nav"><a href="${esc(link(back))}" data-testid="back">&larr; back to the list</a>` +
    (pos > 0 ? `<a href="${esc(link({...st, open: rows[pos - 1].id}))}" data-testid="prev">&lsaquo; previous</a>` : "") +
    (pos >= 0 ? `<span>${pos + 1} of ${rows.length.toLocaleString("en-US")}</span>` : "") +
    (pos >= 0 && pos < rows.length - 1 ? `<a href="${esc(link({...st, open: rows[pos + 1].id}))}" data-testid="next">next &rsaquo;</a>` : "") + "</div>";
  const others = (byNegotiation.get(e.n) || []).filter((o) => o !== e).map((o) =>
    `<a href="${esc(link({...st, arm: ARMS[o.a], open: o.id}))}" data-testid="same-negotiation">${esc(ARMS[o.a])}: ${num(o.x.seller_score)}</a>`);
  $("list").innerHTML = "";
  $("detail").innerHTML = `<div data-testid="transcript" data-id="${esc(e.id)}">${nav}` +
    `<h3>${esc(s.product)} <span class="note">${esc(s.id)}</span></h3>` +
    `<p>Seller <strong data-testid="detail-arm">${esc(ARMS[e.a])}</strong> against buyer <strong data-testid="detail-buyer">${esc(e.b)}</strong> ` +
    `(persona <span data-testid="detail-persona">${esc(e.p)}</span>, family ${esc(e.f)}). Episode ${esc(e.id)}.` +
    (others.length ? ` The same negotiation in the other arms (seller score): ${others.join(", ")}.` : "") + `</p>` +
    outcomeBox(e, s) + movesTable(e, s) + scenarioBox(s) + "</div>";
}

function render() {
  const st = readState();
  for (const k of ["arm", "buyer", "persona", "family", "outcome", "flag", "sort"]) form.elements[k].value = st[k] || (k === "sort" ? "suite" : "");
  if (form.elements.scenario.value !== (st.scenario || "")) form.elements.scenario.value = st.scenario || "";
  if (st.open) renderDetail(st); else renderList(st);
  $("status").textContent = "";
}
form.elements.scenario.addEventListener("input", (ev) => {
  const st = readState();
  st.scenario = ev.target.value; delete st.page; delete st.open;
  history.replaceState(null, "", link(st));
  render();
});
window.addEventListener("hashchange", () => {
  render();
  if (location.hash.startsWith("#transcripts")) document.getElementById("transcripts").scrollIntoView();
});
// Rows of the report's tables carry the filter they open.
for (const tr of document.querySelectorAll("tr[data-href]")) {
  tr.addEventListener("click", (ev) => { if (!ev.target.closest("a")) location.hash = tr.dataset.href; });
}
render();
if (location.hash.startsWith("#transcripts")) document.getElementById("transcripts").scrollIntoView();
view.dataset.ready = String(performance.now());
})();
"""
