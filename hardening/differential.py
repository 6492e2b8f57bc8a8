#!/usr/bin/env python3
"""Tern's own HTTP/1.1 codec against llhttp's strict mode, byte stream by
byte stream, with no server (docs/plans/http1.md §3.1).

Each case goes through `examples/h1_verdict.rs` (the codec's head parsing
over pipelined requests: `tern::__fuzz::H1::verdict`) and through llhttp
9.3 with no lenient flag (oracle.py's parser, with the target, the field
count and the body length of each message collected). The two are
compared message by message:

- Tern must never read more messages than llhttp, nor frame a body
  differently (no excuse covers these: a request read as two, or a body
  of another length, is what smuggling is made of);
- Tern accepting one message that llhttp refuses needs a rule of direction
  "accepts" in allowlist.py; Tern refusing one llhttp accepts needs a rule
  of direction "rejects";
- the rest is reported: where one waits for more bytes and the other
  decides, targets written differently.

Bodies, Content-Length and chunked, go through the codec's body decoder
(server/h1/body.rs) and are compared by their data length.

Inputs: oracle.py's generator (`--cases`, seed fixed and printed),
smuggling.py's cases, every file of hardening/corpus/h1/, and the files
of crates/tern/fuzz/corpus/h1_*/ when present.

usage: differential.py [--cases N] [--seed S] [--verdict BIN] [--report FILE]
Exit status 1 on any unexcused difference.
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import llhttp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from allowlist import excuse  # noqa: E402
from oracle import REQUEST_LINE, generate  # noqa: E402
import smuggling  # noqa: E402

# The limits the example runs with: Tern's defaults, as the hardening
# target and the allowlist's `head_over_limit` assume.
MAX_BODY = 2 * 1024 * 1024


class Recorder(llhttp.Request):
    """llhttp in strict mode (no lenient flag), recording each message."""

    def __init__(self):
        super().__init__()
        self.messages = []
        self.current = None
        self.heads = 0

    def on_message_begin(self):
        self.current = {"method": "", "target": b"", "fields": 0, "body": 0}

    def on_url(self, data):
        self.current["target"] += bytes(data)

    def on_header_field_complete(self):
        self.current["fields"] += 1

    def on_headers_complete(self):
        self.heads += 1
        self.current["method"] = self.method

    def on_body(self, data):
        self.current["body"] += len(data)

    def on_message_complete(self):
        self.messages.append(self.current)
        self.current = None


def llhttp_verdict(raw):
    """(state, messages, heads, error): state is valid (at a message
    boundary), invalid, closed (bytes after a message that closes the
    connection), upgrade (stopped after an upgrade or CONNECT) or
    incomplete."""
    p = Recorder()
    try:
        p.execute(raw)
    except llhttp.ClosedConnectionError as e:
        return "closed", p.messages, p.heads, str(e)
    except llhttp.Error as e:
        return "invalid", p.messages, p.heads, f"{type(e).__name__}: {e}"
    if p.is_upgrading:
        return "upgrade", p.messages, p.heads, ""
    if p.current is None:
        return "valid", p.messages, p.heads, ""
    return "incomplete", p.messages, p.heads, ""


def tern_verdicts(binary, raws):
    payload = b"".join(struct.pack(">I", len(r)) + r for r in raws)
    out = subprocess.run([binary, "--max-body", str(MAX_BODY)], input=payload,
                         capture_output=True, check=True).stdout
    lines = out.decode().splitlines()
    if len(lines) != len(raws):
        sys.exit(f"h1_verdict answered {len(lines)} cases of {len(raws)}")
    return [json.loads(line) for line in lines]


def compare(raw, tern, ll):
    """(outcome, detail, problem): outcome names the kind of agreement or
    difference; problem is None, or why the case fails."""
    l_state, l_msgs, l_heads, l_error = ll
    t_state = tern["state"]
    t_msgs = tern["messages"]
    tn, ln = len(t_msgs), len(l_msgs)
    notes = []
    for i, (t, l) in enumerate(zip(t_msgs, l_msgs)):
        if t["body"] != l["body"]:
            return "framing", f"message {i}: body {t['body']} vs llhttp {l['body']}", \
                "Tern frames a body differently"
        if t["method"] != l["method"]:
            notes.append(f"message {i}: method {t['method']!r} vs {l['method']!r}")
        target = l["target"].decode("latin-1")
        if t["target"] != target:
            notes.append(f"message {i}: target {t['target']!r} vs {target!r}")
        if t["fields"] != l["fields"]:
            notes.append(f"message {i}: {t['fields']} fields vs {l['fields']}")
    detail = "; ".join(notes)
    t_heads = tn

    # Accepting one message llhttp refuses (in its head or its body) is
    # excusable by a rule, and with it the request lines after it that
    # llhttp never looked at (as oracle.py judges it): each is then a
    # request of its own, not one read as two. The bodies both read whole
    # were compared above.
    lines = len(REQUEST_LINE.findall(raw))
    # The rule must match the message at issue: the first one llhttp
    # refused (Tern's offsets say where it starts).
    at_issue = raw[t_msgs[ln]["at"]:] if tn > ln else raw[tern["read"]:]
    if t_heads > ln and l_state == "invalid" and t_heads <= max(lines, ln + 1):
        rule = excuse("accepts", at_issue, engine="tern")
        if rule:
            return "accepts (allowlisted)", rule, None
        return "accepts", l_error, "Tern accepts a message llhttp refuses"
    if tn > ln:
        return "reads more", f"{tn} messages vs llhttp {ln} ({l_state} {l_error})", \
            "Tern reads more messages than llhttp"
    if tn < ln:
        if t_state == "invalid":
            rule = excuse("rejects", raw[tern["read"]:], engine="tern")
            if rule:
                return "rejects (allowlisted)", rule, None
            return "rejects", f"Tern {tern['status']} after {tn}, llhttp read {ln}", \
                "Tern refuses a message llhttp accepts"
        return "reads fewer", f"Tern {t_state} after {tn}, llhttp {l_state} after {ln}", \
            "Tern reads fewer messages than llhttp without refusing"
    # Same number of messages.
    if t_state == l_state or {t_state, l_state} <= {"closed", "upgrade"}:
        return ("agree" if not detail else "agree (written differently)"), detail, None
    if t_state == "invalid" and l_state in ("valid", "closed", "upgrade") and l_heads > tn:
        rule = excuse("rejects", raw[tern["read"]:], engine="tern")
        if rule:
            return "rejects (allowlisted)", rule, None
        return "rejects", f"Tern {tern['status']} after {tn}", \
            "Tern refuses a message llhttp accepts"
    if t_state == "invalid" and l_state == "incomplete":
        return "Tern refuses sooner", f"{tern['status']} where llhttp waits", None
    if t_state == "incomplete" and l_state == "invalid":
        return "Tern waits", f"llhttp: {l_error}", None
    if t_state == "closed" and l_state == "invalid":
        return "agree (closed)", l_error, None
    return f"boundary ({t_state} vs {l_state})", detail, None


def corpus():
    dirs = [ROOT / "hardening" / "corpus" / "h1"]
    dirs += sorted((ROOT / "crates" / "tern" / "fuzz" / "corpus").glob("h1_*"))
    for d in dirs:
        if d.is_dir():
            for f in sorted(d.iterdir()):
                if f.is_file():
                    yield str(f.relative_to(ROOT)), f.read_bytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--verdict", help="the h1_verdict example's binary (default: built with cargo)")
    ap.add_argument("--report")
    a = ap.parse_args()

    binary = a.verdict
    if not binary:
        subprocess.run(["cargo", "build", "-q", "--locked", "-p", "tern", "--example", "h1_verdict"],
                       cwd=ROOT, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        binary = str(target / "debug" / "examples" / "h1_verdict")

    cases = [{"source": "oracle", "category": c["category"], "raw": c["raw"]}
             for c in generate(random.Random(a.seed), a.cases)]
    for name, raw, *_ in smuggling.cases(MAX_BODY):
        cases.append({"source": "smuggling", "category": name,
                      "raw": raw + smuggling.NEXT})
    for name, raw in corpus():
        cases.append({"source": "corpus", "category": name, "raw": raw})

    verdicts = tern_verdicts(binary, [c["raw"] for c in cases])
    outcomes = Counter()
    by_source = Counter()
    states = Counter()
    rules = Counter()
    failures = []
    for case, tern in zip(cases, verdicts):
        ll = llhttp_verdict(case["raw"])
        outcome, detail, problem = compare(case["raw"], tern, ll)
        case.update(tern=tern, llhttp=ll[0], llhttp_messages=len(ll[1]), llhttp_error=ll[3],
                    outcome=outcome, detail=detail, problem=problem)
        outcomes[outcome] += 1
        by_source[(case["source"], "FAIL" if problem else "ok")] += 1
        states[(tern["state"], ll[0])] += 1
        if outcome.endswith("(allowlisted)"):
            rules[(outcome.split()[0], detail)] += 1
        if problem:
            failures.append(case)

    print(f"llhttp {llhttp.version} strict against Tern's codec; {len(cases)} cases "
          f"(oracle generator seed {a.seed}, {a.cases} cases; smuggling; corpus)")
    for (source, ok), n in sorted(by_source.items()):
        print(f"  {source:<10} {ok:<4} {n}")
    print("  states (Tern, llhttp):")
    for (t, l), n in sorted(states.items(), key=lambda x: -x[1]):
        print(f"    {n:6}  {t:<10} {l}")
    print("  outcomes:")
    for outcome, n in sorted(outcomes.items(), key=lambda x: -x[1]):
        print(f"    {n:6}  {outcome}")
    print(f"  allowlisted differences: {sum(rules.values())}")
    for (direction, name), n in sorted(rules.items(), key=lambda x: -x[1]):
        print(f"    {n:6}  {direction}: {name}")
    for c in failures[:40]:
        print(f"FAIL {c['source']}/{c['category']}: {c['problem']}: {c['detail']} "
              f"raw={c['raw'][:160]!r}")
    print(f"{len(failures)} unexcused differences")
    if a.report:
        with open(a.report, "w") as f:
            json.dump([{**c, "raw": c["raw"].decode("latin-1")[:300]} for c in cases], f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
