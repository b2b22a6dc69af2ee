// The report page's inline style sheet and script.
#include "html_report_assets.h"

namespace runner {

const std::string_view k_report_style = R"(
:root{--ok:#2e9d5b;--failed:#d93025;--lost:#f29900;--unknown:#8d8d8d;--running:#1a73e8;
--ink:#202124;--muted:#5f6368;--line:#e3e5e8;--bg:#f8f9fa}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px 48px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
sans-serif;color:var(--ink);background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 10px}
.sub{color:var(--muted);margin:0 0 2px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:18px 0 6px}
.card{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:8px 14px;
min-width:110px}
.card b{display:block;font-size:20px;color:var(--c,var(--ink))}
.card span{color:var(--muted);font-size:12px}
.legend{display:flex;gap:14px;color:var(--muted);font-size:12px;margin:0 0 6px}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;
vertical-align:-1px}
.ok{--c:var(--ok)}.failed{--c:var(--failed)}.lost{--c:var(--lost)}
.unknown{--c:var(--unknown)}.running{--c:var(--running)}
.legend i,.tag{background:var(--c,var(--unknown))}
svg{display:block;width:100%;height:auto;border:1px solid var(--line);border-radius:8px;
background:#fff}
svg text{font:11px system-ui,sans-serif;fill:var(--muted)}
svg .label{fill:var(--ink)}svg .idle{fill:var(--failed);font-weight:600}
svg .grid{stroke:var(--line);stroke-width:1}svg .band{fill:var(--bg)}
svg .down{fill:#fce8e6}svg .power{fill:var(--running)}svg .gpu-series{fill:none;stroke:var(--running);stroke-width:1.5}
.plot-warning{color:var(--failed);font-size:12px;margin:4px 0}
rect.job,rect.jobs{fill:var(--c);stroke:#fff;stroke-width:.5}
rect.job:hover,rect.job.linked,rect.jobs:hover{stroke:var(--ink);stroke-width:1.5}
rect.job{cursor:pointer}
rect.job.service{fill-opacity:.45}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{position:sticky;top:0;background:var(--bg);font-weight:600;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
#jobs th{cursor:pointer;user-select:none}#jobs th:hover{color:var(--running)}
#jobs th[data-dir=asc]::after{content:" \25B2"}#jobs th[data-dir=desc]::after{content:" \25BC"}
.scroll{max-height:70vh;overflow:auto;border:1px solid var(--line);border-radius:8px}
.tag{display:inline-block;color:#fff;border-radius:3px;padding:0 6px;font-size:12px}
.meter{background:var(--bg);border:1px solid var(--line);border-radius:3px;height:12px;
width:240px}.meter div{height:100%;background:var(--ok);border-radius:2px}
.meter.low div{background:var(--failed)}.meter.mid div{background:var(--lost)}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px 10px;
margin:6px 0;overflow:auto;white-space:pre-wrap;word-break:break-all}
pre.log{background:#202124;color:#e8eaed;max-height:320px}
details{margin:0 0 8px}summary{cursor:pointer}
.muted{color:var(--muted)}
button{font:inherit;padding:4px 12px;border:1px solid var(--line);border-radius:6px;
background:var(--bg);cursor:pointer}td.cmd{font-family:ui-monospace,monospace;font-size:12px}
)";

// The jobs table is drawn from the JSON in #job-data, a page of rows at a
// time: tens of thousands of static rows would make the page slow to open.
const std::string_view k_report_script = R"(
// The bars of one job (its slots, a gang job's every rank) light up
// together, and a failed job's bar leads to its failure.
const timeline = document.getElementById('timeline');
if (timeline) {
  const light = (job, on) => {
    for (const bar of timeline.querySelectorAll('rect.job[data-job="' + job + '"]'))
      bar.classList.toggle('linked', on);
  };
  for (const [event, on] of [['mouseover', true], ['mouseout', false]])
    timeline.addEventListener(event, e => e.target.dataset.job && light(e.target.dataset.job, on));
  timeline.addEventListener('click', e => {
    const failure = document.getElementById('failure-' + e.target.dataset.job);
    if (failure) { failure.open = true; failure.scrollIntoView(); }
  });
}
const jobs = JSON.parse(document.getElementById('job-data').textContent);
// Each job: [id, slot, outcome, class, start ms, start, duration ms, duration, exit, command]
const columns = {job: 0, slot: 1, outcome: 2, started: 4, duration: 6, exit: 8, command: 9};
const table = document.getElementById('jobs'), body = table.tBodies[0];
const more = document.getElementById('more'), all = document.getElementById('all');
const count = document.getElementById('shown');
const page = 500;
let order = jobs.slice(), shown = page;
const escape = t => String(t).replace(/[&<>"']/g, c => '&#' + c.charCodeAt(0) + ';');
function draw() {
  const rows = [];
  for (const j of order.slice(0, shown)) {
    rows.push('<tr><td class="num" data-v="' + j[0] + '">#' + j[0] + '</td><td>' + escape(j[1]) +
              '</td><td><span class="tag ' + j[3] + '">' + j[2] + '</span></td><td>' + j[5] +
              '</td><td class="num">' + j[7] + '</td><td>' + escape(j[8]) +
              '</td><td class="cmd">' + escape(j[9]) + '</td></tr>');
  }
  body.innerHTML = rows.join('');
  const n = Math.min(shown, order.length);
  count.textContent = n < order.length ? n + ' of ' + order.length + ' jobs shown' : '';
  more.hidden = all.hidden = n >= order.length;
}
for (const th of table.tHead.rows[0].cells) {
  th.addEventListener('click', () => {
    const col = columns[th.textContent.trim()];
    const dir = th.dataset.dir ? (th.dataset.dir === 'asc' ? 'desc' : 'asc')
                               : (th.dataset.first || 'asc');
    for (const h of table.tHead.rows[0].cells) delete h.dataset.dir;
    th.dataset.dir = dir;
    const sign = dir === 'asc' ? 1 : -1;
    order.sort((a, b) => (a[col] < b[col] ? -1 : a[col] > b[col] ? 1 : a[0] - b[0]) * sign);
    draw();
  });
}
more.addEventListener('click', () => { shown += page; draw(); });
all.addEventListener('click', () => { shown = order.length; draw(); });
draw();
// A big results table is data too, drawn 500 rows at a time.
const results = document.getElementById('results-data');
if (results) {
  const rows = JSON.parse(results.textContent);
  const body = document.getElementById('results').tBodies[0];
  const more = document.getElementById('results-more');
  const count = document.getElementById('results-shown');
  let drawn = 0;
  const next = () => {
    const html = [];
    for (const row of rows.slice(drawn, drawn + page))
      html.push('<tr>' + row.map(cell => '<td>' + escape(cell) + '</td>').join('') + '</tr>');
    body.insertAdjacentHTML('beforeend', html.join(''));
    drawn = Math.min(rows.length, drawn + page);
    count.textContent = drawn + ' of ' + rows.length + ' rows shown; runner results prints them all';
    more.hidden = drawn >= rows.length;
  };
  more.addEventListener('click', next);
  next();
}
// report.html#sort=duration (or #sort=duration-asc) opens the table sorted.
const wanted = location.hash.match(/sort=([a-z]+)(?:-(asc|desc))?/);
if (wanted) {
  for (const th of table.tHead.rows[0].cells) {
    if (th.textContent.trim() !== wanted[1]) continue;
    if (wanted[2]) th.dataset.first = wanted[2];
    th.click();
  }
}
)";

}  // namespace runner
