"""Test configuration: real TensorFlow is the oracle and must be importable."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# TF 2.21's oneDNN kernels (on by default on AVX-512 CPUs) abort the process on some bad inputs
# (a rank-3 conv2d fails a CHECK instead of raising InvalidArgumentError); the oracle uses TF's
# portable kernels, which raise the errors TF documents.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
# `import tensorflow` imports Keras, and Keras picks its backend once per process. The test process
# runs tapeshim.keras (JAX backend) beside real TensorFlow's ops; TF's own Keras runs in a child
# process with KERAS_BACKEND=tensorflow (see keras_oracle.py).
os.environ["KERAS_BACKEND"] = "jax"
