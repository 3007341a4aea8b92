"""Headless Chromium reading the operator's report (support for
tests/analytics; never a test module itself)."""

import html
import json
import os
import shutil
import subprocess

LAYOUT_PROBE = """
  var w = window.innerWidth, out = {innerWidth: w,
    scrollWidth: document.documentElement.scrollWidth, overflowing: [],
    images: [], text: document.body.innerText};
  document.querySelectorAll('body *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.right > w + 0.5 && !e.closest('.scroll'))
      out.overflowing.push(e.tagName + ' ' + (e.className || ''));
  });
  document.querySelectorAll('img').forEach(function (i) {
    out.images.push([i.alt, i.naturalWidth, i.getBoundingClientRect().right]);
  });
  document.querySelectorAll('div.big').forEach(function (e) {
    (out.headline = out.headline || []).push(e.innerText);
  });
"""

_WRAP = """<script>
window.addEventListener('load', function () {%s
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("headless Chromium is missing: ./dev test installs "
                         "the Debian package chromium (as root)")


def flags(base, height=1000):
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
            "--hide-scrollbars", f"--user-data-dir={base}/profile",
            f"--window-size=1280,{height}"]


def probe(page, base):
    """What Chromium at 1280 px makes of ``page`` (HTML text): the layout
    figures of ``LAYOUT_PROBE``, the page's visible text (``text``) and
    each headline figure as shown (``headline``)."""
    probed = os.path.join(base, "probed.html")
    with open(probed, "w") as f:
        f.write(page.replace("</body>", _WRAP % LAYOUT_PROBE + "</body>"))
    dom = subprocess.run(flags(base) + ["--dump-dom", "file://" + probed],
                         capture_output=True, timeout=90, text=True,
                         check=False)
    start = dom.stdout.find('<pre id="probe">')
    if start == -1:
        raise AssertionError(dom.stderr[-2000:])
    return json.loads(html.unescape(
        dom.stdout[start + len('<pre id="probe">'):
                   dom.stdout.index("</pre>", start)]))
