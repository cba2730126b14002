"""Methods traced with an instance jaxlint builds (``infer-arguments``, before the inferred
ladder): ``self`` holds inferred values for its class's fields, the method's other parameters
get the ladder's guesses (inferred.py), and the first signature that traces is kept.

Which classes: dataclasses (equinox modules and ``flax.struct`` dataclasses are ones),
NamedTuples and pytree classes (``register_pytree_node_class``'s methods, any class JAX
flattens); for ``self`` only, any other class too (a plain class: worker/plain_classes.py, made
inside the trace by its ``__init__``). Their fields: a dataclass's or NamedTuple's declared
fields, else the ``__init__`` parameters. A field's value: a static field
(``eqx.field(static=True)``, ``pytree_node=False``) keeps its default (without one: the class's
``__init__``'s default where it sets the field unchanged, init_defaults.py; else a value by its
annotation, static_fields.py: 2, False, 0.1, ``(2, 2)``, an f32 scalar's ``ShapeDtypeStruct``);
an enum field without a default its first
member, a ``Literal`` one its first value, static or not; a jaxtyping annotation gives an abstract array
of its rank and dtype (every named dimension the symbolic ``n``); an array or ``float``
annotation, or a Python float default, an abstract value as the ladder makes them (rank 0, 1, 2;
never lower than the method's ``self.x`` uses show; i32 for an array annotation whose default is
a Python int, as a discrete distribution's bounds); another default is kept (an array default
becomes abstract); else the ladder guesses by name and annotation; else an annotation naming a
class of a kind above (a union: its first such member; an abstract class, or one abstract in
fact, not_implemented.py: its first concrete subclass that can be built, subclasses.py, a plain
one too) gives an instance of it, built by the
same rules, three levels deep at most; else a field (or a method's parameter) that holds a
function, an optax transformation or a dtype gets the factories' stand-in (worker/standins.py),
shown in the signature; else a method's ``state`` parameter its class's ``init_state``/``init``
makes is made so in the trace (made_state.py; one its ``reset`` makes, before all of these, with
the ladder's rungs after); a parameter annotated with a class the class's
``initialize``/``init`` returns is made by it, abstractly (made_params.py); else a field or
parameter annotated with a bare
container or ``Any`` takes the value the method's uses show (containers.py). A field none of these gives means no instance, and the method is
counted as not linted with why; so does a field annotated with a flax linen
module (a linen module's own methods: linen_instances.py; a linen module's field typed with one
gets one, linen_instances.static_module), a test class, an exception and an enum.
An nnx module's methods and constructor (any nnx ``Pytree``'s) are built by nnx_instances.py: made by
its own ``__init__`` from guessed sizes, its variables the inputs.
A constructor (``__init__``, ``__post_init__``, ``__check_init__``) is traced by making the
instance inside the trace from such field values (constructors.py). A method's parameter
annotated with such a class (``kl(self, other: Normal)``) gets an instance
too (an abstract base's subclass: not a plain one). An abstract class's own method is traced with
``self`` the first concrete subclass that inherits it unchanged and can be built
(``_subclass_signatures``); with none, it is counted with why. Fields whose default is None are
arrays first; when the instance cannot be made so on any rung, they are left None, all, else all
but one in turn, the first choice that makes one kept (a class that takes exactly one of
``scale`` and ``log_scale``): optional_fields.py, once per class, for the instances in fields and
parameters too.

How an instance reaches the trace: built_instances.py (a pytree with the abstract fields as its
leaves, or ``InstanceFields``, made inside the trace from the traced values). The builder's rules
live in three modules: class_kinds.py (which classes, their fields' defaults), field_roles.py (a
field's or parameter's role and its value) and static_fields.py (the values of static fields).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from jaxlint.worker import built_instances, init_states, plain_classes
from jaxlint.worker.argsources import (
    ArgumentRequest,
    ArgumentSet,
    co_mapped,
    constructors,
    containers,
    descriptions,
    inferred,
    linen_instances,
    made_params,
    made_state,
    nnx_instances,
    optional_fields,
    parameter_subclasses,
    passed_on,
    post_init_defaults,
    subclasses,
)
from jaxlint.worker.argsources.class_kinds import EMPTY, buildable_kind, class_hints, field_default, is_abstract
from jaxlint.worker.argsources.field_roles import (
    INTEGERS,
    class_fields,
    field_role,
    has_abstract,
    instance_role,
    is_instance,
    method_parameters,
    role_value,
)
from jaxlint.worker.argsources.inferred import MAX_BODY_RANK, MAX_RANK, SOURCE, Uninferable
from jaxlint.worker.argsources.static_fields import INT_VALUE
from jaxlint.worker.built_instances import InstanceFields
from jaxlint.worker.instrument import unrecorded

_RANKED = ("array", "pytree", INTEGERS)  # roles whose shape follows the rung: arrays, one-leaf pytrees (pytrees.py)
_RESET_RUNGS = 2  # the rungs of a method whose state its class's reset makes (made_state.reset_roles)
_CONCRETE_SIZE = 8  # a linen module's n where its init cannot work with the symbol
_SUBCLASSES_TRIED = 3  # an abstract class's method: the subclasses whose rungs are traced, in turn (diffrax's
# AbstractPath.derivative: its first two, Brownian paths, refuse the jvp; a third, an interpolation, traces)


class _NoArray(Uninferable):
    """Neither the instance's fields nor the method's parameters take an array."""


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    if not request.settings.infer_arguments or not inferred.needs_instance(request):
        return []
    method = _method(request)
    if method is None:
        request.notes.append("arguments not inferred: the method's class was not found on the module")
        return []
    owner, callee = method
    try:
        with unrecorded():  # the class's __init__ may run: jaxlint's doing, not the module's
            if constructors.is_constructor(request):
                return constructors.signatures(request, owner)
            return _signatures(request, owner, callee)
    except Uninferable as why:
        request.notes.append(f"arguments not inferred: no {owner.__name__} instance: {why}")
        return []
    except Exception as error:  # a class of a shape not foreseen: counted with why, the module's job goes on
        request.notes.append(f"arguments not inferred: no {owner.__name__} instance: {type(error).__name__}: {error}")
        return []


def _method(request: ArgumentRequest) -> tuple[type, Any] | None:
    """(the class, what to call with the instance first): a property's getter, else the method
    as the class has it (a jit wrapper included); None when the class is not found."""
    *path, name = request.target.qualname.split(".")
    owner = request.module
    try:
        for part in path:
            owner = getattr(owner, part)
        raw = inspect.getattr_static(owner, name)
    except Exception:  # a user's __getattr__ that raises, or no such attribute
        return None
    if not isinstance(owner, type) or isinstance(raw, (staticmethod, classmethod)):
        return None
    return owner, raw.fget if isinstance(raw, property) else request.function


def _signatures(request: ArgumentRequest, owner: type, callee: Any) -> list[ArgumentSet]:
    """The rungs with every field given, or, when the instance cannot be made on any of them (its
    ``__init__`` refuses), the rungs with the None-default fields optional_fields.py chose left None."""
    if linen_instances.is_linen(owner):
        return _linen_signatures(request, owner, callee)
    if nnx_instances.is_nnx(owner):
        return _nnx_signatures(request, owner, callee)
    if is_abstract(owner):
        return _subclass_signatures(request, owner, callee)
    try:
        return _class_signatures(request, owner, buildable_kind(owner), callee)
    except _NoArray as why:
        # A base that holds no array (brax's field-less ``Base`` of its ``Transform`` and
        # ``Motion``): its method traced with a subclass that inherits it, as an abstract one's.
        try:
            return _subclass_signatures(request, owner, callee)
        except Uninferable:
            raise why from None


def _class_signatures(request: ArgumentRequest, owner: type, kind: str, callee: Any) -> list[ArgumentSet]:
    """_signatures' for a class the builder builds as ``kind``: with the states its ``reset``
    makes first (made_state.reset_roles), then, should none of those trace, the ladder's."""
    reset = made_state.reset_roles(owner, callee)
    if not reset:
        return _class_rungs(request, owner, kind, callee, {})
    try:  # ranks 0 and 1 only: an environment's action is a vector (or a scalar it broadcasts)
        first = _class_rungs(request, owner, kind, callee, reset)[:_RESET_RUNGS]
    except Uninferable:
        first = []
    try:
        return first + _class_rungs(request, owner, kind, callee, {})
    except Uninferable:
        if first:
            return first
        raise


