#!/usr/bin/python3
"""Writes scipy_pvalues.json: reference p-values for src/analysis/validation.

Run with Debian's SciPy (apt-get install -y python3-scipy):
    /usr/bin/python3 test/data/validation/gen_scipy_pvalues.py > test/data/validation/scipy_pvalues.json
The unit test (statistics_test.cc) reads the JSON, so CI needs no SciPy.
Inputs are drawn with a fixed seed and rounded to 6 decimals so that they
print exactly; every case records the inputs it was computed from.
"""
import json
import sys

import numpy as np
import scipy
from scipy import stats


def rounded(x):
    return [round(float(v), 6) for v in x]


def case(name, a, b):
    a, b = rounded(a), rounded(b)
    w = stats.ttest_ind(a, b, equal_var=False)
    # Welch-Satterthwaite df, as scipy computes it internally.
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    m = stats.mannwhitneyu(a, b, alternative="two-sided")
    return {
        "name": name,
        "a": a,
        "b": b,
        "welch_t": float(w.statistic),
        "welch_df": float(df),
        "welch_p": float(w.pvalue),
        "mwu_u": float(m.statistic),
        "mwu_p": float(m.pvalue),
        "skew_a": float(stats.skew(a, bias=False)),
        "p50_a": float(np.percentile(a, 50)),
        "p99_a": float(np.percentile(a, 99)),
    }


def main():
    rng = np.random.default_rng(20240601)
    cases = [
        case("normal_30_30_shift5pct", rng.normal(100, 5, 30), rng.normal(105, 5, 30)),
        case("normal_30_30_same", rng.normal(100, 5, 30), rng.normal(100, 5, 30)),
        case("unequal_var_12_40", rng.normal(10, 0.2, 12), rng.normal(10.3, 2.0, 40)),
        case("lognormal_skewed_50_60", rng.lognormal(2.0, 0.6, 50), rng.lognormal(2.1, 0.6, 60)),
        case("small_exact_5_6", rng.normal(1, 1, 5), rng.normal(2, 1, 6)),
        case("small_exact_8_8", rng.normal(0, 1, 8), rng.normal(0.5, 1, 8)),
        case("small_exact_3_20", rng.normal(0, 1, 3), rng.normal(1.0, 1, 20)),
        case("ties_integers_15_18", rng.integers(0, 6, 15).astype(float), rng.integers(1, 7, 18).astype(float)),
        case("ties_small_6_7", [1, 2, 2, 3, 3, 3], [2, 3, 4, 4, 5, 5, 6]),
        case("tiny_p_200_200", rng.normal(0, 1, 200), rng.normal(1.2, 1, 200)),
        case("step_times_like_12_12", [11.3, 11.0, 10.9, 44.8, 11.4, 11.2, 11.6, 11.1, 11.3, 11.5, 11.2, 11.9],
             [10.2, 10.1, 9.8, 10.3, 10.6, 10.2, 10.0, 10.4, 10.2, 10.3, 10.1, 10.5]),
    ]
    json.dump({"generator": "gen_scipy_pvalues.py", "scipy": scipy.__version__, "numpy": np.__version__,
               "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
