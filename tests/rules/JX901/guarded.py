# Quiet: an optional dependency imported under try, work meant only for running the file as a
# program: the import succeeds and the module's functions are traced.
import jax
import jax.numpy as jnp

try:
    import a_module_nobody_installed  # noqa: F401
except ImportError:
    a_module_nobody_installed = None


# jaxlint: args x=f32[3]
@jax.jit
def target(x):
    return jnp.sin(x)


if __name__ == "__main__":
    target(jnp.ones(3))
    raise SystemExit("run as a program only")
