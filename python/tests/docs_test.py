"""docs/python.md's analysis walk-through runs as written and shows what it computes.

Each ```python block of the page that is followed by an output block is run
in one namespace (as cells of one notebook, from the repository root, where
the page's paths point). A top-level expression's value is what a notebook
would show: a DataFrame's column names (and index names) must be those of a
header line of the page's output block (a header that pandas cut with "..."
may show fewer), and a dict's keys must all be in it. A code change that
renames a column, or a page edit that shows a column the code does not
make, fails here.
"""

import ast
import os
import re
import unittest

import pandas as pd

SOURCE = os.environ["AIPROF_SOURCE_DIR"]
PAGE = os.path.join(SOURCE, "docs", "python.md")


def cells_with_output(text):
    """(code, output) for each ```python block directly followed by a ``` block."""
    pattern = re.compile(r"```python\n((?:(?!```).)*)```\n```\n((?:(?!```).)*)```", re.S)
    return [(m.group(1), m.group(2)) for m in pattern.finditer(text)]


def shown_values(code, namespace):
    """Runs `code`; returns the values of its top-level expression statements."""
    values = []
    for node in ast.parse(code).body:
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), "<docs/python.md>", "eval"), namespace)
            if value is not None:
                values.append(value)
        else:
            exec(compile(ast.Module([node], []), "<docs/python.md>", "exec"), namespace)
    return values


def header_matches(frame, output):
    names = {str(c) for c in frame.columns} | {str(n) for n in frame.index.names if n is not None}
    columns = {str(c) for c in frame.columns}
    for line in output.splitlines():
        tokens = set(line.split()) - {"..."}
        if tokens and tokens <= names and tokens & columns and ("..." in line or columns <= tokens):
            return True
    return False


class WalkThrough(unittest.TestCase):
    def test_every_cell_runs_and_shows_its_columns(self):
        with open(PAGE, encoding="utf-8") as f:
            cells = cells_with_output(f.read())
        self.assertGreaterEqual(len(cells), 4)
        namespace = {}
        cwd = os.getcwd()
        os.chdir(SOURCE)
        try:
            for k, (code, output) in enumerate(cells):
                with self.subTest(cell=k, first_line=code.splitlines()[0]):
                    for value in shown_values(code, namespace):
                        if isinstance(value, pd.DataFrame):
                            self.assertTrue(header_matches(value, output),
                                            "columns %s (index %s) are not a header of the page's output:\n%s"
                                            % (list(value.columns), list(value.index.names), output))
                        elif isinstance(value, dict):
                            for key in value:
                                self.assertIn(str(key), output)
        finally:
            os.chdir(cwd)


if __name__ == "__main__":
    unittest.main()
