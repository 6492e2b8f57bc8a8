"""redbot (an HTTP linter, PyPI) on Tern's website: the home page, a
fingerprinted static asset and a static file. redbot also makes the
conditional (304) and range (206) requests itself; this script checks that
it did and that they worked, and fails on any note redbot calls BAD.

    python redbot.py REDBOT http://127.0.0.1:PORT
"""

import json
import re
import subprocess
import sys
import urllib.request

redbot, base = sys.argv[1], sys.argv[2].rstrip("/")

home = urllib.request.urlopen(base + "/").read().decode()
css = re.search(r'/static/site\.[0-9a-f]{10}\.css', home)
if not css:
    sys.exit("FAIL: no fingerprinted stylesheet on the home page")

# What each URL must show, beside no BAD note.
checks = {
    "/": [],
    css.group(0): [
        "If-None-Match conditional requests are supported.",
        "A ranged request returned the correct partial content.",
    ],
    "/llms.txt": [
        "If-None-Match conditional requests are supported.",
        "If-Modified-Since conditional requests are supported.",
        "A ranged request returned the correct partial content.",
    ],
}

failed = False
for path, required in checks.items():
    out = subprocess.run(
        [redbot, "-o", "har", base + path], capture_output=True, text=True, timeout=120
    )
    if out.returncode != 0:
        sys.exit(f"FAIL: redbot on {path}: {out.stderr}")
    har = json.loads(out.stdout)
    notes = [
        (m.get("level"), m.get("summary"))
        for entry in har["log"]["entries"]
        for m in entry.get("_red_messages", [])
    ]
    for level, summary in notes:
        print(f"{path}: {level} {summary}")
    bad = [s for level, s in notes if level == "BAD"]
    missing = [r for r in required if r not in [s for _, s in notes]]
    if bad or missing:
        failed = True
        print(f"FAIL {path}: bad {bad}, missing {missing}")

if failed:
    sys.exit(1)
print("redbot: no BAD note on the home page, a static asset and a static file")
