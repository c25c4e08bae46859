#!/usr/bin/env python3
"""Tests of check_layers.py on small temporary trees (the ctest layering_check_self_test)."""

import contextlib
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_layers  # noqa: E402

REPOSITORY_TABLE = os.path.join(HERE, "layers.txt")

TABLE = """\
# a comment
sdk        src/sdk include/aiprof ->
base       src/base               ->
model      src/model              -> base
importers  src/importers          -> model base
analysis   src/analysis           -> model base
session    src/session            -> analysis model base
report     src/report             -> session analysis model base
cli        src/cli                -> report session analysis importers model base sdk
test_util  test/util              -> importers model base
test       test                   -> *
"""

CLEAN = {
    "src/base/status.h": "#pragma once\n#include <string>\n",
    "src/model/trace.h": '#include "src/base/status.h"\n',
    "src/importers/json.cc": '#include "src/model/trace.h"\n#include <simdjson.h>\n',
    "src/analysis/gaps/gaps.cc": '#include "src/model/trace.h"\n#include "gaps.h"\n',
    "src/analysis/gaps/gaps.h": '#include "src/base/status.h"\nGapsResult ComputeGaps(const Trace& t);\n',
    "src/analysis/gaps/gaps_test.cc": '#include "src/analysis/gaps/gaps.h"\n#include "test/util/fixtures.h"\n',
    "src/analysis/testing/helper.h": '#include "src/model/trace.h"\n',
    "src/analysis/gaps/other_test.cc": '#include "src/analysis/testing/helper.h"\n',
    "src/report/report.cc": '#include "src/analysis/gaps/gaps.h"\n',
    "src/cli/main.cc": '#include "src/report/report.cc"\n#include "aiprof/aiprof.h"\n',
    "src/sdk/runtime.cc": '#include "aiprof/aiprof.h"\n#include "src/sdk/internal.h"\n',
    "src/sdk/internal.h": "",
    "include/aiprof/aiprof.h": "",
    "test/util/fixtures.h": '#include "src/importers/json.cc"\n',
    "test/e2e/program.cc": '#include "src/cli/main.cc"\n#include "src/sdk/internal.h"\n',
    "python/readme.txt": '#include "src/cli/main.cc"\n',  # not a source file: not read
    # Commented-out includes do not count.
    "src/base/commented.cc": '/* #include "src/cli/main.cc"\n#include "src/report/report.cc" */\n'
                             '// #include "src/cli/main.cc"\n',
}


class TreeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.table = self.write("layers.txt", TABLE)
        for path, text in CLEAN.items():
            self.write(path, text)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        return full

    def run_check(self, *extra):
        if "--exceptions" not in extra:  # not the repository's
            extra = ("--exceptions", os.path.join(self.root, "no_exceptions.txt")) + extra
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = check_layers.main(["--root", self.root, "--table", self.table, *extra])
        return rc, out.getvalue()

    def test_clean_tree_passes(self):
        rc, out = self.run_check()
        self.assertEqual((rc, out), (0, ""))

    def test_upward_include_fails_with_place_and_arrow(self):
        self.write("src/model/builder.cc", '#include <vector>\n\n#include "src/analysis/gaps/gaps.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn('src/model/builder.cc:3: model -> analysis (#include "src/analysis/gaps/gaps.h"); '
                      'model may include base', out)

    def test_header_only_include_fails_too(self):
        # Nothing is compiled: a header no source includes is read all the same.
        self.write("src/base/unused.h", '#include "src/model/trace.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/base/unused.h:1: base -> model", out)

    def test_not_transitive(self):
        # report -> analysis -> model is allowed, report -> importers is not.
        self.write("src/report/import.cc", '#include "src/importers/json.cc"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/report/import.cc:1: report -> importers", out)

    def test_sideways_include_fails(self):
        self.write("src/analysis/x.cc", '#include "src/importers/json.cc"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("analysis -> importers", out)

    def test_relative_and_angle_includes_are_resolved(self):
        self.write("src/base/rel.cc", '#include "../model/trace.h"\n')
        self.write("src/base/angle.cc", "#include <src/model/trace.h>\n")
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/base/rel.cc:1: base -> model", out)
        self.assertIn("src/base/angle.cc:1: base -> model", out)

    def test_sdk_includes_nothing_of_ours(self):
        self.write("src/sdk/bench.cc", '#include "aiprof/aiprof.h"\n#include "src/base/status.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/sdk/bench.cc:2: sdk -> base", out)
        self.assertIn("sdk may include nothing of ours", out)

    def test_public_headers_are_checked_as_the_sdk(self):
        self.write("include/aiprof/aiprof.hpp", '#include "aiprof/aiprof.h"\n#include "src/base/status.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("include/aiprof/aiprof.hpp:2: sdk -> base", out)

    def test_public_header_belongs_to_the_sdk(self):
        self.write("src/model/uses_sdk.cc", '#include "aiprof/aiprof.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn('src/model/uses_sdk.cc:1: model -> sdk (#include "aiprof/aiprof.h")', out)

    def test_unit_test_may_not_reach_above_its_library(self):
        self.write("src/analysis/gaps/up_test.cc", '#include "src/report/report.cc"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/analysis/gaps/up_test.cc:1: analysis -> report", out)

    def test_unit_test_gets_the_helpers_not_what_they_include(self):
        # test_util may include importers; a test using it may not include importers itself.
        self.write("src/analysis/gaps/import_test.cc", '#include "src/importers/json.cc"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/analysis/gaps/import_test.cc:1: analysis -> importers", out)

    def test_production_code_may_not_include_test_helpers(self):
        self.write("src/analysis/gaps/uses_helper.cc", '#include "src/analysis/testing/helper.h"\n')
        self.write("src/analysis/gaps/uses_util.cc", '#include "test/util/fixtures.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn('src/analysis/gaps/uses_helper.cc:1: analysis -> test helper', out)
        self.assertIn("src/analysis/gaps/uses_util.cc:1: analysis -> test_util", out)

    def test_file_of_no_layer_fails(self):
        self.write("src/newlib/thing.cc", '#include "src/base/status.h"\n')
        self.write("src/base/newer.cc", '#include "src/serve/server.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/newlib/thing.cc:1: no layer owns this file", out)
        self.assertIn('src/base/newer.cc:1: #include "src/serve/server.h": no layer owns src/serve/server.h', out)

    def test_star_is_every_library_but_other_stars(self):
        self.write("test/e2e/reaches_test.cc", '#include "src/report/report.cc"\n')
        rc, _ = self.run_check()
        self.assertEqual(rc, 0)

    def test_exception_excuses_an_arrow_until_it_goes(self):
        self.write("src/report/import.cc", '#include "src/importers/json.cc"\n')
        exceptions = self.write("exceptions.txt", "# why\nreport -> src/importers/json.cc  # moving\n")
        rc, out = self.run_check("--exceptions", exceptions)
        self.assertEqual((rc, out), (0, ""))
        os.remove(os.path.join(self.root, "src/report/import.cc"))
        rc, out = self.run_check("--exceptions", exceptions)
        self.assertEqual(rc, 1)
        self.assertIn("exceptions.txt:2: report -> src/importers/json.cc no longer happens", out)

    def test_exception_names_one_library_and_one_file(self):
        self.write("src/report/import.cc", '#include "src/importers/json.cc"\n')
        self.write("src/analysis/import.cc", '#include "src/importers/json.cc"\n')
        exceptions = self.write("exceptions.txt", "report -> src/importers/json.cc\n")
        rc, out = self.run_check("--exceptions", exceptions)
        self.assertEqual(rc, 1)
        self.assertIn("src/analysis/import.cc:1: analysis -> importers", out)
        self.assertNotIn("src/report/import.cc", out)
        bad = self.write("bad.txt", "report -> \n")
        rc, _ = self.run_check("--exceptions", bad)
        self.assertEqual(rc, 2)

    # The call rule: the analyses' entry points are called where results are
    # computed once (the analysis libraries, the session) and in tests.
    def test_front_end_call_of_an_analysis_fails(self):
        self.write("src/report/gaps_section.cc", '#include "src/analysis/gaps/gaps.h"\n'
                   'void Section(const Trace& t) {\n  const GapsResult g = ComputeGaps(t);\n}\n')
        self.write("src/cli/steps.cc", "void F(const Trace& t) { auto w = aiprof::ComputeGaps (t); }\n")
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/report/gaps_section.cc:3: report calls ComputeGaps", out)
        self.assertIn("src/cli/steps.cc:1: cli calls ComputeGaps", out)

    def test_entry_points_are_read_from_the_analysis_headers(self):
        # A new analysis is covered as soon as its header declares it.
        self.write("src/analysis/newthing/new_thing.h", "NewResult ComputeNewThing(const Trace& t);\n"
                   "StepList FindRankSteps(const Trace& t);\n")
        self.write("src/report/new_section.cc", "auto r = ComputeNewThing(t);\nauto s = FindRankSteps(t);\n")
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("src/report/new_section.cc:1: report calls ComputeNewThing", out)
        self.assertIn("src/report/new_section.cc:2: report calls FindRankSteps", out)

    def test_calls_where_results_are_computed_and_lookalikes_pass(self):
        call = "auto g = ComputeGaps(t);\n"
        self.write("src/session/session.cc", call)  # the session computes each result
        self.write("src/analysis/diagnosis/diagnose.cc", call)  # an analysis over another's result
        self.write("src/report/gaps_report_test.cc", call)  # a unit test builds its input
        self.write("test/e2e/gaps_e2e.cc", call)
        self.write("src/report/lookalikes.cc",
                   "// ComputeGaps(t) is the session's\n"
                   "/* ComputeGaps(t) */ const char* s = \"ComputeGaps(\"; char q = '(';\n"
                   "auto a = results.ComputeGaps(t);\nauto b = p->ComputeGaps(t);\n"
                   "auto c = MyComputeGaps(t);\nauto d = ComputeTile(t);\n"  # not declared by an analysis
                   'auto e = R"js(ComputeGaps(x))js";\n')
        rc, out = self.run_check()
        self.assertEqual((rc, out), (0, ""))

    def test_call_exception_excuses_a_call_until_it_goes(self):
        self.write("src/report/gaps_section.cc", "auto g = ComputeGaps(t);\n")
        exceptions = self.write("exceptions.txt", "src/report/gaps_section.cc calls ComputeGaps  # moving\n")
        rc, out = self.run_check("--exceptions", exceptions)
        self.assertEqual((rc, out), (0, ""))
        # It names one file: the same call elsewhere fails.
        self.write("src/report/other.cc", "auto g = ComputeGaps(t);\n")
        rc, out = self.run_check("--exceptions", exceptions)
        self.assertEqual(rc, 1)
        self.assertIn("src/report/other.cc:1: report calls ComputeGaps", out)
        os.remove(os.path.join(self.root, "src/report/other.cc"))
        os.remove(os.path.join(self.root, "src/report/gaps_section.cc"))
        rc, out = self.run_check("--exceptions", exceptions)
        self.assertEqual(rc, 1)
        self.assertIn("exceptions.txt:1: src/report/gaps_section.cc calls ComputeGaps no longer happens", out)
        for bad in ("src/report/x.cc calls\n", "src/report/x.cc calls Render\n",
                    "src/nowhere/x.cc calls ComputeGaps\n"):
            rc, _ = self.run_check("--exceptions", self.write("bad.txt", bad))
            self.assertEqual(rc, 2, bad)

    # The analysis library's own layers, with the repository's table.
    def test_plain_analysis_may_not_include_the_layers_above_it(self):
        self.table = REPOSITORY_TABLE
        rc, out = self.run_check()
        self.assertEqual((rc, out), (0, ""))
        self.write("src/analysis/gaps/uses_diagnosis.cc", '#include "src/analysis/diagnosis/diagnose.h"\n')
        self.write("src/analysis/window/uses_whatif.cc", '#include "src/analysis/whatif/whatif.h"\n')
        self.write("src/analysis/steps/uses_validation.h", '#include "src/analysis/validation/compare.h"\n')
        self.write("src/analysis/metrics/uses_rules.cc", '#include "src/analysis/rules/rule.h"\n')
        self.write("src/analysis/analyze.cc", '#include "src/analysis/diff/attribution_diff.h"\n')
        self.write("src/analysis/diagnosis/uses_whatif.cc", '#include "src/analysis/whatif/simulate.h"\n')
        self.write("src/view/uses_whatif.cc", '#include "src/analysis/whatif/whatif.h"\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 1)
        for line in ("src/analysis/gaps/uses_diagnosis.cc:1: analysis -> diagnosis",
                     "src/analysis/window/uses_whatif.cc:1: analysis -> whatif",
                     "src/analysis/steps/uses_validation.h:1: analysis -> validation",
                     "src/analysis/metrics/uses_rules.cc:1: analysis -> rules",
                     "src/analysis/analyze.cc:1: analysis -> diff",
                     "src/analysis/diagnosis/uses_whatif.cc:1: diagnosis -> whatif",
                     "src/view/uses_whatif.cc:1: view -> whatif"):
            self.assertIn(line, out)

    def test_upper_analysis_layers_include_downward(self):
        self.table = REPOSITORY_TABLE
        self.write("src/analysis/whatif/simulate.cc", '#include "src/analysis/diagnosis/suggest.h"\n'
                   '#include "src/analysis/validation/statistics.h"\n#include "src/analysis/gaps/gaps.h"\n')
        self.write("src/analysis/diagnosis/diagnose.cc", '#include "src/analysis/rules/rule.h"\n')
        self.write("src/analysis/diff/diff.cc", '#include "src/analysis/validation/compare.h"\n')
        self.write("src/session/session.cc", '#include "src/analysis/whatif/whatif.h"\n')
        rc, out = self.run_check()
        self.assertEqual((rc, out), (0, ""))

    def test_cycle_in_table_is_an_error(self):
        self.table = self.write("layers.txt", TABLE.replace("base       src/base               ->",
                                                            "base       src/base               -> analysis"))
        rc, out = self.run_check()
        self.assertEqual(rc, 2)

    def test_unknown_library_in_table_is_an_error(self):
        self.table = self.write("layers.txt", TABLE + "view src/view -> render\n")
        rc, _ = self.run_check()
        self.assertEqual(rc, 2)

    def test_docs_must_show_the_table(self):
        rows = "".join(l + "\n" for l in TABLE.splitlines() if not l.startswith("#"))
        docs = self.write("ARCH.md", "# Layers\n\n<!-- layers.txt begin -->\n```\n" + rows
                          + "```\n<!-- layers.txt end -->\n")
        rc, out = self.run_check("--docs", docs)
        self.assertEqual((rc, out), (0, ""))
        self.write("ARCH.md", "# Layers\n\n<!-- layers.txt begin -->\n```\n"
                   + rows.replace("-> analysis model base", "-> analysis importers model base")
                   + "```\n<!-- layers.txt end -->\n")
        rc, out = self.run_check("--docs", docs)
        self.assertEqual(rc, 2)
        self.assertIn("ARCH.md:3: the layers table shown here differs", out)
        self.write("ARCH.md", "# Layers\n")
        rc, out = self.run_check("--docs", docs)
        self.assertEqual(rc, 2)
        self.assertIn("no '<!-- layers.txt begin -->'", out)


class RepositoryTableTest(unittest.TestCase):
    def test_repository_table_loads_and_owns_every_library_folder(self):
        table = check_layers.load_table(os.path.join(HERE, "layers.txt"))
        src = os.path.normpath(os.path.join(HERE, "..", "..", "src"))
        for name in sorted(os.listdir(src)):
            if os.path.isdir(os.path.join(src, name)):
                self.assertIsNotNone(table.library_of(f"src/{name}/x.cc"), name)
        # The SDK includes nothing of ours but base's libc-only folder (no libstdc++).
        self.assertEqual(table.allowed["sdk"], {"sdk", "libc"})
        self.assertEqual(table.allowed["libc"], {"libc"})
        self.assertEqual(table.library_of("src/base/libc/writer_temp.cc"), "libc")
        self.assertEqual(table.library_of("src/base/atomic_file.cc"), "base")
        # The analysis library's layers: a plain analysis includes none above it.
        self.assertEqual(table.library_of("src/analysis/gaps/idle_gaps.cc"), "analysis")
        self.assertEqual(table.library_of("src/analysis/analyze.h"), "analysis")
        self.assertEqual(table.library_of("src/analysis/diagnosis/diagnose.h"), "diagnosis")
        self.assertEqual(table.allowed["analysis"], {"analysis", "model", "base"})
        self.assertEqual(check_layers.analysis_libraries(table),
                         {"analysis", "rules", "diagnosis", "validation", "whatif", "diff"})

    def test_repository_entry_points_include_the_steps_and_the_window(self):
        table = check_layers.load_table(REPOSITORY_TABLE)
        names = check_layers.entry_points(os.path.normpath(os.path.join(HERE, "..", "..")), table)
        for name in ("ComputeGaps", "FindSteps", "ComputeStepPeriods", "ComputeAnalysisWindow", "ComputeSummary"):
            self.assertIn(name, names)
        self.assertNotIn("ComputeOpStats", names)  # the model's, not an analysis


if __name__ == "__main__":
    unittest.main()
