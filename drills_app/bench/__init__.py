"""Benchmarks run by `python manage.py bench <target>`; each prints its own figures."""
