// The rating form: read the three scores (or "cannot decide") and post them to /api/rating.
// The server checks and stores everything; a stored rating loads the next sample.
"use strict";
(function () {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const message = document.getElementById("message");
  const buttons = [document.getElementById("submit"), document.getElementById("undecided")];
  // the clock goes on from when the server first showed this sample (also after a reload)
  const started = performance.now() - 1000 * (boot.elapsed || 0);
  // one key per rating: a retried request is stored once
  const key = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now()).replace(/[^A-Za-z0-9_-]/g, "");

  function chosen(name) {
    const input = document.querySelector(`input[name="${name}"]:checked`);
    return input ? Number(input.value) : null;
  }

  async function send(undecided) {
    const body = { serving: boot.serving, undecided: undecided, key: key,
      client_seconds: Math.round(performance.now() - started) / 1000 };
    for (const name of boot.criteria) body[name] = undecided ? null : chosen(name);
    if (!undecided && boot.criteria.some((name) => body[name] === null)) {
      message.textContent = "Rate all three, or choose 'Cannot decide'.";
      return;
    }
    buttons.forEach((b) => { b.disabled = true; });
    message.textContent = "";
    try {
      const response = await fetch("/api/rating", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body), credentials: "same-origin",
      });
      const data = await response.json();
      if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
      window.location.assign("/rate");
    } catch (err) {
      message.textContent = String(err.message || err);
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  document.getElementById("submit").addEventListener("click", () => send(false));
  document.getElementById("undecided").addEventListener("click", () => send(true));
})();
