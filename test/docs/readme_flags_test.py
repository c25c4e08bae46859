#!/usr/bin/env python3
"""Every `aiprof ...` example in README.md and docs/*.md uses a command and
flags the program has: each example line of a code block is split like a
shell line, its subcommand path found (the longest prefix `aiprof ... --help`
accepts) and each of its flags looked up in that command's help or the
top level's (global flags such as --threads are accepted after the
subcommand). A flag renamed or removed in the code without its examples
fails here, naming the file, line and flag. Lines whose command is not
aiprof, and flags after a `--` (the traced program's own), are not checked.
`examples()` is also the extractor of test/docs/readme_examples_test.py,
which runs README.md's examples."""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"^\s*```")
# Where the aiprof command starts in a shell line: at its start, after a pipe,
# or after a launcher (`zcat x.gz | aiprof summary -`, `mpirun -np 16 aiprof ...`).
COMMAND = re.compile(r"(?:^|\|\s*|^mpirun\s(?:[^|]*?\s)?)(aiprof\s)")


class Example:
    """One `aiprof ...` example: its first line in the file, its text (a shell
    line, continuation lines joined), and the line of the code block's fence
    (None for inline code in prose)."""

    def __init__(self, line, text, block):
        self.line, self.text, self.block = line, text, block


def examples(path):
    """The `aiprof ...` examples of a Markdown file, in order: shell lines of
    code blocks that run aiprof (in a block whose commands carry a `$ `
    prompt, only those: the other lines are its output), and inline code in
    prose that starts with `aiprof `."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    n, block = 0, None
    while n < len(lines):
        line = lines[n]
        n += 1
        if FENCE.match(line):
            if block is not None:
                block = None
                continue
            block = n
            end = next((k for k in range(n, len(lines)) if FENCE.match(lines[k])), len(lines))
            prompted = any(l.strip().startswith("$ ") for l in lines[n:end])
            continue
        if block is None:
            # Inline code in prose: `aiprof analyze DIR --format json`.
            for span in re.findall(r"`(aiprof [^`]+)`", line):
                yield Example(n, span, None)
            continue
        text, first = line.strip(), n
        if prompted:
            if not text.startswith("$ "):
                continue
            text = text[2:]
        while text.endswith("\\") and n < len(lines) and not FENCE.match(lines[n]):
            text = text[:-1].rstrip() + " " + lines[n].strip()
            n += 1
        if COMMAND.search(text):
            yield Example(first, text, block)


def example_lines(path):
    """(line number, text) of every example, code blocks and prose."""
    for e in examples(path):
        yield e.line, e.text


def aiprof_part(text):
    """The aiprof command of a shell line: from the word `aiprof` on."""
    m = COMMAND.search(text)
    return text[m.start(1):] if m else text


def tokens_of(text):
    # The command only: not a comment, a pipe or a redirection after it.
    text = aiprof_part(text)
    for sep in (" #", " |", " >", " &&", " ||", " 2>", " &"):
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
