"""JX312's case of an inverse of small matrices: `jaxlint check --target tpu-v5e --select JX312`
(tests/test_jx312.py, marked slow: compiling 262144 inverses of 3 x 3 for a TPU takes longer
than all of small_matrices.py's programs together); the `# expect:` marker follows
tests/rules/README.md."""
import jax
import jax.numpy as jnp

N = 262144


@jax.jit
def small_inverses(a):
    return jnp.linalg.inv(a)  # expect: JX312


small_inverses.lower(jax.ShapeDtypeStruct((N, 3, 3), jnp.float32))
