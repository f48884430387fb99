"""Lowering and running one case: the `TestRunner` a test calls, the pipeline's stages,
stateful steps, judging outputs, delegation counts and the per-process speed-ups.
"""
