"""``chainrule.fx``: symbolic tracing of modules and functions into a graph of Python
calls, as ``torch.fx`` records it (placeholder, get_attr, call_function, call_method,
call_module, output), with the generated ``forward`` code.

Built on its own graph rather than ``chainrule.ir``: fx records Python-level calls
(module calls, method names, ``operator`` functions, ``getattr``) that the IR, whose
nodes are op-table ops with inferred shapes, does not model.
"""

from chainrule.fx.graph import Graph, Node, map_arg
from chainrule.fx.graph_module import GraphModule
from chainrule.fx.proxy import Attribute, Proxy, TraceError
from chainrule.fx.tracer import Tracer, symbolic_trace

__all__ = [
    "Attribute",
    "Graph",
    "GraphModule",
    "Node",
    "Proxy",
    "TraceError",
    "Tracer",
    "map_arg",
    "symbolic_trace",
]
