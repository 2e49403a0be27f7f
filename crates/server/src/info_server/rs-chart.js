// The region server page's live chart: requests per second and memstore
// size over the last two minutes, polled from /rs-status.json once a
// second and drawn on a <canvas>. Plain JavaScript, no library, nothing
// fetched from elsewhere; the page's tables work without it.
(function () {
  "use strict";
  var canvas = document.getElementById("chart");
  var counter = document.getElementById("chart-points");
  if (!canvas || !canvas.getContext) { return; }
  var ctx = canvas.getContext("2d");
  var points = [];
  var MAX_POINTS = 120;
  var last = 0;

  function human(bytes) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"];
    var i = 0;
    while (bytes >= 1024 && i < units.length - 1) { bytes /= 1024; i++; }
    return (i === 0 ? bytes.toFixed(0) : bytes.toFixed(1)) + " " + units[i];
  }

  function niceMax(v) {
    if (v <= 0) { return 1; }
    var p = Math.pow(10, Math.floor(Math.log(v) / Math.LN10));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) {
      if (v <= steps[i] * p) { return steps[i] * p; }
    }
    return 10 * p;
  }

  function series(key, color, max, left, top, width, height) {
    if (points.length === 0) { return; }
    var t0 = points[0].t;
    var span = Math.max(points[points.length - 1].t - t0, 1);
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    for (var i = 0; i < points.length; i++) {
      var x = left + (points.length === 1 ? width : (points[i].t - t0) / span * width);
      var y = top + height - Math.min(points[i][key] / max, 1) * height;
      if (i === 0) { ctx.moveTo(x, y); } else { ctx.lineTo(x, y); }
    }
    ctx.stroke();
  }

  function draw() {
    var w = canvas.width, h = canvas.height;
    var left = 70, right = 80, top = 24, bottom = 24;
    var pw = w - left - right, ph = h - top - bottom;
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, w, h);
    var maxReq = 0, maxMem = 0;
    for (var i = 0; i < points.length; i++) {
      maxReq = Math.max(maxReq, points[i].requests_per_sec);
      maxMem = Math.max(maxMem, points[i].memstore_bytes);
    }
    maxReq = niceMax(maxReq);
    maxMem = niceMax(maxMem);
    ctx.strokeStyle = "#ddd";
    ctx.lineWidth = 1;
    ctx.font = "11px sans-serif";
    for (var g = 0; g <= 4; g++) {
      var y = top + ph - g / 4 * ph;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + pw, y);
      ctx.stroke();
      ctx.fillStyle = "#1f5fbf";
      ctx.textAlign = "right";
      ctx.fillText((maxReq * g / 4).toFixed(maxReq < 8 ? 1 : 0), left - 6, y + 4);
      ctx.fillStyle = "#c0392b";
      ctx.textAlign = "left";
      ctx.fillText(human(maxMem * g / 4), left + pw + 6, y + 4);
    }
    ctx.textAlign = "left";
    ctx.fillStyle = "#1f5fbf";
    ctx.fillText("requests/s", left, 14);
    ctx.fillStyle = "#c0392b";
    ctx.textAlign = "right";
    ctx.fillText("memstore", left + pw, 14);
    series("requests_per_sec", "#1f5fbf", maxReq, left, top, pw, ph);
    series("memstore_bytes", "#c0392b", maxMem, left, top, pw, ph);
    if (counter) { counter.textContent = String(points.length); }
    canvas.setAttribute("data-points", String(points.length));
  }

  function poll() {
    var req = new XMLHttpRequest();
    req.open("GET", "/rs-status.json?since=" + last);
    req.onload = function () {
      if (req.status === 200) {
        try {
          var fresh = JSON.parse(req.responseText).points || [];
          for (var i = 0; i < fresh.length; i++) {
            points.push(fresh[i]);
            last = Math.max(last, fresh[i].t);
          }
          while (points.length > MAX_POINTS) { points.shift(); }
          draw();
        } catch (e) { /* a bad answer: keep the last chart */ }
      }
      setTimeout(poll, 1000);
    };
    req.onerror = function () { setTimeout(poll, 2000); };
    req.send();
  }

  draw();
  poll();
})();
