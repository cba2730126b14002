import os

import jax
import jax.numpy as jnp


@jax.jit
def target(x):
    return jnp.sin(x)


# The import itself fails (a file or a device the machine does not have): nothing in the module is
# traced, and the finding points at the line that raised.
if not os.path.exists("/a/dataset/that/is/not/here.npz"):
    raise FileNotFoundError("/a/dataset/that/is/not/here.npz")  # expect: JX901
