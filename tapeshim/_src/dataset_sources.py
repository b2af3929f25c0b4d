"""`tf.data` sources that read files: `Dataset.list_files` and `tf.data.experimental.make_csv_dataset`."""

from __future__ import annotations

import collections
import csv
import glob
import io
import math
from typing import Any, Sequence

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.dataset import Dataset
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor_spec import TensorSpec


def _patterns(file_pattern: Any) -> list[str]:
    if hasattr(file_pattern, "numpy"):
        values = np.asarray(file_pattern.numpy(), dtype=object).reshape(-1).tolist()
    elif isinstance(file_pattern, (str, bytes)):
        values = [file_pattern]
    else:
        values = list(file_pattern)
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def _string_rows(names: Sequence[str]) -> Any:
    array = np.array([n.encode() for n in names] + [b""], dtype=object)[:-1]
    return Dataset.from_tensor_slices(_strings(array)) if len(names) else None


def _strings(array: np.ndarray) -> Any:
    return host_tensor(array, dtypes.string)


def list_files(file_pattern: Any, shuffle: bool | None = None, seed: Any = None, name: str | None = None) -> Any:
    """The file names matching the glob pattern(s), as a dataset of strings (shuffled unless `shuffle=False`).

    Raises:
      InvalidArgumentError: if no file matches.
    """
    patterns = _patterns(file_pattern)
    names = sorted({match for pattern in patterns for match in glob.glob(pattern)})
    if not names:
        raise errors.invalid_argument(
            "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b'No files matched "
            f"pattern: ' b'{', '.join(patterns)}'",
            "Assert",
        )
    dataset = _string_rows(names)
    if shuffle is None or shuffle:
        dataset = dataset.shuffle(len(names), seed=seed)
    return dataset


# -- CSV ----------------------------------------------------------------------------------------------
def _fits(text: str, dtype: dtypes.DType) -> bool:
    try:
        if dtype.is_integer:
            number = int(text)
            info = np.iinfo(dtype.as_numpy_dtype)
            return info.min <= number <= info.max
        value = float(text)
        return (
            dtype == dtypes.float64 or math.isinf(value) or math.isnan(value) or abs(value) <= np.finfo(np.float32).max
        )
    except ValueError:
        return False


_TYPE_ORDER = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string)


def _infer(values: list[str], na_value: str) -> dtypes.DType:
    position = -1
    for text in values:
        if text in ("", na_value):
            continue
        start = max(position, 0)
        for i in range(start, len(_TYPE_ORDER)):
            if _TYPE_ORDER[i] == dtypes.string or _fits(text, _TYPE_ORDER[i]):
                position = i
                break
    return dtypes.string if position < 0 else _TYPE_ORDER[position]


def _read_rows(path: str, delimiter: str, use_quote: bool, header: bool, encoding: str) -> tuple[list, list]:
    with open(path, encoding=encoding, newline="") as handle:
        text = handle.read()
    reader = csv.reader(
        io.StringIO(text), delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if use_quote else csv.QUOTE_NONE
    )
    rows = [row for row in reader if row]
    if header:
        return rows[0] if rows else [], rows[1:]
    return [], rows


def _column(values: list[str], dtype: dtypes.DType, default: Any, name: str, na_value: str) -> np.ndarray:
    out = []
    for text in values:
        if text in ("", na_value):
            if default is None:
                raise errors.invalid_argument(f"Field {name} is required but missing in record!", "IteratorGetNext")
            out.append(default)
        elif dtype == dtypes.string:
            out.append(text.encode())
        elif dtype.is_integer:
            out.append(int(text))
        else:
            out.append(float(text))
    if dtype == dtypes.string:
        return np.array(out + [b""], dtype=object)[:-1]
    return np.asarray(out, dtype=dtype.as_numpy_dtype)


