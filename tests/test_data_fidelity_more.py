"""tf.data details from TF's tf.data and ragged guides, compared with real TensorFlow: a generator's arguments,
string padding values, bucketing to the boundaries after a map, unbatching scalars, a dataset's repr."""

import numpy as np

import tapeshim
from oracle import check, check_raises


def test_a_generator_gets_its_arguments_as_numpy_values():
    def body(tf):
        seen = []

        def lines(path, count, scales, offset):
            seen.append((type(path).__name__, path, type(count).__name__, scales.dtype.name, type(offset).__name__))
            for i in range(int(count)):
                yield path.decode() + str(i), float(scales[i % 2] + offset)

        ds = tf.data.Dataset.from_generator(
            lines,
            args=["file.txt", 3, [1.0, 2.0], 0.5],
            output_signature=(tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.float32)),
        )
        return [(a.numpy(), b.numpy()) for a, b in ds], seen

    check(body)


def test_string_padding_values_pad_as_bytes():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices([1, 2, 3]).map(lambda n: tf.fill([n], "a"))
        batch = next(iter(ds.padded_batch(3, padding_values="<pad>")))
        return batch, tf.unique(tf.reshape(batch, [-1]))[0]

    check(body)


def test_bucketing_pads_to_the_bucket_boundary_after_a_map():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices([1, 3, 5, 2, 6]).map(lambda n: tf.fill([n], n))
        bucketed = ds.bucket_by_sequence_length(
            lambda e: tf.shape(e)[0], [4, 8], [2, 2, 2], pad_to_bucket_boundary=True
        )
        features = tf.data.Dataset.from_tensor_slices([1, 2]).map(lambda n: tf.fill([n, 2], n))
        wide = features.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3], [2, 2], pad_to_bucket_boundary=True)
        return list(bucketed), list(wide)

    check(body)


def test_unbatching_scalars_raises_value_error():
    check_raises(lambda tf: tf.data.Dataset.range(3).unbatch())
    check_raises(lambda tf: tf.data.Dataset.from_tensor_slices(([1, 2], [[1], [2]])).unbatch())


def test_a_dataset_repr_shows_its_element_spec():
    ds = tapeshim.data.Dataset.from_tensor_slices((np.zeros((4, 2), np.float32), np.arange(4))).batch(2)
    assert repr(ds) == f"<Dataset element_spec={ds.element_spec!r}>"
    assert "TensorSpec(shape=(None, 2), dtype=tf.float32, name=None)" in repr(ds)


def test_a_dataset_made_from_a_function_argument_inside_a_function():
    def body(tf):
        @tf.function
        def total(n):
            s = tf.constant(0, tf.int64)
            for x in tf.data.Dataset.range(n):
                s += x
            return s

        @tf.function
        def doubled_sum(x):
            return tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2.0).reduce(0.0, lambda a, b: a + b)

        n = [total(tf.constant(4, tf.int64)), total(tf.constant(6, tf.int64)), total.experimental_get_tracing_count()]
        return n, doubled_sum(tf.constant([1.0, 2.0])), doubled_sum(tf.constant([3.0]))

    check(body)
