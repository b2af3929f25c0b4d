"""tf.config and tf.device against real TensorFlow (whose runtime is initialized in the test process)."""

import jax
import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf


def _init(tf):
    tf.config.list_logical_devices()  # both runtimes count as initialized from here on
    return tf.config.list_physical_devices("CPU")[0]


@pytest.mark.parametrize("kind", [None, "CPU", "GPU", "TPU", "cpu", "XYZ"])
def test_physical_and_visible_devices(kind):
    check(lambda tf: tf.config.list_physical_devices(kind))
    check(lambda tf: tf.config.get_visible_devices(kind))


def test_one_physical_cpu_whatever_xla_simulates():
    assert tapeshim.config.list_physical_devices("CPU") == [
        tapeshim.config.PhysicalDevice("/physical_device:CPU:0", "CPU")
    ]
    assert len(jax.devices("cpu")) >= 1


def test_logical_devices():
    check(lambda tf: tf.config.list_logical_devices())
    check(lambda tf: tf.config.list_logical_devices("CPU"))
    check(lambda tf: tf.config.list_logical_devices("GPU"))
    check(lambda tf: type(tf.config.list_logical_devices()[0]).__name__)


CHANGES = {
    "visible_same": lambda tf, cpu: tf.config.set_visible_devices(cpu, "CPU"),
    "visible_same_list": lambda tf, cpu: tf.config.set_visible_devices([cpu]),
    "visible_no_gpu": lambda tf, cpu: tf.config.set_visible_devices([], "GPU"),
    "visible_no_cpu": lambda tf, cpu: tf.config.set_visible_devices([], "CPU"),
    "visible_none": lambda tf, cpu: tf.config.set_visible_devices([]),
    "visible_bad": lambda tf, cpu: tf.config.set_visible_devices(["x"], "CPU"),
    "visible_bad_str": lambda tf, cpu: tf.config.set_visible_devices("x"),
    "logical_split": lambda tf, cpu: tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    ),
    "logical_none": lambda tf, cpu: tf.config.set_logical_device_configuration(cpu, None),
    "logical_get": lambda tf, cpu: tf.config.get_logical_device_configuration(cpu),
    "virtual_alias": lambda tf, cpu: tf.config.experimental.get_virtual_device_configuration(cpu),
    "threads_inter": lambda tf, cpu: tf.config.threading.set_inter_op_parallelism_threads(2),
    "threads_inter_zero": lambda tf, cpu: tf.config.threading.set_inter_op_parallelism_threads(0),
    "threads_intra": lambda tf, cpu: tf.config.threading.set_intra_op_parallelism_threads(2),
    "threads_get": lambda tf, cpu: (
        tf.config.threading.get_inter_op_parallelism_threads(),
        tf.config.threading.get_intra_op_parallelism_threads(),
    ),
    "growth_cpu": lambda tf, cpu: tf.config.experimental.set_memory_growth(cpu, True),
    "growth_get_cpu": lambda tf, cpu: tf.config.experimental.get_memory_growth(cpu),
    "growth_bad": lambda tf, cpu: tf.config.experimental.set_memory_growth("x", True),
    "details": lambda tf, cpu: tf.config.experimental.get_device_details(cpu),
    "memory_info": lambda tf, cpu: tf.config.experimental.get_memory_info("CPU:0"),
    "memory_info_gpu": lambda tf, cpu: tf.config.experimental.get_memory_info("GPU:0"),
    "tf32": lambda tf, cpu: tf.config.experimental.tensor_float_32_execution_enabled(),
    "soft": lambda tf, cpu: tf.config.get_soft_device_placement(),
    "jit": lambda tf, cpu: tf.config.optimizer.get_jit(),
    "eager_flag": lambda tf, cpu: (tf.config.functions_run_eagerly(), tf.config.experimental_functions_run_eagerly()),
    "config_repr": lambda tf, cpu: repr(tf.config.LogicalDeviceConfiguration(memory_limit=10)),
    "virtual_is_logical": lambda tf, cpu: (
        tf.config.experimental.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration
    ),
}
# the changes TF refuses once its runtime is initialized, and bad arguments: TF's error is the point
REFUSED = {
    "visible_no_cpu",
    "visible_none",
    "visible_bad",
    "visible_bad_str",
    "logical_split",
    "logical_none",
    "threads_inter",
    "threads_inter_zero",
    "threads_intra",
    "growth_cpu",
    "growth_get_cpu",
    "growth_bad",
    "memory_info",
    "memory_info_gpu",
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_settings_after_initialization(name):
    check(lambda tf: CHANGES[name](tf, _init(tf)), raises=name in REFUSED)


def test_physical_device_fields():
    check(lambda tf: [(d.name, d.device_type, type(d).__name__) for d in tf.config.list_physical_devices()])


def _placed(tf, name):
    with tf.device(name):
        x = tf.constant([1.0, 2.0]) + 1
    return x, x.device


@pytest.mark.parametrize(
    "name",
    [
        "/GPU:0",
        "/CPU:0",
        "/cpu:1",
        "GPU:3",
        "gpu",
        "/device:CPU:0",
        "/device:GPU:0",
        "/job:localhost/replica:0/task:0/device:CPU:0",
        "",
        None,
        "/TPU:0",
        "/CPU:5",
        "bogus",
        "/job:localhost/bogus:1",
        "/device:CPU",
    ],
)
def test_device_scopes(name):
    check(lambda tf: _placed(tf, name), raises=name in ("bogus", "/job:localhost/bogus:1", "/device:CPU"))


def test_device_scope_errors():
    check_raises(lambda tf: tf.device(lambda op: "/CPU:0").__enter__())
    check_raises(lambda tf: tf.device(3).__enter__())


def test_hard_placement_of_a_missing_gpu():
    def body(tf):
        tf.config.set_soft_device_placement(False)
        try:
            return tf.config.get_soft_device_placement(), _placed(tf, "/GPU:0")
        finally:
            tf.config.set_soft_device_placement(True)

    check_raises(body)
    check(lambda tf: tf.config.get_soft_device_placement())


def test_device_scope_inside_function_and_tape():
    def body(tf):
        x = tf.constant([1.0, 2.0])

        @tf.function
        def f(x):
            with tf.device("/CPU:0"):
                return x * 2

        with tf.GradientTape() as tape:
            tape.watch(x)
            with tf.device("/GPU:0"):
                y = tf.reduce_sum(f(x) * x)
        return y, tape.gradient(y, x)

    check(body)


def test_device_places_on_the_mapped_jax_device():
    cpus = jax.devices("cpu")
    index = len(cpus) - 1
    with tapeshim.device(f"/CPU:{index}"):
        x = tapeshim.constant([1.0, 2.0]) * 2
    assert x.value.devices() == {cpus[index]}
    np.testing.assert_array_equal(x.numpy(), [2.0, 4.0])


def test_run_functions_eagerly():
    def body(tf):
        calls = []

        @tf.function
        def f(x):
            calls.append(tf.executing_eagerly())
            return x * 2 + tf.vectorized_map(lambda v: v + 1, x)

        tf.config.run_functions_eagerly(True)
        try:
            flags = [tf.config.functions_run_eagerly()]
            out = [f(tf.constant([1.0, 2.0])), f(tf.constant([1.0, 2.0]))]
        finally:
            tf.config.run_functions_eagerly(False)
        flags.append(tf.config.functions_run_eagerly())
        out.append(f(tf.constant([1.0, 2.0])))
        out.append(f(tf.constant([1.0, 2.0])))
        return flags, out, calls

    check(body)


def test_optimizer_options_are_recorded():
    def body(tf):
        before = (tf.config.optimizer.get_jit(), tf.config.optimizer.get_experimental_options())
        tf.config.optimizer.set_jit(True)
        tf.config.optimizer.set_experimental_options({"layout_optimizer": False})
        after = (tf.config.optimizer.get_jit(), tf.config.optimizer.get_experimental_options())
        tf.config.optimizer.set_jit(False)
        return before, after, tf.config.optimizer.get_jit()

    check(body)


def test_enable_op_determinism_exists_in_both():
    # Not called on real TF here: it would make every later test of the process deterministic.
    assert callable(real_tf.config.experimental.enable_op_determinism)
    from tapeshim._src import config

    before = config.STATE.op_determinism
    try:
        tapeshim.config.experimental.enable_op_determinism()
        assert config.op_determinism_enabled()
    finally:  # (nor on tapeshim for later tests: fractional pools refuse seed 0 under determinism, as TF's)
        config.STATE.op_determinism = before


def test_namespaces_match_tf():
    for space in ("", "experimental", "threading", "optimizer"):
        ours = tapeshim.config if not space else getattr(tapeshim.config, space)
        theirs = real_tf.config if not space else getattr(real_tf.config, space)
        for name in ours.__all__:
            assert hasattr(theirs, name), f"tf.config.{space}.{name} is not TF's"


@pytest.mark.parametrize(
    "spec",
    [
        "/GPU:0",
        "/job:worker/replica:1/task:2/device:CPU:3",
        "cpu:1",
        "",
        "/device:GPU:*",
        "/job:ps",
        "/device:CPU:0/device:GPU:1",
        "bogus",
    ],
)
def test_device_spec_parsing(spec):
    def body(tf):
        d = tf.DeviceSpec.from_string(spec)
        return d.to_string(), d.job, d.replica, d.task, d.device_type, d.device_index

    check(body, raises=spec in ("/device:CPU:0/device:GPU:1", "bogus"))


def test_device_spec_methods():
    def body(tf):
        d = tf.DeviceSpec(job="ps", device_type="gpu", device_index=1)
        merged = d.make_merged_spec(tf.DeviceSpec.from_string("/CPU:0"))
        with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):
            x = tf.constant(1.0) * 2
        return (
            d.to_string(),
            d.replace(task=3).to_string(),
            merged.to_string(),
            d == tf.DeviceSpec.from_string("/job:ps/device:GPU:1"),
            repr(d),
            x,
        )

    check(body)
