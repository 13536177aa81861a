"""``python -m benchmarks.worker <module> <json kwargs>``: the body of a measurement subprocess.

Runs ``benchmarks.<module>.worker(**kwargs)`` and prints its JSON result on a marked line that
:func:`benchmarks.harness.run_worker` reads back.
"""

from __future__ import annotations

import sys

from .harness import worker_main

if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
