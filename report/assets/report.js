// pmdump report page: draws the embedded data (script#pmdump-report).
// It computes nothing about the game: positions, levels, health and
// findings are the data's; this only lays them out.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pmdump-report").textContent);
  var $ = function (id) { return document.getElementById(id); };

  // The game's 16 player colors (its palette), near enough.
  var PALETTE = ["#ffffff", "#af00ff", "#d70000", "#005fff", "#00af00", "#ffff00", "#ff8700", "#00ffff",
    "#ff00ff", "#00ff00", "#0000ff", "#ff0000", "#8700ff", "#ffaf00", "#00afff", "#eeeeee"];
  // Tiles by levelmap.Tile: empty, background, solid, semi-solid, breakable, bombable, ladder, rope.
  var TILES = ["#0c0c12", "#23232f", "#6e6e86", "#a0844f", "#8b5a2b", "#c0502a", "#7a5c22", "#b09050"];
  var SEV = { error: 2, warning: 1, info: 0 };
  var SERIES_COLORS = ["#5aa9ff", "#ff8a5c", "#7bd88f", "#ffd866", "#d38cff", "#5ce1e6", "#ff6188", "#c0c0c0"];

  var convs = D.conversations || [];
  var byId = {};
  convs.forEach(function (c) { byId[c.id] = c; });
  var duration = Math.max(D.summary.duration_s || 0, 0.001);
  var hostOf = {}; // player → hostname, from the conversations
  convs.forEach(function (c) { if (c.player != null && c.hostname) hostOf[c.player] = c.hostname; });

  var S = { t: 0, playing: false, speed: 1, a: null, b: null, last: 0 };

  function fmtT(t) {
    var m = Math.floor(t / 60), s = t - 60 * m;
    return m + ":" + (s < 10 ? "0" : "") + s.toFixed(3);
  }
  function colorOf(c) { return PALETTE[((c | 0) % 16 + 16) % 16]; }
  function convLabel(c) {
    return "conv " + c.id + (c.player != null ? " · p" + c.player : "") + (c.hostname ? " " + c.hostname : "") + " (" + c.client + ")";
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (ch) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[ch]; }); }

  // Last index i with a[i] <= v, or -1.
  function floorIdx(a, v) {
    var lo = 0, hi = a.length - 1, r = -1;
    while (lo <= hi) {
      var m = (lo + hi) >> 1;
      if (a[m] <= v) { r = m; lo = m + 1; } else hi = m - 1;
    }
    return r;
  }

  // ---- summary ----
  function summary() {
    var s = D.summary, eras = Object.keys(s.eras || {}).map(function (k) { return s.eras[k] + " " + k; }).join(", ");
    $("summary-line").textContent = (s.inputs || []).join(", ") + " · " + s.games + " game" + (s.games === 1 ? "" : "s") +
      " · " + convs.length + " conversation" + (convs.length === 1 ? "" : "s") + (eras ? " (" + eras + ")" : "") +
      " · " + D.levels.length + " level" + (D.levels.length === 1 ? "" : "s") + " · " + fmtT(s.duration_s || 0) +
      (s.first ? " from " + s.first.replace("T", " ").replace(/\.\d+Z$/, "Z") : "");
    var h = "<table><tr><th>conv</th><th>player</th><th>client</th><th title=\"states rebuilt / held (acknowledged)\">states</th></tr>";
    convs.forEach(function (c) {
      h += "<tr><td>" + c.id + "</td><td><span class=swatch style=\"background:" + colorOf(c.color) + "\"></span>" +
        (c.player != null ? c.player : "?") + "<br><span class=muted>" + esc(c.era) + "</span></td><td>" + (c.hostname ? esc(c.hostname) + "<br>" : "") +
        "<span class=mono>" + esc(c.client) + "</span></td><td>" + c.states + "<br>" + c.acked + " held</td></tr>";
    });
    h += "</table>";
    if (s.thinned) h += "<p class=muted>Replay thinned: " + esc(s.thinned) + ".</p>";
    var probs = s.problems || [];
    h += "<h2>Problems <span class=muted>" + (probs.length ? probs.length : "none") + "</span></h2>";
    if (probs.length) h += "<ul>" + probs.map(function (p) { return "<li>" + esc(p) + "</li>"; }).join("") + "</ul>";
    $("summary").innerHTML = h;
  }

  // ---- findings ----
  var findings = (D.findings || []).slice().sort(function (x, y) {
    return x.start - y.start || SEV[y.severity] - SEV[x.severity];
  });
  function listFindings() {
    $("finding-count").textContent = findings.length ? String(findings.length) : "none";
    var ol = $("findings"), marks = $("marks");
    findings.forEach(function (f, i) {
      var li = document.createElement("li");
      li.className = f.severity;
      li.tabIndex = 0;
      li.dataset.index = i;
      li.innerHTML = "<div>" + esc(f.summary) + "</div><div class=when>" + esc(f.severity) + " · " + esc(f.kind) + " · " +
        fmtT(f.start) + (f.end > f.start ? "–" + fmtT(f.end) : "") + (f.conv ? " · conv " + f.conv : "") + "</div>";
      li.addEventListener("click", function () { gotoFinding(f); });
      li.addEventListener("keydown", function (e) { if (e.key === "Enter") gotoFinding(f); });
      ol.appendChild(li);
      var m = document.createElement("span");
      m.className = "sev-" + f.severity;
      m.style.left = (100 * f.start / duration) + "%";
      m.title = f.summary;
      marks.appendChild(m);
    });
  }
  function gotoFinding(f) {
    if (f.conv && byId[f.conv] && S.a !== byId[f.conv] && (!S.b || S.b.id !== f.conv)) {
      $("sel-a").value = String(f.conv);
      S.a = byId[f.conv];
    }
    pause();
    seek(f.start);
    var pad = Math.max(10, (f.end - f.start) / 2);
    zoomPlots(Math.max(0, f.start - pad), f.end + pad);
  }

  // ---- replay ----
  var levelCanvas = {};
  function levelImage(k) {
    if (levelCanvas[k]) return levelCanvas[k];
    var lv = D.levels[k], c = document.createElement("canvas");
    c.width = lv.w; c.height = lv.h;
    var g = c.getContext("2d"), img = g.createImageData(lv.w, lv.h);
    var rgb = TILES.map(function (h) { return [parseInt(h.substr(1, 2), 16), parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)]; });
    for (var i = 0; i < lv.tiles.length; i++) {
      var col = rgb[lv.tiles.charCodeAt(i) - 48] || rgb[0];
      img.data[4 * i] = col[0]; img.data[4 * i + 1] = col[1]; img.data[4 * i + 2] = col[2]; img.data[4 * i + 3] = 255;
    }
    g.putImageData(img, 0, 0);
    levelCanvas[k] = c;
    return c;
  }
  // The replay entry a conversation's client held at time t: its newest
  // acknowledged state received at or before t.
  function entryAt(c, t) { return floorIdx(c.replay.t, t); }
  function snapAt(c, k) {
    var th = c.things, j = floorIdx(th.i, k);
    if (j < 0) return null;
    var items = null;
    for (var q = j; q >= 0 && items == null; q--) items = th.items[q];
    return { enemies: th.enemies[j], items: items || [], lifts: th.lifts[j], shots: th.shots[j] };
  }
  function worldSize(c, k) {
    var li = c.levels[String(c.replay.slsn[k])];
    var lv = li != null ? D.levels[li] : null;
    return { lv: li, w: lv ? lv.w * lv.block : 2000, h: lv ? lv.h * lv.block : 2000 };
  }
  function draw(canvas, cap, c) {
    var g = canvas.getContext("2d");
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.imageSmoothingEnabled = false;
    g.fillStyle = TILES[0];
    g.fillRect(0, 0, canvas.width, canvas.height);
    if (!c) { cap.textContent = convs.length ? "" : "no game conversation in the capture"; return; }
    var k = entryAt(c, S.t);
    if (k < 0) { cap.textContent = convLabel(c) + " · no state held yet"; return; }
    var ws = worldSize(c, k), sx = canvas.width / ws.w, sy = canvas.height / ws.h;
    if (ws.lv != null) g.drawImage(levelImage(ws.lv), 0, 0, canvas.width, canvas.height);
    var sn = snapAt(c, k);
    function boxes(a, color, size, inset) {
      if (!a) return;
      g.fillStyle = color;
      for (var i = 0; i + 1 < a.length; i += 2) {
        g.fillRect(Math.round((a[i] + inset) * sx), Math.round((a[i + 1] + inset) * sy), Math.max(2, Math.round(size * sx)), Math.max(2, Math.round(size * sy)));
      }
    }
    if (sn) {
      boxes(sn.lifts, "#2ec4c4", 20, 0);
      boxes(sn.items, "#e8c547", 12, 4);
      boxes(sn.enemies, "#ff5050", 16, 2);
      boxes(sn.shots, "#ffffff", 6, 7);
    }
    var ps = c.replay.players, size = Math.max(7, Math.round(20 * sx));
    g.font = "bold " + Math.max(10, Math.round(canvas.width / 60)) + "px system-ui, sans-serif";
    g.textBaseline = "bottom";
    Object.keys(ps).forEach(function (p) {
      var x = ps[p].x[k], y = ps[p].y[k];
      if (x == null || y == null) return;
      var px = Math.round(x * sx), py = Math.round(y * sy), col = colorOf(c.colors[p]);
      g.fillStyle = "#000";
      g.fillRect(px - 1, py - 1, size + 2, size + 2);
      g.fillStyle = col;
      g.fillRect(px, py, size, size);
      var name = "p" + p + (hostOf[p] ? " " + hostOf[p] : "");
      g.lineWidth = 3; g.strokeStyle = "#000";
      g.strokeText(name, px, py - 2);
      g.fillText(name, px, py - 2);
    });
    cap.textContent = convLabel(c) + " · slsn " + c.replay.slsn[k] + " frame " + c.replay.frame[k] + " · state " + (k + 1) + "/" + c.replay.t.length;
  }
  function render() {
    draw($("view-a"), $("cap-a"), S.a);
    if (S.b) draw($("view-b"), $("cap-b"), S.b);
    $("scrubber").value = String(S.t);
    $("clock").textContent = fmtT(S.t) + " / " + fmtT(duration);
  }
  function seek(t) {
    S.t = Math.min(Math.max(0, t), duration);
    render();
    cursorPlots();
  }
  function step(dir) {
    var c = S.a;
    if (!c || !c.replay.t.length) return seek(S.t + dir);
    var k = entryAt(c, S.t) + dir;
    k = Math.min(Math.max(k, 0), c.replay.t.length - 1);
    seek(c.replay.t[k]);
  }
  function play() {
    if (S.t >= duration) S.t = 0;
    S.playing = true; S.last = performance.now();
    $("play").textContent = "❚❚";
    requestAnimationFrame(tick);
  }
  function pause() { S.playing = false; $("play").textContent = "▶"; }
  function tick(now) {
    if (!S.playing) return;
    S.t = Math.min(duration, S.t + (now - S.last) / 1000 * S.speed);
    S.last = now;
    render();
    if (now - (S.lastPlot || 0) > 250) { S.lastPlot = now; cursorPlots(); }
    if (S.t >= duration) { pause(); return; }
    requestAnimationFrame(tick);
  }
  function layout() {
    var views = S.b ? 2 : 1;
    var side = window.innerWidth >= 900 ? 330 : 0;
    var w = (window.innerWidth - side - 48) / views - 8 * (views - 1);
    var h = window.innerHeight - 150;
    var size = Math.max(200, Math.floor(Math.min(w, h)));
    ["view-a", "view-b"].forEach(function (id) {
      var cv = $(id), dpr = window.devicePixelRatio || 1;
      cv.style.width = size + "px"; cv.style.height = size + "px";
      cv.width = Math.round(size * dpr); cv.height = Math.round(size * dpr);
    });
    $("view-b-fig").classList.toggle("hidden", !S.b);
    $("replay-pane").style.width = Math.max(views * size + 8 * (views - 1) + 2 * views, Math.min(640, window.innerWidth - 24)) + "px";
    render();
  }
  function controls() {
    var a = $("sel-a"), b = $("sel-b");
    convs.forEach(function (c) {
      [a, b].forEach(function (sel) {
        var o = document.createElement("option");
        o.value = String(c.id); o.textContent = convLabel(c);
        sel.appendChild(o);
      });
    });
    S.a = convs.filter(function (c) { return c.replay.t.length; })[0] || convs[0] || null;
    if (S.a) a.value = String(S.a.id);
    a.addEventListener("change", function () { S.a = byId[a.value]; render(); });
    b.addEventListener("change", function () { S.b = b.value ? byId[b.value] : null; layout(); });
    $("speed").addEventListener("change", function () { S.speed = parseFloat($("speed").value); });
    $("play").addEventListener("click", function () { S.playing ? pause() : play(); });
    var sc = $("scrubber");
    sc.max = String(duration);
    sc.addEventListener("input", function () { pause(); seek(parseFloat(sc.value)); });
    document.addEventListener("keydown", function (e) {
      var tag = e.target && e.target.tagName;
      if (tag === "SELECT" || tag === "INPUT" && e.target.type !== "range" || tag === "BUTTON" && e.key === " ") return; // a focused button plays on its own
      if (e.key === " ") { e.preventDefault(); S.playing ? pause() : play(); }
      else if (e.key === "ArrowLeft") { e.preventDefault(); pause(); step(-1); }
      else if (e.key === "ArrowRight") { e.preventDefault(); pause(); step(1); }
    });
    window.addEventListener("resize", function () { layout(); sizePlots(); });
  }

  // ---- plots ----
  var METRICS = [
    ["dif_bytes", "dif bytes/s", "B/s"], ["ack_ms", "ack latency", "ms"], ["ping_ms", "ping RTT (ping→pong)", "ms"],
    ["incomplete", "lost difs (incomplete)", "/s"], ["late_inputs", "late inputs", "/s"],
    ["corrections", "corrections (modern: local px, legacy: dif corrections)", ""], ["chase_fps", "chase fps", "fps"],
    ["base_resets", "base resets", "/s"], ["position_jumps", "position jumps", "/s"]
  ];
  var plots = [], syncing = false;
  function buildPlots() {
    if (typeof uPlot === "undefined") return;
    var maxT = Math.ceil(duration), xs = new Array(maxT + 1);
    for (var i = 0; i <= maxT; i++) xs[i] = i;
    var withHealth = convs.filter(function (c) { return c.health && c.health.t.length; });
    METRICS.forEach(function (m) {
      var data = [xs], series = [{ label: "t", value: function (u, v) { return v == null ? "" : fmtT(v); } }], any = false;
      withHealth.forEach(function (c, ci) {
        var col = c.health[m[0]], ys = new Array(maxT + 1).fill(null);
        for (var i = 0; i < c.health.t.length; i++) {
          var t = c.health.t[i];
          if (t >= 0 && t <= maxT && col[i] != null) { ys[t] = col[i]; any = true; }
        }
        data.push(ys);
        series.push({ label: "conv " + c.id + (c.player != null ? " p" + c.player : ""), stroke: SERIES_COLORS[ci % SERIES_COLORS.length], width: 1.25, spanGaps: false, points: { show: false } });
      });
      if (!any) return;
      var div = document.createElement("div");
      div.className = "plot";
      $("plots").appendChild(div);
      var u = new uPlot({
        title: m[1], width: 400, height: 170, series: series,
        scales: { x: { time: false } },
        axes: [{ stroke: "#9a9aae", grid: { stroke: "#2a2a3a" }, ticks: { stroke: "#2a2a3a" }, values: function (u, vs) { return vs.map(function (v) { return fmtT(v).replace(/\.000$/, ""); }); } },
          { stroke: "#9a9aae", grid: { stroke: "#2a2a3a" }, ticks: { stroke: "#2a2a3a" }, size: 56, label: m[2], labelSize: 14 }],
        cursor: { sync: { key: "pmdump" }, drag: { x: true, y: false } },
        legend: { live: true },
        hooks: {
          draw: [function (u) {
            var x = Math.round(u.valToPos(S.t, "x", true)), g = u.ctx;
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
            g.save(); g.strokeStyle = "#b48cff"; g.lineWidth = 2 * (window.devicePixelRatio || 1);
            g.beginPath(); g.moveTo(x, u.bbox.top); g.lineTo(x, u.bbox.top + u.bbox.height); g.stroke(); g.restore();
          }],
          setScale: [function (u, key) {
            if (key !== "x" || syncing) return;
            syncing = true;
            var mn = u.scales.x.min, mx = u.scales.x.max;
            plots.forEach(function (o) { if (o !== u) o.setScale("x", { min: mn, max: mx }); });
            syncing = false;
          }]
        }
      }, data, div);
      var down = null;
      u.over.addEventListener("mousedown", function (e) { down = [e.clientX, e.clientY]; });
      u.over.addEventListener("mouseup", function (e) {
        if (down && Math.abs(e.clientX - down[0]) < 3 && Math.abs(e.clientY - down[1]) < 3 && u.cursor.left >= 0) {
          pause(); seek(u.posToVal(u.cursor.left, "x"));
        }
        down = null;
      });
      u.over.addEventListener("dblclick", function () { zoomPlots(0, maxT); });
      plots.push(u);
    });
    sizePlots();
  }
  function sizePlots() {
    plots.forEach(function (u) {
      var w = u.root.parentNode.clientWidth - 8;
      if (w > 100) u.setSize({ width: w, height: 170 });
    });
  }
  function zoomPlots(a, b) {
    if (!plots.length) return;
    syncing = true;
    plots.forEach(function (u) { u.setScale("x", { min: a, max: b }); });
    syncing = false;
  }
  function cursorPlots() { plots.forEach(function (u) { u.redraw(false, false); }); }

  summary();
  listFindings();
  controls();
  layout();
  buildPlots();
  // Open on the first state the first view holds.
  seek(S.a && S.a.replay.t.length ? S.a.replay.t[0] : 0);

  // For scripts and tests: the data and the replay's controls.
  window.pmdumpReport = {
    data: D,
    seek: seek,
    time: function () { return S.t; },
    view: function (a, b) {
      S.a = byId[a] || null; $("sel-a").value = String(a);
      S.b = b ? byId[b] : null; $("sel-b").value = b ? String(b) : "";
      layout();
    },
    plotRanges: function () { return plots.map(function (u) { return [u.scales.x.min, u.scales.x.max]; }); },
    entry: function (conv) { var c = byId[conv]; return c ? entryAt(c, S.t) : -1; },
    palette: PALETTE
  };
})();
