"""tf.distribute programs run unchanged with TF 2.21 and with tapeshim, each in its own child process.

TF's side runs MirroredStrategy on 8 logical CPU devices; tapeshim's on 8 simulated
JAX CPU devices (`--xla_force_host_platform_device_count=8`). Each `case_*(tf, strategy)`
returns a dict of values (or raises); `python distribute_cases.py tf|tapeshim OUT` runs
every case and pickles their descriptions to OUT, which `test_distribute.py` compares.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import traceback
from typing import Any

import numpy as np

from oracle_data import labelled, normal

N = 8
DEVICES = [f"/cpu:{i}" for i in range(N)]


def _local(strategy: Any, value: Any) -> list:
    return [np.asarray(v) for v in strategy.experimental_local_results(value)]


# -- the gradient-summing trap: a linear model, per-replica gradients, SUM all-reduce -----------------
def case_linear_step(tf: Any, strategy: Any) -> dict:
    x, y = labelled(0, 32, 3)
    w0 = normal((3, 1), 1)
    with strategy.scope():
        w = tf.Variable(w0)
    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32))

    def step_fn(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum((xb @ w - yb) ** 2, axis=1))
        grad = tape.gradient(loss, w)
        w.assign_sub(0.1 * tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, grad))
        return loss, grad

    @tf.function
    def train(xb, yb):
        losses, grads = strategy.run(step_fn, args=(xb, yb))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None), losses, grads

    out = {}
    for xb, yb in dataset:
        total, losses, grads = train(xb, yb)
        out["total"] = float(total)
        out["losses"] = _local(strategy, losses)
        out["grads"] = _local(strategy, grads)
    out["w"] = w.numpy()
    return out


def case_linear_step_eager(tf: Any, strategy: Any) -> dict:
    x, y = labelled(0, 32, 3)
    w0 = normal((3, 1), 1)
    with strategy.scope():
        w = tf.Variable(w0)
    iterator = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32)))

    def step_fn(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum((xb @ w - yb) ** 2, axis=1))
        grad = tape.gradient(loss, w)
        w.assign_sub(0.1 * tf.distribute.get_replica_context().all_reduce("sum", grad))
        return loss

    losses = strategy.run(step_fn, args=(next(iterator),))
    return {"losses": _local(strategy, losses), "w": w.numpy()}


# -- the custom_training tutorial: Keras model with L2, Adam, metrics, 3 steps ----------------------
def _tutorial(tf: Any, strategy: Any, optimizer_fn: Any, steps: int = 3) -> dict:
    x, y = labelled(2, 32 * steps, 6, classes=4)
    rng = np.random.default_rng(3)
    with strategy.scope():
        reg = tf.keras.regularizers.L2(1e-2)
        model = tf.keras.Sequential(
            [
                tf.keras.Input((6,)),
                tf.keras.layers.Dense(16, activation="relu", kernel_regularizer=reg),
                tf.keras.layers.Dense(4, kernel_regularizer=reg),
            ]
        )
        for v in model.weights:
            v.assign(rng.normal(scale=0.3, size=tuple(v.shape)).astype(np.float32))
        optimizer = optimizer_fn(tf)
        optimizer.build(model.trainable_variables)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def train_step(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            predictions = model(xb, training=True)
            loss = tf.nn.compute_average_loss(loss_object(yb, predictions))
            loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        accuracy.update_state(yb, predictions)
        return loss

    @tf.function
    def distributed_train_step(inputs):
        per_replica_losses = strategy.run(train_step, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
    losses = [float(distributed_train_step(batch)) for batch in dataset]
    return {
        "losses": losses,
        "weights": [v.numpy() for v in model.weights],
        "slots": [np.asarray(v.numpy()) for v in optimizer.variables if v.dtype != "int64"],
        "iterations": int(optimizer.iterations.numpy()),
        "accuracy": float(accuracy.result()),
        "traces": int(distributed_train_step.experimental_get_tracing_count()),
    }


def case_tutorial_adam(tf: Any, strategy: Any) -> dict:
    return _tutorial(tf, strategy, lambda tf: tf.keras.optimizers.Adam(0.01))


def case_tutorial_sgd_clipnorm(tf: Any, strategy: Any) -> dict:
    # TF clips each replica's gradients, then sums them: not single-device training.
    return _tutorial(tf, strategy, lambda tf: tf.keras.optimizers.SGD(0.5, clipnorm=0.05), steps=2)


def case_tutorial_iterator_in_function(tf: Any, strategy: Any) -> dict:
    """The multi-worker tutorial's form: `next(iterator)` inside the tf.function takes a new batch per call."""
    x, y = labelled(4, 96, 3)
    with strategy.scope():
        w = tf.Variable(np.ones((3, 1), np.float32))
    iterator = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32)))

    @tf.function
    def train_step(iterator):
        def step_fn(inputs):
            xb, yb = inputs
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(tf.reduce_sum((xb @ w - yb) ** 2, axis=1))
            w.assign_sub(0.05 * tf.distribute.get_replica_context().all_reduce("sum", tape.gradient(loss, w)))
            return loss

        return strategy.reduce("SUM", strategy.run(step_fn, args=(next(iterator),)), axis=None)

    losses = [float(train_step(iterator)) for _ in range(3)]
    return {"losses": losses, "w": w.numpy()}


