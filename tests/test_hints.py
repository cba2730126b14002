import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.scan.hints import (
    DTYPES,
    ArraySpec,
    HintError,
    StaticSpec,
    describe,
    dim_names,
    format_abstract,
    parse_hint,
    to_abstract,
)

REPO = Path(__file__).resolve().parents[1]

ALL_DTYPES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bool": "bool",
    "c64": "complex64",
    "c128": "complex128",
}


# --- parsing ------------------------------------------------------------------------------


def test_brief_example():
    assert parse_hint("x=f32[], y=f32[n, 3], k=3") == {
        "x": ArraySpec("float32", ()),
        "y": ArraySpec("float32", ("n", 3)),
        "k": StaticSpec(3),
    }


@pytest.mark.parametrize("short,numpy_name", sorted(ALL_DTYPES.items()))
def test_every_dtype(short, numpy_name):
    assert parse_hint(f"x={short}[2]") == {"x": ArraySpec(numpy_name, (2,))}


def test_dtype_table_is_complete():
    assert DTYPES == ALL_DTYPES


@pytest.mark.parametrize("short,numpy_name", sorted(ALL_DTYPES.items()))
def test_every_dtype_is_a_real_numpy_dtype(short, numpy_name):
    import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
    import numpy as np

    assert np.dtype(numpy_name).name == numpy_name


def test_integer_dims_and_scalars():
    assert parse_hint("a=f32[], b=i32[0], c=u8[1, 2, 3], d=f32[10]") == {
        "a": ArraySpec("float32", ()),
        "b": ArraySpec("int32", (0,)),
        "c": ArraySpec("uint8", (1, 2, 3)),
        "d": ArraySpec("float32", (10,)),
    }


def test_named_dims():
    spec = parse_hint("x=f32[batch, n_1, 3], y=i32[_n]")
    assert spec["x"].dims == ("batch", "n_1", 3)
    assert spec["y"].dims == ("_n",)


@pytest.mark.parametrize(
    "text,value",
    [
        ("k=3", 3),
        ("k=-2", -2),
        ("k=0x10", 16),
        ("k=1.5", 1.5),
        ("k=-1e-3", -1e-3),
        ("k=1+2j", 1 + 2j),
        ("k='abc'", "abc"),
        ('k="a, b]"', "a, b]"),
        ("k=b'raw'", b"raw"),
        ("k=True", True),
        ("k=False", False),
        ("k=None", None),
        ("k=(1, 2)", (1, 2)),
        ("k=(1,)", (1,)),
        ("k=()", ()),
        ("k=[1, 'a', None]", [1, "a", None]),
        ("k=[]", []),
        ("k={'a': 1, 2: (3, 4)}", {"a": 1, 2: (3, 4)}),
        ("k={}", {}),
        ("k=(3)", 3),
    ],
)
def test_static_literals(text, value):
    spec = parse_hint(text)
    assert spec == {"k": StaticSpec(value)}
    assert type(spec["k"].value) is type(value)


def test_pytrees():
    spec = parse_hint("t=(f32[3], f32[4]), l=[f32[3], i32[]], d={'w': f32[3, 4], 'b': f32[4]}")
    assert spec == {
        "t": (ArraySpec("float32", (3,)), ArraySpec("float32", (4,))),
        "l": [ArraySpec("float32", (3,)), ArraySpec("int32", ())],
        "d": {"w": ArraySpec("float32", (3, 4)), "b": ArraySpec("float32", (4,))},
    }
    assert type(spec["t"]) is tuple and type(spec["l"]) is list and type(spec["d"]) is dict


def test_pytrees_mixed_with_literals_and_nested():
    spec = parse_hint("p=(f32[n], 2, 'tag', [i32[], None]), q={1: (f32[2],), 'k': {'z': b'x'}}")
    assert spec == {
        "p": (
            ArraySpec("float32", ("n",)),
            StaticSpec(2),
            StaticSpec("tag"),
            [ArraySpec("int32", ()), StaticSpec(None)],
        ),
        "q": {1: (ArraySpec("float32", (2,)),), "k": StaticSpec({"z": b"x"})},
    }


