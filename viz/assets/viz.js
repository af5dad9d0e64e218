// critsec viz: the page's script (hand-written, no library). It reads the
// data embedded by package viz (Data in viz.go) and draws the space-time
// diagram and the #InCS chart as SVG, redrawing only what is visible.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const H = D.header;
  const E = D.detail; // [t, type, node, other, kind, match]
  const T = { SEND: 0, RECV: 1, ENTRY: 2, EXIT: 3, INCS: 4, OUTCS: 5, CRASH: 6, SUSPECT: 7, VERDICT: 8, DRAIN: 9 };
  const MAXDRAW = 3000; // most arrows drawn at once (level of detail)
  const SVGNS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const fmt = (t) => (Number.isInteger(t) ? String(t) : Number(t.toPrecision(6)).toString());
  // Wall-clock traces (runtime node: seconds since 1970) show times as
  // offsets from the trace's first event; the others show t as it is.
  const ORIGIN = D.t0 > 1e6 && D.t0 > 1000 * (D.t1 - D.t0) ? D.t0 : 0;
  const fmtT = (t) => fmt(Number((t - ORIGIN).toPrecision(12)));

  // ---- message kinds, grouped by prefix ("lmin.mx.REQUEST" -> "lmin.mx")
  const groups = [], groupOf = [], colour = [];
  const HUES = [210, 10, 130, 280, 40, 180, 330, 90, 250, 0];
  D.kinds.forEach((k, i) => {
    const dot = k.lastIndexOf(".");
    const g = dot > 0 ? k.slice(0, dot) : "(top level)";
    let gi = groups.findIndex((x) => x.name === g);
    if (gi < 0) { gi = groups.length; groups.push({ name: g, kinds: [], off: false }); }
    groupOf[i] = gi;
    groups[gi].kinds.push(i);
  });
  D.kinds.forEach((k, i) => {
    const g = groups[groupOf[i]], j = g.kinds.indexOf(i);
    if (groups.length === 1) { // one group: a hue per kind
      colour[i] = "hsl(" + ((HUES[i % HUES.length] + 17 * Math.floor(i / HUES.length)) % 360) + ",70%,40%)";
      return;
    }
    const hue = HUES[groupOf[i] % HUES.length] + 25 * Math.floor(groupOf[i] / HUES.length);
    colour[i] = "hsl(" + hue + ",70%," + (30 + (j * 17) % 40) + "%)";
  });

  // ---- the model of the detail window
  const msgs = [];     // {s, r, from, to, k, ts, tr} s/r detail indices (-1: outside)
  const ivals = [];    // {p, a, b, ia, ib} CS interval [a, b], event indices
  const waits = [];    // {p, a, b, ia, ib, op}
  const marks = [];    // {i, p, type, other}
  const count = [];    // #InCS (live) after each detail event
  const lines = D.lines;
  const tw0 = E.length ? E[0][0] : D.t0, tw1 = E.length ? E[E.length - 1][0] : D.t1;
  const inState = new Map(), crashed = new Set();
  D.startInCS.forEach((p) => inState.set(p, -1));
  D.startCrashed.forEach((p) => crashed.add(p));
  const openI = new Map(), openW = new Map();
  D.startInCS.forEach((p) => openI.set(p, { p: p, a: tw0, ia: -1, b: null, ib: -1 }));
  let c = D.inCSAt;
  E.forEach((e, i) => {
    const [t, ty, p, o, k, m] = e;
    switch (ty) {
      case T.SEND:
        msgs.push({ s: i, r: m, from: p, to: o, k: k, ts: t, tr: m >= 0 ? E[m][0] : null });
        break;
      case T.RECV:
        if (m < 0) msgs.push({ s: -1, r: i, from: o, to: p, k: k, ts: null, tr: t });
        break;
      case T.ENTRY: case T.EXIT:
        marks.push({ i: i, p: p, type: ty });
        openW.set(p, { p: p, a: t, ia: i, b: null, ib: -1, op: ty === T.ENTRY ? "entry" : "exit" });
        break;
      case T.INCS: case T.OUTCS: {
        const w = openW.get(p);
        if (w) { w.b = t; w.ib = i; waits.push(w); openW.delete(p); }
        if (ty === T.INCS && !openI.has(p)) { openI.set(p, { p: p, a: t, ia: i, b: null, ib: -1 }); if (!crashed.has(p)) c++; }
        if (ty === T.OUTCS && openI.has(p)) { const v = openI.get(p); v.b = t; v.ib = i; ivals.push(v); openI.delete(p); if (!crashed.has(p)) c--; }
        break;
      }
      case T.CRASH:
        if (!crashed.has(p)) {
          crashed.add(p);
          if (openI.has(p)) { const v = openI.get(p); v.b = t; v.ib = i; ivals.push(v); openI.delete(p); c--; }
          const w = openW.get(p);
          if (w) { w.b = t; w.ib = i; waits.push(w); openW.delete(p); }
        }
        marks.push({ i: i, p: p, type: ty });
        break;
      case T.SUSPECT:
        marks.push({ i: i, p: p, type: ty, other: o });
        break;
    }
    count.push(c);
  });
  openI.forEach((v) => ivals.push(v));
  openW.forEach((w) => waits.push(w));
  const crashAt = new Map(); // process -> detail index of its crash
  marks.forEach((m) => { if (m.type === T.CRASH && !crashAt.has(m.p)) crashAt.set(m.p, m.i); });

  // ---- state: view range, step, hidden groups
  // a margin of 2 % each side; a window at one instant gets a unit around it
  const pad = tw1 > tw0 ? (tw1 - tw0) * 0.02 : 0.5;
  let v0 = tw0 - pad, v1 = tw1 + pad;
  const FIRSTVIEW = 400; // a long window opens on its first events ("fit" shows all of it)
  if (E.length > FIRSTVIEW && E[FIRSTVIEW - 1][0] > tw0) {
    v1 = E[FIRSTVIEW - 1][0];
    v0 = tw0 - (v1 - tw0) * 0.02;
  }
  let step = E.length; // events 0..step-1 are shown (the stepper's |◀ goes back to none)
  let hood = 0; // 0: global #InCS; i: the neighborhood of P_i
  const vio = D.violation;
  // the step from which the violation shows: 0 for the initial configuration,
  // -1 when it lies outside the detail window
  let vioStep = -1;
  if (vio && vio.index >= D.first && vio.index < D.first + E.length) vioStep = vio.index - D.first + 1;
  else if (vio && vio.index < 0 && D.first === 0) vioStep = 0;

  // ---- header text
  const parts = [H.alg, "n = " + H.n, "runtime " + H.runtime];
  if (H.local) parts.push("local bounds l_i..k_i"); else parts.push("bounds " + H.lo + " ≤ #InCS ≤ " + H.hi + " (l = " + H.l + ", k = " + H.k + ")");
  if (H.coterie) parts.push("coterie " + H.coterie);
  if (H.runtime === "sim") parts.push("seed " + H.seed);
  parts.push(D.events + " events");
  $("summary").textContent = parts.join(" · ");
  const notes = [];
  if (ORIGIN) notes.push("Times are seconds since the first event, at wall-clock t = " + ORIGIN + " (" + new Date(ORIGIN * 1000).toISOString() + "); critsec viz --from takes the trace's own t.");
  if (D.truncated || D.first > 0) notes.push("Detail window: events " + (D.first + 1) + "–" + (D.first + E.length) + " of " + D.events + " (t " + fmtT(tw0) + "–" + fmtT(tw1) + "); the chart's band covers the whole trace. Choose another window with critsec viz --from T --window N.");
  if (H.n > lines) notes.push("Lines drawn: P1–P" + lines + " of " + H.n + " (critsec viz --lines).");
  const noteBase = notes.join(" ");

  // ---- legend
  const legend = $("legend");
  groups.forEach((g, gi) => {
    const el = document.createElement("span");
    el.className = "lg";
    el.dataset.group = g.name;
    el.title = "click to hide or show " + g.name;
    el.innerHTML = "<b>" + esc(g.name) + "</b> <span class=kinds>" + g.kinds.map((k) =>
      "<span class=sw style='background:" + colour[k] + "'></span>" + esc(D.kinds[k].slice(g.name === "(top level)" ? 0 : g.name.length + 1)) + " (" + D.counts[k] + ")").join(" ") + "</span>";
    el.onclick = () => { g.off = !g.off; el.classList.toggle("off", g.off); render(); };
    legend.appendChild(el);
  });

  // ---- neighborhood picker (local problems)
  if (H.local) {
    $("hood-pick").hidden = false;
    const sel = $("hood");
    let o = document.createElement("option"); o.value = "0"; o.textContent = "all processes (no bound)"; sel.appendChild(o);
    for (let i = 1; i <= lines; i++) {
      o = document.createElement("option"); o.value = String(i);
      o.textContent = "N" + i + " ∪ {P" + i + "} = {" + [i].concat(H.neighbors[i - 1]).sort((a, b) => a - b).map((x) => "P" + x).join(",") + "}, l=" + H.lk[i - 1][0] + " k=" + H.lk[i - 1][1];
      sel.appendChild(o);
    }
    sel.onchange = () => { hood = Number(sel.value); render(); };
    hood = 1; sel.value = "1";
  }

  // ---- geometry
  const diagram = $("diagram"), chart = $("chart");
  const LEFT = 56, RIGHT = 16, ROW = lines > 60 ? 12 : lines > 20 ? 20 : 34, TOP = 24;
  const DH = TOP + ROW * lines + 14, CH = 170;
  diagram.setAttribute("height", DH);
  chart.setAttribute("height", CH);
  const width = () => Math.max(300, diagram.clientWidth || 900);
  const xOf = (t) => LEFT + ((t - v0) / (v1 - v0)) * (width() - LEFT - RIGHT);
  const tOf = (x) => v0 + ((x - LEFT) / (width() - LEFT - RIGHT)) * (v1 - v0);
  const yOf = (p) => TOP + ROW * (p - 0.5);
  const visible = (a, b) => b >= v0 && a <= v1;

  function describe(i) {
    if (i < 0 || i >= E.length) return "";
    const [t, ty, p, o, k] = E[i];
    const kind = k >= 0 ? D.kinds[k] : "";
    const s = ["P" + p + " sends " + kind + " to P" + o, "P" + p + " receives " + kind + " from P" + o,
      "P" + p + " requests entry", "P" + p + " requests exit", "P" + p + " becomes InCS", "P" + p + " becomes OutCS",
      "P" + p + " crashes", "P" + p + " suspects P" + o, "the run's verdict" + (vio && vio.kind ? ": " + vio.kind : ""),
      "the workload stops; the drain begins (no more entry requests)"][ty];
    return "event " + (D.first + i + 1) + " (t=" + fmtT(t) + "): " + s;
  }

  function axis(svg, y, h) {
    const span = v1 - v0, w = width();
    let stepT = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / stepT > 16) stepT *= 2;
    if (span / stepT > 16) stepT *= 2.5;
    let s = "";
    // Ticks at multiples of stepT from ORIGIN, labelled by the multiple
    // itself (t - ORIGIN would carry the wall clock's rounding error).
    for (let k = Math.ceil((v0 - ORIGIN) / stepT); ORIGIN + k * stepT <= v1; k++) {
      const t = ORIGIN + k * stepT, x = xOf(t);
      if (x < LEFT || x > w - RIGHT) continue;
      s += "<line class=grid x1=" + x + " x2=" + x + " y1=" + y + " y2=" + (y + h) + " />";
      s += "<text class=tick x=" + x + " y=" + (y - 4) + " text-anchor=middle>" + fmt(Number((k * stepT).toPrecision(12))) + "</text>";
    }
    return s;
  }

  // ---- the space-time diagram
  function renderDiagram() {
    const w = width();
    let s = "<defs>";
    D.kinds.forEach((k, i) => {
      s += "<marker id=ah" + i + " viewBox='0 0 10 10' refX=10 refY=5 markerWidth=7 markerHeight=7 orient=auto-start-reverse><path d='M0,0 L10,5 L0,10 z' fill='" + colour[i] + "'/></marker>";
    });
    s += "</defs>" + axis(diagram, TOP - 10, DH - TOP);
    const tNow = step < E.length ? (step > 0 ? E[step - 1][0] : tw0) : Infinity;
    const shown = (i) => i >= 0 && i < step;
    // process lines
    for (let p = 1; p <= lines; p++) {
      const y = yOf(p), ci = crashAt.get(p);
      const dead = (ci !== undefined && shown(ci)) || D.startCrashed.includes(p);
      s += "<text class=plabel x=4 y=" + (y + 4) + ">P" + p + "</text>";
      s += "<line class='proc" + (dead ? " crashed" : "") + "' data-p=" + p + " x1=" + LEFT + " x2=" + (w - RIGHT) + " y1=" + y + " y2=" + y + " data-tip='P" + p + "' />";
    }
    // CS intervals and waits
    const clip = (a, b, ib) => [Math.max(a, v0), Math.min(b === null || !shown(ib) ? Math.min(tNow, tw1) : b, v1)];
    ivals.forEach((v) => {
      if (v.p > lines || (v.ia >= 0 && !shown(v.ia))) return;
      const [a, b] = clip(v.a, v.b, v.ib);
      if (!visible(a, b) || b < a) return;
      const end = v.b !== null && shown(v.ib) ? "exit at t=" + fmtT(v.b) : "still InCS";
      const tip = "P" + v.p + " InCS from t=" + (v.ia < 0 ? fmtT(v.a) + " (before the window)" : fmtT(v.a)) + ", " + end + (v.b !== null && shown(v.ib) ? " (" + fmt(v.b - v.a) + ")" : "");
      s += "<rect class=cs data-tip='" + esc(tip) + "' x=" + xOf(a) + " y=" + (yOf(v.p) - ROW * 0.3) + " width=" + Math.max(2, xOf(b) - xOf(a)) + " height=" + ROW * 0.6 + " />";
    });
    waits.forEach((v) => {
      if (v.p > lines || !shown(v.ia)) return;
      const [a, b] = clip(v.a, v.b, v.ib);
      if (!visible(a, b) || b < a) return;
      const tip = "P" + v.p + " waits in " + v.op + " from t=" + fmtT(v.a) + (v.b !== null && shown(v.ib) ? " to t=" + fmtT(v.b) : ", still waiting");
      s += "<line class=wait data-tip='" + esc(tip) + "' x1=" + xOf(a) + " x2=" + Math.max(xOf(a) + 2, xOf(b)) + " y1=" + (yOf(v.p) + ROW * 0.36) + " y2=" + (yOf(v.p) + ROW * 0.36) + " />";
    });
    // messages, level of detail: at most MAXDRAW arrows
    const vis = [];
    for (const m of msgs) {
      if (groups[groupOf[m.k]].off || (m.from > lines && m.to > lines)) continue;
      if (m.s >= 0 && !shown(m.s)) continue;
      if (m.s < 0 && !shown(m.r)) continue;
      const a = m.ts === null ? tw0 : m.ts, b = m.tr === null || !shown(m.r) ? Math.max(a, Math.min(tNow, tw1)) : m.tr;
      if (visible(a, b)) vis.push([m, a, b]);
    }
    const stride = Math.ceil(vis.length / MAXDRAW);
    let drawn = 0;
    for (let j = 0; j < vis.length; j += stride) {
      const [m, a, b] = vis[j];
      const transit = m.tr === null || !shown(m.r);
      const y1 = m.from <= lines ? yOf(m.from) : DH - 4, y2 = m.to <= lines ? yOf(m.to) : DH - 4;
      const tip = D.kinds[m.k] + "  P" + m.from + " → P" + m.to + "\nsent " + (m.ts === null ? "before the window" : "t=" + fmtT(m.ts)) +
        (transit ? ", in transit" : ", received t=" + fmtT(m.tr) + (m.ts === null ? "" : " (" + fmt(m.tr - m.ts) + " later)"));
      const xa = xOf(a), xb = Math.max(xa + 0.01, xOf(b));
      const attrs = "class='msg" + (transit ? " transit" : "") + "' data-kind='" + esc(D.kinds[m.k]) + "' data-tip='" + esc(tip) + "' stroke='" + colour[m.k] + "' marker-end='url(#ah" + m.k + ")'";
      if (y1 === y2) { // a message to itself (or between hidden lines): an arc above the line
        const h = ROW * 0.45 + Math.min(ROW * 0.4, (xb - xa) * 0.1);
        s += "<path " + attrs + " d='M" + xa + "," + y1 + " C" + xa + "," + (y1 - h) + " " + xb + "," + (y1 - h) + " " + xb + "," + y2 + "' />";
      } else {
        s += "<line " + attrs + " x1=" + xa + " y1=" + y1 + " x2=" + xb + " y2=" + y2 + " />";
      }
      drawn++;
    }
    // requests, crashes, suspicions
    for (const m of marks) {
      if (m.p > lines || !shown(m.i)) continue;
      const t = E[m.i][0];
      if (!visible(t, t)) continue;
      const x = xOf(t), y = yOf(m.p), r = Math.min(6, ROW * 0.3);
      if (m.type === T.ENTRY || m.type === T.EXIT) {
        const up = m.type === T.ENTRY;
        const pts = up ? [x - r, y + r, x + r, y + r, x, y - r] : [x - r, y - r, x + r, y - r, x, y + r];
        s += "<polygon class='req " + (up ? "entry" : "exit") + "' data-tip='" + esc(describe(m.i)) + "' points='" + pts.join(",") + "' />";
      } else if (m.type === T.CRASH) {
        s += "<path class=crash data-tip='" + esc(describe(m.i)) + "' d='M" + (x - r) + "," + (y - r) + "L" + (x + r) + "," + (y + r) + "M" + (x - r) + "," + (y + r) + "L" + (x + r) + "," + (y - r) + "' />";
      } else {
        s += "<text class=suspect data-tip='" + esc(describe(m.i)) + "' x=" + (x - 3) + " y=" + (y - r - 1) + ">?" + m.other + "</text>";
      }
    }
    // the current event and the violation
    if (D.step && step > 0) {
      const e = E[step - 1];
      if (e[2] >= 1 && e[2] <= lines && visible(e[0], e[0])) s += "<circle class=cur id=current cx=" + xOf(e[0]) + " cy=" + yOf(e[2]) + " r=" + (ROW * 0.42) + " />";
    }
    if (vioStep > 0 && step >= vioStep) {
      const t = E[vioStep - 1][0];
      if (visible(t, t)) s += "<line class=vmark id=violation-mark data-tip='" + esc(vioText()) + "' x1=" + xOf(t) + " x2=" + xOf(t) + " y1=" + (TOP - 8) + " y2=" + DH + " />";
    }
    diagram.innerHTML = s;
    let note = noteBase;
    if (stride > 1) note += (note ? " " : "") + "Showing " + drawn + " of " + vis.length + " visible messages (1 in " + stride + "): zoom in for all.";
    $("note").textContent = note;
  }

  // ---- the chart of #InCS
  function boundsOf() {
    if (!H.local) return { lo: H.lo, hi: H.hi, name: "#InCS" };
    if (hood === 0) return { lo: null, hi: null, name: "#InCS (all processes)" };
    return { lo: H.lk[hood - 1][0], hi: H.lk[hood - 1][1], name: "#InCS in N" + hood + " ∪ {P" + hood + "}" };
  }

  // the chart's count in the detail window: its value when the window
  // starts, and after each event
  function detailSeries() {
    if (!(H.local && hood > 0)) return [D.inCSAt, count];
    const members = new Set([hood].concat(H.neighbors[hood - 1]));
    const inc = new Set(D.startInCS.filter((p) => members.has(p))), dead = new Set(D.startCrashed);
    const out = [], start = inc.size;
    let v = start;
    E.forEach((e) => {
      const p = e[2];
      if (members.has(p) && !dead.has(p)) {
        if (e[1] === T.INCS && !inc.has(p)) { inc.add(p); v++; }
        if (e[1] === T.OUTCS && inc.has(p)) { inc.delete(p); v--; }
        if (e[1] === T.CRASH) { dead.add(p); if (inc.has(p)) v--; }
      }
      out.push(v);
    });
    return [start, out];
  }

  // the count at time t, as the chart shows it (up to the current step)
  function valueAt(t) {
    const [start, ds] = detailSeries();
    let lo = 0, hi = Math.min(step, ds.length); // first event after t
    while (lo < hi) { const m = (lo + hi) >> 1; if (E[m][0] <= t) lo = m + 1; else hi = m; }
    return lo === 0 ? start : ds[lo - 1];
  }

  function renderChart() {
    const w = width(), top = 18, bottom = CH - 16, b = boundsOf(), [start, ds] = detailSeries();
    let ymax = Math.max(1, start);
    const useBand = !(H.local && hood > 0);
    if (useBand) D.series.forEach((x) => { ymax = Math.max(ymax, x[1]); });
    ds.forEach((v) => { ymax = Math.max(ymax, v); });
    if (b.lo !== null) ymax = Math.max(ymax, b.lo);
    if (b.hi !== null && b.hi <= 2 * ymax + 2) ymax = Math.max(ymax, b.hi);
    ymax += 1;
    const y = (v) => bottom - (v / ymax) * (bottom - top);
    let s = axis(chart, top, bottom - top);
    s += "<line class=axis x1=" + LEFT + " x2=" + LEFT + " y1=" + top + " y2=" + bottom + " />";
    for (let v = 0; v <= ymax; v += Math.max(1, Math.ceil(ymax / 5))) s += "<text class=tick x=" + (LEFT - 6) + " y=" + (y(v) + 3) + " text-anchor=end>" + v + "</text>";
    s += "<text class=ylabel x=4 y=12>" + esc(b.name) + "</text>";
    s += "<rect id=chart-hit fill=transparent x=" + LEFT + " y=" + top + " width=" + Math.max(0, w - LEFT - RIGHT) + " height=" + (bottom - top) + " />";
    // whole-trace band: min..max per bucket
    if (useBand && D.series.length) {
      let up = "", down = "";
      D.series.forEach((x, i) => {
        const a = D.t0 + i * D.width, bb = a + D.width;
        if (!visible(a, bb)) return;
        up += (up ? "L" : "M") + xOf(Math.max(a, v0)) + "," + y(x[1]) + "L" + xOf(Math.min(bb, v1)) + "," + y(x[1]);
        down = "L" + xOf(Math.min(bb, v1)) + "," + y(x[0]) + "L" + xOf(Math.max(a, v0)) + "," + y(x[0]) + down;
      });
      if (up) s += "<path class=band id=series-band data-tip='#InCS over the whole trace: min..max per bucket of width " + fmt(D.width) + "' d='" + up + down + "z' />";
    }
    // the window's exact step function, up to the current step
    const n = Math.min(step, ds.length);
    let prev = start, d = "M" + xOf(Math.max(tw0, v0)) + "," + y(prev);
    for (let i = 0; i < n; i++) {
      const ti = E[i][0];
      if (ds[i] === prev) continue;
      if (ti > v1) break;
      const x = xOf(Math.max(ti, v0));
      d += "L" + x + "," + y(prev) + "L" + x + "," + y(ds[i]);
      prev = ds[i];
    }
    const tEnd = n < E.length ? (n > 0 ? E[n - 1][0] : tw0) : tw1;
    d += "L" + xOf(Math.min(Math.max(tEnd, v0), v1)) + "," + y(prev);
    if (E.length) s += "<path class=count id=count data-tip='" + esc(b.name) + " in the detail window' d='" + d + "' />";
    // bound lines
    const bound = (v, id, label) => {
      if (v === null) return;
      const off = v > ymax;
      const yy = off ? top : y(v);
      s += "<line class=bound id=" + id + " data-tip='" + esc(label) + "' x1=" + LEFT + " x2=" + (w - RIGHT) + " y1=" + yy + " y2=" + yy + " />";
      s += "<text class=blabel x=" + (w - RIGHT - 4) + " y=" + (yy - 3) + " text-anchor=end>" + esc(label + (off ? " (above the chart)" : "")) + "</text>";
    };
    if (H.local) {
      bound(b.lo, "bound-lo", "l" + hood + " = " + b.lo);
      bound(b.hi, "bound-hi", "k" + hood + " = " + b.hi);
    } else {
      bound(b.lo, "bound-lo", "lower bound l = " + b.lo);
      bound(b.hi, "bound-hi", "upper bound k = " + b.hi);
    }
    chart.innerHTML = s;
  }

  function vioText() {
    if (!vio) return "";
    let s = "";
    if (vio.reason) s += "Property violated: " + vio.reason;
    if (vio.kind) s += (s ? " · " : "") + "the trace claims " + vio.kind + (vio.detail ? ": " + vio.detail : "");
    return s;
  }

  function renderStatus() {
    if (D.step) {
      $("step-label").textContent = "step " + step + " / " + E.length;
      $("event-text").textContent = step > 0 ? describe(step - 1) : "initial configuration: InCS " + (D.startInCS.length ? D.startInCS.map((p) => "P" + p).join(" ") : "none");
    }
    const box = $("violation");
    const show = vio && (vio.reason || vio.kind) && (D.step ? vioStep >= 0 && step >= vioStep : true);
    box.hidden = !show;
    const where = vio && vio.index < 0 ? "In the initial configuration: " : D.step ? "At step " + vioStep + ": " : vioStep > 0 ? "At event " + (vio.index + 1) + ": " : "";
    box.textContent = show ? where + vioText() : "";
    box.dataset.step = show ? String(vioStep) : "";
  }

  function render() { renderDiagram(); renderChart(); renderStatus(); }

  // ---- controls
  function zoom(f, at) {
    const c = at === undefined ? (v0 + v1) / 2 : at;
    v0 = c - (c - v0) * f; v1 = c + (v1 - c) * f;
    render();
  }
  $("zoom-in").onclick = () => zoom(0.5);
  $("zoom-out").onclick = () => zoom(2);
  $("zoom-fit").onclick = () => { v0 = tw0 - pad; v1 = tw1 + pad; render(); };
  $("zoom-all").onclick = () => { const sp = D.t1 > D.t0 ? D.t1 - D.t0 : 1; v0 = D.t0 - sp * 0.02; v1 = D.t1 + sp * 0.02; render(); };
  if (D.step) {
    $("stepper").hidden = false;
    const go = (s) => { step = Math.max(0, Math.min(E.length, s)); render(); };
    $("step-first").onclick = () => go(0);
    $("step-back").onclick = () => go(step - 1);
    $("step-next").onclick = () => go(step + 1);
    $("step-last").onclick = () => go(E.length);
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight") go(step + 1);
      if (ev.key === "ArrowLeft") go(step - 1);
    });
  }
  for (const svg of [diagram, chart]) {
    svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect();
      zoom(ev.deltaY > 0 ? 1.25 : 0.8, tOf(ev.clientX - r.left));
    }, { passive: false });
    let drag = null;
    svg.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, v0: v0, v1: v1 }; svg.classList.add("dragging"); });
    window.addEventListener("mouseup", () => { drag = null; svg.classList.remove("dragging"); });
    svg.addEventListener("mousemove", (ev) => {
      const tip = $("tip");
      let t = ev.target.dataset ? ev.target.dataset.tip : null;
      if (ev.target.id === "chart-hit") {
        const at = tOf(ev.clientX - svg.getBoundingClientRect().left);
        t = boundsOf().name + " = " + valueAt(at) + " at t=" + fmtT(at) + (at < tw0 || at > tw1 ? " (outside the detail window: see the band)" : "");
      }
      if (drag) {
        const dt = ((ev.clientX - drag.x) / (width() - LEFT - RIGHT)) * (drag.v1 - drag.v0);
        v0 = drag.v0 - dt; v1 = drag.v1 - dt;
        render();
        return;
      }
      if (t) {
        tip.textContent = t; tip.hidden = false;
        tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px";
      } else tip.hidden = true;
    });
    svg.addEventListener("mouseleave", () => { $("tip").hidden = true; });
  }
  window.addEventListener("resize", render);
  render();
  window.vizReady = performance.now(); // load time, read by the browser test
  document.body.dataset.ready = "1";
})();
