"""ExecuTorch's own model tests, run from the installed wheel through this suite's
`test_runner`. Opt-in: collected only when a command-line path points into this folder
(see `wheel_tests.py`)."""
