#!/usr/bin/env python3
"""Issue 21: commands declared once. A flag that two commands take is
declared once, in a shared flag group (src/cli/flags.{h,cc}); a command file
declares only the flags no other command has. Reads the sources: no build
needed. Exits 1 naming each flag declared in more than one place.

  flags_declared_once.py SOURCE_DIR            check the tree
  flags_declared_once.py --self-test           a tree with a duplicate must fail
"""
import os
import re
import sys
import tempfile

DECL = re.compile(r'add_(?:option|flag)\(\s*(?:std::string\()?"([^"]+)"')


def declarations(cli_dir):
    """{flag: [file:line, ...]} over the command files (flags.cc excluded)."""
    found = {}
    for name in sorted(os.listdir(cli_dir)):
        if not (name.endswith("_command.cc") or name.endswith("_commands.cc")):
            continue
        path = os.path.join(cli_dir, name)
        for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
            for m in DECL.finditer(line):
                for flag in m.group(1).split(","):
                    if flag.startswith("-"):
                        found.setdefault(flag.lstrip("-"), []).append(f"{name}:{lineno}")
    return found


def check(source_dir):
    dups = {f: where for f, where in declarations(os.path.join(source_dir, "src", "cli")).items() if len(where) > 1}
    for flag, where in sorted(dups.items()):
        print(f"FAIL: --{flag} is declared {len(where)} times ({', '.join(where)}); "
              f"declare it once in a flag group (src/cli/flags.h)")
    return 1 if dups else 0


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        cli = os.path.join(tmp, "src", "cli")
        os.makedirs(cli)
        open(os.path.join(cli, "a_command.cc"), "w").write('sub->add_option("-o,--output", o_, "x");\n')
        open(os.path.join(cli, "b_command.cc"), "w").write('sub->add_option("-o,--output", o_, "y");\n')
        if check(tmp) != 1:
            print("FAIL: self-test: a flag declared in two commands was not found")
            return 1
        os.remove(os.path.join(cli, "b_command.cc"))
        if check(tmp) != 0:
            print("FAIL: self-test: one declaration was reported")
            return 1
    print("self-test passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(check(sys.argv[1]))