def case_steps_loop_in_function(tf: Any, strategy: Any) -> dict:
    """Several steps in one tf.function (`for _ in tf.range(n)` with `next(iterator)`), as TPU programs write."""
    x = normal((96, 3), 11)
    y = x.sum(axis=1, keepdims=True)
    with strategy.scope():
        w = tf.Variable(np.zeros((3, 1), np.float32))
    iterator = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32)))

    def step_fn(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum((xb @ w - yb) ** 2, axis=1))
        w.assign_sub(0.05 * tf.distribute.get_replica_context().all_reduce("sum", tape.gradient(loss, w)))
        return loss

    @tf.function
    def train(iterator, steps):
        total = 0.0
        for _ in tf.range(steps):
            total += strategy.reduce("SUM", strategy.run(step_fn, args=(next(iterator),)), axis=None)
        return total

    return {"total": float(train(iterator, tf.constant(3))), "w": w.numpy()}


# -- replica context: collectives, ids, the gradient of all_reduce -----------------------------------
def case_replica_context(tf: Any, strategy: Any) -> dict:
    values = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices(np.arange(16, dtype=np.float32).reshape(16, 1)).batch(16)
    )
    batch = next(iter(values))

    def fn(v):
        ctx = tf.distribute.get_replica_context()
        with tf.GradientTape() as tape:
            tape.watch(v)
            total = ctx.all_reduce(tf.distribute.ReduceOp.SUM, tf.reduce_sum(v))
        grad = tape.gradient(total, v)
        mean = ctx.all_reduce("mean", tf.reduce_sum(v))
        gathered = ctx.all_gather(v, axis=0)
        rid = tf.cast(ctx.replica_id_in_sync_group, tf.float32)
        return {
            "total": total,
            "grad": grad,
            "mean": mean,
            "gathered": gathered,
            "rid": rid,
            "n": tf.constant(ctx.num_replicas_in_sync),
            "scaled": tf.nn.scale_regularization_loss(8.0),
            "avg": tf.nn.compute_average_loss(tf.ones((2,))),
            "avg_global": tf.nn.compute_average_loss(tf.ones((2,)), global_batch_size=4),
        }

    out = strategy.run(tf.function(fn), args=(batch,))
    return {key: _local(strategy, value) for key, value in out.items()}


def case_merge_call(tf: Any, strategy: Any) -> dict:
    """ReplicaContext.merge_call: the merge function sees every replica's value in cross-replica context."""
    batch = next(
        iter(
            strategy.experimental_distribute_dataset(
                tf.data.Dataset.from_tensor_slices(np.arange(16, dtype=np.float32)).batch(16)
            )
        )
    )

    def merge_fn(s, value, scale=1.0):
        return s.reduce("SUM", value, axis=None) * scale, value, tf.distribute.in_cross_replica_context()

    def fn(v):
        total, own, cross = tf.distribute.get_replica_context().merge_call(
            merge_fn, args=(v * 2.0,), kwargs={"scale": 0.5}
        )
        return total, own, tf.constant(cross)

    total, own, cross = strategy.run(tf.function(fn), args=(batch,))
    default = tf.distribute.get_replica_context().merge_call(
        lambda s, x: x + s.num_replicas_in_sync, args=(tf.constant(1.0),)
    )
    # TF returns the merged value itself from `run` (the same tensor on every replica); tapeshim a PerReplica.
    return {
        "total": _local(strategy, total)[0],
        "own": _local(strategy, own),
        "cross": _local(strategy, cross),
        "default": default.numpy(),
    }