def _class_rungs(request: ArgumentRequest, owner: type, kind: str, callee: Any, given: dict[str, Any]
                 ) -> list[ArgumentSet]:
    """The rungs of a class the builder builds as ``kind``, the method's parameters in ``given``
    taking those roles."""
    reader = containers.Reader(inferred.definition(request), request.target.params[0])
    roles = {f"self.{name}": role for name, role in class_fields(owner, kind, 0, reader).items()}
    given = {**_passed_on(request, callee), **_co_mapped(request, owner, kind, callee), **given}
    made = made_params.made_roles(owner, callee)
    roles.update(method_parameters(callee, given, reader=made_state.Maker(owner, callee, reader, made)))
    roles.update(inferred.by_use(request, roles, inspect.signature(callee)))
    one_leaf = inferred.one_leaf_parameters(request, roles)
    plans = _plans(request, owner, kind, callee, roles, made)
    found = [arguments for plan in plans for arguments in plan.rungs(frozenset())]
    if not found:
        raise _NoArray("neither its fields nor the method's parameters take an array")
    concrete = post_init_defaults.with_float_defaults(owner, kind, roles) \
        if built_instances.post_init_refused(owner) else None
    if concrete is not None:  # its __post_init__ refused abstract floats: their defaults, made again
        retry = _plans(request, owner, kind, callee, concrete, made)
        again = [arguments for plan in retry for arguments in plan.rungs(frozenset())]
        if again and not built_instances.post_init_refused(owner):
            plans, roles, found = retry, concrete, again
    last = plans[-1]
    names = optional_fields.optional(owner, kind, {name[5:]: role for name, role in roles.items()
                                                   if name.startswith("self.")})
    absent = optional_fields.absent(owner, names, lambda absent: [last.instance(arguments)
                                                                  for arguments in last.rungs(absent)])
    if absent:  # the rungs with every field given all fail: left out
        found = [arguments for plan in plans for arguments in plan.rungs(absent)]
    for name, role in parameter_subclasses.alternatives(callee, roles):  # tried when the first's all fail
        found += _Plan(request, owner, kind, callee, {**last.roles, name: role}, last.size).rungs(absent)
    return [dataclasses.replace(arguments, one_leaf=one_leaf) for arguments in found]