def test_parentheses_group_like_python():
    # `(x)` is not a tuple, `(x,)` is.
    assert parse_hint("a=(f32[3]), b=(f32[3],)") == {
        "a": ArraySpec("float32", (3,)),
        "b": (ArraySpec("float32", (3,)),),
    }


def test_whitespace_is_flexible():
    expected = parse_hint("x=f32[n,3],k=3,t=(f32[],{'a':i8[2]})")
    spaced = "  x = f32 [ n ,  3 ] ,\tk= 3 , t = ( f32[ ] , { 'a' : i8[2] } )  "
    assert parse_hint(spaced) == expected
    assert parse_hint("x=f32[n, 3], k=3, t=(f32[], {'a': i8[2]})") == expected


def test_trailing_commas_are_fine():
    assert parse_hint("x=f32[3,], k=[f32[2],],") == {
        "x": ArraySpec("float32", (3,)),
        "k": [ArraySpec("float32", (2,))],
    }


@pytest.mark.parametrize("text", ["", "   ", "\t"])
def test_empty_text(text):
    assert parse_hint(text) == {}


def test_commas_in_strings_and_brackets_do_not_split():
    spec = parse_hint("s='a, b=c', t=\"(]\", u='''x'y''', v=(1, [2, 3]), w='it\\'s'")
    assert spec == {
        "s": StaticSpec("a, b=c"),
        "t": StaticSpec("(]"),
        "u": StaticSpec("x'y"),
        "v": StaticSpec((1, [2, 3])),
        "w": StaticSpec("it's"),
    }


def test_order_is_kept():
    assert list(parse_hint("z=1, a=2, m=f32[]")) == ["z", "a", "m"]


# --- errors -------------------------------------------------------------------------------


def error(text: str) -> HintError:
    with pytest.raises(HintError) as info:
        parse_hint(text)
    assert isinstance(info.value, ValueError)
    return info.value


def test_unknown_dtype():
    e = error("x=f32[], y=f33[3]")
    assert str(e) == (
        "unknown dtype 'f33' in 'y=f33[3]' (expected one of "
        "f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool, c64, c128, or key[...] for typed PRNG keys)"
    )
    assert e.column == 11


def test_unknown_dtype_nested():
    e = error("p=(f32[3], float32[2])")
    assert str(e).startswith("unknown dtype 'float32' in 'p=(f32[3], float32[2])'")
    assert e.column == 11


@pytest.mark.parametrize("dim", ["-1", "1.5", "n+1", "2*n", "(3)", "'n'"])
def test_bad_dimension(dim):
    text = f"y=f32[4, {dim}]"
    e = error(text)
    assert str(e) == f"dimension {dim!r} of y is not a non-negative integer or a name"
    assert e.column == text.index(dim)


def test_bad_dimension_names_its_path():
    message = "dimension '-1' of p['w'][0] is not a non-negative integer or a name"
    assert str(error("p={'w': [f32[-1]]}")) == message


@pytest.mark.parametrize("name", ["max", "min", "mod", "floordiv", "_"])
def test_dimension_names_reserved_by_jax(name):
    assert f"dimension name {name!r} of x is reserved by jax.export" in str(error(f"x=f32[{name}]"))


def test_empty_dimension():
    e = error("x=f32[3,,4]")
    assert str(e) == "empty dimension in x"
    assert e.column == 8


def test_missing_equals():
    e = error("x f32[3]")
    assert str(e) == "missing '=' after 'x'"
    assert e.column == 2
    assert str(error("k=1, x")) == "missing '=' after 'x'"
    assert str(error("x:f32[3]")) == "missing '=' after 'x'"