def case_contexts(tf: Any, strategy: Any) -> dict:
    out = {
        "default_has": tf.distribute.has_strategy(),
        "default_cross": tf.distribute.in_cross_replica_context(),
        "default_n": tf.distribute.get_strategy().num_replicas_in_sync,
        "default_ctx_n": tf.distribute.get_replica_context().num_replicas_in_sync,
        "default_avg": tf.nn.compute_average_loss(tf.ones((4, 3))).numpy(),
        "default_scaled": tf.nn.scale_regularization_loss(8.0).numpy(),
        "default_run": tf.distribute.get_strategy().run(lambda a: a * 2, args=(tf.constant(3.0),)).numpy(),
    }
    with strategy.scope():
        out["scope_has"] = tf.distribute.has_strategy()
        out["scope_cross"] = tf.distribute.in_cross_replica_context()
        out["scope_ctx_is_none"] = tf.distribute.get_replica_context() is None
        out["scope_same"] = tf.distribute.get_strategy() is strategy
        out["n"] = strategy.num_replicas_in_sync
        for name, call in (
            ("avg_cross", lambda: tf.nn.compute_average_loss(tf.ones((4,)))),
            ("scaled_cross", lambda: tf.nn.scale_regularization_loss(1.0)),
            ("avg_scalar", lambda: tf.nn.compute_average_loss(tf.constant(1.0), global_batch_size=4)),
        ):
            try:
                call()
                out[name] = "no error"
            except Exception as exc:  # noqa: BLE001 - the class is compared
                out[name] = type(exc).__name__
        out["avg_global_cross"] = tf.nn.compute_average_loss(tf.ones((4,)), global_batch_size=8).numpy()
    return out


# -- cross-replica: reduce, gather, local results ----------------------------------------------------
def case_reduce_gather(tf: Any, strategy: Any) -> dict:
    data = np.arange(48, dtype=np.float32).reshape(16, 3)
    batch = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(data).batch(16))))
    out = {
        "local": _local(strategy, batch),
        "sum": strategy.reduce("SUM", batch, axis=None).numpy(),
        "mean": strategy.reduce("MEAN", batch, axis=None).numpy(),
        "sum0": strategy.reduce(tf.distribute.ReduceOp.SUM, batch, axis=0).numpy(),
        "mean0": strategy.reduce(tf.distribute.ReduceOp.MEAN, batch, axis=0).numpy(),
        "gather0": strategy.gather(batch, axis=0).numpy(),
        "gather1": strategy.gather(batch, axis=1).numpy(),
        "mean_plain": strategy.reduce("MEAN", tf.constant([1.0, 2.0]), axis=None).numpy(),
        "plain_local": _local(strategy, tf.constant(2.0)),
    }
    try:
        strategy.reduce("SUM", tf.constant([1.0, 2.0]), axis=None)
        out["sum_plain"] = "no error"
    except Exception as exc:  # noqa: BLE001
        out["sum_plain"] = type(exc).__name__
    doubled = strategy.run(lambda v: v * 2.0, args=(batch,))
    out["run_local"] = _local(strategy, doubled)
    broadcast = strategy.run(lambda c: c + 1.0, args=(tf.constant(5.0),))
    out["broadcast"] = _local(strategy, broadcast)
    return out


def case_datasets_from_function(tf: Any, strategy: Any) -> dict:
    seen = []

    def dataset_fn(context):
        seen.append(
            (
                context.num_input_pipelines,
                context.input_pipeline_id,
                context.num_replicas_in_sync,
                context.get_per_replica_batch_size(16),
            )
        )
        data = np.arange(64, dtype=np.float32).reshape(32, 2)
        return tf.data.Dataset.from_tensor_slices(data).batch(context.get_per_replica_batch_size(16))

    dataset = strategy.distribute_datasets_from_function(dataset_fn)
    first = next(iter(dataset))
    return {"contexts": seen, "local": _local(strategy, first), "sum": strategy.reduce("SUM", first, axis=0).numpy()}


def case_values_from_function(tf: Any, strategy: Any) -> dict:
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant([float(ctx.replica_id_in_sync_group), float(ctx.num_replicas_in_sync)])
    )
    return {"local": _local(strategy, values), "sum": strategy.reduce("SUM", values, axis=None).numpy()}


