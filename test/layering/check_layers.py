#!/usr/bin/env python3
"""Fails on an include that points up the layers (test/layering/layers.txt).

Runs without building: it reads every C/C++ source and header under src/, include/,
python/, bench/ and test/, maps each file and each project include
("src/...", "python/...", "test/...", "aiprof/..." and relative includes)
to a library by its directory (the longest directory in the table wins),
and reports `file:line: <library> -> <library>` for every include the table
does not allow. A library may include itself and the libraries it lists
(not transitively: each row lists everything it may include; '*' is every
library whose own row is not '*'). Test files (*_test.cc, *_test_util.*,
anything under a testing/ folder) and benchmarks and fuzzers beside the code
may also include test utilities (the `test_util` library) and their own
library's testing/ files; other code may not include testing/ files.

A file or an include under src/ (or python/, bench/, test/) that no
directory of the table covers is an error too, so a new library must be
placed in the table before it can be included. With --docs, the table shown
in that Markdown file (between `<!-- layers.txt begin -->` and
`<!-- layers.txt end -->`) must equal the table's rows.

A second rule: the analyses' entry points are called only where results
are computed once, the analysis libraries (every row whose directories lie
under src/analysis) and the session (src/session), so a front end reads a
result from its AnalysisSession instead of computing it again beside it. The
entry points are the functions named `Compute<Name>`, `Find<...>Steps`
or `FindCaptureWindows` that a header under src/analysis declares (found in the
headers at each run, so a new analysis is covered without editing this
script). A call of one elsewhere is reported as
`file:line: <library> calls <Name>`; test files (as above), test utilities,
benchmarks and everything under test/ and bench/ may call them. Comments and
string literals are not read, nor member calls (`x.Compute...(`,
`x->Compute...(`), nor names no analysis header declares.

Arrows being removed by work in flight may be listed in an exceptions file
(`<library> -> <included path>  # why`), and calls likewise
(`<file> calls <Name>  # why`): they are reported on standard error
instead of failing, and an exception that no longer matches any include or
call fails, so the list only shrinks.

Usage: check_layers.py [--root DIR] [--table FILE] [--exceptions FILE] [--docs FILE]
Exit status: 0 clean, 1 violations, 2 a broken table or docs block.
"""

import argparse
import os
import re
import sys

