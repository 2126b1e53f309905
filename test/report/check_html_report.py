#!/usr/bin/env python3
"""Opens an HTML memory report in headless Chromium and checks that it drew.

  check_html_report.py [--expect-error TEXT] [--window-size W,H]
                       REPORT.html REPORT.json SCREENSHOT.png

The page's script records on <body> what it did: data-render-status
("done" or "error"), data-rendered-buffers and data-render-errors. This
loads a copy of the page with a probe script appended (it hovers both
charts and the table rows, as a reader would, so that errors in the event
handlers count too) with --dump-dom, and checks that rendering finished
without errors, drew one box per buffer with bytes > 0 in REPORT.json (all
devices) and showed tooltips; then it screenshots the page itself. With
--expect-error it checks the opposite: the page must report an error
containing TEXT, so a broken report cannot pass silently.

Exit codes: 0 passed, 1 failed, 77 skipped (no Chromium), 2 usage.
Standard library only.
"""

import argparse
import html.parser
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
CHROMIUM_TIMEOUT_S = 90

# Moves the mouse over a grid of points on each device's two charts, then
# enters and leaves every table row; records tooltip hits on <body>.
HOVER_PROBE = """<script>
(function () {
  const tip = document.getElementById('tooltip'), results = [];
  const shown = () => !!tip && !tip.hidden && tip.textContent.length > 0;
  const move = (target, fx, fy) => {
    const r = target.getBoundingClientRect();
    target.dispatchEvent(new MouseEvent('mousemove', {
      clientX: r.left + fx * r.width, clientY: r.top + fy * r.height, bubbles: true}));
    return shown();
  };
  document.querySelectorAll('section.device').forEach((section, d) => {
    const overlays = section.querySelectorAll('canvas.overlay');
    if (overlays.length !== 2) { results.push(d + ':charts=' + overlays.length); return; }
    const [timeline, arena] = overlays;
    let onTimeline = 0, onArena = 0;
    for (let i = 1; i < 20; ++i) {
      if (move(timeline, i / 20, 0.7)) ++onTimeline;
      for (let j = 1; j < 20; ++j) if (move(arena, i / 20, j / 20)) ++onArena;
    }
    arena.dispatchEvent(new MouseEvent('mouseleave'));
    const hidden = !shown();
    section.querySelectorAll('tbody tr').forEach((row) => {
      row.dispatchEvent(new MouseEvent('mouseenter'));
      row.dispatchEvent(new MouseEvent('mouseleave'));
    });
    results.push(d + ':timeline=' + onTimeline + ',arena=' + onArena + ',hidden=' + hidden);
  });
  document.body.setAttribute('data-hover-probe', results.join(' '));
})();
</script>
"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    for path in ("/usr/bin/chromium", "/usr/lib/chromium/chromium"):
        if os.access(path, os.X_OK):
            return path
    return None


class BodyAttributes(html.parser.HTMLParser):
    """The attributes of the first <body> tag."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = None

    def handle_starttag(self, tag, attrs):
        if tag == "body" and self.body is None:
            self.body = {k: (v if v is not None else "") for k, v in attrs}


def run_chromium(chromium, profile, args, url):
    # A profile of its own, so parallel ctest runs do not share a lock;
    # --virtual-time-budget lets timers (none expected) settle before the dump.
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--hide-scrollbars", "--mute-audio",
               "--user-data-dir=" + profile, "--virtual-time-budget=5000"] + args + [url]
    try:
        return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=CHROMIUM_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        fail(f"chromium did not finish within {CHROMIUM_TIMEOUT_S} s: {' '.join(command)}")


def stderr_tail(result, lines=15):
    # Chromium logs harmless D-Bus complaints in containers; keep the rest.
    text = result.stderr.decode("utf-8", "replace").splitlines()
    text = [t for t in text if "dbus" not in t.lower()]
    return "\n".join(text[-lines:])


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def check_hover(probe, devices_expected):
    """The probe's record: every device's timeline showed a tooltip, the
    arenas with buffers did too, and leaving hid it."""
    if not probe:
        fail("the hover probe did not run (no data-hover-probe on <body>)")
    results = probe.split()
    if len(results) != devices_expected:
        fail(f"hover probe saw {len(results)} device sections, the report has "
             f"{devices_expected}: {probe}")
    arena_hits = 0
    for result in results:
        fields = dict(f.split("=", 1) for f in result.split(":", 1)[1].split(","))
        if "charts" in fields:
            fail(f"a device section has {fields['charts']} chart overlays, not 2: {probe}")
        if int(fields["timeline"]) == 0 or fields["hidden"] != "true":
            fail(f"hovering the memory chart showed no tooltip, or leaving kept it: {probe}")
        arena_hits += int(fields["arena"])
    return arena_hits