# -- variables: aggregation in replica context --------------------------------------------------------
def case_variable_aggregation(tf: Any, strategy: Any) -> dict:
    agg = tf.VariableAggregation
    with strategy.scope():
        none = tf.Variable(10.0)
        total = tf.Variable(10.0, aggregation=agg.SUM)
        mean = tf.Variable(10.0, aggregation=agg.MEAN)
        first = tf.Variable(10.0, aggregation=agg.ONLY_FIRST_REPLICA)
        assigned = tf.Variable(10.0, aggregation=agg.SUM)
        counter = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ, aggregation=agg.SUM)
    outside = tf.Variable(1.0)

    @tf.function
    def step():
        def fn():
            rid = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32)
            for v in (total, mean, first):
                v.assign_add(rid)
            assigned.assign(rid)
            outside.assign_add(1.0)
            counter.assign_add(1.0)
            return rid

        return strategy.run(fn)

    step()
    return {
        "total": total.numpy(),
        "mean": mean.numpy(),
        "first": first.numpy(),
        "assigned": assigned.numpy(),
        "outside": outside.numpy(),
        "none": none.numpy(),
        "counter": counter.numpy(),
        "trainable_on_read": counter.trainable,
        "aggregations": [v.aggregation.name for v in (none, total, first)],
    }


def case_batch_norm_per_replica(tf: Any, strategy: Any) -> dict:
    """BatchNormalization inside `run` normalises with each replica's statistics; moving stats are replica 0's."""
    x = normal((32, 3), 8) * np.arange(1, 33, dtype=np.float32)[:, None]
    with strategy.scope():
        bn = tf.keras.layers.BatchNormalization(momentum=0.0)
        bn.build((None, 3))
    batch = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(x).batch(32))))

    @tf.function
    def step(b):
        return strategy.run(lambda v: bn(v, training=True), args=(b,))

    outputs = step(batch)
    return {
        "outputs": _local(strategy, outputs),
        "moving_mean": bn.moving_mean.numpy(),
        "moving_variance": bn.moving_variance.numpy(),
    }


def case_batch_norm_synchronized(tf: Any, strategy: Any) -> dict:
    """BatchNormalization(synchronized=True): statistics of the global batch, all-reduced over the replicas."""
    x = normal((32, 3), 12) * np.arange(1, 33, dtype=np.float32)[:, None]
    with strategy.scope():
        bn = tf.keras.layers.BatchNormalization(momentum=0.5, synchronized=True)
        bn.build((None, 3))
    batch = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(x).batch(32))))

    @tf.function
    def step(b):
        return strategy.run(lambda v: bn(v, training=True), args=(b,))

    outputs = step(batch)
    plain = tf.keras.layers.BatchNormalization(synchronized=True)
    return {
        "outputs": _local(strategy, outputs),
        "moving_mean": bn.moving_mean.numpy(),
        "moving_variance": bn.moving_variance.numpy(),
        "no_strategy": plain(x[:8], training=True).numpy(),
        "config": bn.get_config()["synchronized"],
    }


def case_keras_loss_scaling(tf: Any, strategy: Any) -> dict:
    """TF's Keras divides mean-reduced losses by the replica count inside `run` and eagerly in the scope."""
    y, p = np.ones((16, 1), np.float32), np.zeros((16, 1), np.float32)
    batch = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((y, p)).batch(16))))
    mse = tf.keras.losses.MeanSquaredError()
    mse_none = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)
    mse_sum = tf.keras.losses.MeanSquaredError(reduction="sum")

    @tf.function
    def f(b):
        return strategy.run(lambda yy, pp: (mse(yy, pp), mse_none(yy, pp), mse_sum(yy, pp)), args=b)

    default, none, total = f(batch)
    out = {
        "default": _local(strategy, default),
        "none": _local(strategy, none),
        "sum": _local(strategy, total),
        "outside": float(mse(y, p)),
    }
    with strategy.scope():
        out["in_scope"] = float(mse(y, p))
    return out


def case_keras_fit(tf: Any, strategy: Any) -> dict:
    """The Keras tutorial's form: model built and compiled in the scope, `fit` called outside it."""
    x, y = labelled(6, 64, 5, classes=3)
    rng = np.random.default_rng(7)
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.Input((5,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(3)]
        )
        for v in model.weights:
            v.assign(rng.normal(scale=0.3, size=tuple(v.shape)).astype(np.float32))
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.1),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0, shuffle=False)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    evaluated = model.evaluate(dataset, verbose=0)
    predicted = model.predict(x[:16], batch_size=8, verbose=0)
    return {
        "loss": [float(v) for v in history.history["loss"]],
        "weights": [v.numpy() for v in model.weights],
        "evaluate": [float(v) for v in evaluated],
        "predict": np.asarray(predicted),
    }


