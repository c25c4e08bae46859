"""Runs one unittest module; fails when it ran no test or skipped every one."""

import os
import sys
import unittest


def main():
    path = sys.argv[1]
    sys.path.insert(0, os.path.dirname(path))
    name = os.path.splitext(os.path.basename(path))[0]
    suite = unittest.defaultTestLoader.loadTestsFromName(name)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    ran = result.testsRun - len(result.skipped)
    if ran == 0:
        print("no test ran in %s" % path, file=sys.stderr)
        return 1
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