def expected_buffers(report_path, broken_ok):
    """Buffers with bytes > 0 and devices in the report; with broken_ok,
    (0, 0) for a file that is not JSON (the page must say so)."""
    try:
        report = json.loads(pathlib.Path(report_path).read_text(encoding="utf-8"))
    except ValueError as error:
        if broken_ok:
            return 0, 0
        fail(f"{report_path} is not JSON: {error}")
    except OSError as error:
        fail(f"cannot read {report_path}: {error}")
    count = 0
    devices = report.get("devices") if isinstance(report, dict) else None
    devices = devices if isinstance(devices, list) else []
    for device in devices:
        buffers = device.get("buffers") if isinstance(device, dict) else None
        for buffer in buffers if isinstance(buffers, list) else []:
            size = buffer.get("bytes") if isinstance(buffer, dict) else None
            if isinstance(size, (int, float)) and not isinstance(size, bool) and size > 0:
                count += 1
    return count, len(devices)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html")
    parser.add_argument("json")
    parser.add_argument("screenshot")
    parser.add_argument("--expect-error", metavar="TEXT",
                        help="pass only if the page reports an error containing TEXT")
    parser.add_argument("--window-size", default="1400,1000", metavar="W,H")
    args = parser.parse_args()

    chromium = find_chromium()
    if chromium is None:
        print("SKIP: chromium not found")
        return SKIP
    page = pathlib.Path(args.html).resolve()
    if not page.is_file() or page.stat().st_size == 0:
        fail(f"{page} is missing or empty")
    expected, devices = expected_buffers(args.json, args.expect_error is not None)
    url = page.as_uri()

    with tempfile.TemporaryDirectory(prefix="cairn-chromium-") as work:
        profile = os.path.join(work, "profile")
        source = page.read_text(encoding="utf-8", errors="surrogateescape")
        at = source.rfind("</body>")
        if at < 0:
            fail(f"{page} has no </body>")
        probed = pathlib.Path(work, "probed-" + page.name)
        probed.write_text(source[:at] + HOVER_PROBE + source[at:], encoding="utf-8",
                          errors="surrogateescape")
        dump = run_chromium(chromium, profile, ["--dump-dom", "--window-size=" + args.window_size],
                            probed.as_uri())
        dom = dump.stdout.decode("utf-8", "replace")
        if dump.returncode != 0 or "</html>" not in dom:
            fail(f"chromium --dump-dom exited with {dump.returncode} and no page:\n"
                 f"{stderr_tail(dump)}")
        attributes = BodyAttributes()
        attributes.feed(dom)
        body = attributes.body
        if body is None:
            fail("the dumped page has no <body>")
        status = body.get("data-render-status")
        errors = body.get("data-render-errors", "")
        rendered = body.get("data-rendered-buffers")
        transfers = body.get("data-drawn-transfers", "0")
        probe = body.get("data-hover-probe")
        print(f"{page.name}: status={status} rendered-buffers={rendered} "
              f"expected={expected} errors={errors!r} hover={probe!r}")

        screenshot = pathlib.Path(args.screenshot).resolve()
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        if screenshot.exists():
            screenshot.unlink()
        shot = run_chromium(chromium, profile,
                            ["--screenshot=" + str(screenshot),
                             "--window-size=" + args.window_size], url)

    if args.expect_error is not None:
        if status != "error" or not errors:
            fail(f"expected the page to report an error containing {args.expect_error!r}, "
                 f"but status is {status!r} and errors are {errors!r}")
        if args.expect_error not in errors:
            fail(f"the page reported {errors!r}, which does not contain {args.expect_error!r}")
        print(f"PASS: the page reported the expected error: {errors}")
        return 0

    if status is None:
        fail("the page's script never ran (no data-render-status on <body>)")
    if errors:
        fail(f"the page reported render errors: {errors}")
    if status != "done":
        fail(f"rendering did not finish: data-render-status={status!r}")
    if rendered != str(expected):
        fail(f"the page drew {rendered} buffers; {args.json} has {expected} with bytes > 0")
    with open(args.json) as f:
        sends = sum(t.get("kind") == "send" for d in json.load(f).get("devices", [])
                    for t in d.get("transfers", []))
    if transfers != str(sends):
        fail(f"the page drew {transfers} transfers between devices; {args.json} has {sends} sends")
    if check_hover(probe, devices) == 0 and expected > 0:
        fail(f"hovering the arena charts never showed a buffer's tooltip: {probe}")
    if shot.returncode != 0 or not screenshot.is_file():
        fail(f"chromium --screenshot exited with {shot.returncode} and wrote no file:\n"
             f"{stderr_tail(shot)}")
    with open(screenshot, "rb") as f:
        header = f.read(8)
    if header != b"\x89PNG\r\n\x1a\n" or screenshot.stat().st_size < 1000:
        fail(f"{screenshot} is not a PNG of any size ({screenshot.stat().st_size} bytes)")
    print(f"PASS: {rendered} buffers drawn; screenshot {screenshot} "
          f"({screenshot.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
