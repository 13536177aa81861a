"""Tools for developers: measuring chainrule against PyTorch (``api_coverage``)."""
