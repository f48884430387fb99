"""The shared conformance suites, parametrized over every flow."""

from . import torchvision_ops

# before any suite imports transformers, timm or torchvision (see the module)
torchvision_ops.install()
