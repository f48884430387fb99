"""What a flow is and the data it carries: its definition, where flows come from, its
runtime, its output rules and its declared expectations.
"""
