"""Engine and autograd tests (a package, so its test_functional.py does not clash with tests/nn's)."""
