"""The package version, kept apart so that `pith --version` imports nothing else."""

__version__ = "0.1.0"
