// The pages' one script, served as /static/tula.js (web_page.hpp).
#include "service/web_page.hpp"

namespace tula::service {

namespace {

const char* const kScript = R"JS('use strict';
// Everything the pages show comes from the API. On a server with a token,
// the first answer 401 shows a form that asks for it; it is kept in this
// tab's sessionStorage (gone when the tab closes, never sent to another
// site) and sent on every request as "Authorization: Bearer TOKEN".
const tokenKey = 'tula-token';
const storedToken = () => sessionStorage.getItem(tokenKey) || '';
const pause = ms => new Promise(done => setTimeout(done, ms));
const byId = id => document.getElementById(id);

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}

let tokenAsked = null;  // one question at a time, however many requests wait on it
function askToken(message) {
  if (!tokenAsked) {
    tokenAsked = new Promise(done => {
      const form = byId('token_form');
      byId('token_message').textContent = message;
      form.hidden = false;
      byId('token').focus();
      form.addEventListener('submit', e => {
        e.preventDefault();
        sessionStorage.setItem(tokenKey, byId('token').value.trim());
        form.hidden = true;
        tokenAsked = null;
        done();
      }, {once: true});
    });
  }
  return tokenAsked;
}

// fetch() with the token; asks for it (again) while the server answers 401.
async function api(url, options = {}) {
  for (;;) {
    const headers = Object.assign({}, options.headers);
    if (storedToken()) headers['Authorization'] = 'Bearer ' + storedToken();
    const r = await fetch(url, Object.assign({}, options, {headers}));
    if (r.status !== 401) return r;
    await askToken(storedToken() ? 'The server refused this token; enter it again.' : 'This server needs its API token.');
  }
}

async function errorText(r) {
  try {
    const b = await r.json();
    return b.error ? b.error.message : 'HTTP ' + r.status;
  } catch (x) {
    return 'HTTP ' + r.status;
  }
}

// A job's event stream (text/event-stream), read with fetch() since
// EventSource cannot send the token; calls onEvent(type) for each event,
// resumes after the last one seen when the connection drops, and returns
// after the 'end' event or when the job is gone.
async function follow(jobId, onEvent) {
  let lastId = null;
  for (;;) {
    let ended = false;
    try {
      const r = await api('/v1/jobs/' + jobId + '/events', {headers: lastId === null ? {} : {'Last-Event-ID': lastId}});
      if (r.status === 404) return;
      if (r.ok) {
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let text = '';
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          text += decoder.decode(value, {stream: true});
          for (let cut = text.indexOf('\n\n'); cut >= 0; cut = text.indexOf('\n\n')) {
            const block = text.slice(0, cut);
            text = text.slice(cut + 2);
            let type = null;
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) type = line.slice(7);
              if (line.startsWith('id: ')) lastId = line.slice(4);
            }
            if (type === 'end') ended = true;
            if (type) onEvent(type);
          }
        }
      }
    } catch (x) {
      // the connection dropped: resume below
    }
    if (ended) return;
    await pause(3000);
  }
}

async function refreshJobs() {
  const r = await api('/v1/jobs?limit=100');
  if (!r.ok) return;
  const body = await r.json();
  const rows = body.jobs.map(j => {
    const p = j.progress || {};
    const f = Math.round(100 * (p.fraction || 0));
    const goal = j.target_accuracy !== null ? ('to ' + (100 * j.target_accuracy).toFixed(1) + '%') : (j.epochs + ' epochs');
    const best = p.best_accuracy != null ? (100 * p.best_accuracy).toFixed(2) + '%' : '';
    return `<tr id="job-${j.id}"><td><a href="/jobs/${j.id}">${j.id}</a></td><td>${esc(j.model)} on ${esc(j.dataset)}</td>` +
      `<td>${esc(goal)}, ${esc(j.objective)}</td><td class="state state-${esc(j.state)}">${esc(j.state)}</td>` +
      `<td><span class="bar"><span style="width:${f}%"></span></span> ${f}%</td><td>${best}</td></tr>`;
  });
  byId('jobs').innerHTML = rows.join('') || '<tr><td colspan="6">no jobs yet</td></tr>';
}

function jobsPage() {
  byId('submit').addEventListener('submit', async e => {
    e.preventDefault();
    const err = byId('submit_error');
    err.textContent = '';
    let job;
    try {
      job = JSON.parse(byId('extra').value || '{}');
    } catch (x) {
      err.textContent = 'More fields: ' + x.message;
      return;
    }
    job.model = byId('model').value;
    job.dataset = byId('dataset').value;
    job.objective = byId('objective').value;
    job[byId('goal').value] = Number(byId('goal_value').value);
    const r = await api('/v1/jobs', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(job)});
    if (!r.ok) {
      err.textContent = await errorText(r);
      return;
    }
    location.href = '/jobs/' + (await r.json()).id;
  });
  let busy = false;  // a refresh waiting for the token is not started again
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      await refreshJobs();
    } catch (x) {
    } finally {
      busy = false;
    }
  };
  tick();
  setInterval(tick, 2000);
}

function jobPage(jobId) {
  let pending = false, last = 0;
  async function redraw() {
    pending = false;
    last = Date.now();
    const r = await api('/jobs/' + jobId + '/fragment');
    if (r.ok) byId('live').innerHTML = await r.text();
    else byId('live').textContent = await errorText(r);
  }
  function soon() {
    if (pending) return;
    pending = true;
    setTimeout(redraw, Math.max(0, 1500 - (Date.now() - last)));
  }
  byId('cancel').addEventListener('click', async () => {
    byId('cancel_error').textContent = '';
    const r = await api('/v1/jobs/' + jobId + '/cancel', {method: 'POST'});
    if (!r.ok) byId('cancel_error').textContent = await errorText(r);
    soon();
  });
  redraw();
  follow(jobId, type => (type === 'end' ? redraw() : soon()));
}

// Links to API answers (class api-link): with a token the browser cannot
// send it on a plain navigation, so the answer is fetched and shown here.
document.addEventListener('click', async e => {
  const link = e.target.closest('a.api-link');
  if (!link || !storedToken()) return;
  e.preventDefault();
  const r = await api(link.getAttribute('href'));
  byId('raw_title').textContent = link.getAttribute('href');
  byId('raw').textContent = await r.text();
  byId('raw_box').hidden = false;
});
byId('raw_close').addEventListener('click', () => { byId('raw_box').hidden = true; });

if (document.body.dataset.page === 'jobs') jobsPage();
if (document.body.dataset.page === 'job') jobPage(Number(document.body.dataset.job));
)JS";

}  // namespace

const char* page_script() { return kScript; }

}  // namespace tula::service
