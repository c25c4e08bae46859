#!/usr/bin/env python3
"""A Python "service" for aiprof monitor's tests: requests through the aiprof
package's SDK, every 10th raising (an error in the monitor's window).

  python_service.py PYTHON_PACKAGE_DIR SECONDS
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import aiprof  # noqa: E402

end = time.monotonic() + float(sys.argv[2])
n = 0
while time.monotonic() < end:
    try:
        with aiprof.request("infer"):
            time.sleep(0.002)
            if n % 10 == 0:
                raise ValueError("bad input")
    except ValueError:
        pass
    n += 1
