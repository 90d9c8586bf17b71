// The step builder of the test page: add, edit, reorder (drag or buttons), remove, submit.
// The server validates and scores everything; this file only helps the tester build the list.
"use strict";
(function () {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const tbody = document.getElementById("steps");
  const message = document.getElementById("message");
  const addButton = document.getElementById("add-step");
  const submitButton = document.getElementById("submit");
  const result = document.getElementById("result");
  const timer = document.getElementById("timer");
  // the clock goes on from when the server first showed this sample (also after a reload)
  const started = performance.now() - 1000 * (boot.elapsed || 0);
  // one key per answer: a retried request is stored once
  const key = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now()).replace(/[^A-Za-z0-9_-]/g, "");
  let steps = [{ obj: 0, attr: boot.attributes[0], value: boot.values[boot.attributes[0]][0][0] }];
  let finished = false;
  let dragFrom = null;

  function tick() { if (!finished) timer.textContent = Math.floor((performance.now() - started) / 1000); }
  tick();
  setInterval(tick, 500);

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function select(options, value, label, onChange) {
    const s = el("select", { "aria-label": label });
    for (const [v, text] of options) {
      const o = el("option", { value: v }, text);
      if (String(v) === String(value)) o.selected = true;
      s.appendChild(o);
    }
    s.addEventListener("change", () => onChange(s.value));
    return s;
  }

  function move(from, to) {
    if (to < 0 || to >= steps.length || from === to) return;
    const [s] = steps.splice(from, 1);
    steps.splice(to, 0, s);
    draw();
  }

  function draw() {
    tbody.textContent = "";
    steps.forEach((st, i) => {
      const tr = el("tr", { draggable: finished ? "false" : "true", "data-row": i, class: "step" });
      const handle = el("td", { class: "handle", title: "drag to reorder" }, "☰");
      tr.appendChild(handle);
      tr.appendChild(el("td", { class: "num" }, String(i + 1)));
      const objCell = el("td");
      objCell.appendChild(select(boot.objects.map((t, k) => [k, t]), st.obj, "object", (v) => { st.obj = Number(v); }));
      tr.appendChild(objCell);
      const attrCell = el("td");
      attrCell.appendChild(select(boot.attributes.map((a) => [a, a]), st.attr, "attribute", (v) => {
        st.attr = v; st.value = boot.values[v][0][0]; draw();
      }));
      tr.appendChild(attrCell);
      const valCell = el("td");
      valCell.appendChild(select(boot.values[st.attr], st.value, "value", (v) => { st.value = v; }));
      tr.appendChild(valCell);
      const ops = el("td", { class: "ops" });
      const up = el("button", { type: "button", class: "up", title: "move up", "aria-label": "move step up" }, "↑");
      const down = el("button", { type: "button", class: "down", title: "move down", "aria-label": "move step down" }, "↓");
      const del = el("button", { type: "button", class: "remove", title: "remove", "aria-label": "remove step" }, "✕");
      up.disabled = finished || i === 0;
      down.disabled = finished || i === steps.length - 1;
      del.disabled = finished;
      up.addEventListener("click", () => move(i, i - 1));
      down.addEventListener("click", () => move(i, i + 1));
      del.addEventListener("click", () => { steps.splice(i, 1); draw(); });
      ops.append(up, down, del);
      tr.appendChild(ops);
      tr.addEventListener("dragstart", (e) => { dragFrom = i; tr.classList.add("dragging"); e.dataTransfer.effectAllowed = "move"; e.dataTransfer.setData("text/plain", String(i)); });
      tr.addEventListener("dragend", () => tr.classList.remove("dragging"));
      tr.addEventListener("dragover", (e) => { e.preventDefault(); tr.classList.add("over"); });
      tr.addEventListener("dragleave", () => tr.classList.remove("over"));
      tr.addEventListener("drop", (e) => { e.preventDefault(); tr.classList.remove("over"); if (dragFrom !== null) move(dragFrom, i); dragFrom = null; });
      if (finished) tr.querySelectorAll("select").forEach((s) => { s.disabled = true; });
      tbody.appendChild(tr);
    });
    addButton.disabled = finished || steps.length >= boot.max_steps;
    submitButton.disabled = finished;
  }

  addButton.addEventListener("click", () => {
    if (steps.length >= boot.max_steps) return;
    const a = boot.attributes[0];
    steps.push({ obj: 0, attr: a, value: boot.values[a][0][0] });
    draw();
  });

  function stepLine(s) { return s.obj + " · " + s.attr + " · " + s.value; }

  function showResult(r) {
    result.hidden = false;
    result.className = "result " + (r.correct ? "ok" : "bad");
    result.textContent = "";
    result.appendChild(el("h3", { id: "verdict" }, r.correct ? "Correct" : "Not correct"));
    const facts = [];
    if (r.distance !== null && r.distance !== undefined) facts.push("distance " + r.distance);
    if (r.broken_rule) facts.push("step " + r.broken_step + " breaks the " + r.broken_rule + " rule");
    if (r.obj_correct !== null && r.obj_correct !== undefined) facts.push("object " + (r.obj_correct ? "right" : "wrong") + ", attribute " + (r.attr_correct ? "right" : "wrong") + ", value " + (r.value_correct ? "right" : "wrong"));
    facts.push("time " + r.server_seconds.toFixed(1) + " s");
    result.appendChild(el("p", {}, facts.join(" · ")));
    const cols = el("div", { class: "row" });
    for (const [title, list] of [["Your answer", r.answer], ["Ground truth", r.reference]]) {
      const box = el("div");
      box.appendChild(el("h4", {}, title));
      const ol = el("ol", { class: title === "Ground truth" ? "truth" : "mine" });
      for (const s of list) {
        const li = el("li", {}, stepLine(s));
        if (s.options && s.options.length > 1) li.appendChild(el("small", { class: "muted" }, " (any of " + s.options.length + " destinations out of view)"));
        ol.appendChild(li);
      }
      box.appendChild(ol);
      cols.appendChild(box);
    }
    result.appendChild(cols);
    const next = el("a", { class: "button primary", id: "next", href: window.location.pathname }, boot.next_label);
    result.appendChild(next);
    const hist = el("a", { class: "button", href: "/history" }, "History");
    result.appendChild(hist);
    next.focus();
  }

  async function submit() {
    message.textContent = "";
    if (steps.length === 0) { message.textContent = "Add at least one step."; return; }
    submitButton.disabled = true;
    const body = {
      problem: boot.problem, split: boot.split, sample_id: boot.sample_id, practice: boot.practice,
      key: key, client_seconds: (performance.now() - started) / 1000,
      steps: steps.map((s) => ({ obj: s.obj, attr: s.attr, value: s.value })),
    };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const resp = await fetch("/api/answer", {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin",
        });
        const data = await resp.json();
        if (!resp.ok) { message.textContent = data.error || "the server refused the answer"; submitButton.disabled = false; return; }
        finished = true;
        draw();
        showResult(data);
        return;
      } catch (err) {
        message.textContent = "network problem, retrying…";
        await new Promise((res) => setTimeout(res, 800 * (attempt + 1)));
      }
    }
    message.textContent = "could not reach the server; press Submit again";
    submitButton.disabled = false;
  }
  submitButton.addEventListener("click", submit);
  draw();
})();
