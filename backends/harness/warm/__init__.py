"""The warm process: one long-lived server per checkout that keeps torch and executorch
imported, and the client that hands a run to it.
"""
