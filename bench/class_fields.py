#!/usr/bin/env python3
"""The classes and structs under src/ with the most data members (default 10).

A member is a declaration at the class body's own depth that ends in ';' and
is not a function, a type, a using, a friend or a static; 'double a = 0, b;'
counts two. Crude (no preprocessor, no templates' partial bodies), but the
same count before and after a change. Run from the repository root, or give a
tree's root.

  /usr/bin/python3 bench/class_fields.py [COUNT] [ROOT]
"""
import os
import re
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
root = sys.argv[2] if len(sys.argv) > 2 else '.'
HEAD = re.compile(r'^\s*(?:template\s*<[^>]*>\s*)?(class|struct)\s+(\w+)[^;{]*\{\s*$')
SKIP = re.compile(r'^\s*(using|friend|static|typedef|enum|class|struct|public:|private:|protected:|template)\b')


def top_level_commas(text):
    depth, n = 0, 0
    for ch in text:
        if ch in '(<{[':
            depth += 1
        elif ch in ')>}]':
            depth -= 1
        elif ch == ',' and depth == 0:
            n += 1
    return n


def members(lines, start):
    """Members of the body opening at lines[start]; returns (count, end line)."""
    depth, n, i, stmt = 1, 0, start + 1, ''
    while i < len(lines) and depth > 0:
        line = re.sub(r'//.*', '', lines[i])
        if depth == 1 and not stmt and SKIP.match(line):
            # a nested type or a using: skip to its end at this depth
            stmt = ''
        opens, closes = line.count('{'), line.count('}')
        if depth == 1:
            stmt += ' ' + line.strip()
            if stmt.strip().endswith(';') and opens == closes:
                s = stmt.strip()
                is_function = re.search(r'\)\s*(const)?\s*(override|final|noexcept)?\s*(=\s*(0|default|delete))?\s*;$', s)
                if s and not SKIP.match(s) and not is_function and not s.startswith(('}', '~')):
                    n += 1 + top_level_commas(s)
                stmt = ''
            elif opens > closes or stmt.strip().endswith(('}', ':')) or not stmt.strip():
                stmt = '' if opens != closes or stmt.strip().endswith(('}', ':')) else stmt
        depth += opens - closes
        i += 1
    return n, i


res = []
for dirpath, _, files in os.walk(os.path.join(root, 'src')):
    for f in files:
        if not f.endswith(('.hpp', '.cpp', '.h')):
            continue
        p = os.path.join(dirpath, f)
        lines = open(p, encoding='utf-8').read().split('\n')
        for i, line in enumerate(lines):
            m = HEAD.match(line)
            if m:
                n, _ = members(lines, i)
                res.append((n, os.path.relpath(p, root), i + 1, m.group(2)))
res.sort(key=lambda r: (-r[0], r[1], r[2]))
for n, p, line, name in res[:count]:
    print(n, f'{p}:{line}', name)
