"""Fails at import: the `outcomes` fixture's collection error (run with
--continue-on-collection-errors). See ../README.md."""

import no_such_module_for_the_fixture  # noqa: F401


def test_never_collected():
    pass
