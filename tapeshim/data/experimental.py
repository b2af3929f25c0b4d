"""`tf.data.experimental`: the pieces TF2 programs still use."""

from typing import Any, Callable

from tapeshim._src.dataset_options import (
    AutoShardPolicy,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)
from tapeshim._src.dataset_sources import make_csv_dataset
from tapeshim._src.dataset_transforms import DatasetTransforms
from tapeshim._src.io.datasets import DatasetTFRecordWriter as TFRecordWriter  # IO

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def cardinality(dataset: Any) -> Any:
    """The dataset's cardinality as an int64 scalar (-1 infinite, -2 unknown)."""
    return dataset.cardinality()


def sample_from_datasets(
    datasets: Any, weights: Any = None, seed: Any = None, stop_on_empty_dataset: bool = False
) -> Any:
    """`tf.data.Dataset.sample_from_datasets`."""
    return DatasetTransforms.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets: Any, choice_dataset: Any, stop_on_empty_dataset: bool = True) -> Any:
    """`tf.data.Dataset.choose_from_datasets`."""
    return DatasetTransforms.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def get_single_element(dataset: Any) -> Any:
    """The only element of a one-element dataset."""
    return dataset.get_single_element()


def bucket_by_sequence_length(
    element_length_func: Callable[..., Any],
    bucket_boundaries: Any,
    bucket_batch_sizes: Any,
    padded_shapes: Any = None,
    padding_values: Any = None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.bucket_by_sequence_length` with these arguments."""

    def apply(dataset: Any) -> Any:
        return dataset.bucket_by_sequence_length(
            element_length_func,
            bucket_boundaries,
            bucket_batch_sizes,
            padded_shapes,
            padding_values,
            pad_to_bucket_boundary,
            no_padding,
            drop_remainder,
        )

    return apply


def group_by_window(
    key_func: Callable[..., Any],
    reduce_func: Callable[[Any, Any], Any],
    window_size: Any = None,
    window_size_func: Callable[[Any], Any] | None = None,
) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.group_by_window`."""
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)


def scan(initial_state: Any, scan_func: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.scan`."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def unique() -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.unique`."""
    return lambda dataset: dataset.unique()


def take_while(predicate: Callable[..., Any]) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.take_while`."""
    return lambda dataset: dataset.take_while(predicate)


def rejection_resample(
    class_func: Callable[..., Any], target_dist: Any, initial_dist: Any = None, seed: Any = None
) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.rejection_resample`."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist, seed)


def assert_cardinality(expected_cardinality: Any) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: the dataset, reporting `expected_cardinality` and checking it.

    Iterating raises `FailedPreconditionError` when the element count differs, as TF.
    """
    expected = int(expected_cardinality)
    return lambda dataset: dataset._assert_cardinality(expected)


def ignore_errors(log_warning: bool = False) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.ignore_errors`."""
    return lambda dataset: dataset.ignore_errors(log_warning)


def enumerate_dataset(start: int = 0) -> Callable[[Any], Any]:
    """A transformation for `Dataset.apply`: `Dataset.enumerate`."""
    return lambda dataset: dataset.enumerate(start)


__all__ = [
    "AUTOTUNE",
    "AutoShardPolicy",
    "AutotuneOptions",
    "DistributeOptions",
    "ExternalStatePolicy",
    "INFINITE_CARDINALITY",
    "OptimizationOptions",
    "ThreadingOptions",
    "UNKNOWN_CARDINALITY",
    "assert_cardinality",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "enumerate_dataset",
    "get_single_element",
    "group_by_window",
    "ignore_errors",
    "make_csv_dataset",
    "rejection_resample",
    "sample_from_datasets",
    "scan",
    "take_while",
    "unique",
]
__all__ += ["TFRecordWriter"]  # IO
