#!/usr/bin/env python3
"""Browser test of a nemesis page: `felix trace show TRACE --html PAGE` on a real-process run.

What it proves: a short `felix nemesis` run's trace, drawn as a page, shows in a real browser
one lifeline per real node (n1, n2, n3, numbered from 1) and per client, the nemesis's faults
(kills, client processes frozen by SIGSTOP) as marks, and no violation with the banner saying
every invariant held; and the same trace with one planted verdict line (as a failing run ends)
highlights that step with the invariant's name, whose click shows every lifeline's state.

Uses scripts/browser_check.py's Browser and checks (run by scripts/browser_check.sh after it).
Exit codes: 0 every check passed, 1 a check failed, 3 no Chromium (the checks did NOT run).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_check import (DIAGRAM, NO_BROWSER, Browser, CheckFailed, check,  # noqa: E402
                           check_diagram, find_chromium, run)

# A schedule with a kill of two nodes in power-loss mode at 1.6 s and a client frozen at 2.5 s.
SEED = 5


def page_lanes(path):
    """The lifelines the page was given (its embedded data)."""
    text = open(path).read()
    start = text.find('<script id="felix-data" type="application/json">')
    rest = text[start:]
    data = json.loads(rest[rest.find(">") + 1:rest.find("</script>")])
    return [lane["name"] for lane in data["lanes"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--felix", required=True, help="the felix binary")
    parser.add_argument("--out", required=True, help="directory for pages and screenshots")
    args = parser.parse_args()
    binary = find_chromium()
    if binary is None:
        print("## WARNING: NO CHROMIUM: the nemesis page check DID NOT RUN.")
        return NO_BROWSER
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    felix = os.path.abspath(args.felix)
    work = tempfile.mkdtemp(prefix="felix-nemesis-page-")
    profile = tempfile.mkdtemp(prefix="felix-chromium-")
    browser = None
    try:
        print("== nemesis page")
        run_dir = os.path.join(work, "run")
        run([felix, "nemesis", "--nodes", "3", "--time", "4s", "--seed", str(SEED),
             "--dir", run_dir], 0)
        trace = os.path.join(run_dir, "trace.jsonl")
        page = os.path.join(args.out, "nemesis.html")
        run([felix, "trace", "show", trace, "--html", page], 0)
        # The failing version: one verdict line naming a step in the middle, as a run that broke
        # an invariant ends (`felix nemesis` writes these after the run's lines).
        lines = open(trace).read().splitlines()
        step = len(lines) // 2
        last = json.loads(lines[-1])
        lines.append(json.dumps({
            "step": last["step"] + 1, "time_micros": last["time_micros"],
            "sim": {"violation": {"invariant": "AckedWritesKept", "at_step": step,
                                  "clients": [], "detail": "planted by the browser check"}}}))
        planted_trace = os.path.join(work, "planted.jsonl")
        with open(planted_trace, "w") as file:
            file.write("\n".join(lines) + "\n")
        planted = os.path.join(args.out, "nemesis-planted.html")
        run([felix, "trace", "show", planted_trace, "--html", planted], 0)

        lanes = page_lanes(page)
        check(lanes[0] == "lease" and [lane for lane in lanes if lane.startswith("n")]
              == ["n1", "n2", "n3"] and any(lane.startswith("c") for lane in lanes),
              f"the page is given the lease, client and real-node lifelines {lanes}")
        browser = Browser(binary, profile)
        # Every row (the page windows long runs; a nemesis run of 4 s is about a thousand rows).
        every = "#before=100000&after=100000"
        shown = browser.open("file://" + os.path.abspath(page) + every, 1880, 1000)
        drawn = shown.wait_for(DIAGRAM, "the nemesis diagram")
        check(drawn["lanes"] == lanes, f"nemesis: lifelines drawn {drawn['lanes']}")
        check(drawn["violation"] is None and drawn["arrows"] > 0,
              f"nemesis: {drawn['arrows']} arrows, no violation")
        check(shown.eval("document.querySelector('p.banner.ok') !== null"),
              "nemesis: the banner says every invariant held")
        check(drawn["faults"] > 0, f"nemesis: {drawn['faults']} fault marks drawn")
        text = "\n".join(drawn["sentences"])
        check("kill -9" in text, "nemesis: a kill -9 is drawn")
        check("frozen" in text, "nemesis: a client process frozen by SIGSTOP is drawn")
        shown.screenshot(os.path.join(args.out, "nemesis.png"), full_page=False)
        failing = browser.open("file://" + os.path.abspath(planted) + every, 1880, 1000)
        check_diagram(failing, lanes, "AckedWritesKept", step, [], "nemesis (planted)")
        failing.screenshot(os.path.join(args.out, "nemesis-planted.png"), full_page=False)
    except CheckFailed as failure:
        print(f"  FAILED: {failure}")
        print(f"nemesis page check FAILED ({time.monotonic() - started:.1f} s)")
        return 1
    finally:
        if browser is not None:
            browser.close()
        shutil.rmtree(profile, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"nemesis page check: every check passed ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
