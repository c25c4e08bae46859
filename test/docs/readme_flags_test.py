#!/usr/bin/env python3
"""Every `aiprof ...` example in README.md and docs/*.md uses a command and
flags the program has: each example line of a code block is split like a
shell line, its subcommand path found (the longest prefix `aiprof ... --help`
accepts) and each of its flags looked up in that command's help or the
top level's (global flags such as --threads are accepted after the
subcommand). A flag renamed or removed in the code without its examples
fails here, naming the file, line and flag. Lines whose command is not
aiprof, and flags after a `--` (the traced program's own), are not checked."""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"^\s*```")


def example_lines(path):
    """(line number, text) of lines starting with `aiprof ` inside code blocks."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            text = line.strip()
            if text.startswith("$ "):
                text = text[2:]
            if inside and text.startswith("aiprof "):
                yield n, text
            elif not inside:
                # Inline code in prose: `aiprof analyze DIR --format json`.
                for span in re.findall(r"`(aiprof [^`]+)`", line):
                    yield n, span


def tokens_of(text):
    # The command only: not a comment, a pipe or a redirection after it.
    for sep in (" #", " |", " >", " &&", " 2>"):
        text = text.split(sep)[0]
    try:
        toks = shlex.split(text)
    except ValueError:
        return None
    if "--" in toks:
        toks = toks[:toks.index("--")]
    return toks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--root", required=True, help="the source tree")
    a = ap.parse_args()
    helps = {}

    def help_of(path):
        if path not in helps:
            r = subprocess.run([a.aiprof, *path, "--help"], capture_output=True, text=True, timeout=60)
            helps[path] = r.stdout if r.returncode == 0 and r.stdout else None
        return helps[path]

    files = [os.path.join(a.root, "README.md")] + sorted(glob.glob(os.path.join(a.root, "docs", "*.md")))
    failures, checked = [], 0
    top = help_of(())
    if top is None:
        print("FAIL: aiprof --help failed")
        return 1
    for path in files:
        for n, text in example_lines(path):
            toks = tokens_of(text)
            if not toks:
                continue
            words = []
            rest = toks[1:]
            while rest and rest[0].startswith("-"):  # global flags before the command
                rest = rest[2:] if len(rest) > 1 and not re.fullmatch(r"[a-z][a-z0-9-]*", rest[1]) else rest[1:]
            for t in rest:
                if t.startswith("-") or not re.fullmatch(r"[a-z][a-z0-9-]*", t):
                    break
                words.append(t)
            # The longest prefix that is a command (a path argument may look
            # like a word: `aiprof view run` is `view` with the input `run`).
            path_cmd = ()
            for k in range(len(words), 0, -1):
                h = help_of(tuple(words[:k]))
                if h is not None and h != help_of(tuple(words[:k - 1])):
                    path_cmd = tuple(words[:k])
                    break
            if words and not path_cmd:
                failures.append(f"{os.path.relpath(path, a.root)}:{n}: no command '{words[0]}': {text[:120]}")
                continue
            h = (help_of(path_cmd) or "") + top
            for t in toks:
                if t.startswith("--") and len(t) > 2:
                    flag = t.split("=")[0]
                    checked += 1
                    if not re.search(re.escape(flag) + r"(?![\w-])", h):
                        failures.append(f"{os.path.relpath(path, a.root)}:{n}: {flag} is not a flag of "
                                        f"'aiprof {' '.join(path_cmd)}': {text[:120]}")
    for f in failures:
        print("FAIL:", f)
    print(f"{checked} flags checked in {len(files)} files, {len(failures)} failures")
    return 1 if failures or checked < 50 else 0


if __name__ == "__main__":
    sys.exit(main())
