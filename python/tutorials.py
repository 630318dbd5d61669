#!/usr/bin/env python3
"""Runs Triton tutorials (or any Triton script) with `tawa` in place of
`triton`, changing nothing but the import lines.

    python3 python/tutorials.py [--keep DIR] [--timeout S] [--pytest EXPR] FILE.py [-- ARGS...]

Each file is copied into a temporary folder (or DIR) with its `triton`
imports rewritten (`import triton` -> `import tawa as triton`, `import
triton.language as tl` -> `import tawa.language as tl`, `from triton.X
import Y` -> `from tawa.X import Y`, also inside functions), and run there
with ARGS (or its tests, with `pytest -k EXPR`), under a timeout. The exit code is the script's (124 for a
timeout); the rewritten lines are listed first.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

_IMPORT = re.compile(r"^(?P<indent>\s*)import\s+triton(?P<sub>(\.\w+)*)(\s+as\s+(?P<alias>\w+))?\s*(?P<comment>#.*)?$")
_FROM = re.compile(r"^(?P<indent>\s*)from\s+triton(?P<sub>(\.\w+)*)\s+import\s+(?P<rest>.*)$")


def rewrite_line(line: str) -> str:
    """The line with its `triton` import switched to `tawa` (unchanged if
    it is no such import)."""
    m = _IMPORT.match(line)
    if m:
        indent, sub, alias = m.group("indent"), m.group("sub") or "", m.group("alias")
        if alias:
            return f"{indent}import tawa{sub} as {alias}"
        if not sub:
            return f"{indent}import tawa as triton"
        # `import triton.language` binds `triton`, with the submodule loaded.
        return f"{indent}import tawa{sub}; import tawa as triton"
    m = _FROM.match(line)
    if m:
        return f"{m.group('indent')}from tawa{m.group('sub') or ''} import {m.group('rest')}"
    return line


def rewrite(text: str):
    """`(new text, [(line number, old, new)])`."""
    out, changed = [], []
    for i, line in enumerate(text.splitlines(), 1):
        new = rewrite_line(line)
        if new != line:
            changed.append((i, line, new))
        out.append(new)
    return "\n".join(out) + ("\n" if text.endswith("\n") else ""), changed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("args", nargs="*", help="arguments of the script (after --)")
    ap.add_argument("--keep", help="write the rewritten copy here instead of a temporary folder")
    ap.add_argument("--timeout", type=float, default=None, help="seconds before the script is stopped")
    ap.add_argument("--print-imports", action="store_true", help="only print the rewritten lines")
    ap.add_argument("--pytest", metavar="EXPR", help="run the file's tests with pytest -k EXPR instead")
    a = ap.parse_args(argv)
    with open(a.file, encoding="utf-8") as f:
        text, changed = rewrite(f.read())
    for i, old, new in changed:
        print(f"{os.path.basename(a.file)}:{i}: {old.strip()}  ->  {new.strip()}", file=sys.stderr)
    if not changed:
        print(f"{a.file}: no triton import to rewrite", file=sys.stderr)
        return 2
    if a.print_imports:
        return 0
    folder = a.keep or tempfile.mkdtemp(prefix="tawa-tutorial-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, os.path.basename(a.file))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    try:
        if a.pytest is not None:
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path, "-k", a.pytest, *a.args]
        else:
            cmd = [sys.executable, path, *a.args]
        r = subprocess.run(cmd, cwd=folder, timeout=a.timeout)
        return r.returncode
    except subprocess.TimeoutExpired:
        print(f"{a.file}: stopped after {a.timeout} s", file=sys.stderr)
        return 124
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
