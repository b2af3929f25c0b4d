"""`tf.lookup.experimental.MutableHashTable` and `DenseHashTable` against TF: eagerly and inside functions.

Exports are compared as sets of entries (TF lists them in its hash order, tapeshim in insertion order; a
`DenseHashTable`'s bucket count is compared as TF's).
"""

import numpy as np
import pytest

from oracle import check, check_raises


def _sorted_export(table):
    keys, values = table.export()
    keys, values = keys.numpy(), values.numpy()
    order = np.argsort(keys, kind="stable") if keys.dtype != object else np.argsort(keys.astype(str))
    return keys[order], values[order]


def _dense_entries(tf, table, empty_key):
    keys, values = table.export()
    used = keys.numpy()[:, 0] != empty_key
    keys, values = keys.numpy()[used, 0], values.numpy()[used]
    order = np.argsort(keys, kind="stable")
    return keys.shape, keys[order], values[order], table.export()[0].shape


def test_mutable_table_inserts_looks_up_removes_and_exports():
    def body(tf):
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
        sizes = [table.size()]
        table.insert(tf.constant([1, 2, 3], tf.int64), tf.constant([1.0, 2.0, 3.0]))
        found = table.lookup(tf.constant([[1, 5], [3, 2]], tf.int64))
        table.insert(tf.constant([1, 1], tf.int64), tf.constant([7.0, 8.0]))  # a repeated key: the last value
        again = table[tf.constant([1], tf.int64)]
        table.remove(tf.constant([2, 9], tf.int64))
        table.insert([4, 5], [4.5, 5.5])
        sizes.append(table.size())
        return {
            "sizes": sizes,
            "found": found,
            "again": again,
            "scalar": table.lookup(tf.constant(3, tf.int64)),
            "dynamic_defaults": table.lookup(
                tf.constant([1, 99], tf.int64), dynamic_default_values=tf.constant([0.0, -9.0])
            ),
            "export": _sorted_export(table),
            "dtypes": (table.key_dtype, table.value_dtype, table.name),
        }

    check(body)


@pytest.mark.parametrize(
    "key_dtype,value_dtype,keys,values,default",
    [
        ("string", "int64", ["a", "b"], [[1, 2], [3, 4]], [-1, -1]),  # vector values
        ("int64", "string", [3, 4], ["three", "four"], "?"),
        ("int32", "float64", [7, -7], [0.5, 1.5], 0.0),
        ("string", "bool", ["yes", "no"], [True, False], False),
    ],
)
def test_mutable_table_dtypes_and_value_shapes(key_dtype, value_dtype, keys, values, default):
    def body(tf):
        table = tf.lookup.experimental.MutableHashTable(key_dtype, value_dtype, default_value=default)
        table.insert(tf.constant(keys, key_dtype), tf.constant(values, value_dtype))
        missing = "zzz" if key_dtype == "string" else 99
        return {
            "found": table.lookup(tf.constant([keys[1], missing, keys[0]], key_dtype)),
            "export": _sorted_export(table),
            "size": table.size(),
        }

    check(body)


@pytest.mark.parametrize(
    "case",
    [
        "keys_of_another_dtype",
        "values_of_another_dtype",
        "values_of_another_shape",
        "vector_values_of_another_shape",
        "a_default_of_another_dtype",
        "no_kernel_for_the_dtypes",
    ],
)
def test_mutable_table_errors(case):
    def body(tf):
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
        vectors = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=[-1, -1])
        if case == "keys_of_another_dtype":
            table.lookup(tf.constant([1], tf.int32))
        elif case == "values_of_another_dtype":
            table.insert(tf.constant([4], tf.int64), tf.constant([1], tf.int64))
        elif case == "values_of_another_shape":
            table.insert(tf.constant([6, 7], tf.int64), tf.constant([1.0]))
        elif case == "vector_values_of_another_shape":
            vectors.insert(tf.constant(["c"]), tf.constant([1], tf.int64))
        elif case == "a_default_of_another_dtype":
            tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value="x")
        else:
            tf.lookup.experimental.MutableHashTable(tf.string, tf.string, default_value="?")

    check_raises(body)


def test_dense_table_buckets_are_tfs():
    def body(tf):  # (colliding keys probe as TF's; an erased key leaves its marker; a re-insert takes it)
        table = tf.lookup.experimental.DenseHashTable(
            tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1, initial_num_buckets=16
        )
        exports = []
        for keys in ([5, 21, 37], [37], [53], [3, 100, -5], list(range(6, 20))):
            table.insert(tf.constant(keys, tf.int64), tf.constant([k * 10 for k in keys], tf.int64))
            exports.append([np.array(part.numpy(), copy=True) for part in table.export()])  # (TF's: the table's memory)
            table.erase(tf.constant([21], tf.int64))
        return {
            "exports": exports,
            "found": table.lookup(tf.constant([37, 53, 21, -5], tf.int64)),
            "size": table.size(),
        }

    check(body)


