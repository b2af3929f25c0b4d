"""Test configuration: real TensorFlow is the oracle and must be importable."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