def test_missing_value():
    e = error("x=, y=1")
    assert str(e) == "missing value for x"
    assert e.column == 2


def test_bad_parameter_name():
    assert str(error("3x=f32[]")) == "expected a parameter name at '3x=f32[]'"
    assert str(error("=3")) == "expected a parameter name at '=3'"
    assert str(error("lambda=3")) == "parameter name 'lambda' is a Python keyword"


def test_duplicate_parameter():
    e = error("x=f32[], y=1, x=2")
    assert str(e) == "duplicate parameter 'x'"
    assert e.column == 14


@pytest.mark.parametrize(
    "text,message,column",
    [
        ("x=f32[3", "unbalanced brackets: '[' is never closed", 5),
        ("x=f32[3]]", "unbalanced brackets: ']' closes nothing", 8),
        ("x=(f32[3], f32[4]", "unbalanced brackets: '(' is never closed", 2),
        ("x=(f32[3]]", "unbalanced brackets: ']' does not match '(' at column 2", 9),
        ("x={'a': f32[3]), y=1", "unbalanced brackets: ')' does not match '{' at column 2", 14),
        ("x=f32[3)], y=1", "unbalanced brackets: ')' does not match '[' at column 5", 7),
    ],
)
def test_unbalanced_brackets(text, message, column):
    e = error(text)
    assert str(e) == message
    assert e.column == column


def test_unterminated_string():
    e = error("x=f32[], s='abc")
    assert str(e) == "unterminated string"
    assert e.column == 11


def test_stray_commas():
    assert str(error(",x=1")) == "empty parameter (stray comma?)"
    assert error("x=1,,y=2").column == 4
    assert str(error("x=1,,")) == "empty parameter (stray comma?)"
    assert str(error("x=(f32[3],,)")) == "empty element in x"


@pytest.mark.parametrize(
    "text,shown",
    [("k=foo", "'foo'"), ("k=1 + x", "'1 + x'"), ("k=np.float32", "'np.float32'")],
)
def test_not_a_literal(text, shown):
    e = error(text)
    assert str(e) == f"value of k is not a Python literal: {shown}"
    assert e.column == text.index(shown.strip("'"))


def test_not_a_literal_inside_a_pytree_names_its_path():
    assert str(error("p=(f32[3], foo)")) == "value of p[1] is not a Python literal: 'foo'"
    e = error("k=[1, foo]")
    assert str(e) == "value of k[1] is not a Python literal: 'foo'"
    assert e.column == 6


def test_dtype_without_dims():
    e = error("x=f32")
    assert str(e) == "missing dimensions after dtype 'f32' in x (write f32[] for a scalar)"
    assert e.column == 5


def test_text_after_array():
    e = error("x=f32[3] 4")
    assert str(e) == "unexpected '4' after 'f32[3]' in x"
    assert e.column == 8
    assert str(error("x=f32[3][4]")) == "unexpected '[4]' after 'f32[3]' in x"


def test_dict_errors():
    assert "expected 'key: value' in dict x" in str(error("x={f32[3]}"))
    assert str(error("x={foo: f32[3]}")) == "dict key 'foo' in x is not a hashable Python literal"
    assert str(error("x={[1]: f32[3]}")) == "dict key '[1]' in x is not a hashable Python literal"


# --- dim_names, describe ------------------------------------------------------------------


def test_dim_names_first_appearance_order():
    spec = parse_hint("a=f32[m, 3], b=(i32[n], {'z': f32[m, k]}), c=4, d=f32[n]")
    assert dim_names(spec) == ["m", "n", "k"]
    assert dim_names(parse_hint("x=f32[3], k=1")) == []


@pytest.mark.parametrize(
    "text",
    [
        "x=f32[], y=f32[n, 3], k=3",
        "t=(f32[3],), l=[bf16[n], 'a', None], d={'w': f32[3, 4], 1: (u8[], 2.5)}",
        "s='a,b', b=b'x', e=(), f=[], g={}, c=(1+2j)",
    ],
)
def test_describe_round_trips(text):
    spec = parse_hint(text)
    assert parse_hint(describe(spec)) == spec