def _plans(request: ArgumentRequest, owner: type, kind: str, callee: Any, roles: dict[str, Any],
           made: dict[str, Any]) -> list[_Plan]:
    """The plans of a method's rungs, in order: with the parameters its class's maker makes, on the
    instance's sizes (made_params.py), first; then the ladder's, unless only the maker makes one
    (``params: ParameterSet``); the ladder's alone where there is no maker."""
    plans = [_Plan(request, owner, kind, callee, {**roles, **made}, INT_VALUE)] if made else []
    if not any(made_params.is_made(role) for role in roles.values()):
        plans.append(_Plan(request, owner, kind, callee, roles))
    return plans


def _subclass_signatures(request: ArgumentRequest, owner: type, callee: Any) -> list[ArgumentSet]:
    """An abstract class's own method, traced with ``self`` an instance of the first concrete
    subclass (subclasses.py's order) that inherits the method unchanged and that the builder
    builds: the method's own code is what runs, and the signature names the subclass
    (``self=Ant(...)``). The rungs of the next such subclass follow, tried when none of the
    first's traces (tinygp's ``Kernel.__call__``: a ``Constant`` holds a scalar, which its rank-1
    rung is not): ``_SUBCLASSES_TRIED`` subclasses at most."""
    name = request.target.qualname.rpartition(".")[2]
    raw = inspect.getattr_static(owner, name)
    candidates = subclasses.concrete_subclasses(owner, lambda sub: subclasses.inherits(sub, name, raw), private=True)
    if not candidates:
        raise Uninferable("an abstract class, and no concrete subclass in its package inherits the method")
    whys, found, built = [], [], 0
    for sub in candidates:
        try:
            found += _class_signatures(request, sub, buildable_kind(sub), callee)
        except Exception as why:  # Uninferable, or a subclass of a shape not foreseen: the next one
            whys.append(f"{sub.__name__}: {why}")
            continue
        built += 1
        if built == _SUBCLASSES_TRIED:
            return found
    if found:
        return found
    raise Uninferable(f"an abstract class, and none of its concrete subclasses that inherit the method can be "
                      f"built ({'; '.join(whys[:2])}{'; ...' if len(whys) > 2 else ''})")


