"""The demo estate: sources, contracts and seed scenarios loaded by `load_demo`."""
