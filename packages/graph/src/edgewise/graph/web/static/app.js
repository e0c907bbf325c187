// edgewise ui: live updates and actions. Plain JavaScript, no libraries; talks to this server only.
(function () {
  'use strict';
  var main = document.getElementById('main');
  var csrf = document.querySelector('meta[name="edgewise-csrf"]').content;
  // The version of the run the page shows: a live page asks for the run only once it changed.
  var shown = main.querySelector('.run-page');
  var version = shown ? shown.getAttribute('data-version') : null;

  function toast(text, bad) {
    var box = document.getElementById('toast');
    box.textContent = text;
    box.className = 'show' + (bad ? ' bad' : '');
    setTimeout(function () { box.className = ''; }, 6000);
  }

  function openDetails() {
    var ids = [];
    main.querySelectorAll('details[id][open]').forEach(function (d) { ids.push(d.id); });
    return ids;
  }

  function refresh() {
    var live = main.getAttribute('data-live');
    if (!live) { return; }
    var steps = main.querySelectorAll('table.steps tr.step');
    var since = steps.length ? steps[steps.length - 1].getAttribute('data-step') : '';
    var url = live + (live.indexOf('?') >= 0 ? '&' : '?') + 'partial=1' + (version ? '&v=' + encodeURIComponent(version) : '') +
      (since ? '&since=' + encodeURIComponent(since) : '');
    fetch(url, { credentials: 'same-origin' }).then(function (response) {
      if (response.status === 204 || !response.ok) { return null; }
      version = response.headers.get('x-edgewise-version');
      return response.text();
    }).then(function (html) {
      if (html === null || html === undefined) { return; }
      var target = main.querySelector('#live') || main;
      var opened = openDetails();
      var reasons = [];  // what the user typed, kept across the refresh (matched by attribute, never by selector)
      main.querySelectorAll('input.reason').forEach(function (input) { reasons.push([input.getAttribute('data-call'), input.value]); });
      var parsed = new DOMParser().parseFromString(html, 'text/html');
      var fresh = parsed.querySelector('#live');
      // Only the steps from `data-from` on came: the rows before are kept as they are (opened, loaded).
      var table = parsed.querySelector('table.steps');
      var from = table ? parseInt(table.getAttribute('data-from') || '1', 10) : 1;
      var kept = [];
      if (from > 1) {
        main.querySelectorAll('table.steps > tbody > tr').forEach(function (row) {
          var step = row.classList.contains('step') ? row : row.previousElementSibling;
          if (step && parseInt(step.getAttribute('data-step'), 10) < from) { kept.push(row); }
        });
      }
      target.innerHTML = fresh ? fresh.innerHTML : parsed.body.innerHTML;
      var body = main.querySelector('table.steps > tbody');
      if (body && kept.length) {
        var before = body.firstChild;
        kept.forEach(function (row) { body.insertBefore(row, before); });
      }
      opened.forEach(function (id) { var d = document.getElementById(id); if (d) { d.open = true; } });
      main.querySelectorAll('input.reason').forEach(function (input) {
        reasons.forEach(function (kept) { if (kept[0] === input.getAttribute('data-call')) { input.value = kept[1]; } });
      });
    }).catch(function () { /* the server is restarting: try again on the next tick */ });
  }

  function act(payload) {
    return fetch('/api/action', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Edgewise-CSRF': csrf },
      body: JSON.stringify(payload)
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!data.ok) { toast(data.error, true); return; }
        toast(data.message || 'done', false);
        if (data.url && payload.action !== 'answer' && payload.action !== 'resume') { window.location.href = data.url; }
        else { version = null; refresh(); }
      });
    });
  }

  main.addEventListener('click', function (event) {
    var button = event.target.closest('button');
    if (!button || document.body.getAttribute('data-read-only') === 'true') { return; }
    var where = button.closest('.actions') || main.querySelector('.actions');
    if (!where) { return; }
    var base = { store: where.getAttribute('data-store'), run_id: where.getAttribute('data-run') };
    var call = button.getAttribute('data-call');
    if (button.classList.contains('fork')) {
      act(Object.assign(base, { action: 'fork', snapshot_id: button.getAttribute('data-snapshot') }));
    } else if (button.classList.contains('delete')) {
      if (window.confirm('Delete run ' + base.run_id + ' and its child runs?')) { act(Object.assign(base, { action: 'delete' })); }
    } else if (button.classList.contains('resume')) {
      act(Object.assign(base, { action: 'resume' }));
    } else if (button.classList.contains('approve')) {
      act(Object.assign(base, { action: 'answer', approve: [call], deny: [] }));
    } else if (button.classList.contains('deny')) {
      // Found by relation, not by a selector built from the call id (an id may hold any character).
      var item = button.closest('li');
      var reason = item ? item.querySelector('input.reason') : null;
      act(Object.assign(base, { action: 'answer', approve: [], deny: [call], reason: reason && reason.value ? reason.value : null }));
    }
  });

  // A step's state, node fields and diff are fetched when its row is opened: the page holds summaries only.
  function loadStep(details) {
    var page = main.querySelector('.run-page');
    var where = details.closest('.actions');
    if (!page || !where || details.getAttribute('data-loaded')) { return; }
    details.setAttribute('data-loaded', '1');
    var url = '/api/step?store=' + encodeURIComponent(where.getAttribute('data-store')) +
      '&id=' + encodeURIComponent(where.getAttribute('data-run')) +
      '&step=' + encodeURIComponent(details.getAttribute('data-step'));
    fetch(url, { credentials: 'same-origin' }).then(function (response) {
      return response.text().then(function (html) {
        var body = details.querySelector('.step-body');
        if (!response.ok) {
          details.removeAttribute('data-loaded');
          body.textContent = new DOMParser().parseFromString(html, 'text/html').body.textContent;
          return;
        }
        body.innerHTML = html;  // written by the server, every stored value escaped
      });
    }).catch(function () { details.removeAttribute('data-loaded'); });
  }

  main.addEventListener('toggle', function (event) {
    var details = event.target;
    if (details.open && details.matches && details.matches('details[data-step]')) { loadStep(details); }
  }, true);

  if (main.getAttribute('data-live')) {
    var poll = parseInt(main.getAttribute('data-poll') || '1000', 10);
    setInterval(refresh, poll);
  }
})();