def _linen_signatures(request: ArgumentRequest, owner: type, callee: Any) -> list[ArgumentSet]:
    """A linen module's method: its configuration fields as static values (a value is needed:
    its default, else the ladder's for its annotation, else a stand-in), the method's parameters
    guessed on the ladder's rungs (linen_instances.py binds the module to its variables)."""
    if callee is not request.function:
        raise Uninferable("a linen module's property")
    hints = class_hints(owner)
    configuration, shown = {}, {}
    for field in linen_instances.configuration_fields(owner):
        default = field_default(field)
        _, value = field_role(field.name, hints.get(field.name, field.type), default, True, 0)
        configuration[field.name] = built_instances.made(value)  # a StaticValue unwrapped
        if default is EMPTY:
            shown[field.name] = value
    roles = method_parameters(callee, _passed_on(request, callee))
    roles.update(inferred.by_use(request, roles, inspect.signature(callee)))  # an index its body takes with
    one_leaf = inferred.one_leaf_parameters(request, roles)
    rungs = _module_rungs(request, roles, _CONCRETE_SIZE)
    method = request.target.qualname.rpartition(".")[2]
    return [dataclasses.replace(arguments, one_leaf=one_leaf)
            for arguments in linen_instances.signatures(request, owner, method, configuration, shown, rungs)]


def _nnx_signatures(request: ArgumentRequest, owner: type, callee: Any) -> list[ArgumentSet]:
    """An nnx module's method: ``self`` made by its ``__init__`` from guessed sizes
    (nnx_instances.py), the method's parameters guessed on the ladder's rungs, symbolic, then of
    the guessed size."""
    if callee is not request.function:
        raise Uninferable("an nnx module's property")
    reader = containers.Reader(inferred.definition(request), request.target.params[0])
    roles = method_parameters(callee, _passed_on(request, callee), reader=reader)
    roles.update(inferred.by_use(request, roles, inspect.signature(callee)))
    one_leaf = inferred.one_leaf_parameters(request, roles)
    rungs = _module_rungs(request, roles, nnx_instances.SIZE, need_array=False)  # its variables may be the inputs
    return [dataclasses.replace(arguments, one_leaf=one_leaf)
            for arguments in nnx_instances.signatures(request, owner, rungs)]


