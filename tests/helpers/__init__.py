"""Helpers shared by the test packages: payload builders, row factories, local receivers, fault injectors.

Test modules import from here (never from one another); fixtures live in the conftest.py files.
"""
