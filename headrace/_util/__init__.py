"""Layer 0: helpers that import nothing from the rest of headrace."""