SCANNED_ROOTS = ("src", "include", "python", "bench", "test")
# Folders of others' code or of outputs, never ours to check.
SKIPPED_DIRS = ("__pycache__", "node_modules")
SOURCE_SUFFIXES = (".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".inc", ".cc.in", ".h.in")
# Include paths that name a file of this repository (the rest are system or
# third-party headers). "aiprof/..." is the public SDK header folder include/aiprof.
PROJECT_PREFIXES = ("src/", "python/", "bench/", "test/", "include/")
PUBLIC_HEADER_ROOT = "include"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
TEST_UTIL_LIBRARY = "test_util"
# The call rule (see above): where the analyses' entry points live, which
# other library may call them, and their names.
ANALYSIS_HOME = "src/analysis"
ENTRY_POINT_CALLERS = ("session",)
TEST_LIBRARIES = ("test_util", "bench", "test")
ENTRY_NAME = r"(?:Compute[A-Z]\w*|Find(?:[A-Z]\w*)?Steps|FindCaptureWindows)"
# A use of a name: not a member call (`.`, `->`) nor part of a longer name.
ENTRY_USE_RE = re.compile(r"(?<![\w.>])(" + ENTRY_NAME + r")\s*\(")
DOCS_BEGIN = "<!-- layers.txt begin -->"
DOCS_END = "<!-- layers.txt end -->"


class TableError(Exception):
    pass


class Table:
    """The parsed layers table: directories per library and allowed arrows."""

    def __init__(self, rows):
        self.rows = rows  # [(library, [dirs], [direct deps])] in table order
        self.dirs = {}  # directory -> library
        self.direct = {}
        for library, dirs, deps in rows:
            if library in self.direct:
                raise TableError(f"library '{library}' appears twice")
            self.direct[library] = deps
            for d in dirs:
                if d in self.dirs:
                    raise TableError(f"directory '{d}' belongs to '{self.dirs[d]}' and '{library}'")
                self.dirs[d] = library
        for library, deps in self.direct.items():
            for dep in deps:
                if dep != "*" and dep not in self.direct:
                    raise TableError(f"'{library}' may include '{dep}', which is not in the table")
        # '*' after the arrow: every library whose own row is not '*' (tests, benchmarks).
        listed = {lib for lib, deps in self.direct.items() if deps != ["*"]}
        self.allowed = {lib: (listed if deps == ["*"] else set(deps)) | {lib}
                        for lib, deps in self.direct.items()}
        self._check_acyclic()
        # Longest directory first, so test/util wins over test.
        self.dir_order = sorted(self.dirs, key=len, reverse=True)

    def _check_acyclic(self):
        state = {}  # library -> "open" while on the path, "done" after

        def visit(library, path):
            if state.get(library) == "done":
                return
            if state.get(library) == "open":
                cycle = " -> ".join(path[path.index(library):] + [library])
                raise TableError(f"the table has a cycle: {cycle}")
            state[library] = "open"
            for dep in sorted(self.allowed[library] - {library}):
                visit(dep, path + [library])
            state[library] = "done"

        for library in self.direct:
            visit(library, [])

    def library_of(self, rel_path):
        """The library whose directory holds rel_path (POSIX, repo-relative), or None."""
        for d in self.dir_order:
            if rel_path == d or rel_path.startswith(d + "/"):
                return self.dirs[d]
        return None


def parse_table_rows(lines, source):
    """Rows of `library directory... -> library...` lines (nothing after '->': no arrows)."""
    rows = []
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        left, arrow, right = line.partition("->")
        fields = left.split()
        if not arrow or len(fields) < 2:
            raise TableError(f"{source}:{number}: want 'library directory... -> library...', "
                             f"got '{raw.strip()}'")
        rows.append((fields[0], [d.rstrip("/") for d in fields[1:]], right.split()))
    if not rows:
        raise TableError(f"{source}: no rows")
    return rows


def load_table(path):
    with open(path, encoding="utf-8") as f:
        return Table(parse_table_rows(f.read().splitlines(), path))


def load_exceptions(path, table):
    """Include exceptions {(library, included path): line} and call exceptions
    {(file, name): line}, from `library -> path  # why` and `file calls Name  # why` lines."""
    includes, calls = {}, {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f.read().splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) == 3 and fields[1] == "calls":
                if table.library_of(fields[0]) is None or not re.fullmatch(ENTRY_NAME, fields[2]):
                    raise TableError(f"{path}:{number}: want 'src/<file> calls <entry point>  # why', "
                                     f"got '{raw.strip()}'")
                calls[(fields[0], fields[2])] = number
                continue
            left, arrow, right = line.partition("->")
            if not arrow or len(left.split()) != 1 or len(right.split()) != 1:
                raise TableError(f"{path}:{number}: want 'library -> included/path.h  # why' or "
                                 f"'src/<file> calls <entry point>  # why', got '{raw.strip()}'")
            if left.strip() not in table.direct:
                raise TableError(f"{path}:{number}: '{left.strip()}' is not in the table")
            includes[(left.strip(), right.strip())] = number
    return includes, calls


def is_test_file(rel_path):
    name = os.path.basename(rel_path)
    return (re.search(r"_(test|test_util|benchmark|fuzzer)\.(cc|cpp|c|h)$", name) is not None
            or "/testing/" in "/" + rel_path)


def is_testing_file(rel_path):
    """A test helper that production code must not include."""
    name = os.path.basename(rel_path)
    return "/testing/" in "/" + rel_path or re.search(r"_test_util\.h$", name) is not None


def resolve_include(root, including, quote, spelled):
    """The repository-relative path an include names, or None for a system/third-party header."""
    spelled = spelled.strip()
    if quote == '"' and not spelled.startswith(PROJECT_PREFIXES) and not spelled.startswith("aiprof/"):
        # A quoted include first resolves beside the including file.
        beside = os.path.normpath(os.path.join(os.path.dirname(including), spelled))
        if not beside.startswith("..") and os.path.isfile(os.path.join(root, beside)):
            return beside.replace(os.sep, "/")
    if spelled.startswith("aiprof/"):
        return PUBLIC_HEADER_ROOT + "/" + spelled
    if spelled.startswith(PROJECT_PREFIXES):
        return os.path.normpath(spelled).replace(os.sep, "/")
    return None


def includes_of(path):
    """(line number, '<' or '"', spelled path) for each #include outside comments."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if in_block:
            end = line.find("*/")
            if end < 0:
                continue
            line = line[end + 2:]
            in_block = False
        line = re.sub(r"/\*.*?\*/", " ", line)
        start = line.find("/*")
        if start >= 0:
            in_block = True
            line = line[:start]
        m = INCLUDE_RE.match(line)
        if m:
            yield number, m.group(1), m.group(2)


def source_files(root):
    for top in SCANNED_ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS)
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    full = os.path.join(dirpath, name)
                    yield os.path.relpath(full, root).replace(os.sep, "/")


def code_only(text):
    """`text` with comments and string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            close = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if close < 0 else close + len(m.group(1)) + 2
        elif c in "\"'":
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(n, end + 1)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:end]))
        i = end
    return "".join(out)


