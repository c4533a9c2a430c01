// live.js keeps a console page in step with status, as Argo CD's UI does:
// it opens the page's event stream (the #live element's data-events; a
// watch the console makes with the signed-in person's token) with
// EventSource, which reconnects by itself when the console ends a stream,
// and on each change fetches the page again and swaps in its [data-live]
// parts. It never writes anything and runs no code from the page.
(function () {
  'use strict';
  var live = document.getElementById('live');
  if (!live || !live.dataset.events || !window.EventSource || !window.fetch || !window.DOMParser) {
    return;
  }
  var source = new EventSource(live.dataset.events);
  var busy = false;
  var again = false;

  function say(text) {
    live.textContent = text;
  }

  // swap replaces each [data-live] part with the fetched page's, keeping
  // the diffs the person unfolded unfolded.
  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, 'text/html');
    var open = document.querySelectorAll('[data-live] details[open][id]');
    var parts = document.querySelectorAll('[data-live]');
    for (var i = 0; i < parts.length; i++) {
      var next = fresh.getElementById(parts[i].id);
      if (next) {
        parts[i].replaceWith(document.importNode(next, true));
      }
    }
    for (var j = 0; j < open.length; j++) {
      var again = document.getElementById(open[j].id);
      if (again) {
        again.open = true;
      }
    }
    live.dataset.updates = String(Number(live.dataset.updates || '0') + 1);
  }

  // refresh fetches the page once at a time; a change that arrives
  // meanwhile fetches it once more afterwards.
  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    fetch(window.location.href, {credentials: 'same-origin', cache: 'no-store', redirect: 'follow'})
      .then(function (resp) {
        if (resp.redirected || !resp.ok) {
          // Signed out, session expired or the page is gone: stop.
          source.close();
          say('Not live: reload the page.');
          return null;
        }
        return resp.text();
      })
      .then(function (html) {
        if (html !== null) {
          swap(html);
        }
      })
      .catch(function () {
        say('Not live: the console did not answer; reload the page.');
      })
      .then(function () {
        busy = false;
        if (again) {
          refresh();
        }
      });
  }

  source.addEventListener('open', function () {
    say('Live: this page follows status.');
  });
  source.addEventListener('change', refresh);
  source.addEventListener('error', function () {
    say(source.readyState === EventSource.CLOSED ? 'Not live: reload the page.' : 'Reconnecting…');
  });
})();