def make_csv_dataset(
    file_pattern: Any,
    batch_size: int,
    column_names: Sequence[str] | None = None,
    column_defaults: Sequence[Any] | None = None,
    label_name: str | None = None,
    select_columns: Sequence[Any] | None = None,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    header: bool = True,
    num_epochs: int | None = None,
    shuffle: bool = True,
    shuffle_buffer_size: int = 10000,
    shuffle_seed: Any = None,
    prefetch_buffer_size: Any = None,
    num_parallel_reads: Any = None,
    sloppy: bool = False,
    num_rows_for_inference: int = 100,
    compression_type: Any = None,
    ignore_errors: bool = False,
    encoding: str = "utf-8",
) -> Any:
    """Batches of CSV records as `(OrderedDict of columns, label)` (or the dict alone without `label_name`).

    Column names come from the header (or `column_names`), types from `column_defaults` or are
    inferred from the first `num_rows_for_inference` rows (int32, int64, float32, float64, string).
    Files are read whole into memory.

    Raises:
      ValueError: for a missing header/column names, an unknown `label_name` or selected column.
      InvalidArgumentError: if no file matches, or a field without a default is empty.
    """
    files = sorted({m for p in _patterns(file_pattern) for m in glob.glob(p)})
    if not files:
        raise errors.invalid_argument(
            f"No files matched pattern: {', '.join(_patterns(file_pattern))}", "MatchingFiles"
        )
    if compression_type not in (None, ""):
        raise NotImplementedError("tapeshim's make_csv_dataset reads uncompressed files only.")
    if column_names is None and not header:
        raise ValueError("Cannot infer column names without a header line.")
    all_rows: list = []
    names = list(column_names) if column_names is not None else None
    for path in files:
        found, rows = _read_rows(path, field_delim, use_quote_delim, header, encoding)
        if names is None:
            names = found
        all_rows.extend(rows)
    assert names is not None
    if len(set(names)) != len(names):
        raise ValueError("Cannot have duplicate column names.")
    if select_columns is not None:
        picked = [c if isinstance(c, int) else names.index(c) if c in names else -1 for c in select_columns]
        if -1 in picked:
            raise ValueError("Provided select_columns are not a subset of column names.")
        keep = sorted(picked)
    else:
        keep = list(range(len(names)))
    if label_name is not None and label_name not in [names[i] for i in keep]:
        raise ValueError(
            f"`label_name` provided must be one of the columns: {[names[i] for i in keep]}. Received: {label_name}."
        )
    columns: dict[str, np.ndarray] = collections.OrderedDict()
    for position, index in enumerate(keep):
        values = [row[index] if index < len(row) else "" for row in all_rows]
        if column_defaults is not None:
            given = column_defaults[position if select_columns is not None else index]
            given_array = np.asarray(given.numpy() if hasattr(given, "numpy") else given, dtype=object).reshape(-1)
            default = given_array[0] if given_array.size else None
            dtype = (
                dtypes.string
                if isinstance(default, (str, bytes))
                else dtypes.as_dtype(given.dtype)
                if hasattr(given, "dtype")
                else dtypes.int32
                if isinstance(default, int)
                else dtypes.float32
            )
            if isinstance(default, str):
                default = default.encode()
        else:
            dtype, default = _infer(values[:num_rows_for_inference], na_value), None
        columns[names[index]] = _column(values, dtype, default, names[index], na_value)
    tensors = collections.OrderedDict((k, _strings(v) if v.dtype == object else v) for k, v in columns.items())
    dataset = Dataset.from_tensor_slices(tensors)
    if label_name is not None:
        dataset = dataset.map(
            lambda row: (collections.OrderedDict((k, v) for k, v in row.items() if k != label_name), row[label_name])
        )
    dataset = dataset.repeat(num_epochs)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    dataset = dataset.batch(batch_size)
    spec = {k: TensorSpec([None], d.dtype) for k, d in dataset.element_spec.items()} if label_name is None else None
    if spec is not None:
        dataset._element_spec = collections.OrderedDict(spec)
    return dataset.prefetch(-1 if prefetch_buffer_size is None else prefetch_buffer_size)
