"""``python -m jaxlint.worker JOB_FD RESULT_FD``: the worker process (see process.py)."""
from jaxlint.worker.process import main

main()
