"""Everything that imports pytest: options, fixtures, hooks, the session and the in-pytest gate.

The entry point (`pytest11: trainbench`) is `hooks`; the modules beside it only wire pytest to
the domain packages, where the work lives.
"""
