"""Networks: CNET128 and its heads (``cnet``)."""
