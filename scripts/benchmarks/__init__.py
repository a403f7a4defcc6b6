"""Benchmarks and paper studies: each trains through textrec.processing.training and reads with textrec.processing.inference, then prints a table and the command that made it."""
