"""chainrule's benchmark suite: ``make bench`` or ``python -m benchmarks`` from the checkout.

Each workload (``tiny``, ``mlp``, ``deep``, ``conv``, ``memory``) is one module with a ``run``
function; ``harness`` holds the shared timing and subprocess machinery and ``report`` the table.
Importing this package loads neither chainrule nor PyTorch.
"""

#: Lets ``python -m chainrule bench`` tell this package from an unrelated ``benchmarks``.
SUITE = "chainrule"