def analysis_libraries(table):
    """The libraries whose directories lie under src/analysis."""
    return {lib for d, lib in table.dirs.items() if d == ANALYSIS_HOME or d.startswith(ANALYSIS_HOME + "/")}


def entry_points(root, table):
    """Names of the analyses' entry points: those the headers under src/analysis declare."""
    names = set()
    for rel in source_files(root):
        if rel.startswith(ANALYSIS_HOME + "/") and rel.endswith((".h", ".hpp", ".hh")):
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                names.update(m.group(1) for m in ENTRY_USE_RE.finditer(code_only(f.read())))
    return names


def may_call_entry_points(rel, library, table):
    return (library in analysis_libraries(table) or library in ENTRY_POINT_CALLERS
            or library in TEST_LIBRARIES or is_test_file(rel))


def check_calls(root, table, exceptions, exceptions_path, excused, problems):
    """The call rule: a call of an entry point outside the analyses and the session."""
    names = entry_points(root, table)
    used = set()
    for rel in source_files(root):
        library = table.library_of(rel)
        if library is None or may_call_entry_points(rel, library, table):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            code = code_only(f.read())
        for m in ENTRY_USE_RE.finditer(code):
            name = m.group(1)
            if name not in names:
                continue
            where = f"{rel}:{code.count(chr(10), 0, m.start()) + 1}"
            if (rel, name) in exceptions:
                used.add((rel, name))
                if excused is not None:
                    excused.append(f"{where}: {library} calls {name}, excused by "
                                   f"{exceptions_path}:{exceptions[(rel, name)]}")
                continue
            problems.append(f"{where}: {library} calls {name}; only the analyses and the session call an "
                            f"analysis: read the result from the AnalysisSession")
    for (rel, name), number in sorted(exceptions.items(), key=lambda e: e[1]):
        if (rel, name) not in used:
            problems.append(f"{exceptions_path}:{number}: {rel} calls {name} no longer happens; "
                            f"remove the exception")


