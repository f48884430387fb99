"""The generated tier: operator cases built from PyTorch's OpInfo sample inputs."""
