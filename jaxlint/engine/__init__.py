"""The check pipeline in the parent process: scanned files become worker jobs (pool), their
results are settled against suppressions, and fixes are verified and written (fixer)."""
