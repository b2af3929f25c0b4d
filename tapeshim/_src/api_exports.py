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
        (a literal written as `name = expression`).
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
this means for other JAX code in the same process. The ops re-exported here are
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
"""
_ROOT_EPILOGUE = '''
if _typing.TYPE_CHECKING:  # at run time, `tf.keras` is imported on first use (below)
    from tapeshim import keras


def __getattr__(name: str) -> object:
    """`tf.keras` is imported on first use: importing Keras chooses its backend (JAX) for the process."""
    if name == "keras":
        return _importlib.import_module("tapeshim.keras")
    raise AttributeError(f"module 'tapeshim' has no attribute {name!r}")
'''

NAMESPACES: dict[str, Namespace] = {
    "tapeshim": Namespace(
        doc=_ROOT_DOC,
        prelude=_ROOT_PRELUDE,
        epilogue=_ROOT_EPILOGUE,
        non_op_exports=True,
        extra_all=("keras",),
        exports={
            "DType": "tapeshim._src.dtypes:DType",
            "DeviceSpec": "tapeshim._src.config_device:DeviceSpec",
            "ForwardAccumulator": "tapeshim._src.forward:ForwardAccumulator",
            "Function": "tapeshim._src.function:Function",
            "GradientTape": "tapeshim._src.tape:GradientTape",
            "Module": "tapeshim._src.module:Module",
            "RaggedTensor": "tapeshim._src.ragged:RaggedTensor",
            "SparseTensor": "tapeshim._src.sparse:SparseTensor",
            "Tensor": "tapeshim._src.tensor:Tensor",
            "TensorArray": "tapeshim._src.autograph.tensor_array:TensorArray",
            "TensorShape": "tapeshim._src.shape:TensorShape",
            "TensorSpec": "tapeshim._src.tensor_spec:TensorSpec",
            "UnconnectedGradients": "tapeshim._src.tape:UnconnectedGradients",
            "Variable": "tapeshim._src.variable:Variable",
            "VariableAggregation": "tapeshim._src.variable:VariableAggregation",
            "VariableSynchronization": "tapeshim._src.variable:VariableSynchronization",
            "as_dtype": "tapeshim._src.dtypes:as_dtype",
            "audio": "tapeshim:audio",
            "autodiff": "tapeshim:autodiff",
            "autograph": "tapeshim:autograph",
            "bfloat16": "tapeshim._src.dtypes:bfloat16",
            "bitwise": "tapeshim:bitwise",
            "bool": "tapeshim._src.dtypes:bool_",
            "case": "tapeshim._src.control_flow:case",
            "compat": "tapeshim:compat",
            "complex128": "tapeshim._src.dtypes:complex128",
            "complex64": "tapeshim._src.dtypes:complex64",
            "cond": "tapeshim._src.control_flow:cond",
            "config": "tapeshim:config",
            "constant": "tapeshim._src.tensor:constant",
            "convert_to_tensor": "tapeshim._src.tensor:convert_to_tensor",
            "custom_gradient": "tapeshim._src.custom_gradient:custom_gradient",
            "data": "tapeshim:data",
            "debugging": "tapeshim:debugging",
            "device": "tapeshim._src.config_device:device",
            "distribute": "tapeshim:distribute",
            "double": "tapeshim._src.dtypes:double",
            "dtypes": "tapeshim:dtypes",
            "errors": "tapeshim:errors",
            "experimental": "tapeshim:experimental",
            "float16": "tapeshim._src.dtypes:float16",
            "float32": "tapeshim._src.dtypes:float32",
            "float64": "tapeshim._src.dtypes:float64",
            "function": "tapeshim._src.function:function",
            "get_logger": "tapeshim._src.tf_logging:get_logger",
            "half": "tapeshim._src.dtypes:half",
            "image": "tapeshim:image",
            "init_scope": "tapeshim._src.function_trace:init_scope",
            "int16": "tapeshim._src.dtypes:int16",
            "int32": "tapeshim._src.dtypes:int32",
            "int64": "tapeshim._src.dtypes:int64",
            "int8": "tapeshim._src.dtypes:int8",
            "io": "tapeshim:io",
            "is_tensor": "tapeshim._src.tensor:is_tensor",
            "linalg": "tapeshim:linalg",
            "math": "tapeshim:math",
            "name_scope": "tapeshim._src.module:name_scope",
            "nest": "tapeshim:nest",
            "newaxis": "=None",
            "nn": "tapeshim:nn",
            "numpy_function": "tapeshim._src.ops.host_ops:numpy_function",
            "py_function": "tapeshim._src.py_function:py_function",
            "ragged": "tapeshim:ragged",
            "random": "tapeshim:random",
            "register_tensor_conversion_function": "tapeshim._src.tensor:register_tensor_conversion_function",
            "saved_model": "tapeshim:saved_model",
            "sets": "tapeshim:sets",
            "signal": "tapeshim:signal",
            "sparse": "tapeshim:sparse",
            "string": "tapeshim._src.dtypes:string",
            "strings": "tapeshim:strings",
            "summary": "tapeshim:summary",
            "switch_case": "tapeshim._src.control_flow:switch_case",
            "tpu": "tapeshim:tpu",
            "train": "tapeshim:train",
            "types": "tapeshim:types",
            "uint16": "tapeshim._src.dtypes:uint16",
            "uint32": "tapeshim._src.dtypes:uint32",
            "uint64": "tapeshim._src.dtypes:uint64",
            "uint8": "tapeshim._src.dtypes:uint8",
            "while_loop": "tapeshim._src.control_flow:while_loop",
            "__version__": '="0.1.0"',
        },
    ),
    "tapeshim.audio": Namespace(
        doc="`tf.audio`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.autodiff": Namespace(
        doc="`tf.autodiff`: the tape and forward-mode accumulator.",
        exports={
            "ForwardAccumulator": "tapeshim._src.forward:ForwardAccumulator",
            "GradientTape": "tapeshim._src.tape:GradientTape",
        },
        has_all=False,
    ),
    "tapeshim.autograph": Namespace(
        doc="`tf.autograph`: convert Python control flow over tensors (used by `tapeshim.function`).",
        exports={
            "experimental": "tapeshim.autograph:experimental",
            "to_code": "tapeshim._src.autograph.conversion:to_code",
            "to_graph": "tapeshim._src.autograph.conversion:to_graph",
        },
    ),
    "tapeshim.autograph.experimental": Namespace(
        doc="`tf.autograph.experimental`.",
        exports={
            "do_not_convert": "tapeshim._src.autograph.conversion:do_not_convert",
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
            "as_bytes": "tapeshim._src.api_compat:as_bytes",
            "as_str": "tapeshim._src.api_compat:as_str",
            "as_str_any": "tapeshim._src.api_compat:as_str_any",
            "as_text": "tapeshim._src.api_compat:as_text",
            "bytes_or_text_types": "tapeshim._src.api_compat:bytes_or_text_types",
            "complex_types": "tapeshim._src.api_compat:complex_types",
            "dimension_at_index": "tapeshim._src.api_compat:dimension_at_index",
            "dimension_value": "tapeshim._src.api_compat:dimension_value",
            "forward_compatibility_horizon": "tapeshim._src.api_compat:forward_compatibility_horizon",
            "forward_compatible": "tapeshim._src.api_compat:forward_compatible",
            "integral_types": "tapeshim._src.api_compat:integral_types",
            "path_to_str": "tapeshim._src.api_compat:path_to_str",
            "real_types": "tapeshim._src.api_compat:real_types",
            "v1": "tapeshim.compat:v1",
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
        # Names the hand-written module leaked (its own imports); kept so the public surface is unchanged.
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
            "disable_eager_execution": "tapeshim._src.api_compat_v1:disable_eager_execution",
            "disable_v2_behavior": "tapeshim._src.api_compat_v1:disable_v2_behavior",
            "enable_eager_execution": "tapeshim._src.api_compat_v1:enable_eager_execution",
            "enable_v2_behavior": "tapeshim._src.api_compat_v1:enable_v2_behavior",
            "executing_eagerly": "tapeshim._src.api_compat_v1:executing_eagerly",
            "set_random_seed": "tapeshim._src.api_compat_v1:set_random_seed",
            "logging": "tapeshim.compat.v1:logging",
            "__getattr__": "tapeshim._src.api_compat_v1:tf1_attribute",
            "Any": "typing:Any",
            "annotations": "__future__:annotations",
        },
        # Names the hand-written module leaked (its own imports); kept so the public surface is unchanged.
        hidden=(
            "Any",
            "annotations",
        ),
    ),
    "tapeshim.compat.v1.logging": Namespace(
        doc="`tf.compat.v1.logging`: TF 1's logging functions on the `tensorflow` logger.",
        exports={
            "DEBUG": "tapeshim._src.api_compat_v1_logging:DEBUG",
            "ERROR": "tapeshim._src.api_compat_v1_logging:ERROR",
            "FATAL": "tapeshim._src.api_compat_v1_logging:FATAL",
            "INFO": "tapeshim._src.api_compat_v1_logging:INFO",
            "WARN": "tapeshim._src.api_compat_v1_logging:WARN",
            "TaskLevelStatusMessage": "tapeshim._src.api_compat_v1_logging:TaskLevelStatusMessage",
            "debug": "tapeshim._src.api_compat_v1_logging:debug",
            "error": "tapeshim._src.api_compat_v1_logging:error",
            "fatal": "tapeshim._src.api_compat_v1_logging:fatal",
            "flush": "tapeshim._src.api_compat_v1_logging:flush",
            "get_verbosity": "tapeshim._src.api_compat_v1_logging:get_verbosity",
            "info": "tapeshim._src.api_compat_v1_logging:info",
            "log": "tapeshim._src.api_compat_v1_logging:log",
            "log_every_n": "tapeshim._src.api_compat_v1_logging:log_every_n",
            "log_first_n": "tapeshim._src.api_compat_v1_logging:log_first_n",
            "log_if": "tapeshim._src.api_compat_v1_logging:log_if",
            "set_verbosity": "tapeshim._src.api_compat_v1_logging:set_verbosity",
            "vlog": "tapeshim._src.api_compat_v1_logging:vlog",
            "warn": "tapeshim._src.api_compat_v1_logging:warn",
            "warning": "tapeshim._src.api_compat_v1_logging:warning",
            "Any": "typing:Any",
        },
        # Names the hand-written module leaked (its own imports); kept so the public surface is unchanged.
        hidden=("Any",),
    ),
    "tapeshim.data.experimental": Namespace(
        doc="`tf.data.experimental`: the pieces TF2 programs still use.",
        exports={
            "AUTOTUNE": "tapeshim._src.api_data_experimental:AUTOTUNE",
            "INFINITE_CARDINALITY": "tapeshim._src.api_data_experimental:INFINITE_CARDINALITY",
            "UNKNOWN_CARDINALITY": "tapeshim._src.api_data_experimental:UNKNOWN_CARDINALITY",
            "assert_cardinality": "tapeshim._src.api_data_experimental:assert_cardinality",
            "bucket_by_sequence_length": "tapeshim._src.api_data_experimental:bucket_by_sequence_length",
            "cardinality": "tapeshim._src.api_data_experimental:cardinality",
            "choose_from_datasets": "tapeshim._src.api_data_experimental:choose_from_datasets",
            "enumerate_dataset": "tapeshim._src.api_data_experimental:enumerate_dataset",
            "get_single_element": "tapeshim._src.api_data_experimental:get_single_element",
            "group_by_window": "tapeshim._src.api_data_experimental:group_by_window",
            "ignore_errors": "tapeshim._src.api_data_experimental:ignore_errors",
            "rejection_resample": "tapeshim._src.api_data_experimental:rejection_resample",
            "sample_from_datasets": "tapeshim._src.api_data_experimental:sample_from_datasets",
            "scan": "tapeshim._src.api_data_experimental:scan",
            "take_while": "tapeshim._src.api_data_experimental:take_while",
            "unique": "tapeshim._src.api_data_experimental:unique",
            "AutoShardPolicy": "tapeshim._src.dataset_options:AutoShardPolicy",
            "AutotuneOptions": "tapeshim._src.dataset_options:AutotuneOptions",
            "DistributeOptions": "tapeshim._src.dataset_options:DistributeOptions",
            "ExternalStatePolicy": "tapeshim._src.dataset_options:ExternalStatePolicy",
            "OptimizationOptions": "tapeshim._src.dataset_options:OptimizationOptions",
            "ThreadingOptions": "tapeshim._src.dataset_options:ThreadingOptions",
            "make_csv_dataset": "tapeshim._src.dataset_sources:make_csv_dataset",
            "TFRecordWriter": "tapeshim._src.io.datasets:DatasetTFRecordWriter",
            "Any": "typing:Any",
            "Callable": "typing:Callable",
            "DatasetTransforms": "tapeshim._src.dataset_transforms:DatasetTransforms",
        },
        # Names the hand-written module leaked (its own imports); kept so the public surface is unchanged.
        hidden=(
            "Any",
            "Callable",
            "DatasetTransforms",
        ),
    ),
    "tapeshim.config": Namespace(
        doc="`tf.config`: devices and runtime settings (`tapeshim/_src/config.py`, `config_device.py`).",
        exports={
            "LogicalDevice": "tapeshim._src.config:LogicalDevice",
            "LogicalDeviceConfiguration": "tapeshim._src.config:LogicalDeviceConfiguration",
            "PhysicalDevice": "tapeshim._src.config:PhysicalDevice",
            "experimental": "tapeshim.config:experimental",
            "experimental_connect_to_cluster": "tapeshim._src.distribute.multi_worker:experimental_connect_to_cluster",
            "experimental_functions_run_eagerly": "tapeshim._src.config:functions_run_eagerly",
            "experimental_run_functions_eagerly": "tapeshim._src.config:run_functions_eagerly",
            "functions_run_eagerly": "tapeshim._src.config:functions_run_eagerly",
            "get_logical_device_configuration": "tapeshim._src.config:get_logical_device_configuration",
            "get_soft_device_placement": "tapeshim._src.config:get_soft_device_placement",
            "get_visible_devices": "tapeshim._src.config:get_visible_devices",
            "list_logical_devices": "tapeshim._src.config:list_logical_devices",
            "list_physical_devices": "tapeshim._src.config:list_physical_devices",
            "optimizer": "tapeshim.config:optimizer",
            "run_functions_eagerly": "tapeshim._src.config:run_functions_eagerly",
            "set_logical_device_configuration": "tapeshim._src.config:set_logical_device_configuration",
            "set_soft_device_placement": "tapeshim._src.config:set_soft_device_placement",
            "set_visible_devices": "tapeshim._src.config:set_visible_devices",
            "threading": "tapeshim.config:threading",
        },
    ),
    "tapeshim.config.experimental": Namespace(
        doc="`tf.config.experimental`.",
        exports={
            "VirtualDeviceConfiguration": "tapeshim._src.config:LogicalDeviceConfiguration",
            "enable_op_determinism": "tapeshim._src.config:enable_op_determinism",
            "enable_tensor_float_32_execution": "tapeshim._src.config:enable_tensor_float_32_execution",
            "get_device_details": "tapeshim._src.config_device:get_device_details",
            "get_memory_growth": "tapeshim._src.config:get_memory_growth",
            "get_memory_info": "tapeshim._src.config_device:get_memory_info",
            "get_virtual_device_configuration": "tapeshim._src.config:get_logical_device_configuration",
            "get_visible_devices": "tapeshim._src.config:get_visible_devices",
            "list_logical_devices": "tapeshim._src.config:list_logical_devices",
            "list_physical_devices": "tapeshim._src.config:list_physical_devices",
            "reset_memory_stats": "tapeshim._src.config_device:reset_memory_stats",
            "set_memory_growth": "tapeshim._src.config:set_memory_growth",
            "set_virtual_device_configuration": "tapeshim._src.config:set_logical_device_configuration",
            "set_visible_devices": "tapeshim._src.config:set_visible_devices",
            "tensor_float_32_execution_enabled": "tapeshim._src.config:tensor_float_32_execution_enabled",
        },
    ),
    "tapeshim.config.optimizer": Namespace(
        doc=(
            "`tf.config.optimizer`: TF's graph optimizer settings, recorded (tapeshim compiles every program with XLA)."
        ),
        exports={
            "get_experimental_options": "tapeshim._src.config:get_experimental_options",
            "get_jit": "tapeshim._src.config:get_jit",
            "set_experimental_options": "tapeshim._src.config:set_experimental_options",
            "set_jit": "tapeshim._src.config:set_jit",
        },
    ),
    "tapeshim.config.threading": Namespace(
        doc="`tf.config.threading`: thread counts, recorded as TF records them (XLA sizes its own thread pools).",
        exports={
            "get_inter_op_parallelism_threads": "tapeshim._src.config:get_inter_op_parallelism_threads",
            "get_intra_op_parallelism_threads": "tapeshim._src.config:get_intra_op_parallelism_threads",
            "set_inter_op_parallelism_threads": "tapeshim._src.config:set_inter_op_parallelism_threads",
            "set_intra_op_parallelism_threads": "tapeshim._src.config:set_intra_op_parallelism_threads",
        },
    ),
    "tapeshim.data": Namespace(
        doc="`tf.data`: in-memory datasets and their iterators.",
        exports={
            "AUTOTUNE": "=-1",
            "Dataset": "tapeshim._src.dataset:Dataset",
            "INFINITE_CARDINALITY": "=-1",
            "Iterator": "tapeshim._src.dataset_iterator:OwnedIterator",
            "Options": "tapeshim._src.dataset_options:Options",
            "TFRecordDataset": "tapeshim._src.io.datasets:TFRecordDataset",
            "TextLineDataset": "tapeshim._src.io.datasets:TextLineDataset",
            "ThreadingOptions": "tapeshim._src.dataset_options:ThreadingOptions",
            "UNKNOWN_CARDINALITY": "=-2",
            "experimental": "tapeshim.data:experimental",
        },
    ),
    "tapeshim.debugging": Namespace(
        doc="`tf.debugging`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.distribute": Namespace(
        doc="`tf.distribute`: strategies on a `jax.sharding.Mesh` (see docs/distribute.md).",
        exports={
            "_losses": "tapeshim._src.distribute:losses",  # registers tf.nn's loss scaling rows
            "DistributedDataset": "tapeshim._src.distribute.input:DistributedDataset",
            "DistributedIterator": "tapeshim._src.distribute.input:DistributedIterator",
            "DistributedValues": "tapeshim._src.distribute.values:DistributedValues",
            "HierarchicalCopyAllReduce": "tapeshim._src.distribute.strategy:HierarchicalCopyAllReduce",
            "InputContext": "tapeshim._src.distribute.input:InputContext",
            "InputOptions": "tapeshim._src.distribute.input:InputOptions",
            "MirroredStrategy": "tapeshim._src.distribute.strategy:MirroredStrategy",
            "MultiWorkerMirroredStrategy": "tapeshim._src.distribute.multi_worker:MultiWorkerMirroredStrategy",
            "NcclAllReduce": "tapeshim._src.distribute.strategy:NcclAllReduce",
            "OneDeviceStrategy": "tapeshim._src.distribute.strategy:OneDeviceStrategy",
            "PerReplica": "tapeshim._src.distribute.values:PerReplica",
            "ReduceOp": "tapeshim._src.distribute.context:ReduceOp",
            "ReductionToOneDevice": "tapeshim._src.distribute.strategy:ReductionToOneDevice",
            "ReplicaContext": "tapeshim._src.distribute.strategy:ReplicaContext",
            "Strategy": "tapeshim._src.distribute.strategy:Strategy",
            "StrategyExtended": "tapeshim._src.distribute.strategy:StrategyExtended",
            "TPUStrategy": "tapeshim._src.distribute.multi_worker:TPUStrategy",
            "cluster_resolver": "tapeshim.distribute:cluster_resolver",
            "experimental": "tapeshim.distribute:experimental",
            "get_replica_context": "tapeshim._src.distribute.strategy:get_replica_context",
            "get_strategy": "tapeshim._src.distribute.strategy:get_strategy",
            "has_strategy": "tapeshim._src.distribute.strategy:has_strategy",
            "in_cross_replica_context": "tapeshim._src.distribute.strategy:in_cross_replica_context",
        },
    ),
    "tapeshim.distribute.cluster_resolver": Namespace(
        doc="`tf.distribute.cluster_resolver`: where the processes of a cluster are.",
        exports={
            "ClusterSpec": "tapeshim._src.distribute.multi_worker:ClusterSpec",
            "TFConfigClusterResolver": "tapeshim._src.distribute.multi_worker:TFConfigClusterResolver",
            "TPUClusterResolver": "tapeshim._src.distribute.multi_worker:TPUClusterResolver",
        },
    ),
    "tapeshim.distribute.experimental": Namespace(
        doc="`tf.distribute.experimental`.",
        exports={
            "CentralStorageStrategy": "tapeshim._src.distribute.multi_worker:CentralStorageStrategy",
            "CollectiveCommunication": "tapeshim._src.distribute.multi_worker:CommunicationImplementation",
            "CommunicationImplementation": "tapeshim._src.distribute.multi_worker:CommunicationImplementation",
            "CommunicationOptions": "tapeshim._src.distribute.multi_worker:CommunicationOptions",
            "MultiWorkerMirroredStrategy": "tapeshim._src.distribute.multi_worker:MultiWorkerMirroredStrategy",
            "ParameterServerStrategy": "tapeshim._src.distribute.multi_worker:ParameterServerStrategy",
            "TPUStrategy": "tapeshim._src.distribute.multi_worker:TPUStrategy",
            "ValueContext": "tapeshim._src.distribute.strategy:ValueContext",
        },
    ),
    "tapeshim.dtypes": Namespace(
        doc="`tf.dtypes`: dtype objects and conversion.",
        exports={
            "DType": "tapeshim._src.dtypes:DType",
            "as_dtype": "tapeshim._src.dtypes:as_dtype",
            "bfloat16": "tapeshim._src.dtypes:bfloat16",
            "bool": "tapeshim._src.dtypes:bool_",
            "complex128": "tapeshim._src.dtypes:complex128",
            "complex64": "tapeshim._src.dtypes:complex64",
            "double": "tapeshim._src.dtypes:double",
            "float16": "tapeshim._src.dtypes:float16",
            "float32": "tapeshim._src.dtypes:float32",
            "float64": "tapeshim._src.dtypes:float64",
            "half": "tapeshim._src.dtypes:half",
            "int16": "tapeshim._src.dtypes:int16",
            "int32": "tapeshim._src.dtypes:int32",
            "int64": "tapeshim._src.dtypes:int64",
            "int8": "tapeshim._src.dtypes:int8",
            "string": "tapeshim._src.dtypes:string",
            "uint16": "tapeshim._src.dtypes:uint16",
            "uint32": "tapeshim._src.dtypes:uint32",
            "uint64": "tapeshim._src.dtypes:uint64",
            "uint8": "tapeshim._src.dtypes:uint8",
        },
    ),
    "tapeshim.errors": Namespace(
        doc="`tf.errors`: TensorFlow's error classes.",
        exports={
            "ABORTED": "tapeshim._src.errors:ABORTED",
            "ALREADY_EXISTS": "tapeshim._src.errors:ALREADY_EXISTS",
            "AbortedError": "tapeshim._src.errors:AbortedError",
            "AlreadyExistsError": "tapeshim._src.errors:AlreadyExistsError",
            "CANCELLED": "tapeshim._src.errors:CANCELLED",
            "CancelledError": "tapeshim._src.errors:CancelledError",
            "DATA_LOSS": "tapeshim._src.errors:DATA_LOSS",
            "DEADLINE_EXCEEDED": "tapeshim._src.errors:DEADLINE_EXCEEDED",
            "DataLossError": "tapeshim._src.errors:DataLossError",
            "DeadlineExceededError": "tapeshim._src.errors:DeadlineExceededError",
            "FAILED_PRECONDITION": "tapeshim._src.errors:FAILED_PRECONDITION",
            "FailedPreconditionError": "tapeshim._src.errors:FailedPreconditionError",
            "INTERNAL": "tapeshim._src.errors:INTERNAL",
            "INVALID_ARGUMENT": "tapeshim._src.errors:INVALID_ARGUMENT",
            "InternalError": "tapeshim._src.errors:InternalError",
            "InvalidArgumentError": "tapeshim._src.errors:InvalidArgumentError",
            "NOT_FOUND": "tapeshim._src.errors:NOT_FOUND",
            "NotFoundError": "tapeshim._src.errors:NotFoundError",
            "OK": "tapeshim._src.errors:OK",
            "OUT_OF_RANGE": "tapeshim._src.errors:OUT_OF_RANGE",
            "OpError": "tapeshim._src.errors:OpError",
            "OperatorNotAllowedInGraphError": "tapeshim._src.errors:OperatorNotAllowedInGraphError",
            "OutOfRangeError": "tapeshim._src.errors:OutOfRangeError",
            "PERMISSION_DENIED": "tapeshim._src.errors:PERMISSION_DENIED",
            "PermissionDeniedError": "tapeshim._src.errors:PermissionDeniedError",
            "RESOURCE_EXHAUSTED": "tapeshim._src.errors:RESOURCE_EXHAUSTED",
            "ResourceExhaustedError": "tapeshim._src.errors:ResourceExhaustedError",
            "UNAUTHENTICATED": "tapeshim._src.errors:UNAUTHENTICATED",
            "UNAVAILABLE": "tapeshim._src.errors:UNAVAILABLE",
            "UNIMPLEMENTED": "tapeshim._src.errors:UNIMPLEMENTED",
            "UNKNOWN": "tapeshim._src.errors:UNKNOWN",
            "UnauthenticatedError": "tapeshim._src.errors:UnauthenticatedError",
            "UnavailableError": "tapeshim._src.errors:UnavailableError",
            "UnimplementedError": "tapeshim._src.errors:UnimplementedError",
            "UnknownError": "tapeshim._src.errors:UnknownError",
        },
    ),
    "tapeshim.experimental": Namespace(
        doc="tapeshim-specific tools that have no TensorFlow counterpart, and TF's `tf.experimental` modules.",
        exports={
            "Explanation": "tapeshim._src.explain:Explanation",
            "Optional": "tapeshim._src.dataset_iterator:Optional",
            "SourceExplanation": "tapeshim._src.explain:SourceExplanation",
            "cached_programs": "tapeshim._src.introspection:cached_programs",
            "compile_stats": "tapeshim._src.introspection:compile_stats",
            "dlpack": "tapeshim.experimental:dlpack",
            "explain_none_gradients": "tapeshim._src.introspection:explain_none_gradients",
            "from_jax": "tapeshim._src.interop:from_jax",
            "jax_op": "tapeshim._src.custom_gradient:jax_op",
            "numpy": "tapeshim.experimental:numpy",
            "optax_step": "tapeshim._src.interop:optax_step",
            "reset_compile_stats": "tapeshim._src.introspection:reset_compile_stats",
            "set_program_cache_size": "tapeshim._src.introspection:set_program_cache_size",
            "to_jax": "tapeshim._src.interop:to_jax",
        },
    ),
    "tapeshim.experimental.dlpack": Namespace(
        doc="`tf.experimental.dlpack`: share tensors with other array libraries without copying.",
        exports={
            "from_dlpack": "tapeshim._src.interop:from_dlpack",
            "to_dlpack": "tapeshim._src.interop:to_dlpack",
        },
    ),
    "tapeshim.experimental.numpy": Namespace(
        doc=(
            "`tf.experimental.numpy` for tapeshim: NumPy-style functions that GradientTape records.\n"
            "\n"
            "See `tapeshim/_src/interop_numpy.py`; every function returns a `tf.Tensor`.\n"
        ),
        from_dict=("_FUNCTIONS", "tapeshim._src.interop_numpy:FUNCTIONS"),
        exports={
            "array": "tapeshim._src.interop_numpy:array",
            "asarray": "tapeshim._src.interop_numpy:asarray",
            "bool_": "numpy:bool_",
            "complex128": "numpy:complex128",
            "complex64": "numpy:complex64",
            "complex_": "numpy:complex128",
            "e": "numpy:e",
            "finfo": "numpy:finfo",
            "float16": "numpy:float16",
            "float32": "numpy:float32",
            "float64": "numpy:float64",
            "float_": "numpy:float64",
            "iinfo": "numpy:iinfo",
            "inf": "numpy:inf",
            "int16": "numpy:int16",
            "int32": "numpy:int32",
            "int64": "numpy:int64",
            "int8": "numpy:int8",
            "int_": "numpy:int64",
            "issubdtype": "numpy:issubdtype",
            "ndarray": "tapeshim._src.tensor:Tensor",
            "ndim": "tapeshim._src.interop_numpy:ndim",
            "newaxis": "=None",
            "pi": "numpy:pi",
            "promote_types": "numpy:promote_types",
            "result_type": "numpy:result_type",
            "shape": "tapeshim._src.interop_numpy:shape",
            "size": "tapeshim._src.interop_numpy:size",
            "uint16": "numpy:uint16",
            "uint32": "numpy:uint32",
            "uint64": "numpy:uint64",
            "uint8": "numpy:uint8",
        },
    ),
    "tapeshim.image": Namespace(
        doc="`tf.image`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        non_op_exports=True,
        exports={
            "ResizeMethod": "tapeshim._src.ops.image_resize:ResizeMethod",
        },
    ),
    "tapeshim.io": Namespace(
        doc="`tf.io`: files, TFRecord files and `tf.train.Example` parsing.",
        exports={
            "FixedLenFeature": "tapeshim._src.io.parsing:FixedLenFeature",
            "FixedLenSequenceFeature": "tapeshim._src.io.parsing:FixedLenSequenceFeature",
            "RaggedFeature": "tapeshim._src.io.parsing:RaggedFeature",
            "SparseFeature": "tapeshim._src.io.parsing:SparseFeature",
            "TFRecordOptions": "tapeshim._src.io.records:TFRecordOptions",
            "TFRecordWriter": "tapeshim._src.io.records:TFRecordWriter",
            "VarLenFeature": "tapeshim._src.io.parsing:VarLenFeature",
            "decode_bmp": "tapeshim._src.ops.image_codecs:decode_bmp",
            "decode_gif": "tapeshim._src.ops.image_codecs:decode_gif",
            "decode_image": "tapeshim._src.ops.image_codecs:decode_image",
            "decode_jpeg": "tapeshim._src.ops.image_codecs:decode_jpeg",
            "decode_png": "tapeshim._src.ops.image_codecs:decode_png",
            "encode_jpeg": "tapeshim._src.ops.image_codecs:encode_jpeg",
            "encode_png": "tapeshim._src.ops.image_codecs:encode_png",
            "gfile": "tapeshim.io:gfile",
        },
    ),
    "tapeshim.io.gfile": Namespace(
        doc="`tf.io.gfile`: TF's file API (local file system).",
        exports={
            "GFile": "tapeshim._src.io.gfile:GFile",
            "copy": "tapeshim._src.io.gfile:copy",
            "exists": "tapeshim._src.io.gfile:exists",
            "get_registered_schemes": "tapeshim._src.io.gfile:get_registered_schemes",
            "glob": "tapeshim._src.io.gfile:glob",
            "isdir": "tapeshim._src.io.gfile:isdir",
            "join": "tapeshim._src.io.gfile:join",
            "listdir": "tapeshim._src.io.gfile:listdir",
            "makedirs": "tapeshim._src.io.gfile:makedirs",
            "mkdir": "tapeshim._src.io.gfile:mkdir",
            "remove": "tapeshim._src.io.gfile:remove",
            "rename": "tapeshim._src.io.gfile:rename",
            "rmtree": "tapeshim._src.io.gfile:rmtree",
            "stat": "tapeshim._src.io.gfile:stat",
            "walk": "tapeshim._src.io.gfile:walk",
        },
    ),
    "tapeshim.linalg": Namespace(
        doc="`tf.linalg`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.math": Namespace(
        doc="`tf.math`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.nest": Namespace(
        doc="`tf.nest`: flattening and packing nested structures.",
        exports={
            "assert_same_structure": "tapeshim._src.nest:assert_same_structure",
            "flatten": "tapeshim._src.nest:flatten",
            "is_nested": "tapeshim._src.nest:is_nested",
            "map_structure": "tapeshim._src.nest:map_structure",
            "pack_sequence_as": "tapeshim._src.nest:pack_sequence_as",
        },
        has_all=False,
    ),
    "tapeshim.nn": Namespace(
        doc="`tf.nn`: re-exports from the op table (`tapeshim/_src/ops/table.py`).",
        exports={},
    ),
    "tapeshim.ragged": Namespace(
        doc="`tf.ragged`: ragged tensors (rows of different lengths).",
        exports={
            "strings_table": "tapeshim._src:strings_table",
        },
        hidden=("strings_table",),
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
            "ASSETS_DIRECTORY": "tapeshim._src.saved_model:ASSETS_DIRECTORY",
            "ASSETS_KEY": "tapeshim._src.saved_model:ASSETS_KEY",
            "CLASSIFY_INPUTS": "tapeshim._src.saved_model:CLASSIFY_INPUTS",
            "CLASSIFY_METHOD_NAME": "tapeshim._src.saved_model:CLASSIFY_METHOD_NAME",
            "CLASSIFY_OUTPUT_CLASSES": "tapeshim._src.saved_model:CLASSIFY_OUTPUT_CLASSES",
            "CLASSIFY_OUTPUT_SCORES": "tapeshim._src.saved_model:CLASSIFY_OUTPUT_SCORES",
            "DEBUG_DIRECTORY": "tapeshim._src.saved_model:DEBUG_DIRECTORY",
            "DEBUG_INFO_FILENAME_PB": "tapeshim._src.saved_model:DEBUG_INFO_FILENAME_PB",
            "DEFAULT_SERVING_SIGNATURE_DEF_KEY": "tapeshim._src.saved_model:DEFAULT_SERVING_SIGNATURE_DEF_KEY",
            "GPU": "tapeshim._src.saved_model:GPU",
            "LoadOptions": "tapeshim._src.saved_model:LoadOptions",
            "PREDICT_INPUTS": "tapeshim._src.saved_model:PREDICT_INPUTS",
            "PREDICT_METHOD_NAME": "tapeshim._src.saved_model:PREDICT_METHOD_NAME",
            "PREDICT_OUTPUTS": "tapeshim._src.saved_model:PREDICT_OUTPUTS",
            "REGRESS_INPUTS": "tapeshim._src.saved_model:REGRESS_INPUTS",
            "REGRESS_METHOD_NAME": "tapeshim._src.saved_model:REGRESS_METHOD_NAME",
            "REGRESS_OUTPUTS": "tapeshim._src.saved_model:REGRESS_OUTPUTS",
            "SAVED_MODEL_FILENAME_PB": "tapeshim._src.saved_model:SAVED_MODEL_FILENAME_PB",
            "SAVED_MODEL_FILENAME_PBTXT": "tapeshim._src.saved_model:SAVED_MODEL_FILENAME_PBTXT",
            "SAVED_MODEL_SCHEMA_VERSION": "tapeshim._src.saved_model:SAVED_MODEL_SCHEMA_VERSION",
            "SERVING": "tapeshim._src.saved_model:SERVING",
            "SaveOptions": "tapeshim._src.saved_model:SaveOptions",
            "TPU": "tapeshim._src.saved_model:TPU",
            "TRAINING": "tapeshim._src.saved_model:TRAINING",
            "VARIABLES_DIRECTORY": "tapeshim._src.saved_model:VARIABLES_DIRECTORY",
            "VARIABLES_FILENAME": "tapeshim._src.saved_model:VARIABLES_FILENAME",
            "contains_saved_model": "tapeshim._src.saved_model:contains_saved_model",
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
            "SparseTensor": "tapeshim._src.sparse:SparseTensor",
            "strings_table": "tapeshim._src:strings_table",
        },
        hidden=("strings_table",),
    ),
    "tapeshim.strings": Namespace(
        doc="`tf.strings`: ops on `tf.string` tensors.",
        exports={
            "strings_table": "tapeshim._src:strings_table",
        },
        hidden=("strings_table",),
    ),
    "tapeshim.summary": Namespace(
        doc=(
            "`tf.summary`: TensorBoard event files (scalars, histograms, images, text), eagerly and in "
            "`tapeshim.function`."
        ),
        exports={
            "SummaryWriter": "tapeshim._src.summary_ops:SummaryWriter",
            "create_file_writer": "tapeshim._src.summary_ops:create_file_writer",
            "create_noop_writer": "tapeshim._src.summary_ops:create_noop_writer",
            "experimental": "tapeshim.summary:experimental",
            "flush": "tapeshim._src.summary_ops:flush",
            "record_if": "tapeshim._src.summary_ops:record_if",
            "should_record_summaries": "tapeshim._src.summary_ops:should_record_summaries",
            "trace_export": "tapeshim._src.summary_ops:trace_export",
            "trace_off": "tapeshim._src.summary_ops:trace_off",
            "trace_on": "tapeshim._src.summary_ops:trace_on",
        },
    ),
    "tapeshim.summary.experimental": Namespace(
        doc="`tf.summary.experimental`: the default step and summary scopes.",
        exports={
            "get_step": "tapeshim._src.summary_ops:get_step",
            "set_step": "tapeshim._src.summary_ops:set_step",
            "summary_scope": "tapeshim._src.summary_ops:summary_scope",
            "write_raw_pb": "tapeshim._src.summary_ops:write_raw_pb",
        },
    ),
    "tapeshim.tpu": Namespace(
        doc="`tf.tpu`: TPU set-up calls that TPU programs make before `TPUStrategy` (JAX finds TPUs itself).",
        exports={
            "experimental": "tapeshim.tpu:experimental",
        },
    ),
    "tapeshim.tpu.experimental": Namespace(
        doc="`tf.tpu.experimental`: `initialize_tpu_system` checks that JAX sees TPUs (`docs/distribute.md`).",
        exports={
            "initialize_tpu_system": "tapeshim._src.distribute.multi_worker:initialize_tpu_system",
        },
    ),
    "tapeshim.train": Namespace(
        doc="`tf.train`: checkpoints, and `tf.train.Example` protocol buffers.",
        exports={
            "BytesList": "tapeshim._src.io.example_proto:BytesList",
            "Checkpoint": "tapeshim._src.checkpoint:Checkpoint",
            "CheckpointManager": "tapeshim._src.checkpoint:CheckpointManager",
            "CheckpointOptions": "tapeshim._src.checkpoint_io:CheckpointOptions",
            "CheckpointReader": "tapeshim._src.checkpoint_io:CheckpointReader",
            "ClusterSpec": "tapeshim._src.distribute.multi_worker:ClusterSpec",
            "Example": "tapeshim._src.io.example_proto:Example",
            "Feature": "tapeshim._src.io.example_proto:Feature",
            "FeatureList": "tapeshim._src.io.example_proto:FeatureList",
            "FeatureLists": "tapeshim._src.io.example_proto:FeatureLists",
            "Features": "tapeshim._src.io.example_proto:Features",
            "FloatList": "tapeshim._src.io.example_proto:FloatList",
            "Int64List": "tapeshim._src.io.example_proto:Int64List",
            "SequenceExample": "tapeshim._src.io.example_proto:SequenceExample",
            "get_checkpoint_state": "tapeshim._src.checkpoint_io:get_checkpoint_state",
            "latest_checkpoint": "tapeshim._src.checkpoint_io:latest_checkpoint",
            "list_variables": "tapeshim._src.checkpoint_io:list_variables",
            "load_checkpoint": "tapeshim._src.checkpoint_io:load_checkpoint",
            "load_variable": "tapeshim._src.checkpoint_io:load_variable",
        },
    ),
    "tapeshim.types": Namespace(
        doc="`tf.types`: the types of TF's public interfaces.",
        exports={
            "experimental": "tapeshim.types:experimental",
        },
    ),
    "tapeshim.types.experimental": Namespace(
        doc="`tf.types.experimental`: tracing protocol and function types.",
        exports={
            "AtomicFunction": "tapeshim._src.concrete_function:AtomicFunction",
            "ConcreteFunction": "tapeshim._src.concrete_function:ConcreteFunction",
            "FunctionType": "tapeshim._src.concrete_function:FunctionType",
            "GenericFunction": "tapeshim._src.function:Function",
            "PlaceholderContext": "tapeshim._src.trace_type:PlaceholderContext",
            "PolymorphicFunction": "tapeshim._src.function:Function",
            "TensorLike": "tapeshim._src.typing_aliases:TensorLike",
            "TraceType": "tapeshim._src.trace_type:TraceType",
            "TracingContext": "tapeshim._src.trace_type:TracingContext",
        },
    ),
}
