"""Execution: stages (serial, on threads or in worker processes), pools that keep input order, the
process pool and its workers (process_pool, process_worker, process_wire), the fork server, shared
memory, native thread limits, the watchdog and the prefetch thread."""