def _module_rungs(request: ArgumentRequest, roles: dict[str, Any], size: int, need_array: bool = True
                  ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The method's parameters on each rank: (with the symbolic ``n``, with ``n`` = ``size``);
    Uninferable where ``need_array`` and none is an array."""
    ranks, rungs, seen = inferred.ranks_used(request), [], set()
    for rank in range(MAX_RANK + 1):
        shapes = {name: max(rank, ranks.get(name, 0)) for name, role in roles.items() if _ranked(role)}
        if tuple(sorted(shapes.items())) in seen or any(r > MAX_BODY_RANK for r in shapes.values()):
            continue
        seen.add(tuple(sorted(shapes.items())))
        rungs.append(tuple({name: role_value(role, (n,) * shapes.get(name, 0), n, rank) for name, role in roles.items()}
                           for n in (inferred.symbolic_size(), size)))
    if need_array and not any(has_abstract(symbolic) for symbolic, _ in rungs):
        raise Uninferable("the method's parameters take no array")
    return rungs


@dataclasses.dataclass
class _Plan:
    """One method's roles and how its signatures are made from them."""

    request: ArgumentRequest
    owner: type
    kind: str
    callee: Any
    roles: dict[str, Any]  # "self.<field>" and the method's parameters
    # The arrays' size where a value its class made holds the instance's sizes (made_params.py:
    # a static int field's); else the symbolic ``n``.
    size: int | None = None

    def rungs(self, absent: frozenset[str]) -> list[ArgumentSet]:
        """Rank 0, 1, 2 (never lower than the body shows), the fields in ``absent`` None; none
        when no value is an abstract array."""
        roles, ranks = self.roles, inferred.ranks_used(self.request)
        n = inferred.symbolic_size() if self.size is None else self.size
        nested = any(is_instance(role) for role in roles.values())
        found, seen = [], set()
        for rank in range(MAX_RANK + 1):
            shapes = {name: (n,) * max(rank, ranks.get(name, 0)) for name, role in roles.items() if _ranked(role)}
            # An instance's fields take the rung's rank whatever the other shapes are.
            key = (rank if nested else 0, tuple(sorted(shapes.items(), key=lambda item: item[0])))
            if key in seen or any(len(shape) > MAX_BODY_RANK for shape in shapes.values()):
                continue
            seen.add(key)
            values = {name: None if name.startswith("self.") and name[5:] in absent
                      else made_state.value(role, n, rank) if made_state.is_made(role)
                      else made_params.value(role, n, rank) if made_params.is_made(role)
                      else role_value(role, shapes.get(name, ()), n, rank) for name, role in roles.items()}
            if not has_abstract(values) and not any(made_params.is_made(role) for role in roles.values()):
                return []
            try:
                found.append(self._signature(values))
            except made_params.NotMade as why:  # the class's maker refused this rung's instance
                note = f"not made by its class: {why}"
                self.request.notes += [] if note in self.request.notes else [note]
        return found

    def _signature(self, values: dict[str, Any]) -> ArgumentSet:
        self_name = self.request.target.params[0]
        fields = {name[5:]: value for name, value in values.items() if name.startswith("self.")}
        arguments = made_params.evaluated({self_name: _built(self.owner, self.kind, fields),
                                           **{name: value for name, value in values.items()
                                              if not name.startswith("self.")}}, self_name)
        call = built_instances.built_then_called(self.callee, self_name) \
            if any(isinstance(v, InstanceFields) for v in arguments.values()) else None
        if any(isinstance(v, init_states.MadeState) for v in arguments.values()):
            call = init_states.then_called(self.callee, self_name)  # its class's init makes the state first
        if call is None and self.callee is not self.request.function:
            call = self.callee  # a property: its getter
        built = (self_name, *(name for name, role in self.roles.items()
                              if (is_instance(role) or made_state.is_made(role) or made_params.is_made(role))
                              and "." not in name))
        return ArgumentSet(SOURCE, (), arguments, call=call, built=built,
                           chosen_sizes=self.size is not None or descriptions.holds_description(arguments))

    def instance(self, arguments: ArgumentSet) -> Any:
        """``self`` in ``arguments``."""
        return arguments.kwargs[self.request.target.params[0]]


def _co_mapped(request: ArgumentRequest, owner: type, kind: str, callee: Any) -> dict[str, Any]:
    """Another instance of ``owner`` for each parameter the body maps over beside ``self``
    (co_mapped.py); none for a plain class, which is no pytree."""
    if kind == plain_classes.KIND:
        return {}
    names = co_mapped.co_mapped(inferred.definition(request), callee)
    role = instance_role(owner, 0) if names else None
    return {name: role for name in names} if role is not None else {}


def _passed_on(request: ArgumentRequest, callee: Any) -> dict[str, Any]:
    """The roles of the method's parameters that its body passes on (passed_on.py): a function's
    stand-in, and, for one the ladder cannot guess, a loop's carry or an unpacked tuple."""
    definition = inferred.definition(request)
    found = {name: ("static", stand_in) for name, stand_in in passed_on.stand_ins(definition, callee, {}).items()}
    try:
        params = list(inspect.signature(callee).parameters.values())[1:]
    except (TypeError, ValueError):
        return found
    for param in params:
        if param.name in found or param.default is not param.empty or param.annotation is not param.empty \
                or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        try:
            inferred.role(param, by_members=True)
        except Uninferable:
            role = passed_on.value_role(definition, callee, param.name)
            if role is not None:
                found[param.name] = role
    return found


def _ranked(role: Any) -> bool:
    """A role of _RANKED, a tuple of arrays (usage.py), a dict of arrays (containers.py) or a
    made-up object (made_up.py): inferred.ranked's."""
    return role in _RANKED or inferred.ranked(role)


def _built(owner: type, kind: str, fields: dict[str, Any]) -> Any:
    if kind == plain_classes.KIND:
        return plain_classes.built(owner, fields)
    return built_instances.built(owner, kind, fields)
