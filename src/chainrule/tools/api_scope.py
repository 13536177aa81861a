"""What of PyTorch's public API chainrule does not aim to have, with the reason for each group.

Read by :mod:`chainrule.tools.api_coverage`. A rule names the namespace it applies to (as in
:data:`~chainrule.tools.api_coverage.NAMESPACES`), a reason, and shell-style patterns of names
(``fnmatch``: ``cudnn_*``). Everything PyTorch exports that no rule matches is in scope: the
coverage counts it, and a missing name is work to do. Keep the rules narrow: a pattern that
hides an op a user would call is a false claim of coverage.
"""

from __future__ import annotations

__all__ = ["OUT_OF_SCOPE"]

_JIT_TYPES = (
    "AliasDb", "AnyType", "Argument", "ArgumentSpec", "AwaitType", "Block", "BoolType",
    "CallStack", "Capsule", "ClassType", "Code", "CompilationUnit", "CompleteArgumentSpec",
    "ComplexType", "ConcreteModuleType", "ConcreteModuleTypeBuilder", "DeepCopyMemoTable",
    "DeviceObjType", "DictType", "EnumType", "ErrorReport", "ExecutionPlan", "FileCheck",
    "FloatType", "FunctionSchema", "FutureType", "Gradient", "Graph", "GraphExecutorState",
    "InferredType", "IntType", "InterfaceType", "JITException", "ListType", "LiteScriptModule",
    "LockingLogger", "Node", "NoneType", "NoopLogger", "NumberType", "OperatorInfo",
    "OptionalType", "PyObjectType", "RRefType", "Script*", "StaticModule", "StreamObjType",
    "StringType", "TensorType", "TracingState", "TupleType", "Type", "UnionType", "Use", "Value",
    "import_ir_module*", "parse_ir", "parse_schema", "parse_type_comment",
    "merge_type_from_type_comment", "unify_type_list", "fork", "wait", "Future", "Tag",
    "DispatchKey", "DispatchKeySet", "ExcludeDispatchKeyGuard", "IODescriptor",
    "ThroughputBenchmark", "BenchmarkConfig", "BenchmarkExecutionStats", "AggregationType",
    "AVG", "SUM", "cpp", "FatalError",
)

#: (namespace, reason, patterns)
OUT_OF_SCOPE: list[tuple[str, str, tuple[str, ...]]] = [
    ("torch", "TorchScript, the JIT's IR and types, the C++ dispatcher, benchmarking utilities",
     _JIT_TYPES),
    ("torch", "exporters (torch.export): chainrule's static graphs are its own (issue 18)",
     ("export",)),
    ("torch", "storage classes and file-backed storages",
     ("*Storage", "is_storage", "from_file", "DeserializationStorageContext",
      "SerializationStorageContext", "PyTorchFileReader", "PyTorchFileWriter")),
    ("torch", "quantized tensors",
     ("q_*", "qint*", "quint*", "qscheme", "quantize_*", "quantized_*", "dequantize",
      "fake_quantize_*", "fused_moving_avg_obs_fake_quant", "choose_qparams_optimized",
      "empty_quantized", "int_repr", "fbgemm_*")),
    ("torch", "sparse layouts",
     ("sparse_*", "dsmm", "hsmm", "smm", "saddmm", "sspaddmm", "hspmm", "spmm",
      "ccol_indices_copy", "col_indices_copy", "crow_indices_copy", "row_indices_copy",
      "indices_copy", "values_copy", "resize_as_sparse_")),
    ("torch", "accelerator kernels, streams and mixed-precision autocast (CPU only)",
     ("cudnn_*", "miopen_*", "mkldnn_*", "is_vulkan_available", "Stream", "Event",
      "AcceleratorError", "OutOfMemoryError", "get_device_module", "autocast",
      "*autocast*", "GradScaler")),
    ("torch", "symbolic shapes (torch.compile's dynamic shapes)", ("Sym*", "sym_*")),
    ("torch", "sub-byte and packed dtypes (no NumPy storage)",
     ("bits*", "int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2",
      "uint3", "uint4", "uint5", "uint6", "uint7", "float4_*", "complex32")),
    ("Tensor", "quantized tensors",
     ("q_*", "qscheme", "int_repr", "dequantize")),
    ("Tensor", "sparse layouts",
     ("to_sparse*", "sparse_*", "coalesce", "is_coalesced", "indices", "values",
      "crow_indices", "col_indices", "ccol_indices", "row_indices", "dense_dim", "to_dense",
      "smm", "sspaddmm", "resize_as_sparse_", "is_sparse_csr")),
    ("Tensor", "accelerators and other backends (CPU only)",
     ("ipu", "xpu", "mtia", "is_ipu", "is_xpu", "is_mtia", "is_maia", "is_mps", "is_vulkan",
      "is_xla", "is_mkldnn", "to_mkldnn", "record_stream")),
    ("Tensor", "storage objects and shared memory",
     ("storage_type", "share_memory_", "is_shared", "is_set_to", "module_load")),
    ("Tensor", "nested tensors", ("is_nested", "to_padded_tensor")),
    ("nn", "multi-device modules (data-parallel training is DistributedDataParallel over MPI, "
           "issue 19; DataParallel is CPU-only PyTorch's pass-through)", ("SyncBatchNorm",)),
    ("nn.functional", "low-precision GEMM kernels of accelerators",
     ("grouped_mm", "scaled_grouped_mm", "scaled_mm", "ScalingType", "SwizzleType")),
    ("nn.utils", "memory-format conversion helpers of accelerator convolutions",
     ("convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format")),
    ("utils.data", "DataPipes (deprecated in PyTorch) and their validation helpers",
     ("*DataPipe", "DataChunk", "functional_datapipe", "guaranteed_datapipes_determinism",
      "non_deterministic", "runtime_validation", "runtime_validation_disabled",
      "argument_validation")),
    ("optim", "sparse gradients", ("SparseAdam",)),
    ("autograd", "legacy Function with instance methods (forward_extended/backward_extended), "
                 "kept by PyTorch for old code but broken in 2.13: calling it either way raises "
                 "AttributeError", ("NestedIOFunction",)),
]
