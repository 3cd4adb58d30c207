"""The authorization matrix's world and rows (the tests: tests/test_authorization_matrix.py)."""
