#!/usr/bin/env bash
# Fails when app/'s include graph has a cycle, when core/'s folders include each other both ways,
# or when core/ includes app/.
#
# In app/ a node is a source unit: a header and its .cpp (gui/app.h + gui/app.cpp are one node), so
# "app.cpp includes script.h while script.cpp includes app.h" is a cycle even though no header
# includes itself. In core/ a node is a folder (base, text, model, io, stepper, analysis, train,
# reference): the rooms include each other one way only.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files --cached --others --exclude-standard -- 'app/*.cpp' 'app/*.h' 'core/*.cpp' 'core/*.h' | python3 -c '
import os, re, sys

files = [l.strip() for l in sys.stdin if l.strip()]
known = set(files)
# The include directories of the CMake targets: the including file'"'"'s folder, then these.
roots = ["core", "app", "app/gui"]
include = re.compile(r"^\s*#\s*include\s*\"([^\"]+)\"")

def resolve(src, name):
    for d in [os.path.dirname(src)] + roots:
        p = os.path.normpath(os.path.join(d, name))
        if p in known:
            return p
    return None  # a system or third-party header

def unit(path):
    return os.path.splitext(path)[0]

def room(path):  # core/<room>/...
    parts = path.split("/")
    return parts[1] if parts[0] == "core" and len(parts) > 2 else None

units, rooms, errors = {}, {}, []
for f in files:
    with open(f, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            m = include.match(line)
            if not m:
                continue
            target = resolve(f, m.group(1))
            if target is None:
                continue
            if f.startswith("core/") and target.startswith("app/"):
                errors.append(f"{f}:{n}: core includes app/ ({target})")
            a, b = unit(f), unit(target)
            if a != b and a.startswith("app/") and b.startswith("app/"):
                units.setdefault(a, {}).setdefault(b, f"{f}:{n}")
            ra, rb = room(f), room(target)
            if ra and rb and ra != rb:
                rooms.setdefault(ra, {}).setdefault(rb, f"{f}:{n}")

def cycles(graph):
    # Tarjan'"'"'s strongly connected components; each component of more than one node is a cycle.
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    def visit(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out

for what, graph in (("units of app/", units), ("core folders", rooms)):
    for comp in cycles(graph):
        members = set(comp)
        edges = [f"  {a} -> {b} ({where})" for a in comp for b, where in sorted(graph.get(a, {}).items()) if b in members]
        errors.append(f"include cycle among {what}: " + ", ".join(comp) + "\n" + "\n".join(edges))

if errors:
    print("check-includes: " + "\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"check-includes: no include cycle among {len(units)} units of app/ or between the folders of core/, core does not include app/")
'
