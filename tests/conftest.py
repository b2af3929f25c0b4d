"""Test configuration: real TensorFlow is the oracle and must be importable."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# `import tensorflow` imports Keras, and Keras picks its backend once per process. The test process
# runs tapeshim.keras (JAX backend) beside real TensorFlow's ops; TF's own Keras runs in a child
# process with KERAS_BACKEND=tensorflow (see keras_oracle.py).
os.environ["KERAS_BACKEND"] = "jax"
