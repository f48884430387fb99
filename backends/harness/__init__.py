"""Backend-agnostic core of the test suite, loaded as a pytest plugin.

Importing this package must stay cheap and torch-free: the report tools in `tools/`
import its `contract` package and run in an environment without torch.
"""
