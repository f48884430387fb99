"""Remote execution: the runner kinds that execute a program outside the pytest process,
which flows go where (`--runner`), device pools, and the exchange format on both sides.
"""
