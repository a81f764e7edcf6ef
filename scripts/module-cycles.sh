#!/usr/bin/env bash
# Finds import cycles between the modules of each crate: module A uses module B (a `use
# crate::…`, `super::…` or `self::…` path, or such a path written in the code) and B, directly
# or through others, uses A. Modules are compared as siblings: a path from `crate::a::x` to
# `crate::b::y` is an edge a -> b among the children of the crate root, one from
# `crate::log::append` to `crate::log::read` an edge append -> read among the children of
# `crate::log`. A module using its own parent or child is not an edge (a parent declares its
# children). Re-exports are followed (`crate::Error` is `crate::error::Error` when lib.rs says
# `pub use error::Error`). Comments, doc links and `#[cfg(test)]` modules are not looked at:
# the cycles found are those of the code that ships.
#
# Usage: bash scripts/module-cycles.sh [CRATE_DIR...]   (default: every crates/*)
# Prints each cycle with a reference per edge; exits 1 when any crate has one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -eq 0 ]; then
    set -- crates/*/
fi
exec python3 - "$@" <<'EOF'
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        out.append(re.sub(r"[^\n]", " ", s))

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(text[i:j])
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(text[i:j])
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            blank(text[i:j])
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(text[i:j + 1])
            i = j + 1
        elif c == "'":
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 2)
                j = n if j < 0 else j + 1
                blank(text[i:j])
                i = j
            elif i + 2 < n and text[i + 2] == "'":
                blank(text[i:i + 3])
                i += 3
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use(tree):
    """The leaf paths of a use tree, each a (segments, alias) pair."""
    tree = re.sub(r"\s+", "", tree)
    results = []

    def walk(prefix, s):
        # s is one use tree: a::b, a::{x, y}, a as b, *, self
        depth = 0
        for k, ch in enumerate(s):
            if ch == "{":
                head = s[:k].rstrip(":")
                body = s[k + 1:s.rindex("}")]
                base = prefix + ([p for p in head.split("::") if p] if head else [])
                for part in split_top(body):
                    walk(base, part)
                return
        alias = None
        m = re.match(r"(.*?)as(" + IDENT + ")$", s)
        if m and "::" not in m.group(2):
            s, alias = m.group(1), m.group(2)
        segs = prefix + [p for p in s.split("::") if p]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        results.append((segs, alias))

    def split_top(body):
        parts, depth, cur = [], 0, ""
        for ch in body:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        return parts

    walk([], tree)
    return results


class Crate:
    def __init__(self, root):
        self.modules = {}  # tuple path -> file
        self.uses = []  # (module, segments, alias, public, file, line)
        self.paths = []  # (module, segments, file, line)
        src = os.path.join(root, "src")
        for name in ("lib.rs", "main.rs"):
            top = os.path.join(src, name)
            if os.path.exists(top):
                self.load((), top, src)

    def load(self, module, path, child_dir):
        self.modules[module] = path
        with open(path, encoding="utf-8") as f:
            text = strip(f.read())
        line_at = lambda pos: text.count("\n", 0, pos) + 1
        # Inline modules: a stack of (module, brace depth at its opening).
        stack = [(module, 0, child_dir)]
        depth = 0
        skip_until = None  # brace depth that ends a #[cfg(test)] module
        token = re.compile(
            r"(?P<cfgtest>#\[cfg\(test\)\])|(?P<mod>\b(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<name>" + IDENT + r")\s*(?P<end>[;{]))"
            r"|(?P<use>\b(?P<pub>pub(?:\([^)]*\))?\s+)?use\s+(?P<tree>[^;]*);)"
            r"|(?P<path>(?<![A-Za-z0-9_:])(?:\$?crate|super|self)(?:\s*::\s*(?:" + IDENT + r"))+)"
            r"|(?P<open>\{)|(?P<close>\})"
        )
        pending_test = False
        for m in token.finditer(text):
            if m.group("open"):
                depth += 1
                continue
            if m.group("close"):
                depth -= 1
                if skip_until is not None and depth == skip_until:
                    skip_until = None
                while len(stack) > 1 and depth == stack[-1][1]:
                    stack.pop()
                continue
            if skip_until is not None:
                continue
            if m.group("cfgtest"):
                pending_test = True
                continue
            cur, _, cur_dir = stack[-1]
            if m.group("mod"):
                name = m.group("name")
                test = pending_test
                pending_test = False
                if m.group("end") == "{":
                    depth += 1
                    if test:
                        skip_until = depth - 1
                    else:
                        stack.append((cur + (name,), depth - 1, os.path.join(cur_dir, name)))
                elif not test:
                    for cand in (os.path.join(cur_dir, name + ".rs"), os.path.join(cur_dir, name, "mod.rs")):
                        if os.path.exists(cand):
                            self.load(cur + (name,), cand, os.path.join(cur_dir, name))
                            break
                continue
            pending_test = False
            line = line_at(m.start())
            if m.group("use"):
                for segs, alias in expand_use(m.group("tree")):
                    self.uses.append((cur, segs, alias, bool(m.group("pub")), path, line))
            elif m.group("path"):
                segs = [s.strip() for s in m.group("path").split("::")]
                self.paths.append((cur, segs, path, line))

    def absolute(self, module, segs):
        """The segments made absolute from `module`, or None for another crate's path."""
        if not segs:
            return None
        first = segs[0].lstrip("$")
        if first == "crate":
            base, rest = (), segs[1:]
        elif first in ("self", "super"):
            base, rest = module, segs
            while rest and rest[0] in ("self", "super"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        elif module + (first,) in self.modules:
            base, rest = module, segs
        else:
            return None
        return list(base) + list(rest)

    def reexports(self):
        table = {}
        for module, segs, alias, public, _, _ in self.uses:
            if not public or not segs or segs[-1] == "*":
                continue
            target = self.absolute(module, segs)
            if target is not None:
                table[(module, alias or segs[-1])] = target
        return table

    def resolve(self, segs, table, depth=0):
        """The module an absolute path ends in."""
        module = ()
        for k, s in enumerate(segs):
            if module + (s,) in self.modules:
                module = module + (s,)
            elif (module, s) in table and depth < 20:
                return self.resolve(table[(module, s)] + segs[k + 1:], table, depth + 1)
            else:
                break
        return module

    def edges(self):
        table = self.reexports()
        found = {}
        refs = [(m, s, f, l) for m, s, _, _, f, l in self.uses] + self.paths
        for module, segs, file, line in refs:
            target = self.absolute(module, segs)
            if target is None:
                continue
            b = self.resolve(target, table)
            a = module
            k = 0
            while k < len(a) and k < len(b) and a[k] == b[k]:
                k += 1
            if k == len(a) or k == len(b):
                continue  # the same module, a parent or a child
            edge = (a[:k + 1], b[:k + 1])
            found.setdefault(edge, (file, line, "::".join(segs)))
        return found


def cycles(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out, graph


def one_cycle(scc, graph):
    """A shortest cycle through the first module of a strongly connected set."""
    members = set(scc)
    start = scc[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return scc


name = lambda m: "crate::" + "::".join(m) if m else "crate"
failed = False
for root in sys.argv[1:]:
    root = root.rstrip("/")
    crate = Crate(root)
    if not crate.modules:
        continue
    edges = crate.edges()
    found, graph = cycles(edges)
    if not found:
        print(f"{root}: no module cycles ({len(crate.modules)} modules, {len(edges)} edges between siblings)")
        continue
    failed = True
    print(f"{root}: {len(found)} module cycle(s)")
    for scc in found:
        path = one_cycle(scc, graph)
        print(f"  cycle among {', '.join(name(m) for m in scc)}:")
        for a, b in zip(path, path[1:]):
            file, line, text = edges[(a, b)]
            print(f"    {name(a)} -> {name(b)}  ({file}:{line}: {text})")
sys.exit(1 if failed else 0)
EOF
