"""Every contact with JAX's own API, split by concern, and every difference between the supported
JAX versions (0.4.35 to 0.10.x): a version branch (a ``JAX_VERSION`` comparison, a ``getattr``
fallback for a moved or renamed name) lives in one of these modules and nowhere else.

- ``tracebacks.py``: user source locations of equations, name stacks, library jaxprs
- ``jaxprs.py``: sub-jaxprs, literals, abstract shapes, argument paths, symbolic dimensions
- ``tracers.py``: tracers (staged, differentiated), arrays, jitted functions, pytree leaves
- ``shardings.py``: shardings and meshes
- ``config_state.py``: snapshot and restoration of JAX's configuration and mesh states, x64
- ``logs.py``: parsers of JAX's log records and warnings (imports no JAX)
- ``compiling.py``: compiling a traced program, its temporary memory and costs
- ``host_sync.py``: the array conversions JX309 watches
- ``jit_placement.py``: a jax.jit's placement read from JAX's private tracing frame
- ``install_dirs.py``: where JAX's and jaxlint's files are (imports no JAX)
- ``version.py``: ``JAX_VERSION``

Only processes that run the user's code (the worker, ``pytest --jaxlint``, ``jaxlint run``,
``jaxlint.lint``) import these modules; importing this package itself loads nothing.
"""
