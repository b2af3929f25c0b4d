"""The values of `tf.version`.

tapeshim is not TensorFlow, but programs read `tf.version.VERSION` to decide which TF API they may use
(`if version.parse(tf.version.VERSION) >= version.parse("2.13")`). `VERSION` is therefore the TF release
whose API and behaviour tapeshim follows and is tested against (its oracle); tapeshim's own version stays
`tf.__version__`. `GIT_VERSION` names tapeshim's release, `COMPILER_VERSION` the JAX (XLA) that compiles its
programs, and the GraphDef versions are those of that TF release (tapeshim writes no GraphDefs of its own).
"""

from __future__ import annotations

import jax

VERSION = "2.21.0"
"""The TF release whose API tapeshim follows (not tapeshim's own version, which is `tapeshim.__version__`)."""
GIT_VERSION = "tapeshim-v0.1.0"
"""tapeshim's release, in the place of TF's `git describe` of its build."""
COMPILER_VERSION = f"JAX {jax.__version__} (XLA)"
"""The compiler of tapeshim's programs: JAX and its XLA, at run time."""
GRAPH_DEF_VERSION = 2474
"""TF 2.21's GraphDef version."""
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
"""TF 2.21's oldest GraphDef consumer version."""
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
"""TF 2.21's oldest GraphDef producer version."""
