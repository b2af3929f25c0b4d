"""The declared public exports of tapeshim's namespaces that are not op-table rows (one place).

`python -m tapeshim._src.api_gen` writes every generated namespace module (`tapeshim/__init__.py`,
`tapeshim/math.py`, ...) from the op table (`tapeshim/_src/ops/table.py`: each row names its TF
paths, so `math.add` puts `add` into `tapeshim.math`) plus the names declared here. Edit this file
(or the table), never the generated modules, then run the generator; `tests/test_api_surface.py`
fails while a generated module is stale.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Namespace:
    """One generated public module.

    Attributes:
      doc: the module's docstring.
      exports: public (and private helper) names that are not op-table rows of this namespace, each
        mapped to `"module:attribute"` (imported from there, under the public name) or `"=expression"`
        (a literal written as `name = expression`). `_names(module, "a b")` maps names imported under
        their own name.
      hidden: exported names left out of `__all__` (as TF's module leaves them out of its `__all__`).
      extra_all: names in `__all__` that the module makes on first use (`__getattr__`).
      has_all: whether the module has an `__all__`.
      table: whether op-table rows of this namespace are exported.
      from_dict: `(private name, module:attribute)` of a dict of functions built at import time: each key
        becomes an explicit `key = private_name["key"]` assignment, so that IDEs and type checkers see it.
      non_op_exports: write `NON_OP_EXPORTS`, the frozenset of exported names that are not op-table rows.
      prelude: code that runs before the imports (the first-party imports then carry `# noqa: E402`).
      epilogue: code after `__all__`.
    """

    doc: str
    exports: dict[str, str] = dataclasses.field(default_factory=dict)
    hidden: tuple[str, ...] = ()
    extra_all: tuple[str, ...] = ()
    has_all: bool = True
    table: bool = True
    from_dict: tuple[str, str] | None = None
    non_op_exports: bool = False
    prelude: str = ""
    epilogue: str = ""


_ROOT_DOC = """tapeshim: TensorFlow 2's GradientTape API, running on JAX and compiled by XLA.

Change `import tensorflow as tf` to `import tapeshim as tf`.

tapeshim turns on JAX's 64-bit mode (`jax_enable_x64`) when imported, so that
`tf.float64` and `tf.int64` really are 64-bit, as in TensorFlow. tapeshim always
names its dtypes, so its own float32 code stays float32; see the README for what
this means for other JAX code in the same process. It also turns on JAX's
persistent compilation cache (`~/.cache/tapeshim/xla`; `TAPESHIM_COMPILATION_CACHE_DIR`
names another directory, or `off`), so that programs compiled by an earlier run load
from disk instead of compiling again. The ops re-exported here are
rows of the op table (`tapeshim/_src/ops/table.py`, documented in docs/ops.md).
"""
_ROOT_PRELUDE = """
import importlib as _importlib
import os as _os
import sys as _sys
import typing as _typing

# Keras reads KERAS_BACKEND once, when it is first imported: choosing JAX here lets a plain `import keras`
# after `import tapeshim` share tapeshim's backend (and not import TensorFlow). A backend the user chose
# is theirs (`tf.keras` then says how to fix it), and a Keras already imported keeps its backend.
if "keras" not in _sys.modules and not _os.environ.get("KERAS_BACKEND"):
    _os.environ["KERAS_BACKEND"] = "jax"

import jax as _jax  # noqa: E402

_jax.config.update("jax_enable_x64", True)

from tapeshim._src import compile_cache as _compile_cache  # noqa: E402

_compile_cache.configure()  # programs compiled by earlier runs load from disk (`compile_cache`)
"""
_ROOT_EPILOGUE = '''
if _typing.TYPE_CHECKING:  # at run time, `tf.keras` is imported on first use (below)
    from tapeshim import keras
    from tapeshim.keras import initializers, losses, metrics, optimizers

_KERAS_NAMESPACES = ("initializers", "losses", "metrics", "optimizers")  # TF's `tf.losses` is `tf.keras.losses`


def __getattr__(name: str) -> object:
    """`tf.keras` (and TF's aliases of four of its namespaces, `tf.losses`, `tf.metrics`, `tf.optimizers` and
    `tf.initializers`) is imported on first use: importing Keras chooses its backend (JAX) for the process."""
    if name == "keras":
        return _importlib.import_module("tapeshim.keras")
    if name in _KERAS_NAMESPACES:
        return _importlib.import_module(f"tapeshim.keras.{name}")
    raise AttributeError(f"module 'tapeshim' has no attribute {name!r}")


from tapeshim._src import gc_freeze as _gc_freeze  # noqa: E402

_gc_freeze.freeze_imported()  # what the imports loaded lives as long as the process (`gc_freeze`)
'''


def _names(module: str, names: str) -> dict[str, str]:
    """`{name: "module:name"}` for each space-separated name, imported under its own name."""
    return {name: f"{module}:{name}" for name in names.split()}


NAMESPACES: dict[str, Namespace] = {
    "tapeshim": Namespace(
        doc=_ROOT_DOC,
        exports={
            **_names(
                "tapeshim._src.dtypes",
                "DType as_dtype bfloat16 complex128 complex64 double float16 float32 float64 half int16 int32 int64 "
                "int8 string uint16 uint32 uint64 uint8",
            ),
            **_names("tapeshim._src.config_device", "DeviceSpec device"),
            **_names("tapeshim._src.forward", "ForwardAccumulator"),
            **_names("tapeshim._src.function", "Function function"),
            **_names("tapeshim._src.tape", "GradientTape UnconnectedGradients"),
            **_names("tapeshim._src.module", "Module name_scope"),
            **_names("tapeshim._src.ragged", "RaggedTensor"),
            **_names("tapeshim._src.ragged_spec", "RaggedTensorSpec type_spec_from_value"),
            **_names("tapeshim._src.sparse", "SparseTensor"),
            **_names(
                "tapeshim._src.tensor",
                "Tensor convert_to_tensor is_tensor register_tensor_conversion_function",
            ),
            **_names("tapeshim._src.constant_op", "constant"),
            **_names("tapeshim._src.autograph.tensor_array", "TensorArray"),
            **_names("tapeshim._src.shape", "TensorShape"),
            **_names("tapeshim._src.tensor_spec", "TensorSpec"),
            **_names("tapeshim._src.gradient_registry", "RegisterGradient no_gradient"),
            **_names("tapeshim._src.variable", "Variable VariableAggregation VariableSynchronization"),
            **_names(
                "tapeshim",
                "audio autodiff autograph bitwise compat config data debugging distribute dtypes errors experimental "
                "image io linalg lookup math nest nn quantization ragged random raw_ops saved_model sets signal "
                "sparse strings summary tpu train types version",
            ),
            **_names("tapeshim", "profiler test"),
            **_names("tapeshim._src.control_flow", "case cond switch_case while_loop"),
            **_names("tapeshim._src.custom_gradient", "custom_gradient"),
            **_names("tapeshim._src.tf_logging", "get_logger"),
            **_names("tapeshim._src.function_trace", "init_scope"),
            **_names("tapeshim._src.ops.host_ops", "numpy_function"),
            **_names("tapeshim._src.py_function", "py_function"),
            "bool": "tapeshim._src.dtypes:bool_",
            "newaxis": "=None",
            "__version__": '="0.1.0"',
        },
        extra_all=("initializers", "keras", "losses", "metrics", "optimizers"),
        non_op_exports=True,
        prelude=_ROOT_PRELUDE,
        epilogue=_ROOT_EPILOGUE,
    ),
    "tapeshim.audio": Namespace(
        doc="`tf.audio`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.autodiff": Namespace(
        doc="`tf.autodiff`: the tape and forward-mode accumulator.",
        exports={
            **_names("tapeshim._src.forward", "ForwardAccumulator"),
            **_names("tapeshim._src.tape", "GradientTape"),
        },
        has_all=False,
    ),
    "tapeshim.autograph": Namespace(
        doc="`tf.autograph`: convert Python control flow over tensors (used by `tapeshim.function`).",
        exports={
            **_names("tapeshim.autograph", "experimental"),
            **_names("tapeshim._src.autograph.conversion", "to_code to_graph"),
        },
    ),
    "tapeshim.autograph.experimental": Namespace(
        doc="`tf.autograph.experimental`.",
        exports={
            **_names("tapeshim._src.autograph.conversion", "do_not_convert"),
            **_names("tapeshim._src.autograph.operators", "set_loop_options"),
        },
    ),
    "tapeshim.bitwise": Namespace(
        doc="`tf.bitwise`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.compat": Namespace(
        doc=(
            "`tf.compat`: TF's string and dimension helpers, `tf.compat.v2` (tapeshim itself) and the "
            "TF 2 parts of `v1`.\n"
            "\n"
            "tapeshim runs TF 2 programs only: `tf.compat.v1` has what TF 2 programs still call\n"
            "(`enable_eager_execution`, `logging`, `set_random_seed`, ...); every other name raises an\n"
            "AttributeError saying so.\n"
        ),
        exports={
            **_names(
                "tapeshim._src.api_compat",
                "as_bytes as_str as_str_any as_text bytes_or_text_types complex_types dimension_at_index "
                "dimension_value forward_compatibility_horizon forward_compatible integral_types path_to_str "
                "real_types",
            ),
            **_names("tapeshim.compat", "v1"),
            "v2": "tapeshim",
            "Any": "typing:Any",
            "Iterator": "typing:Iterator",
            "annotations": "__future__:annotations",
            "codecs": "codecs",
            "contextlib": "contextlib",
            "datetime": "datetime",
            "np": "numpy",
            "numbers": "numbers",
            "os": "os",
        },
        # The hand-written module leaked these names (its own imports); kept so the public surface is unchanged.
        hidden=(
            "Any",
            "Iterator",
            "annotations",
            "codecs",
            "contextlib",
            "datetime",
            "np",
            "numbers",
            "os",
        ),
    ),
    "tapeshim.compat.v1": Namespace(
        doc=(
            "`tf.compat.v1`: the pieces TF 2 programs still call; any other name raises "
            "AttributeError.\n"
            "\n"
            "tapeshim runs TF 2 (eager) code only: sessions, placeholders, graph collections and the\n"
            "other TF 1 APIs have no tapeshim equivalent.\n"
        ),
        exports={
            **_names(
                "tapeshim._src.api_compat_v1",
                "disable_eager_execution disable_v2_behavior enable_eager_execution enable_v2_behavior "
                "executing_eagerly set_random_seed",
            ),
            **_names("tapeshim._src.gradient_registry", "NoGradient NotDifferentiable RegisterGradient no_gradient"),
            **_names("tapeshim.compat.v1", "logging"),
            "__getattr__": "tapeshim._src.api_compat_v1:tf1_attribute",
            "Any": "typing:Any",
            "annotations": "__future__:annotations",
        },
        # The hand-written module leaked these names (its own imports); kept so the public surface is unchanged.
        hidden=(
            "Any",
            "annotations",
        ),
    ),
    "tapeshim.compat.v1.logging": Namespace(
        doc="`tf.compat.v1.logging`: TF 1's logging functions on the `tensorflow` logger.",
        exports={
            **_names(
                "tapeshim._src.api_compat_v1_logging",
                "DEBUG ERROR FATAL INFO WARN TaskLevelStatusMessage debug error fatal flush get_verbosity info log "
                "log_every_n log_first_n log_if set_verbosity vlog warn warning",
            ),
            "Any": "typing:Any",
        },
        # The hand-written module leaked these names (its own imports); kept so the public surface is unchanged.
        hidden=("Any",),
    ),
    "tapeshim.data.experimental": Namespace(
        doc="`tf.data.experimental`: the pieces TF2 programs still use.",
        exports={
            **_names(
                "tapeshim._src.api_data_experimental",
                "AUTOTUNE INFINITE_CARDINALITY UNKNOWN_CARDINALITY Counter assert_cardinality "
                "bucket_by_sequence_length cardinality choose_from_datasets enumerate_dataset get_single_element "
                "group_by_window ignore_errors rejection_resample sample_from_datasets scan take_while unique",
            ),
            **_names(
                "tapeshim._src.dataset_options",
                "AutoShardPolicy AutotuneOptions DistributeOptions ExternalStatePolicy OptimizationOptions "
                "ThreadingOptions",
            ),
            **_names("tapeshim._src.dataset_sources", "make_csv_dataset"),
            **_names("tapeshim._src.dataset_ragged", "dense_to_ragged_batch"),
            "TFRecordWriter": "tapeshim._src.io.datasets:DatasetTFRecordWriter",
            "Any": "typing:Any",
            "Callable": "typing:Callable",
            "DatasetTransforms": "tapeshim._src.dataset_transforms:DatasetTransforms",
        },
        # The hand-written module leaked these names (its own imports); kept so the public surface is unchanged.
        hidden=(
            "Any",
            "Callable",
            "DatasetTransforms",
        ),
    ),
    "tapeshim.config": Namespace(
        doc="`tf.config`: devices and runtime settings (`tapeshim/_src/config.py`, `config_device.py`).",
        exports={
            **_names(
                "tapeshim._src.config",
                "LogicalDevice LogicalDeviceConfiguration PhysicalDevice functions_run_eagerly "
                "get_logical_device_configuration get_soft_device_placement get_visible_devices list_logical_devices "
                "list_physical_devices run_functions_eagerly set_logical_device_configuration "
                "set_soft_device_placement set_visible_devices",
            ),
            **_names("tapeshim.config", "experimental optimizer threading"),
            **_names("tapeshim._src.distribute.multi_worker", "experimental_connect_to_cluster"),
            "experimental_functions_run_eagerly": "tapeshim._src.config:functions_run_eagerly",
            "experimental_run_functions_eagerly": "tapeshim._src.config:run_functions_eagerly",
        },
    ),
    "tapeshim.config.experimental": Namespace(
        doc="`tf.config.experimental`.",
        exports={
            **_names(
                "tapeshim._src.config",
                "enable_op_determinism enable_tensor_float_32_execution get_memory_growth get_visible_devices "
                "list_logical_devices list_physical_devices set_memory_growth set_visible_devices "
                "tensor_float_32_execution_enabled",
            ),
            **_names("tapeshim._src.config_device", "get_device_details get_memory_info reset_memory_stats"),
            "VirtualDeviceConfiguration": "tapeshim._src.config:LogicalDeviceConfiguration",
            "get_virtual_device_configuration": "tapeshim._src.config:get_logical_device_configuration",
            "set_virtual_device_configuration": "tapeshim._src.config:set_logical_device_configuration",
        },
    ),
    "tapeshim.config.optimizer": Namespace(
        doc=(
            "`tf.config.optimizer`: TF's graph optimizer settings, recorded (tapeshim compiles every program with XLA)."
        ),
        exports={
            **_names("tapeshim._src.config", "get_experimental_options get_jit set_experimental_options set_jit"),
        },
    ),
    "tapeshim.config.threading": Namespace(
        doc="`tf.config.threading`: thread counts, recorded as TF records them (XLA sizes its own thread pools).",
        exports={
            **_names(
                "tapeshim._src.config",
                "get_inter_op_parallelism_threads get_intra_op_parallelism_threads set_inter_op_parallelism_threads "
                "set_intra_op_parallelism_threads",
            ),
        },
    ),
    "tapeshim.data": Namespace(
        doc="`tf.data`: in-memory datasets and their iterators.",
        exports={
            **_names("tapeshim._src.dataset", "Dataset"),
            **_names("tapeshim._src.dataset_options", "Options ThreadingOptions"),
            **_names("tapeshim._src.io.datasets", "TFRecordDataset TextLineDataset"),
            **_names("tapeshim.data", "experimental"),
            "AUTOTUNE": "=-1",
            "INFINITE_CARDINALITY": "=-1",
            "Iterator": "tapeshim._src.dataset_iterator:OwnedIterator",
            "UNKNOWN_CARDINALITY": "=-2",
        },
    ),
    "tapeshim.debugging": Namespace(
        doc="`tf.debugging`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.distribute": Namespace(
        doc="`tf.distribute`: strategies on a `jax.sharding.Mesh` (see docs/distribute.md).",
        exports={
            **_names(
                "tapeshim._src.distribute.input",
                "DistributedDataset DistributedIterator InputContext InputOptions",
            ),
            **_names("tapeshim._src.distribute.values", "DistributedValues PerReplica"),
            **_names(
                "tapeshim._src.distribute.strategy",
                "HierarchicalCopyAllReduce MirroredStrategy NcclAllReduce OneDeviceStrategy ReductionToOneDevice "
                "ReplicaContext Strategy StrategyExtended get_replica_context get_strategy has_strategy "
                "in_cross_replica_context",
            ),
            **_names("tapeshim._src.distribute.multi_worker", "MultiWorkerMirroredStrategy TPUStrategy"),
            **_names("tapeshim._src.distribute.context", "ReduceOp"),
            **_names("tapeshim.distribute", "cluster_resolver experimental"),
            "_losses": "tapeshim._src.distribute:losses",  # registers tf.nn's loss scaling rows
        },
    ),
    "tapeshim.distribute.cluster_resolver": Namespace(
        doc="`tf.distribute.cluster_resolver`: where the processes of a cluster are.",
        exports={
            **_names("tapeshim._src.distribute.multi_worker", "ClusterSpec TFConfigClusterResolver TPUClusterResolver"),
        },
    ),
    "tapeshim.distribute.experimental": Namespace(
        doc="`tf.distribute.experimental`.",
        exports={
            **_names(
                "tapeshim._src.distribute.multi_worker",
                "CentralStorageStrategy CommunicationImplementation CommunicationOptions MultiWorkerMirroredStrategy "
                "ParameterServerStrategy TPUStrategy",
            ),
            **_names("tapeshim._src.distribute.strategy", "ValueContext"),
            "CollectiveCommunication": "tapeshim._src.distribute.multi_worker:CommunicationImplementation",
        },
    ),
    "tapeshim.dtypes": Namespace(
        doc="`tf.dtypes`: dtype objects and conversion.",
        exports={
            **_names(
                "tapeshim._src.dtypes",
                "DType as_dtype bfloat16 complex128 complex64 double float16 float32 float64 half int16 int32 int64 "
                "int8 string uint16 uint32 uint64 uint8",
            ),
            "bool": "tapeshim._src.dtypes:bool_",
        },
    ),
    "tapeshim.errors": Namespace(
        doc="`tf.errors`: TensorFlow's error classes.",
        exports={
            **_names(
                "tapeshim._src.errors",
                "ABORTED ALREADY_EXISTS AbortedError AlreadyExistsError CANCELLED CancelledError DATA_LOSS "
                "DEADLINE_EXCEEDED DataLossError DeadlineExceededError FAILED_PRECONDITION FailedPreconditionError "
                "INTERNAL INVALID_ARGUMENT InternalError InvalidArgumentError NOT_FOUND NotFoundError OK "
                "OUT_OF_RANGE OpError OperatorNotAllowedInGraphError OutOfRangeError PERMISSION_DENIED "
                "PermissionDeniedError RESOURCE_EXHAUSTED ResourceExhaustedError UNAUTHENTICATED UNAVAILABLE "
                "UNIMPLEMENTED UNKNOWN UnauthenticatedError UnavailableError UnimplementedError UnknownError",
            ),
        },
    ),
    "tapeshim.experimental": Namespace(
        doc="tapeshim-specific tools that have no TensorFlow counterpart, and TF's `tf.experimental` modules.",
        exports={
            **_names("tapeshim._src.explain", "Explanation SourceExplanation"),
            **_names("tapeshim._src.dataset_iterator", "Optional"),
            **_names(
                "tapeshim._src.introspection",
                "cached_programs compile_stats explain_none_gradients reset_compile_stats set_program_cache_size",
            ),
            **_names("tapeshim.experimental", "dlpack numpy"),
            **_names("tapeshim._src.interop", "from_jax optax_step to_jax"),
            **_names("tapeshim._src.jax_op", "jax_op"),
            **_names("tapeshim._src.ragged_shape", "DynamicRaggedShape RowPartition"),
        },
    ),
    "tapeshim.experimental.dlpack": Namespace(
        doc="`tf.experimental.dlpack`: share tensors with other array libraries without copying.",
        exports={
            **_names("tapeshim._src.interop", "from_dlpack to_dlpack"),
        },
    ),
    "tapeshim.experimental.numpy": Namespace(
        doc=(
            "`tf.experimental.numpy` for tapeshim: NumPy-style functions that GradientTape records.\n"
            "\n"
            "See `tapeshim/_src/interop_numpy.py`; every function returns a `tf.Tensor`.\n"
        ),
        exports={
            **_names("tapeshim._src.interop_numpy", "array asarray ndim shape size"),
            **_names(
                "numpy",
                "bool_ complex128 complex64 e finfo float16 float32 float64 iinfo inf int16 int32 int64 int8 "
                "issubdtype pi promote_types result_type uint16 uint32 uint64 uint8",
            ),
            "complex_": "numpy:complex128",
            "float_": "numpy:float64",
            "int_": "numpy:int64",
            "ndarray": "tapeshim._src.tensor:Tensor",
            "newaxis": "=None",
        },
        from_dict=("_FUNCTIONS", "tapeshim._src.interop_numpy:FUNCTIONS"),
    ),
    "tapeshim.image": Namespace(
        doc="`tf.image`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={
            **_names("tapeshim._src.ops.image_resize", "ResizeMethod"),
        },
        non_op_exports=True,
    ),
    "tapeshim.io": Namespace(
        doc="`tf.io`: files, TFRecord files and `tf.train.Example` parsing.",
        exports={
            **_names(
                "tapeshim._src.io.parsing",
                "FixedLenFeature FixedLenSequenceFeature RaggedFeature SparseFeature VarLenFeature",
            ),
            **_names("tapeshim._src.io.records", "TFRecordOptions TFRecordWriter"),
            **_names(
                "tapeshim._src.ops.image_codecs",
                "decode_bmp decode_gif decode_image decode_jpeg decode_png encode_jpeg encode_png",
            ),
            **_names("tapeshim.io", "gfile"),
        },
    ),
    "tapeshim.io.gfile": Namespace(
        doc="`tf.io.gfile`: TF's file API (local file system).",
        exports={
            **_names(
                "tapeshim._src.io.gfile",
                "GFile copy exists get_registered_schemes glob isdir join listdir makedirs mkdir remove rename "
                "rmtree stat walk",
            ),
        },
    ),
    "tapeshim.linalg": Namespace(
        doc="`tf.linalg`: re-exports from the op table (`tapeshim/_src/ops/table.py`), and the linear operators.",
        exports={
            **_names(
                "tapeshim._src.linear_operator_leaves",
                "LinearOperatorDiag LinearOperatorFullMatrix LinearOperatorIdentity LinearOperatorLowerTriangular "
                "LinearOperatorScaledIdentity",
            ),
            **_names("tapeshim._src.linear_operator", "LinearOperator"),
            **_names("tapeshim._src.linear_operator_low_rank", "LinearOperatorLowRankUpdate"),
            **_names(
                "tapeshim._src.linear_operator_more",
                "LinearOperatorAdjoint LinearOperatorBlockDiag LinearOperatorComposition LinearOperatorInversion "
                "LinearOperatorKronecker",
            ),
            **_names(
                "tapeshim._src.linear_operator_structured",
                "LinearOperatorCirculant LinearOperatorCirculant2D LinearOperatorCirculant3D LinearOperatorHouseholder "
                "LinearOperatorToeplitz",
            ),
            **_names(
                "tapeshim._src.linear_operator_structured_more",
                "LinearOperatorBlockLowerTriangular LinearOperatorPermutation LinearOperatorTridiag "
                "LinearOperatorZeros",
            ),
        },
        non_op_exports=True,
    ),
    "tapeshim.lookup": Namespace(
        doc="`tf.lookup`: static hash tables and vocabulary tables, and their initializers.",
        exports={
            **_names(
                "tapeshim._src.lookup_ops",
                "KeyValueTensorInitializer StaticHashTable StaticVocabularyTable TextFileIndex TextFileInitializer",
            ),
            **_names("tapeshim.lookup", "experimental"),
        },
    ),
    "tapeshim.lookup.experimental": Namespace(
        doc="`tf.lookup.experimental`: mutable hash tables (`tapeshim/_src/lookup_mutable.py`).",
        exports=_names("tapeshim._src.lookup_mutable", "DenseHashTable MutableHashTable"),
    ),
    "tapeshim.math": Namespace(
        doc="`tf.math`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={**_names("tapeshim.math", "special")},
        hidden=("special",),
    ),
    "tapeshim.math.special": Namespace(
        doc="`tf.math.special`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.version": Namespace(
        doc="`tf.version`: the TF release whose API tapeshim follows (see `tapeshim/_src/version_info.py`).",
        exports=_names(
            "tapeshim._src.version_info",
            "COMPILER_VERSION GIT_VERSION GRAPH_DEF_VERSION GRAPH_DEF_VERSION_MIN_CONSUMER "
            "GRAPH_DEF_VERSION_MIN_PRODUCER VERSION",
        ),
        table=False,
    ),
    "tapeshim.nest": Namespace(
        doc="`tf.nest`: flattening and packing nested structures.",
        exports={
            **_names("tapeshim._src.nest", "assert_same_structure flatten is_nested map_structure pack_sequence_as"),
        },
        has_all=False,
    ),
    "tapeshim.nn": Namespace(
        doc="`tf.nn`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.profiler": Namespace(
        doc="`tf.profiler`: TF 2's profiler API (`experimental`), on `jax.profiler`.",
        exports={
            **_names("tapeshim.profiler", "experimental"),
        },
        table=False,
    ),
    "tapeshim.profiler.experimental": Namespace(
        doc="`tf.profiler.experimental`: profile the process into a TensorBoard log directory (`jax.profiler`).",
        exports={
            **_names("tapeshim._src.profiler", "Profile ProfilerOptions Trace start stop"),
            **_names("tapeshim.profiler.experimental", "client server"),
        },
        table=False,
    ),
    "tapeshim.profiler.experimental.client": Namespace(
        doc="`tf.profiler.experimental.client`: ask profiler servers for traces (needs the `xprof` package).",
        exports={
            **_names("tapeshim._src.profiler", "monitor trace"),
        },
        table=False,
    ),
    "tapeshim.profiler.experimental.server": Namespace(
        doc="`tf.profiler.experimental.server`: a profiler server that TensorBoard can sample.",
        exports={
            "start": "tapeshim._src.profiler:start_server",
        },
        table=False,
    ),
    "tapeshim.ragged": Namespace(
        doc="`tf.ragged`: ragged tensors (rows of different lengths).",
        exports={
            "strings_table": "tapeshim._src:strings_table",
        },
        # The hand-written module's import that registers the rows; its name was public, so it stays.
        hidden=("strings_table",),
    ),
    "tapeshim.quantization": Namespace(
        doc="`tf.quantization`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.raw_ops": Namespace(
        doc="`tf.raw_ops`: TensorFlow's ops by their op names, keyword arguments only (`tapeshim/_src/raw_ops.py`).",
        table=False,
        from_dict=("_RAW_OPS", "tapeshim._src.raw_ops:RAW_OPS"),
    ),
    "tapeshim.random": Namespace(
        doc="`tf.random`: re-exports from the op table. Deterministic under `set_seed`; not TF's bit streams.",
        exports={
            "experimental": "tapeshim._src:random_experimental",
        },
        hidden=("experimental",),
    ),
    "tapeshim.saved_model": Namespace(
        doc=(
            "`tf.saved_model`: save `tf.Module`s' functions as portable StableHLO programs (and a TF "
            "SavedModel when\n"
            "TensorFlow is installed) and load them without the original code."
        ),
        exports={
            **_names(
                "tapeshim._src.saved_model",
                "ASSETS_DIRECTORY ASSETS_KEY CLASSIFY_INPUTS CLASSIFY_METHOD_NAME CLASSIFY_OUTPUT_CLASSES "
                "CLASSIFY_OUTPUT_SCORES DEBUG_DIRECTORY DEBUG_INFO_FILENAME_PB DEFAULT_SERVING_SIGNATURE_DEF_KEY GPU "
                "LoadOptions PREDICT_INPUTS PREDICT_METHOD_NAME PREDICT_OUTPUTS REGRESS_INPUTS REGRESS_METHOD_NAME "
                "REGRESS_OUTPUTS SAVED_MODEL_FILENAME_PB SAVED_MODEL_FILENAME_PBTXT SAVED_MODEL_SCHEMA_VERSION "
                "SERVING SaveOptions TPU TRAINING VARIABLES_DIRECTORY VARIABLES_FILENAME contains_saved_model",
            ),
        },
    ),
    "tapeshim.sets": Namespace(
        doc="`tf.sets`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.signal": Namespace(
        doc="`tf.signal`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.sparse": Namespace(
        doc="`tf.sparse`: sparse tensors and the ops programs use on them.",
        exports={
            **_names("tapeshim._src.sparse", "SparseTensor"),
            "strings_table": "tapeshim._src:strings_table",
        },
        # The hand-written module's import that registers the rows; its name was public, so it stays.
        hidden=("strings_table",),
    ),
    "tapeshim.strings": Namespace(
        doc="`tf.strings`: ops on `tf.string` tensors.",
        exports={
            "strings_table": "tapeshim._src:strings_table",
        },
        # The hand-written module's import that registers the rows; its name was public, so it stays.
        hidden=("strings_table",),
    ),
    "tapeshim.summary": Namespace(
        doc=(
            "`tf.summary`: TensorBoard event files (scalars, histograms, images, text), eagerly and in "
            "`tapeshim.function`."
        ),
        exports={
            **_names(
                "tapeshim._src.summary_ops",
                "SummaryWriter create_file_writer create_noop_writer flush record_if should_record_summaries "
                "trace_export trace_off trace_on",
            ),
            **_names("tapeshim.summary", "experimental"),
        },
    ),
    "tapeshim.summary.experimental": Namespace(
        doc="`tf.summary.experimental`: the default step and summary scopes.",
        exports={
            **_names("tapeshim._src.summary_ops", "get_step set_step summary_scope write_raw_pb"),
        },
    ),
    "tapeshim.test": Namespace(
        doc="`tf.test`: `TestCase` and the helpers of TF 2 test suites (`tapeshim/_src/tf_test_case.py`).",
        exports={
            **_names("tapeshim._src.tf_test_case", "TestCase"),
            **_names("tapeshim._src.gradient_checker", "compute_gradient"),
            **_names(
                "tapeshim._src.tf_test_platform",
                "Benchmark disable_with_predicate gpu_device_name is_built_with_cuda is_built_with_gpu_support "
                "is_built_with_rocm is_built_with_xla is_cpu_target_available is_gpu_available main "
                "with_eager_op_as_function",
            ),
            **_names("tapeshim.test", "experimental"),
        },
        table=False,
    ),
    "tapeshim.test.experimental": Namespace(
        doc="`tf.test.experimental`.",
        exports={
            **_names("tapeshim._src.tf_test_platform", "sync_devices"),
        },
        table=False,
    ),
    "tapeshim.tpu": Namespace(
        doc="`tf.tpu`: TPU set-up calls that TPU programs make before `TPUStrategy` (JAX finds TPUs itself).",
        exports={
            **_names("tapeshim.tpu", "experimental"),
        },
    ),
    "tapeshim.tpu.experimental": Namespace(
        doc="`tf.tpu.experimental`: `initialize_tpu_system` checks that JAX sees TPUs (`docs/distribute.md`).",
        exports={
            **_names("tapeshim._src.distribute.multi_worker", "initialize_tpu_system"),
        },
    ),
    "tapeshim.train": Namespace(
        doc="`tf.train`: checkpoints, and `tf.train.Example` protocol buffers.",
        exports={
            **_names(
                "tapeshim._src.io.example_proto",
                "BytesList Example Feature FeatureList FeatureLists Features FloatList Int64List SequenceExample",
            ),
            **_names("tapeshim._src.checkpoint", "Checkpoint CheckpointManager"),
            **_names(
                "tapeshim._src.checkpoint_io",
                "CheckpointOptions CheckpointReader get_checkpoint_state latest_checkpoint list_variables "
                "load_checkpoint load_variable",
            ),
            **_names("tapeshim._src.distribute.multi_worker", "ClusterSpec"),
            **_names("tapeshim._src.moving_averages", "ExponentialMovingAverage"),
        },
    ),
    "tapeshim.types": Namespace(
        doc="`tf.types`: the types of TF's public interfaces.",
        exports={
            **_names("tapeshim.types", "experimental"),
        },
    ),
    "tapeshim.types.experimental": Namespace(
        doc="`tf.types.experimental`: tracing protocol and function types.",
        exports={
            **_names("tapeshim._src.concrete_function", "AtomicFunction ConcreteFunction FunctionType"),
            **_names("tapeshim._src.trace_type", "PlaceholderContext TraceType TracingContext"),
            **_names("tapeshim._src.typing_aliases", "TensorLike"),
            "GenericFunction": "tapeshim._src.function:Function",
            "PolymorphicFunction": "tapeshim._src.function:Function",
        },
    ),
}
