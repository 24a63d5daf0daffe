#!/usr/bin/env python3
"""Browser test: felix's --html pages and the Explorer, loaded in headless Chromium.

What it proves: the pages `felix replay --html` and `felix check --html` write draw, in a real
browser, a lifeline per lease service, client, broker and replica, and highlight the violating
step with the invariant's name; clicking that step shows every lifeline's state there. The
Explorer (`felix explore`) serves its UI, a twin's counterexample can be stepped through in it
action by action, and its own search finds the twin's invariant. Each check saves a screenshot.

Python 3 standard library only. Chromium is driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages separated by NUL bytes on file descriptors 3 and 4), so
there is no websocket and no network. Exit codes: 0 every check passed, 1 a check failed,
2 bad usage, 3 no Chromium to run (the checks did NOT run).
"""

import argparse
import base64
import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

NO_BROWSER = 3


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)
    print(f"  ok: {message}")


def high(fd):
    """The same pipe end on a descriptor above 9, so it cannot be 3 or 4 itself."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium driven over --remote-debugging-pipe."""

    def __init__(self, binary, profile):
        to_browser_read, self.to_browser = (high(fd) for fd in os.pipe())
        self.from_browser, from_browser_write = (high(fd) for fd in os.pipe())
        # Chromium reads commands on fd 3 and writes answers on fd 4.
        command = [
            "bash", "-c",
            f'exec "$@" 3<&{to_browser_read} 4>&{from_browser_write} '
            f'{to_browser_read}<&- {from_browser_write}>&-',
            "bash", binary, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-sync",
            "--force-device-scale-factor=1", "--font-render-hinting=none",
            f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank",
        ]
        self.process = subprocess.Popen(
            command, pass_fds=(to_browser_read, from_browser_write),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE if os.environ.get("FELIX_BROWSER_DEBUG") else subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)

    def _read_message(self, deadline):
        import select
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CheckFailed("the browser did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise CheckFailed("the browser closed its pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise CheckFailed(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_event(self, method, session, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    del self.events[index]
                    return event
            self.events.append(self._read_message(deadline))

    def open(self, url, width, height):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        self.send("Page.enable", session=session)
        self.send("Runtime.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": False}, session=session)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        return page


class Page:
    def __init__(self, browser, session):
        self.browser = browser
        self.session = session

    def eval(self, expression, timeout=30):
        result = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session, timeout=timeout)
        if "exceptionDetails" in result:
            raise CheckFailed(f"script error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.1)
        raise CheckFailed(f"timed out waiting for {what}")

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            # The drawn content, not the viewport: a page shorter than the window is not padded.
            size = self.eval("""(() => {
              const main = document.querySelector('.main');
              const height = main ? Math.ceil(Math.max(...[main, ...main.children]
                .map(e => e.getBoundingClientRect().bottom + window.scrollY))) + 12
                : document.documentElement.scrollHeight;
              return [document.documentElement.scrollWidth, height];
            })()""")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.browser.send("Page.captureScreenshot", params, session=self.session)["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        print(f"  screenshot: {path} ({os.path.getsize(path)} bytes)")


def run(command, expect_code):
    print("$ " + " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != expect_code:
        raise CheckFailed(f"{' '.join(command)} exited {done.returncode}, expected "
                          f"{expect_code}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done.stdout


# Reads the diagram the page drew (not the data it was given): lanes, the violating row, the
# sentences of the rows drawn.
DIAGRAM = """(() => {
  const svg = document.querySelector('svg#diagram');
  if (!svg) return null;
  const v = svg.querySelector('rect.row.violation');
  return {
    lanes: [...svg.querySelectorAll('g.lane')].map(g => g.getAttribute('data-name')),
    violation: v ? {invariant: v.getAttribute('data-invariant'),
                    step: Number(v.getAttribute('data-step'))} : null,
    arrows: svg.querySelectorAll('g.arrow').length,
    faults: svg.querySelectorAll('g.point.s-fault, g.arrow.s-fault').length,
    refusals: svg.querySelectorAll('g.arrow.s-refusal').length,
    sentences: [...svg.querySelectorAll('text.sentence')].map(t => t.textContent),
    banner: (document.getElementById('violation') || {}).textContent || '',
    story: [...document.querySelectorAll('ul#story li')].map(li => li.textContent),
  };
})()"""

CLICK_VIOLATION = """(() => {
  const v = document.querySelector('svg#diagram rect.row.violation');
  v.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  const panel = document.getElementById('state');
  return {title: panel.querySelector('h2').textContent,
          lanes: [...panel.querySelectorAll('.lane-state')].map(d => d.getAttribute('data-lane')),
          text: panel.textContent};
})()"""


def check_diagram(page, lanes, invariant, step, story, label):
    drawn = page.wait_for(DIAGRAM, "the diagram to be drawn")
    check(drawn["lanes"] == lanes, f"{label}: lifelines {drawn['lanes']}")
    check(drawn["violation"] == {"invariant": invariant, "step": step},
          f"{label}: step {step} highlighted as {invariant}")
    check(invariant in drawn["banner"], f"{label}: the banner names {invariant}")
    check(drawn["arrows"] > 0, f"{label}: {drawn['arrows']} arrows drawn")
    check(drawn["faults"] > 0, f"{label}: {drawn['faults']} fault marks drawn")
    text = "\n".join(drawn["sentences"])
    for pattern in story:
        check(re.search(pattern, text, re.M), f"{label}: the window shows /{pattern}/")
    hovered = page.eval("""(() => {
      const row = document.querySelector('svg#diagram rect.row:not(.violation)');
      row.dispatchEvent(new MouseEvent('mouseenter'));
      return [row.getAttribute('data-step'),
              document.querySelector('#state h2').textContent];
    })()""")
    check(hovered[1].startswith(f"State after step {hovered[0]}"),
          f"{label}: hovering step {hovered[0]} shows its state")
    state = page.eval(CLICK_VIOLATION)
    check(state["title"].startswith(f"State after step {step}"),
          f"{label}: clicking the violation shows {state['title']!r}")
    check(state["lanes"] == lanes, f"{label}: the state panel has every lifeline")
    return state


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def check_explorer(browser, felix, config, out, deadline_seconds):
    """Steps through the config's counterexample in the Explorer, then lets it find one."""
    trace = json.loads(run([felix, "check", config, "--json", "--threads", "1"], 1))
    actions = [step["action"] for step in trace["trace"][1:]]
    invariant = trace["invariant"]
    port = free_port()
    address = f"127.0.0.1:{port}"
    print(f"$ {felix} explore {config} --addr {address}  (in the background)")
    server = subprocess.Popen([felix, "explore", config, "--addr", address],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE if os.environ.get("FELIX_BROWSER_DEBUG") else subprocess.DEVNULL)
    try:
        started = time.monotonic()
        while True:
            try:
                urllib.request.urlopen(f"http://{address}/.status", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() - started > 15:
                    raise CheckFailed("felix explore did not start serving")
                time.sleep(0.1)
        page = browser.open(f"http://{address}/", 1400, 900)
        page.wait_for("document.querySelector('[data-bind*=\"text: model\"]')"
                      ".textContent.includes('FelixHeadTrim')", "the Explorer's status")
        check(True, f"Explorer serves {config} on {address}")
        page.wait_for("document.querySelectorAll('ul[data-bind*=\"nextSteps\"] a').length > 0",
                      "the initial action choices")
        # The Explorer starts above the initial states: its first choice is "Init 0".
        page.eval("document.querySelector('ul[data-bind*=\"nextSteps\"] a').click()")
        page.wait_for("document.querySelectorAll('ol.path-list a').length >= 1"
                      " && document.querySelectorAll('ul[data-bind*=\"nextSteps\"] a').length > 1",
                      "the initial state")
        for index, action in enumerate(actions, start=2):
            clicked = page.eval(f"""(() => {{
              const links = [...document.querySelectorAll('ul[data-bind*="nextSteps"] a')];
              const link = links.find(a => a.textContent.trim() === {json.dumps(action)});
              if (!link) return links.map(a => a.textContent.trim());
              link.click();
              return true;
            }})()""")
            if clicked is not True:
                raise CheckFailed(f"step {index}: no choice {action!r} among {clicked}")
            page.wait_for(f"""(() => {{
              const path = [...document.querySelectorAll('ol.path-list a')]
                .map(a => a.textContent.trim());
              return path.length >= {index} && path[path.length - 1] === {json.dumps(action)}
                && document.querySelectorAll('ul[data-bind*="nextSteps"] a').length > 0;
            }})()""", f"step {index} ({action})")
        check(True, f"stepped through the {len(actions)} actions of the counterexample: "
                    + ", ".join(actions))
        page.screenshot(os.path.join(out, "explore-steps.png"), full_page=False)
        # The Explorer's own search finds the invariant; its discovery link opens a path.
        page.eval("document.querySelector('button[onclick*=\"runToCompletion\"]').click()")
        link = page.wait_for(f"""(() => {{
          const a = [...document.querySelectorAll('a[href^="#/steps/"]')]
            .find(a => a.textContent.trim() === 'Always {invariant}');
          return a ? a.getAttribute('href') : null;
        }})()""", f"the Explorer to discover {invariant}", timeout=deadline_seconds)
        # Back to the start, then follow the discovery link: the path shown is the Explorer's.
        page.eval("location.hash = '#/steps'")
        page.wait_for("document.querySelectorAll('ol.path-list a').length <= 1",
                      "the Explorer to go back to the start")
        page.eval(f"location.hash = {json.dumps(link)}")
        found = page.wait_for("""(() => {
          const path = [...document.querySelectorAll('ol.path-list a')]
            .map(a => a.textContent.trim());
          return path.length > 1 ? path : null;
        })()""", "the discovered path")
        check(any(step.startswith("TrimAppend") for step in found),
              f"the Explorer found {invariant} itself: " + ", ".join(found))
        summary = page.eval("document.querySelector('main nav').textContent")
        check(f"Counterexample found: Always {invariant}" in re.sub(r"\s+", " ", summary),
              f"the Explorer says: Counterexample found: Always {invariant}")
        page.screenshot(os.path.join(out, "explore.png"), full_page=False)
    finally:
        server.kill()
        server.wait()
        print(f"  felix explore (pid {server.pid}) stopped")


def find_chromium():
    for name in [os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser",
                 "google-chrome", "google-chrome-stable"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--felix", required=True, help="the felix binary")
    parser.add_argument("--out", required=True, help="directory for pages and screenshots")
    parser.add_argument("--seed", type=int, default=2508,
                        help="a seed the twin fails on (default 2508, HiddenTrims)")
    parser.add_argument("--twin", default="HiddenTrims")
    parser.add_argument("--readme-image", help="also save the compact replay shot here")
    args = parser.parse_args()
    binary = find_chromium()
    if binary is None:
        print("#" * 72)
        print("## WARNING: NO CHROMIUM: the browser checks DID NOT RUN.")
        print("## Install it (Debian: apt-get install -y chromium) or set CHROMIUM.")
        print("#" * 72)
        return NO_BROWSER
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    felix = os.path.abspath(args.felix)
    args.felix_path = felix

    # The pages, written by the commands a person runs.
    replay_html = os.path.join(args.out, "replay.html")
    check_html = os.path.join(args.out, "check.html")
    summary = run([felix, "replay", "--seed", str(args.seed), "--twin", args.twin,
                   "--html", replay_html], 1)
    knobs = dict(re.findall(r"(\w+)=(\d+)", summary.splitlines()[0]))
    violation = re.search(r"VIOLATION (\w+) at step (\d+)", summary)
    if not violation:
        raise CheckFailed(f"replay printed no violation:\n{summary}")
    invariant, step = violation.group(1), int(violation.group(2))
    # The summary's story of the why ("in short, who did what"), which the page shows too.
    told = []
    for line in summary.split("  in short", 1)[1].splitlines()[1:] if "  in short" in summary else []:
        if not line.startswith("    "):
            break
        told.append(line.strip())
    brokers, replicas = int(knobs["brokers"]), int(knobs["replicas"])
    clients = int(knobs.get("holders", 0)) + int(knobs.get("readers", 0))
    # The prober (knob prober=true) is one more client with a lane of its own.
    if re.search(r"\bprober=true\b", summary.splitlines()[0]):
        clients += 1
    replay_lanes = (["lease"] + [f"c{i}" for i in range(clients)]
                    + [f"n{i}" for i in range(brokers + replicas)])
    run([felix, "check", args.twin, "--html", check_html], 1)
    model = json.loads(run([felix, "check", args.twin, "--json", "--threads", "1"], 1))
    for path in [replay_html, check_html]:
        print(f"  page: {path} ({os.path.getsize(path)} bytes)")

    # The first seed's story, for the twin it was written about.
    replay_story, check_story = [], []
    if args.twin == "HiddenTrims":
        replay_story = [r"lease epoch \d+ moved from c\d+ to c\d+ \(c\d+ NOT told\)",
                        r"fenced write of epoch", r"-> n\d+: Trim floor=",
                        r"CursorTooOld floor \d+ untagged"]
        check_story = [r"^MoveLease", r"^Write\(2, ", r"^TrimAppend\(2, ", r"^Read\(1, ",
                       r"^TrimAppend\(1, |^Write\(1, "]

    profile = tempfile.mkdtemp(prefix="felix-chromium-")
    browser = Browser(binary, profile)
    failures = 0
    try:
        sections = [
            ("replay page", lambda: check_replay(browser, replay_html, replay_lanes, invariant,
                                                 step, replay_story, told, args)),
            ("check page", lambda: check_check(browser, check_html, model, check_story, args)),
            ("explorer", lambda: check_explorer(browser, felix, args.twin, args.out, 60)),
        ]
        for name, section in sections:
            print(f"== {name}")
            try:
                section()
            except CheckFailed as failure:
                failures += 1
                print(f"  FAILED: {failure}")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    seconds = time.monotonic() - started
    if failures:
        print(f"browser checks: {failures} section(s) FAILED ({seconds:.1f} s)")
        return 1
    print(f"browser checks: every check passed ({seconds:.1f} s)")
    return 0


def check_replay(browser, path, lanes, invariant, step, story, told, args):
    url = "file://" + os.path.abspath(path)
    page = browser.open(url, 1880, 1000)
    check_diagram(page, lanes, invariant, step, story, "replay")
    drawn = page.wait_for(DIAGRAM, "the diagram to be drawn")
    check(told and drawn["story"] == told,
          f"replay: the page tells the summary's story in {len(told)} lines under the violation")
    page.screenshot(os.path.join(args.out, "replay.png"))
    # The compact view: no node bookkeeping, the window from the lease move on.
    compact = browser.open(url + "#compact&before=23&after=2", 1880, 900)
    drawn = compact.wait_for(DIAGRAM, "the compact diagram")
    check(drawn["violation"] == {"invariant": invariant, "step": step},
          "compact replay: the violation is still highlighted")
    compact.eval(CLICK_VIOLATION)
    shot = os.path.join(args.out, "replay-compact.png")
    compact.screenshot(shot)
    # The control run (same knobs, every rule on) holds: no violation is drawn.
    control_html = os.path.join(args.out, "control.html")
    run([args.felix_path, "replay", "--seed", str(args.seed), "--twin", args.twin, "--control",
         "--html", control_html], 0)
    control = browser.open("file://" + os.path.abspath(control_html), 1880, 900)
    drawn = control.wait_for(DIAGRAM, "the control run's diagram")
    check(drawn["lanes"] == lanes and drawn["violation"] is None and drawn["arrows"] > 0,
          f"control run: {len(drawn['lanes'])} lifelines, {drawn['arrows']} arrows, no violation")
    check(control.eval("document.querySelector('p.banner.ok') !== null"),
          "control run: the banner says every invariant held")
    if args.readme_image:
        size = os.path.getsize(shot)
        check(size < 400_000, f"the README picture is small ({size} bytes)")
        shutil.copyfile(shot, args.readme_image)
        print(f"  README picture: {args.readme_image}")


def check_check(browser, path, model, story, args):
    steps = len(model["trace"]) - 1
    lanes = (["lease"] + [f"h{h}" for h in (1, 2)] + [f"b{b}" for b in (1, 2, 3)])
    page = browser.open("file://" + os.path.abspath(path), 1700, 900)
    state = check_diagram(page, lanes, model["invariant"], steps, story, "check")
    check("NOT told" in state["text"], "check: the stale holder's state says it was not told")
    page.screenshot(os.path.join(args.out, "check.png"))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as failure:
        print(f"browser checks FAILED: {failure}")
        sys.exit(1)