def check_tree(root, table, exceptions=None, exceptions_path="exceptions", excused=None,
               call_exceptions=None):
    """Every violation as 'file:line: message', in file order; excused ones go to *excused."""
    exceptions = exceptions or {}
    used = set()
    problems = []
    for rel in source_files(root):
        library = table.library_of(rel)
        if library is None:
            problems.append(f"{rel}:1: no layer owns this file; add its directory to the layers table")
            continue
        test_file = is_test_file(rel)
        allowed = set(table.allowed[library])
        if test_file and TEST_UTIL_LIBRARY in table.allowed:
            allowed.add(TEST_UTIL_LIBRARY)  # the helpers, not what they include
        for number, quote, spelled in includes_of(os.path.join(root, rel)):
            target = resolve_include(root, rel, quote, spelled)
            if target is None:
                continue
            target_library = table.library_of(target)
            where = f"{rel}:{number}"
            if target_library is None:
                problems.append(f'{where}: #include "{spelled}": no layer owns {target}')
            elif target_library not in allowed and (library, target) in exceptions:
                used.add((library, target))
                if excused is not None:
                    excused.append(f'{where}: {library} -> {target_library} (#include "{spelled}"), '
                                   f'excused by {exceptions_path}:{exceptions[(library, target)]}')
            elif target_library not in allowed:
                may = ", ".join(sorted(table.allowed[library] - {library})) or "nothing of ours"
                problems.append(f'{where}: {library} -> {target_library} (#include "{spelled}"); '
                                f'{library} may include {may}')
            elif is_testing_file(target) and not test_file:
                problems.append(f'{where}: {library} -> test helper (#include "{spelled}") '
                                f'outside a test')
    for (library, target), number in sorted(exceptions.items(), key=lambda e: e[1]):
        if (library, target) not in used:
            problems.append(f"{exceptions_path}:{number}: {library} -> {target} no longer happens; "
                            f"remove the exception")
    check_calls(root, table, call_exceptions or {}, exceptions_path, excused, problems)
    return problems


def check_docs(docs_path, table_path):
    """Problems when the docs' copy of the table differs from the table's rows."""
    with open(docs_path, encoding="utf-8") as f:
        text = f.read()
    begin, end = text.find(DOCS_BEGIN), text.find(DOCS_END)
    if begin < 0 or end < begin:
        return [f"{docs_path}: no '{DOCS_BEGIN}' ... '{DOCS_END}' block with the layers table"]
    line = text.count("\n", 0, begin) + 1
    block = [l for l in text[begin + len(DOCS_BEGIN):end].splitlines() if not l.startswith("```")]
    try:
        shown = parse_table_rows(block, docs_path)
    except TableError as e:
        return [str(e)]
    with open(table_path, encoding="utf-8") as f:
        rows = parse_table_rows(f.read().splitlines(), table_path)
    if shown != rows:
        return [f"{docs_path}:{line}: the layers table shown here differs from {table_path}; "
                f"copy the file's rows into the block"]
    return []


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--table", default=os.path.join(here, "layers.txt"))
    parser.add_argument("--exceptions", default=os.path.join(here, "exceptions.txt"),
                        help="arrows and calls allowed for now (a missing file: none)")
    parser.add_argument("--docs", help="Markdown file that shows the table (docs/ARCHITECTURE.md)")
    args = parser.parse_args(argv)
    try:
        table = load_table(args.table)
        exceptions, call_exceptions = (load_exceptions(args.exceptions, table) if os.path.exists(args.exceptions)
                                       else ({}, {}))
    except (OSError, TableError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    excused = []
    shown_path = os.path.relpath(args.exceptions, args.root)
    problems = check_tree(args.root, table, exceptions, shown_path, excused, call_exceptions)
    for e in excused:
        print(f"check_layers: allowed for now: {e}", file=sys.stderr)
    status = 1 if problems else 0
    if args.docs:
        try:
            docs_problems = check_docs(args.docs, args.table)
        except OSError as e:
            docs_problems = [f"check_layers: {e}"]
        if docs_problems:
            problems += docs_problems
            status = 2
    for p in problems:
        print(p)
    count = sum(1 for _ in source_files(args.root))
    print(f"check_layers: {count} files, {len(problems)} problem(s), {len(excused)} excused", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