def test_describe_is_compact():
    assert describe(parse_hint("x = f32[ ],y=f32[n,3] , k=3")) == "x=f32[], y=f32[n, 3], k=3"
    assert describe(parse_hint("t=(f32[3],), d={'a': (1, 2)}")) == "t=(f32[3],), d={'a': (1, 2)}"
    assert describe({}) == ""


# --- jax ----------------------------------------------------------------------------------


def test_parse_hint_does_not_import_jax():
    code = (
        "import sys, jaxlint.scan.hints as h; h.parse_hint('x=f32[3]'); "
        "assert 'jax' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_importing_the_package_does_not_import_jax():
    code = "import sys, jaxlint; assert 'jax' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


@pytest.mark.parametrize("short,numpy_name", sorted(ALL_DTYPES.items()))
def test_to_abstract_every_dtype(short, numpy_name):
    import jax

    value = to_abstract(parse_hint(f"x={short}[2, 3]"))["x"]
    assert isinstance(value, jax.ShapeDtypeStruct)
    assert value.shape == (2, 3)
    assert value.dtype.name == numpy_name


def test_to_abstract_shares_symbolic_dims():
    import jax

    spec = to_abstract(parse_hint("x=f32[n, 3], y=f32[n, 3]"))
    assert spec["x"].shape[0] is spec["y"].shape[0]
    assert spec["x"].shape[0] == spec["y"].shape[0]
    assert spec["x"].shape == spec["y"].shape
    jaxpr = jax.make_jaxpr(lambda x, y: x + y)(spec["x"], spec["y"])
    assert str(jaxpr.out_avals[0].shape[0]) == "n"


def test_to_abstract_shares_dims_inside_pytrees():
    spec = to_abstract(parse_hint("a=(f32[m], {'w': f32[n, m]}), b=[i32[n]]"))
    assert spec["a"][0].shape[0] is spec["a"][1]["w"].shape[1]
    assert spec["a"][1]["w"].shape[0] is spec["b"][0].shape[0]


def test_to_abstract_distinct_names_stay_distinct():
    import jax

    spec = to_abstract(parse_hint("x=f32[n], y=f32[m]"))
    assert spec["x"].shape[0] != spec["y"].shape[0]
    with pytest.raises(Exception):
        jax.make_jaxpr(lambda x, y: x + y)(spec["x"], spec["y"])


def test_to_abstract_statics_and_containers():
    import jax

    hint = "k=3, s='a', t=(f32[], 2), l=[i32[4]], d={'w': f32[2], 'z': None}"
    spec = to_abstract(parse_hint(hint))
    assert spec["k"] == 3 and spec["s"] == "a"
    assert type(spec["t"]) is tuple and spec["t"][1] == 2
    assert isinstance(spec["t"][0], jax.ShapeDtypeStruct) and spec["t"][0].shape == ()
    assert type(spec["l"]) is list and spec["l"][0].shape == (4,)
    assert type(spec["d"]) is dict and spec["d"]["z"] is None and spec["d"]["w"].shape == (2,)


def test_to_abstract_traces_with_statics():
    import jax

    args = to_abstract(parse_hint("x=f32[n, 3], k=2"))
    jaxpr = jax.make_jaxpr(lambda x: x * args["k"])(args["x"])
    assert "f32[n,3]" in str(jaxpr)


def test_to_abstract_without_names_or_params():
    assert to_abstract({}) == {}
    assert to_abstract(parse_hint("x=f32[3]"))["x"].shape == (3,)


# --- format_abstract ----------------------------------------------------------------------


def test_format_abstract_shape_dtype_structs():
    args = to_abstract(parse_hint("x=f32[], y=i32[10], z=bf16[n, 3], b=bool[2], c=c128[]"))
    expected = ["f32[]", "i32[10]", "bf16[n,3]", "bool[2]", "c128[]"]
    assert [format_abstract(v) for v in args.values()] == expected


def test_format_abstract_pytrees_and_statics():
    hint = "t=(f32[m], {'w': u8[m, 2]}, 'a', None), l=[i64[1]], o=(f32[1],)"
    args = to_abstract(parse_hint(hint))
    assert format_abstract(args["t"]) == "(f32[m], {'w': u8[m,2]}, 'a', None)"
    assert format_abstract(args["l"]) == "[i64[1]]"
    assert format_abstract(args["o"]) == "(f32[1],)"
    assert format_abstract(3) == "3"
    assert format_abstract("s") == "'s'"


def test_format_abstract_concrete_arrays():
    import jax.numpy as jnp
    import numpy as np

    assert format_abstract(jnp.zeros((2, 3), jnp.float32)) == "f32[2,3]"
    assert format_abstract(np.zeros(4, np.uint16)) == "u16[4]"


def test_format_abstract_falls_back_to_numpy_names():
    import jax
    import ml_dtypes

    value = jax.ShapeDtypeStruct((2,), ml_dtypes.float8_e4m3fn)
    assert format_abstract(value) == "float8_e4m3fn[2]"


def test_format_abstract_of_specs():
    spec = parse_hint("x=f32[n, 3], k=3")
    assert format_abstract(spec) == "{'x': f32[n,3], 'k': 3}"


def test_format_abstract_for_a_traced_with_message():
    args = to_abstract(parse_hint("x=f32[], y=i32[10]"))
    text = ", ".join(f"{name}={format_abstract(value)}" for name, value in args.items())
    assert text == "x=f32[], y=i32[10]"


@pytest.mark.parametrize("text, shown", [
    ("k=key[]", "key<fry>[]"),            # the default implementation
    ("k=key<fry>[4]", "key<fry>[4]"),     # as jaxprs print a typed key's dtype
    ("k=key<rbg>[2]", "key<rbg>[2]"),
    ("k=(key[], f32[3])", "(key<fry>[], f32[3])"),
])
def test_typed_keys(text, shown):
    import jax

    abstract = to_abstract(parse_hint(text))["k"]
    assert format_abstract(abstract) == shown
    key = abstract[0] if isinstance(abstract, tuple) else abstract
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)


