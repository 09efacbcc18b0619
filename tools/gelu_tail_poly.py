#!/usr/bin/env python3
"""Prints the coefficient table of libparakeet/src/kernels/gelu_tail_poly.h: the Gaussian tail
Φ(-a) = erfc(a/√2)/2 on [0, 6) cut into 16 intervals of 0.375, each a degree-5 polynomial in
u = a - (interval's centre), fitted by least squares on 64 Chebyshev nodes of the interval (close
to the minimax fit) and rounded to float32. Worst absolute error of the float32 evaluation:
3.1e-8 (printed to stderr). Needs numpy.

    python3 tools/gelu_tail_poly.py
"""
import math
import sys

import numpy as np

LIMIT, INTERVALS, DEGREE, NODES = 6.0, 16, 5, 64


def tail(a):
    return 0.5 * np.vectorize(math.erfc)(np.asarray(a, dtype=np.float64) / math.sqrt(2.0))


def fit():
    """[DEGREE + 1][INTERVALS] float32 coefficients (row k: the u^k terms) and the worst error."""
    width = LIMIT / INTERVALS
    table, worst = np.zeros((DEGREE + 1, INTERVALS), np.float32), 0.0
    for i in range(INTERVALS):
        centre = (i + 0.5) * width
        u = np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES) * width / 2
        table[:, i] = np.polynomial.polynomial.polyfit(u, tail(centre + u), DEGREE)
        check = np.linspace(-width / 2, width / 2, 2001).astype(np.float32)
        value = np.full_like(check, table[DEGREE, i])
        for k in range(DEGREE - 1, -1, -1):
            value = (value * check + table[k, i]).astype(np.float32)
        worst = max(worst, float(np.abs(value - tail(centre + check.astype(np.float64))).max()))
    return table, worst


def main() -> None:
    table, worst = fit()
    for row in table:
        values = ["%.9ef" % v for v in row]
        lines = (", ".join(values[i:i + 4]) for i in range(0, len(values), 4))
        print("    {" + ",\n     ".join(lines) + "},")
    print(f"worst absolute error {worst:.2e}", file=sys.stderr)


if __name__ == "__main__":
    main()
