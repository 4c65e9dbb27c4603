// nap-builder view: browse a run's steps offline. Data is the JSON in #nap-data; the list is
// paginated and a step's detail is built only when it is opened, so big runs stay responsive.
// Data is always inserted as text (textContent), never as HTML.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("nap-data").textContent);
  const META = JSON.parse(document.getElementById("nap-meta").textContent);
  const PAGE = 50;
  const MAX_LINES = 2000;
  const state = { pass: "", intent: "", src: "", traj: "", q: "", page: 0, current: null };

  DATA.forEach(function (st, k) {
    st.k = k;
    st.id = st.t + "/" + st.s;
    st.nPass = st.cands.filter(function (c) { return c.j && c.j.ok; }).length;
    st.nJudged = st.cands.filter(function (c) { return c.j; }).length;
  });

  function el(tag, attrs) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const key in attrs) {
        if (key === "text") node.textContent = attrs[key];
        else if (key === "cls") node.className = attrs[key];
        else node.setAttribute(key, attrs[key]);
      }
    }
    for (let i = 2; i < arguments.length; i++) {
      const kid = arguments[i];
      if (kid === null || kid === undefined) continue;
      node.appendChild(typeof kid === "string" ? document.createTextNode(kid) : kid);
    }
    return node;
  }

  function fmt(x, digits) {
    return x === null || x === undefined ? "–" : Number(x).toFixed(digits === undefined ? 2 : digits);
  }

  function placeholder(size, summary) {
    return summary ? "(compressed " + size + " lines: " + summary + ")" : "(compressed " + size + " lines)";
  }

  // The rendered text of a candidate as lines {t, cls}; `code` renders are rebuilt from the raw
  // observation exactly as builder/teacher/render.py does.
  function renderedLines(st, c) {
    if (c.same) return st.obs.split("\n").map(function (t) { return { t: t }; });
    if (c.rg && c.ren === undefined) {
      const lines = st.obs.split("\n");
      const out = [{ t: META.code_marker, cls: "marker" }];
      let kept = 1;
      c.rg.forEach(function (r) {
        for (let i = kept - 1; i < r[0] - 1; i++) out.push({ t: lines[i] });
        out.push({ t: placeholder(r[1] - r[0] + 1, r[2]), cls: "placeholder" });
        kept = r[1] + 1;
      });
      for (let i = kept - 1; i < lines.length; i++) out.push({ t: lines[i] });
      return out;
    }
    if (c.ren === undefined || c.ren === null) return null;
    return c.ren.split("\n").map(function (t) {
      if (t === META.code_marker || t === META.plain_marker) return { t: t, cls: "marker" };
      if (/^\(compressed \d+ lines/.test(t)) return { t: t, cls: "placeholder" };
      return { t: t };
    });
  }

  function linesBlock(lines, omitted, numbered) {
    const pre = el("div", { cls: "lines" });
    const shown = Math.min(lines.length, MAX_LINES);
    function fill(upto) {
      const frag = document.createDocumentFragment();
      for (let i = pre.childElementCount; i < upto; i++) {
        const line = lines[i];
        let cls = "ln" + (line.cls ? " " + line.cls : "");
        if (omitted && omitted(i + 1)) cls += " omitted";
        frag.appendChild(el("div", { cls: cls, "data-line": String(i + 1) },
          el("span", { cls: "no", text: numbered ? String(i + 1) : "" }), el("span", { cls: "tx", text: line.t })));
      }
      pre.appendChild(frag);
    }
    fill(shown);
    if (lines.length > shown) {
      const more = el("button", { text: "show all " + lines.length + " lines" });
      more.addEventListener("click", function () { fill(lines.length); more.remove(); });
      return el("div", null, pre, more);
    }
    return pre;
  }

  function inRanges(ranges) {
    return function (n) {
      for (const r of ranges) if (n >= r[0] && n <= r[1]) return true;
      return false;
    };
  }

  function verdict(j) {
    if (!j) return el("span", { cls: "badge none", text: "not judged" });
    if (j.fe) return el("span", { cls: "badge fail verdict", text: "FAIL (format error)" });
    return el("span", { cls: "badge verdict " + (j.ok ? "pass" : "fail"), text: j.ok ? "PASS" : "FAIL" });
  }

  function matches(st) {
    if (state.traj && st.t !== state.traj) return false;
    if (state.intent && st.intent !== state.intent) return false;
    const cands = state.src ? st.cands.filter(function (c) { return c.src === state.src; }) : st.cands;
    if (state.src && !cands.length) return false;
    if (state.pass === "pass" && !cands.some(function (c) { return c.j && c.j.ok; })) return false;
    if (state.pass === "fail" && !cands.some(function (c) { return c.j && !c.j.ok; })) return false;
    if (state.pass === "nopass" && (!cands.some(function (c) { return c.j; }) || cands.some(function (c) { return c.j && c.j.ok; }))) return false;
    if (state.q && ((st.cmd || "") + "\n" + (st.inst || "")).toLowerCase().indexOf(state.q) < 0) return false;
    return true;
  }

  function option(select, value, label) {
    select.appendChild(el("option", { value: value, text: label }));
  }

  function buildFilters() {
    const bar = document.getElementById("filters");
    const uniq = function (f) { return Array.from(new Set(DATA.flatMap(f))).sort(); };
    const inst = {};
    DATA.forEach(function (s) { if (s.inst) inst[s.t] = s.inst; });
    const label = function (t) { return inst[t] ? inst[t] + " (" + t.slice(0, 8) + ")" : t; };
    const specs = [
      ["pass", "gate", [["", "any"], ["pass", "a candidate passed"], ["fail", "a candidate failed"], ["nopass", "judged, none passed"]]],
      ["intent", "intent", [["", "all"]].concat(uniq(function (s) { return [s.intent]; }).map(function (v) { return [v, v]; }))],
      ["src", "rule / teacher", [["", "all"]].concat(uniq(function (s) { return s.cands.map(function (c) { return c.src; }); }).map(function (v) { return [v, v]; }))],
      ["traj", "trajectory", [["", "all"]].concat(uniq(function (s) { return [s.t]; }).map(function (v) { return [v, label(v)]; }))],
    ];
    specs.forEach(function (spec) {
      const select = el("select", { id: "filter-" + spec[0] });
      spec[2].forEach(function (o) { option(select, o[0], o[1]); });
      select.addEventListener("change", function () { state[spec[0]] = select.value; state.page = 0; renderList(); });
      bar.appendChild(el("label", null, spec[1], select));
    });
    const search = el("input", { id: "filter-q", type: "search", placeholder: "command or instance contains…" });
    search.addEventListener("input", function () { state.q = search.value.toLowerCase(); state.page = 0; renderList(); });
    bar.appendChild(search);
    bar.appendChild(el("span", { id: "count", cls: "muted" }));
  }

  function renderList() {
    const rows = DATA.filter(matches);
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    document.getElementById("count").textContent = rows.length + " of " + DATA.length + " steps";
    const list = document.getElementById("list");
    list.textContent = "";
    const prev = el("button", { text: "‹ prev" });
    const next = el("button", { text: "next ›" });
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
    prev.addEventListener("click", function () { state.page--; renderList(); });
    next.addEventListener("click", function () { state.page++; renderList(); });
    list.appendChild(el("div", { id: "pager" }, prev, el("span", { text: "page " + (state.page + 1) + " / " + pages }), next));
    const body = el("tbody");
    rows.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (st) {
      const tr = el("tr", { cls: "row" + (state.current === st.k ? " current" : ""), "data-step": st.id },
        el("td", { text: st.inst || (st.t.length > 14 ? st.t.slice(0, 13) + "…" : st.t), title: st.t }),
        el("td", { text: String(st.s) }),
        el("td", { text: st.intent }),
        el("td", { cls: "cmd", text: st.cmd || "", title: st.cmd || "" }),
        el("td", { text: st.nPass + "/" + st.nJudged }),
        el("td", { text: st.sel.length ? st.sel[0].src : "–" }));
      tr.addEventListener("click", function () { location.hash = "step=" + encodeURIComponent(st.id); });
      body.appendChild(tr);
    });
    list.appendChild(el("table", null,
      el("thead", null, el("tr", null, el("th", { text: "instance / trajectory" }), el("th", { text: "step" }), el("th", { text: "intent" }),
        el("th", { text: "command" }), el("th", { text: "passed" }), el("th", { text: "selected" }))), body));
  }

  function section(title, id) {
    const node = el("section", { id: id });
    node.appendChild(el("h2", { text: title }));
    return node;
  }

  function showStep(st) {
    state.current = st.k;
    const detail = document.getElementById("detail");
    detail.textContent = "";
    const root = el("div", { id: "step-detail", "data-step": st.id });
    const head = section("Step " + st.s + " of " + (st.inst ? st.inst + " (" + st.t + ")" : st.t), "step-head");
    head.appendChild(el("dl", { cls: "kv" },
      el("dt", { text: "instance" }), el("dd", { text: st.inst || "– (not recorded by this format)" }),
      el("dt", { text: "command" }), el("dd", { text: st.cmd || "" }),
      el("dt", { text: "intent" }), el("dd", { text: st.intent }),
      el("dt", { text: "focus question" }), el("dd", { text: st.focus || "–" }),
      el("dt", { text: "observation tokens" }), el("dd", { text: String(st.tok) }),
      el("dt", { text: "logged next action" }), el("dd", { text: st.logged || "–" })));
    root.appendChild(head);

    const chosen = st.cands.find(function (c) { return c.sel === 0 && c.rg; }) || st.cands.find(function (c) { return c.rg; });
    const raw = section("Raw observation", "raw");
    const rawLines = st.obs.split("\n").map(function (t) { return { t: t }; });
    const note = el("div", { cls: "muted" });
    raw.appendChild(note);
    let block = null;
    function highlight(c) {
      note.textContent = c ? "highlighted: lines omitted by candidate " + c.i + " (" + c.src + ")" : "";
      const fresh = linesBlock(rawLines, c ? inRanges(c.rg) : null, true);
      if (block) raw.replaceChild(fresh, block); else raw.appendChild(fresh);
      block = fresh;
    }
    highlight(chosen);
    root.appendChild(raw);

    const refs = section("Reference actions (" + st.refs.length + ")", "references");
    const rt = el("tbody");
    st.refs.forEach(function (r, i) {
      rt.appendChild(el("tr", { cls: "ref" }, el("td", { text: String(i) }), el("td", { text: r.m }),
        el("td", { cls: "mono", text: r.fe ? "(format error)" : (r.a || "–") }), el("td", { text: fmt(r.sim) })));
    });
    refs.appendChild(el("table", { cls: "grid" }, el("thead", null, el("tr", null, el("th", { text: "#" }), el("th", { text: "mode" }),
      el("th", { text: "action" }), el("th", { text: "similarity to logged" }))), rt));
    root.appendChild(refs);

    const cs = section("Candidates (" + st.cands.length + ")", "candidates");
    st.cands.forEach(function (c) {
      const box = el("div", { cls: "cand" + (c.sel !== null && c.sel !== undefined ? " chosen" : ""), "data-index": String(c.i), "data-source": c.src });
      const headRow = el("div", { cls: "head" }, el("b", { text: "#" + c.i }), el("span", { cls: "mono", text: c.src }),
        el("span", { text: c.kind || "unparsed" }),
        c.valid ? el("span", { text: (c.rt === null ? "?" : c.rt) + " tokens" }) : el("span", { cls: "badge fail", text: "invalid: " + c.why }),
        c.dup !== null && c.dup !== undefined ? el("span", { cls: "muted", text: "duplicate of #" + c.dup }) : null,
        verdict(c.j),
        c.sel !== null && c.sel !== undefined ? el("span", { cls: "badge sel", text: "selected rank " + c.sel }) : null);
      if (c.rg) {
        const show = el("button", { text: "highlight on raw" });
        show.addEventListener("click", function () { highlight(c); });
        headRow.appendChild(show);
      }
      box.appendChild(headRow);
      if (c.j) {
        box.appendChild(el("div", { cls: "act" }, el("span", { cls: "muted", text: "agent action: " }), c.j.a || "(none)"));
        box.appendChild(el("div", { cls: "muted score", text: "score " + fmt(c.j.sc, 3) + "  similarities [" + c.j.sims.map(function (x) { return fmt(x); }).join(", ") + "]" }));
      }
      const lines = renderedLines(st, c);
      if (lines) {
        const det = el("details", { cls: "rendered" }, el("summary", { text: "rendered (" + lines.length + " lines)" }));
        let filled = false;
        const fill = function () { if (!filled) { filled = true; det.appendChild(linesBlock(lines, null, false)); } };
        det.addEventListener("toggle", fill);
        if (c.sel === 0 || (c.j && st.cands.length <= 4)) { det.open = true; fill(); }
        box.appendChild(det);
      } else if (c.reply) {
        box.appendChild(el("div", { cls: "act muted", text: "reply: " + c.reply }));
      }
      cs.appendChild(box);
    });
    root.appendChild(cs);

    const sel = section("Selected targets (" + st.sel.length + ")", "selected");
    if (!st.sel.length) sel.appendChild(el("div", { cls: "muted", text: "none: the step was dropped" }));
    st.sel.forEach(function (s) {
      sel.appendChild(el("div", { cls: "cand target" }, el("div", { cls: "head" }, el("span", { cls: "badge sel", text: "rank " + s.r }),
        el("span", { text: s.fb ? "fallback (unchanged)" : "candidate #" + s.c + " " + s.src }),
        el("span", { text: "similarity " + fmt(s.sim, 3) + ", length reward " + fmt(s.lr) + ", " + s.rt + " tokens" })),
        el("div", { cls: "act", text: s.target })));
    });
    root.appendChild(sel);

    if (st.ev.length) {
      const ev = section("Eval compressors (" + st.ev.length + ")", "eval");
      const tb = el("tbody");
      st.ev.forEach(function (e) {
        tb.appendChild(el("tr", null, el("td", { cls: "mono", text: e.c }),
          el("td", null, e.ok === null ? el("span", { cls: "badge none", text: e.skip || "skipped" }) : verdict({ ok: e.ok })),
          el("td", { text: fmt(e.sc, 3) }), el("td", { cls: "mono", text: e.a || "–" }), el("td", { text: e.tok[1] + " / " + e.tok[0] })));
      });
      ev.appendChild(el("table", { cls: "grid" }, el("thead", null, el("tr", null, el("th", { text: "compressor" }), el("th", { text: "preserved" }),
        el("th", { text: "score" }), el("th", { text: "agent action" }), el("th", { text: "tokens (compressed / raw)" }))), tb));
      root.appendChild(ev);
    }
    detail.appendChild(root);
    detail.scrollTop = 0;
    renderList();
  }

  function route() {
    const match = /step=([^&]+)/.exec(location.hash);
    const id = match ? decodeURIComponent(match[1]) : null;
    const st = (id && DATA.find(function (s) { return s.id === id; })) || DATA.filter(matches)[0];
    if (st) showStep(st);
    else document.getElementById("detail").textContent = "no steps in this run";
  }

  document.getElementById("title-meta").textContent = META.out + " · " + DATA.length + " eligible steps";
  buildFilters();
  renderList();
  window.addEventListener("hashchange", route);
  route();
})();
