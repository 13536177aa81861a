"""Command-line commands of ``python -m chainrule`` (one module per command)."""
