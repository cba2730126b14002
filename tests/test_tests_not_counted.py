"""The tests of a test file are no JAX functions to lint (pytest runs them; `pytest --jaxlint`
lints what they call): also a test in a class derived from the project's own absltest base
(distrax's ``class BernoulliTest(equivalence.EquivalenceTest)``), and a test whose body calls a
transformation (a target for the source rules, traced by nothing). A jitted or hinted test, a
helper of a test file and a method of a plain class are still counted."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from jaxlint import scan
from jaxlint.scan.functions import jax_functions
from jaxlint.scan.index import SourceIndex

TESTS = textwrap.dedent("""\
    import unittest

    import jax
    import jax.numpy as jnp
    from absl.testing import parameterized

    from base_test import EquivalenceTest


    class BernoulliTest(EquivalenceTest):
        @parameterized.named_parameters(("one", 1), ("two", 2))
        def test_sample_shape(self, n):
            self.assertEqual(jnp.zeros(n).shape, (n,))

        def _check(self, x):
            return jnp.sin(x)


    class ShapesTests(unittest.TestCase):
        def test_vmapped(self):
            f = jax.vmap(jnp.sin)
            self.assertEqual(f(jnp.ones(3)).shape, (3,))


    def test_jit_inside():
        assert jax.jit(jnp.cos)(1.0) < 1


    @jax.jit
    def test_jitted(x):
        return jnp.cos(x)


    class ModelUnderTest:
        def test_like(self, x):
            return jnp.tan(x)


    def helper(x):
        return jnp.sin(x)
    """)


def counted(path: str, text: str) -> list[str]:
    return [f.qualname for f in jax_functions(SourceIndex(path, text, scan.scan_source(path, text)))]


def test_tests_are_left_out_and_helpers_counted() -> None:
    assert counted("pkg/bernoulli_test.py", TESTS) == [
        "BernoulliTest._check", "test_jitted", "ModelUnderTest.test_like", "helper"]


def test_outside_a_test_file_every_function_counts() -> None:
    assert counted("pkg/bernoulli.py", TESTS) == [
        "BernoulliTest.test_sample_shape", "BernoulliTest._check", "ShapesTests.test_vmapped", "test_jit_inside",
        "test_jitted", "ModelUnderTest.test_like", "helper"]


def test_a_test_calling_a_transformation_is_neither_counted_nor_listed(tmp_path: Path) -> None:
    """The coverage report has no entry for it, not even among the targets defined elsewhere."""
    (tmp_path / "shapes_test.py").write_text(textwrap.dedent("""\
        import jax
        import jax.numpy as jnp


        def test_vmap_inside():
            assert jax.vmap(jnp.cos)(jnp.ones(2)).shape == (2,)


        def helper(x):
            return jnp.sin(x)
        """))
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--no-cache",
                          "--coverage-report", "coverage.json", "shapes_test.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "coverage.json").read_text())
    assert [f["function"] for f in report["functions"]] == ["helper"]
    assert report["summary"]["linted"] == 1
    assert report["untraced"] == [] and report["untraced_targets_defined_elsewhere"] == []