def case_checkpoint(tf: Any, strategy: Any) -> dict:

    with strategy.scope():
        v = tf.Variable(np.arange(4, dtype=np.float32))
        step = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(v=v, step=step)
    directory = tempfile.mkdtemp()
    path = checkpoint.save(os.path.join(directory, "ckpt"))
    v.assign(np.zeros(4, np.float32))
    step.assign(7)
    checkpoint.restore(path)
    restored_in_scope = (v.numpy(), int(step.numpy()))
    plain = tf.Variable(np.ones(4, np.float32))
    tf.train.Checkpoint(v=plain).restore(path).expect_partial()
    return {"in_scope": restored_in_scope, "without_strategy": plain.numpy()}


# -- tapeshim only: invariants TF has no counterpart for, checked by test_distribute.py --------------------
def only_gradient_trap(tf: Any, strategy: Any) -> dict:
    """Per-replica gradients must be local (the check_vma=False region): summed = single-device gradient."""
    x, y = labelled(0, 32, 3)
    w0 = normal((3, 1), 1)
    plain = tf.Variable(w0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.reduce_sum((tf.constant(x) @ plain - y) ** 2, axis=1))
    single = tape.gradient(loss, plain).numpy()
    result = case_linear_step(tf, strategy)
    return {"single": single, "grads": result["grads"], "w": result["w"], "single_step": w0 - 0.1 * single}


def only_steady_loop(tf: Any, strategy: Any) -> dict:
    """A 6-step loop of the tutorial step traces once and compiles nothing after its first step."""
    from jax.sharding import PartitionSpec

    x, y = labelled(5, 32 * 6, 6, classes=4)
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.Input((6,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(4)]
        )
        optimizer = tf.keras.optimizers.Adam(0.01)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def train_step(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(yb, model(xb, training=True)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    @tf.function
    def step(inputs):
        return strategy.reduce("SUM", strategy.run(train_step, args=(inputs,)), axis=None)

    compiled = []
    for batch in strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32)):
        step(batch)
        stats = tf.experimental.compile_stats()
        compiled.append(stats["programs_compiled"] + stats["eager_kernels"])
    shards_equal = all(
        all(
            np.array_equal(np.asarray(s.data), np.asarray(v.value.addressable_shards[0].data))
            for s in v.value.addressable_shards
        )
        for v in model.weights + optimizer.variables
    )
    replicated = all(
        v.value.sharding.spec == PartitionSpec() or all(d is None for d in v.value.sharding.spec) for v in model.weights
    )
    return {
        "traces": step.experimental_get_tracing_count(),
        "compiled_after_first": compiled[-1] - compiled[1],
        "shards_equal": shards_equal,
        "replicated": replicated,
        "devices": len(model.weights[0].value.devices()),
    }


def only_random_per_replica(tf: Any, strategy: Any) -> dict:
    """tf.random ops draw different values on each replica (as TF's), and new values on each call."""

    @tf.function
    def draw():
        return strategy.run(lambda: tf.random.uniform((3,)))

    first, second = _local(strategy, draw()), _local(strategy, draw())
    return {
        "distinct_replicas": len({tuple(np.round(v, 6)) for v in first}),
        "new_each_call": not np.allclose(first[0], second[0]),
    }