@pytest.mark.parametrize("text, message", [
    ("k=key", "missing dimensions after 'key' in k (write key[] for one key)"),
    ("k=key<>[]", "expected key<implementation>[...] in k"),
    ("k=keys[]", "unknown dtype 'keys'"),
])
def test_malformed_keys(text, message):
    with pytest.raises(HintError, match=re.escape(message)):
        parse_hint(text)


def test_an_unknown_key_implementation():
    with pytest.raises(HintError, match=re.escape("unknown PRNG implementation in key<nope>")):
        to_abstract(parse_hint("k=key<nope>[]"))


@pytest.mark.parametrize("hint, said", [
    ("n=<static>", "n=<static> is a placeholder --show-untraced suggests: write the Python value n takes, e.g. n=3"),
    ("x=f32[...], n=1", "x=f32[...] is a placeholder --show-untraced suggests: write the dtype and shape"),
    ("p=[{'w': f32[...]}, ...]", "p=[{'w': f32[...]}, ...] is a placeholder --show-untraced suggests: write one "
                                 "element per item, each with its dtypes and shapes (`...` stands for the rest), "
                                 "e.g. p=[{'w': f32[4,8]}, {'w': f32[8,3]}]"),
])
def test_a_suggestions_placeholders_copied_as_they_are_say_what_to_write(hint: str, said: str) -> None:
    with pytest.raises(HintError, match=re.escape(said)):
        parse_hint(hint)
    assert parse_hint("mode='[...]'") == {"mode": StaticSpec("[...]")}  # a string may hold anything
