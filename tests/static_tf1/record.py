"""Record what TensorFlow 1 prints for each program of ``programs.py`` into
``recorded.json`` (run by hand, with TensorFlow installed; the tests read the file).

    pip install tensorflow-cpu
    python tests/static_tf1/record.py

TensorFlow 2's ``tf.compat.v1`` with ``disable_v2_behavior()`` is TensorFlow 1's behaviour
(graph mode, reference variables). Each program runs on a fresh default graph.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from programs import PRELUDE, PROGRAMS  # noqa: E402


def main() -> None:
    import tensorflow as tensorflow_package
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    recorded = {"tensorflow": tensorflow_package.__version__, "outputs": {}}
    for name, source in PROGRAMS.items():
        tf.reset_default_graph()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(PRELUDE + source, {"tf": tf, "__name__": "__program__"})
        recorded["outputs"][name] = out.getvalue()
    path = Path(__file__).with_name("recorded.json")
    path.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
