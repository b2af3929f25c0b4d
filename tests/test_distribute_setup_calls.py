"""The cluster set-up calls distribution programs make (tf.train.ClusterSpec, connect_to_cluster), against TF."""

import pytest

import tapeshim
from oracle import check, check_raises


def test_cluster_spec_reads_as_tf():
    def body(tf):
        spec = tf.train.ClusterSpec({"worker": ["localhost:1", "localhost:2"], "chief": ["localhost:3"]})
        again = tf.train.ClusterSpec(spec)
        return (
            spec.as_dict(),
            spec.jobs,
            spec.num_tasks("worker"),
            spec.task_address("worker", 1),
            spec.task_indices("worker"),
            bool(spec),
            bool(tf.train.ClusterSpec({})),
            again.as_dict(),
        )

    check(body)


def test_cluster_spec_refuses_a_list():
    check_raises(lambda tf: tf.train.ClusterSpec(["localhost:1"]))


def test_connect_to_cluster_refuses_other_values():
    check_raises(lambda tf: tf.config.experimental_connect_to_cluster(3))


def test_connect_to_cluster_accepts_a_spec_or_resolver():
    spec = tapeshim.train.ClusterSpec({"worker": ["localhost:1"]})
    assert tapeshim.config.experimental_connect_to_cluster(spec) is None
    resolver = tapeshim.distribute.cluster_resolver.TPUClusterResolver(tpu="")
    assert tapeshim.config.experimental_connect_to_cluster(resolver) is None


def test_initialize_tpu_system_without_a_tpu_says_what_to_use():
    with pytest.raises(ValueError, match="MirroredStrategy"):
        tapeshim.tpu.experimental.initialize_tpu_system()
