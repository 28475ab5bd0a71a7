"""One module per operation; each defines an OpIter subclass (see base.py for the contract)."""