def only_errors(tf: Any, strategy: Any) -> dict:
    out = {}

    def error_of(call: Any) -> tuple:
        try:
            call()
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, str(exc)
        return ("no error", "")

    uneven = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(np.ones((20, 2))).batch(20))
    out["uneven"] = error_of(lambda: next(iter(uneven)))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
    out["fit_uneven"] = error_of(lambda: model.fit(np.ones((36, 2)), np.ones((36, 1)), batch_size=16, verbose=0))
    out["parameter_server"] = error_of(lambda: tf.distribute.experimental.ParameterServerStrategy(None))
    out["tpu"] = error_of(lambda: tf.distribute.TPUStrategy())
    out["bad_device"] = error_of(lambda: tf.distribute.MirroredStrategy(["/gpu:9"]))
    os.environ["TF_CONFIG"] = (
        '{"cluster": {"worker": ["localhost:1", "localhost:2"]}, "task": {"type": "worker", "index": 5}}'
    )
    out["bad_tf_config"] = error_of(lambda: tf.distribute.MultiWorkerMirroredStrategy())
    os.environ["TF_CONFIG"] = os.environ["TF_CONFIG"].replace('"index": 5', '"index": 0')
    out["after_ops"] = error_of(lambda: tf.distribute.MultiWorkerMirroredStrategy())  # JAX has started already
    del os.environ["TF_CONFIG"]
    out["single_worker"] = tf.distribute.MultiWorkerMirroredStrategy().num_replicas_in_sync
    one = tf.distribute.OneDeviceStrategy("/cpu:0")
    with one.scope():
        v = tf.Variable(2.0)
    out["one_device"] = float(one.reduce("SUM", one.run(lambda: v * 3.0), axis=None))
    return out


def case_checkpoint_keras(tf: Any, strategy: Any) -> dict:
    """The tutorial's checkpoint of a model and optimizer built in the scope, restored without a strategy."""

    rng = np.random.default_rng(9)
    x, y = labelled(10, 16, 4)

    def build():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
        return model, tf.keras.optimizers.Adam(0.1)

    with strategy.scope():
        model, optimizer = build()
        for v in model.weights:
            v.assign(rng.normal(size=tuple(v.shape)).astype(np.float32))
        optimizer.build(model.trainable_variables)
    batch = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(16))))

    def step(inputs):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum((model(inputs[0]) - inputs[1]) ** 2, axis=1))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    tf.function(lambda b: strategy.run(step, args=(b,)))(batch)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(os.path.join(tempfile.mkdtemp(), "ckpt"))
    plain_model, plain_optimizer = build()
    plain_optimizer.build(plain_model.trainable_variables)
    tf.train.Checkpoint(model=plain_model, optimizer=plain_optimizer).restore(path)
    return {
        "weights": [v.numpy() for v in plain_model.weights],
        "trained": [v.numpy() for v in model.weights],
        "slots": [np.asarray(v.numpy()) for v in plain_optimizer.variables if v.dtype != "int64"],
        "iterations": int(plain_optimizer.iterations.numpy()),
    }


# -- tf.print inside replicas: each replica prints, and `run` returns after the prints ---------------
def case_print_in_replicas(tf: Any, strategy: Any) -> dict:
    path = os.path.join(tempfile.mkdtemp(), "printed.txt")

    def replica(scale):
        ctx = tf.distribute.get_replica_context()
        tf.print("replica", ctx.replica_id_in_sync_group, scale, output_stream="file://" + path)
        return tf.cast(ctx.replica_id_in_sync_group, tf.float32) * scale

    def read() -> list:
        with open(path) as f:
            return sorted(f.read().splitlines())  # the replicas print in no fixed order

    eager = strategy.run(replica, args=(tf.constant(2.0),))
    after_eager = read()
    compiled = tf.function(lambda s: strategy.run(replica, args=(s,)))(tf.constant(3.0))
    return {
        "eager": _local(strategy, eager),
        "after_eager": after_eager,
        "compiled": _local(strategy, compiled),
        "after_compiled": read(),
    }


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}
ONLY = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("only_")}


def describe(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def _setup(which: str) -> tuple[Any, Any]:
    if which == "tf":
        os.environ["KERAS_BACKEND"] = "tensorflow"
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * N)
        return tf, lambda: tf.distribute.MirroredStrategy(DEVICES)
    os.environ["KERAS_BACKEND"] = "jax"
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={N}"
    import tapeshim as tf

    return tf, lambda: tf.distribute.MirroredStrategy(DEVICES)


def main(which: str, out_path: str, names: list[str]) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    tf, make_strategy = _setup(which)
    strategy = make_strategy()  # one strategy for every case: TF's collective keys are per strategy
    results = {}
    cases = {**CASES, **ONLY} if which == "tapeshim" else CASES
    for name in names or list(cases):
        try:
            results[name] = {"result": describe(cases[name](tf, strategy))}
        except Exception as exc:  # noqa: BLE001 - the error class is part of the comparison
            results[name] = {"raised": type(exc).__name__, "message": str(exc), "trace": traceback.format_exc()}
    with open(out_path, "wb") as f:
        pickle.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
