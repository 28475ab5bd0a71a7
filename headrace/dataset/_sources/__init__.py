"""Source datasets: adapters from data (Python objects, files) to the engine's source protocols."""