def test_dense_table_entries_buckets_and_growth():
    def body(tf):
        table = tf.lookup.experimental.DenseHashTable(
            tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1, initial_num_buckets=8
        )
        table.insert(tf.constant([5, 6, 7], tf.int64), tf.constant([50, 60, 70], tf.int64))
        before = _dense_entries(tf, table, 0)
        table.insert_or_assign(tf.constant([8, 9, 10, 11], tf.int64), tf.constant([1, 2, 3, 4], tf.int64))
        grown = _dense_entries(tf, table, 0)  # past 80% of its buckets in use: twice as many
        table.erase(tf.constant([5], tf.int64))
        table.remove(tf.constant([6], tf.int64))
        return {
            "before": before,
            "grown": grown,
            "found": table.lookup(tf.constant([5, 7, 8, 12], tf.int64)),
            "size": table.size(),
            "after_erase": _dense_entries(tf, table, 0),
        }

    check(body)


def test_dense_table_of_strings_and_vectors():
    def body(tf):
        table = tf.lookup.experimental.DenseHashTable(
            tf.string, tf.float32, default_value=[0.0, 0.0], empty_key="", deleted_key="$", initial_num_buckets=4
        )
        table.insert(tf.constant(["a", "b", "c"]), tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        found = table.lookup(tf.constant(["c", "x"]))
        return {"found": found, "size": table.size(), "buckets": table.export()[0].shape}

    check(body)


@pytest.mark.parametrize(
    "case", ["insert_empty_key", "lookup_deleted_key", "erase_empty_key", "equal_reserved_keys", "buckets_not_power"]
)
def test_dense_table_errors(case):
    def body(tf):
        if case == "equal_reserved_keys":
            return tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0, deleted_key=0)
        if case == "buckets_not_power":
            return tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 0, -1, initial_num_buckets=6)
        table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1)
        table.insert(tf.constant([3], tf.int64), tf.constant([30], tf.int64))
        if case == "insert_empty_key":
            table.insert(tf.constant([0, 4], tf.int64), tf.constant([1, 2], tf.int64))
        elif case == "lookup_deleted_key":
            table.lookup(tf.constant([-1], tf.int64))
        else:
            table.erase(tf.constant([0], tf.int64))
        return table.size()

    check_raises(body)


def test_a_function_inserts_and_reads_on_every_call():
    def body(tf):
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
        counts = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=0)

        @tf.function
        def step(keys):
            before = table.lookup(keys)
            table.insert(keys, tf.cast(keys, tf.float32) * 2.0)
            counts.insert(tf.constant(["calls"]), counts.lookup(tf.constant(["calls"])) + 1)
            return before, table.lookup(keys), table.size()

        results = [step(tf.constant([20, 21], tf.int64)), step(tf.constant([21, 22], tf.int64))]
        results.append(step(tf.constant([22, 23], tf.int64)))
        return {
            "results": results,
            "size_after": table.size(),
            "calls": counts.lookup(tf.constant(["calls"])),
            "export": _sorted_export(table),
        }

    check(body)


def test_a_dense_tables_error_inside_a_function():
    def body(tf):
        table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1)

        @tf.function
        def put(keys):
            table.insert(keys, keys * 10)
            return table.lookup(keys)

        put(tf.constant([3], tf.int64))
        return put(tf.constant([0], tf.int64))

    check_raises(body)


def test_lookups_have_no_gradient():
    def body(tf):
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=0.0)
        table.insert(tf.constant([1], tf.int64), tf.constant([2.0]))
        x = tf.Variable([3.0])
        with tf.GradientTape(persistent=True) as tape:
            y = table.lookup(tf.constant([1], tf.int64)) * x
            found = table.lookup(tf.constant([1], tf.int64))
        return tape.gradient(y, x), tape.gradient(found, x)

    check(body)


def test_lookups_in_a_dataset_map():
    def body(tf):
        words = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
        words.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
        scores = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=0.0)
        scores.insert(tf.constant([1, 2], tf.int64), tf.constant([0.5, 1.5]))
        found = tf.data.Dataset.from_tensor_slices(["a", "b", "c"]).map(words.lookup)
        doubled = tf.data.Dataset.range(4).map(lambda key: scores.lookup(key) * 2.0)
        return list(found), list(doubled)

    check(body)
