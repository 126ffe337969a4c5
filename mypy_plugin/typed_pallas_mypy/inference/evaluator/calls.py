"""``call``: what calling a value does, with its arguments bound as Python binds them.

A function's parameters are bound to the arguments (positional, keyword, defaults,
``*args`` as a tuple, ``**kwargs`` as a dict; unknown where a splat hides them) and its
body runs in a new frame whose parent is the frame it closes over: the values it may
return, the kernels it runs on every path that returns, and what it may raise. A
generator function's call gives a generator; its body runs when it is iterated. A bound
method passes its receiver first; a class builds an instance and runs ``__init__`` (a
dataclass's or ``NamedTuple``'s fields bound from the arguments; an enum class called
with a value gives its member); an instance runs its class's ``__call__``; a
``functools.partial`` adds its arguments; a kernel runs. A library callable is a row of
a table (``library``). A call of several values calls each: a kernel runs on every path
when each of them runs it.

What it does not do: evaluate expressions or run statements (the machine's other parts).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING

from typed_pallas_mypy.inference import jax_api
from typed_pallas_mypy.inference.evaluator import dispatch, evidence, kinds, library
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    ARRAY,
    NONE,
    NOTHING,
    UNKNOWN,
    BoundMethod,
    ClassDecorator,
    ClassObj,
    Const,
    Container,
    ContainerMethod,
    Context,
    ContextManagerFactory,
    Derivative,
    Descriptor,
    DeviceKind,
    External,
    Flow,
    Frame,
    FunctionObj,
    Fusion,
    GeneratorObj,
    InstanceObj,
    Jaxpr,
    Keeper,
    Kernel,
    Outcome,
    Partial,
    Registrar,
    Transformed,
    Value,
    VSet,
    both_ran,
    join,
    next_serial,
    vset,
)
from typed_pallas_mypy.inference.evaluator.expressions import defines, exact_items
from typed_pallas_mypy.inference.evaluator.machine import MAX_CALL_DEPTH
from typed_pallas_mypy.inference.evaluator.statements import Exit

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine


class Calls:
    """The call cases of the evaluator (one ``Machine`` each)."""

    def __init__(self, machine: Machine) -> None:
        self.m = machine

    # ---------------------------------------------------------------- the entry

    def call(
        self,
        callee: VSet,
        args: list[VSet],
        keywords: dict[str, VSet],
        flow: Flow,
        *,
        star_unknown: bool = False,
        kw_unknown: bool = False,
        site: ast.Call | None = None,
        frame: Frame | None = None,
    ) -> VSet:
        """Call each value ``callee`` may be; update ``flow``; what the call may return."""
        if not flow.live:
            return NOTHING
        outcomes = [
            self.call_one(
                value,
                args,
                keywords,
                star_unknown=star_unknown,
                kw_unknown=kw_unknown,
                site=site,
                frame=frame,
            )
            for value in callee
        ]
        if not outcomes:
            return ANYTHING
        live = [o for o in outcomes if o.live]
        may = set(flow.may_ran)
        raised: list[VSet] = []
        for o in outcomes:
            may |= o.may_ran
            if o.raised:
                raised.append(o.raised)
        flow.may_ran = frozenset(may)
        if raised and frame is not None:
            self.m.statements.may_raise(join(*raised), frame, flow, ends=not live)
        if not live:
            flow.live = False
            return NOTHING
        ran = live[0].ran
        for o in live[1:]:
            ran = both_ran(ran, o.ran)
        flow.ran = flow.ran | ran
        flow.may_ran = flow.may_ran | ran
        return join(*(o.returns for o in live))

    def call_one(
        self,
        value: Value,
        args: list[VSet],
        keywords: dict[str, VSet],
        *,
        star_unknown: bool = False,
        kw_unknown: bool = False,
        site: ast.Call | None = None,
        frame: Frame | None = None,
    ) -> Outcome:
        m = self.m
        m.tick()
        if value is UNKNOWN:
            return Outcome(returns=ANYTHING, raised=ANYTHING)
        if isinstance(value, FunctionObj):
            return self.run_function(value, args, keywords, star_unknown, kw_unknown)
        if isinstance(value, BoundMethod):
            return self.call_one(
                value.function,
                [vset(value.receiver), *args],
                keywords,
                star_unknown=star_unknown,
                kw_unknown=kw_unknown,
                site=site,
                frame=frame,
            )
        if isinstance(value, ClassObj):
            meta = value.meta
            if meta is not None and defines(meta, "__call__"):
                # ``Meta.__call__(cls, ...)`` decides what calling the class does
                method = m.expressions.class_attribute(
                    meta, meta, "__call__", Flow(), instance=value
                )
                return self._outcome_of(method, args, keywords, star_unknown, kw_unknown)
            return self.instantiate(value, args, keywords, star_unknown, kw_unknown)
        if isinstance(value, InstanceObj):
            if isinstance(value.cls, ClassObj):
                m.called_instance(value)
                flow = Flow()
                method = m.expressions.class_attribute(
                    value.cls, value.cls, "__call__", flow, instance=value
                )
                return self._outcome_of(method, args, keywords, star_unknown, kw_unknown)
            return Outcome(returns=ANYTHING)
        if isinstance(value, Partial):
            merged = dict(value.keywords)
            merged.update(keywords)
            return self._outcome_of(
                value.func,
                [*value.args, *args],
                merged,
                star_unknown,
                kw_unknown,
                site=site,
                frame=frame,
            )
        if isinstance(value, Transformed):
            if value.keeper in jax_api.JAXPR_MAKERS:
                # ``jax.make_jaxpr(f)(x)``: f is traced, nothing lowered; a jaxpr of it
                given = None if star_unknown or kw_unknown or keywords else tuple(args)
                return Outcome(returns=vset(Jaxpr(value.func, given)))
            if value.keeper in jax_api.CUSTOM_DERIVATIVES and m.differentiating:
                # differentiated, it runs its rules instead of its body
                return self._derivative_rules(value, args, keywords, star_unknown, kw_unknown)
            if value.keeper in jax_api.CUSTOM_BATCHING and m.batching:
                # batched, it runs its batching rule; its body is traced for its shapes
                # only, never lowered: not followed
                return self._batching_rule(value, args, star_unknown)
            row = jax_api.row(value.keeper)
            if row is not None and row.fusion_operands and not star_unknown:
                # ``fuser.fusible(f)(*args)``: ``f(*in_fusions, output_fusions)``
                args = [*(vset(Fusion(a)) for a in args), vset(NONE)]
            differentiates = int(value.keeper in jax_api.DIFFERENTIATING)
            batches = int(value.keeper in jax_api.BATCHING)
            transposes = int(value.keeper in jax_api.TRANSPOSING)
            interprets = int(value.keeper in jax_api.INTERPRET_CONTEXTS)
            # a context decorating a function runs it inline, not in a primitive of JAX's
            traced = value.keeper.startswith("jax.") and jax_api.context(value.keeper) is None
            m.differentiating += differentiates
            m.batching += batches
            m.transposing += transposes
            m.interpreting += interprets
            try:
                outcome = self._outcome_of(
                    value.func,
                    args,
                    keywords,
                    star_unknown,
                    kw_unknown,
                    returns=library.transformed_returns(value),
                    site=site,
                    frame=frame,
                )
                # a function JAX traces for its transformation runs inside a primitive
                return library.nested(outcome) if traced else outcome
            finally:
                m.differentiating -= differentiates
                m.batching -= batches
                m.transposing -= transposes
                m.interpreting -= interprets
        if isinstance(value, Derivative):
            return self._derivative(value)
        if isinstance(value, Jaxpr):
            # evaluating a jaxpr lowers what its function traced, with what it traced it
            given = value.args
            outcome = self._outcome_of(
                value.func, list(given or ()), {}, given is None, given is None
            )
            return library.nested(dataclasses.replace(outcome, returns=ANYTHING))
        if isinstance(value, Fusion):
            return Outcome(returns=value.value)
        if isinstance(value, dispatch.Dispatcher):
            chosen = dispatch.candidates(value, args, star_unknown)
            return self._outcome_of(
                chosen, args, keywords, star_unknown, kw_unknown, site=site, frame=frame
            )
        if isinstance(value, dispatch.Register):
            return dispatch.register(m, value, args)
        if isinstance(value, Context):
            # a context manager decorating a function (``@jax.named_scope("n")``)
            if args:
                return Outcome(returns=vset(Transformed(value.fullname, args[0])))
            return Outcome(returns=ANYTHING)
        if isinstance(value, Kernel):
            if value.awaits_body:
                proofs = value.proofs + (evidence.body_proofs(m, args[0]) if args else ())
                applied = dataclasses.replace(value, awaits_body=False, proofs=proofs)
                return Outcome(returns=vset(applied))
            if m.interpreting and value.interpret is not True:
                value = dataclasses.replace(value, interpret=True)  # lowers anywhere
            return Outcome(returns=vset(ARRAY), ran=frozenset({value}), may_ran=frozenset({value}))
        if isinstance(value, Keeper):
            if args:
                return Outcome(returns=vset(Transformed(value.keeper, args[0])))
            return Outcome(returns=ANYTHING)
        if isinstance(value, Registrar):
            m.rules.setdefault(value.owner, {})[value.method] = (list(args), dict(keywords))
            if m.calling:
                m.rule_sites[(value.owner, value.method)] = m.calling[-1][:2]
            return Outcome(returns=args[0] if args else vset(Const(None)))
        if isinstance(value, Descriptor):
            return self._outcome_of(value.func, args, keywords, star_unknown, kw_unknown)
        if isinstance(value, ClassDecorator):
            for arg in args[:1]:
                for cls in arg:
                    if isinstance(cls, ClassObj) and value.dataclass:
                        library.make_dataclass(cls)
            return Outcome(returns=args[0] if args else ANYTHING)
        if isinstance(value, ContextManagerFactory):
            made = self._outcome_of(value.func, args, keywords, star_unknown, kw_unknown)
            for gen in made.returns:
                if isinstance(gen, GeneratorObj):
                    gen.attrs["__cm__"] = vset(Const(True))
            return made
        if isinstance(value, ContainerMethod):
            return library.container_method(self.m, value, args, keywords)
        if isinstance(value, DeviceKind) and value.method and not keywords:
            return Outcome(returns=kinds.method_call(value, args))
        if isinstance(value, External):
            return library.call_external(
                m, value.fullname, args, keywords, star_unknown, kw_unknown, site, frame
            )
        if isinstance(value, Const) and value.value is None:
            return Outcome(live=False, raised=vset(External("builtins.TypeError")))
        return Outcome(returns=ANYTHING)

    def _batching_rule(
        self, function: Transformed, args: list[VSet], star_unknown: bool
    ) -> Outcome:
        """A ``custom_vmap`` function called under ``jax.vmap``: JAX runs its rule
        (``def_vmap``) with the axis size, which arguments are batched, and the batched
        arguments (as the evaluator holds them: what the mapped function was given), one
        batching level down; the function gives the rule's first result."""
        m = self.m
        rule = m.rules.get(function, {}).get("def_vmap")
        if rule is None:
            return Outcome(returns=ANYTHING)
        given, named = rule
        found = given[0] if given else named.get("vmap_rule")
        if found is None:
            return Outcome(returns=ANYTHING)
        m.batching -= 1
        try:
            outcome = self._outcome_of(found, [ANYTHING, ANYTHING, *args], {}, star_unknown, False)
        finally:
            m.batching += 1
        pair = exact_items(outcome.returns)
        returns = pair[0] if pair else ANYTHING
        return library.nested(dataclasses.replace(outcome, returns=returns))

    def _derivative(self, value: Derivative) -> Outcome:
        """A derivative callable called (``pullback(ct)``): the derivative of its function
        is lowered now, the rules a ``jax.vjp`` / ``jax.linearize`` call deferred
        included, with what JAX passes it (not known)."""
        m = self.m
        deferring, m.deferring = m.deferring, 0
        m.differentiating += 1
        m.transposing += int(value.transposes)
        try:
            outcome = self._outcome_of(value.func, [], {}, True, True)
        finally:
            m.deferring = deferring
            m.differentiating -= 1
            m.transposing -= int(value.transposes)
        return library.nested(dataclasses.replace(outcome, returns=ANYTHING))

    def _derivative_rules(
        self,
        function: Transformed,
        args: list[VSet],
        keywords: dict[str, VSet],
        star_unknown: bool,
        kw_unknown: bool,
    ) -> Outcome:
        """A ``custom_vjp`` / ``custom_jvp`` function called under differentiation: JAX
        runs the rules registered on it, not its body (``fwd`` with the call's arguments,
        and ``bwd`` in reverse mode; the ``jvp`` rule with the primals), one level of
        differentiation down (a rule calling the function runs its body). Nothing is
        known of what they return."""
        m = self.m
        rules = m.rules.get(function)
        if not rules:
            return Outcome(returns=ANYTHING)
        m.ran_rules_of(function)
        ran: frozenset[Kernel] = frozenset()
        may: frozenset[Kernel] = frozenset()
        m.differentiating -= 1
        try:
            for method, (given, named) in rules.items():
                runs: list[tuple[VSet, list[VSet], bool]] = []  # (rule, arguments, any more)
                if method == "defvjp":
                    fwd = given[0] if given else named.get("fwd")
                    bwd = given[1] if len(given) > 1 else named.get("bwd")
                    if fwd is not None:
                        runs.append((fwd, list(args), star_unknown))
                    if bwd is not None:
                        outcome = self._outcome_of(bwd, [], {}, True, True)
                        may = may | outcome.may_ran | outcome.ran
                        if m.transposing:
                            ran = ran | outcome.ran
                elif method == "defjvp" and given:
                    primals = Container("tuple")
                    primals.items = list(args)
                    primals.exact = not star_unknown
                    runs.append((given[0], [vset(primals), ANYTHING], False))
                elif method == "defjvps":
                    runs.extend((rule, [], True) for rule in given)
                # under jax.vjp / jax.linearize a jvp rule's tangent work is deferred to the
                # callable they return: what the rule runs may be lowered, not must
                deferred = m.deferring > 0 and method != "defvjp"
                for rule, rule_args, more in runs:
                    outcome = self._outcome_of(rule, rule_args, {}, more, more or kw_unknown)
                    if not deferred:
                        ran = ran | outcome.ran
                    may = may | outcome.may_ran | outcome.ran
        finally:
            m.differentiating += 1
        return Outcome(returns=ANYTHING, ran=ran, may_ran=may)

    def _outcome_of(
        self,
        callee: VSet,
        args: list[VSet],
        keywords: dict[str, VSet],
        star_unknown: bool,
        kw_unknown: bool,
        returns: VSet | None = None,
        *,
        site: ast.Call | None = None,
        frame: Frame | None = None,
    ) -> Outcome:
        """Calling ``callee`` as one outcome (a set of callees joined); ``site`` and
        ``frame``: the call that does it, where it is."""
        flow = Flow()
        result = self.call(
            callee,
            args,
            keywords,
            flow,
            star_unknown=star_unknown,
            kw_unknown=kw_unknown,
            site=site,
            frame=frame,
        )
        return Outcome(
            returns=result if returns is None else returns,
            ran=flow.ran,
            may_ran=flow.may_ran,
            live=flow.live,
        )

    def bind_first(self, function: FunctionObj, receiver: Value) -> BoundMethod:
        return BoundMethod(function, receiver)

    # ---------------------------------------------------------------- functions

    def bind(
        self,
        fn: FunctionObj,
        args: list[VSet],
        keywords: dict[str, VSet],
        star_unknown: bool,
        kw_unknown: bool,
    ) -> dict[str, VSet] | None:
        """The parameters of ``fn`` bound to the arguments; None when they cannot bind
        (a ``TypeError``)."""
        spec = fn.node.args
        positional = [*spec.posonlyargs, *spec.args]
        bound: dict[str, VSet] = {}
        defaults_start = len(positional) - len(fn.defaults)
        remaining = list(args)
        for i, param in enumerate(positional):
            if remaining:
                bound[param.arg] = remaining.pop(0)
            elif param.arg in keywords and i >= len(spec.posonlyargs):
                bound[param.arg] = keywords[param.arg]
            elif star_unknown or kw_unknown:
                bound[param.arg] = ANYTHING
            elif i >= defaults_start:
                bound[param.arg] = fn.defaults[i - defaults_start]
            else:
                return None
        if spec.vararg is not None:
            rest = Container("tuple")
            rest.items = remaining
            if star_unknown:
                rest.exact = False
                rest.loose = ANYTHING
            bound[spec.vararg.arg] = vset(rest)
        elif remaining and not star_unknown:
            return None
        for param in spec.kwonlyargs:
            if param.arg in keywords:
                bound[param.arg] = keywords[param.arg]
            elif kw_unknown:
                bound[param.arg] = ANYTHING
            elif param.arg in fn.kw_defaults:
                bound[param.arg] = fn.kw_defaults[param.arg]
            else:
                return None
        names = {p.arg for p in positional[len(spec.posonlyargs) :]} | {
            p.arg for p in spec.kwonlyargs
        }
        extra = {k: v for k, v in keywords.items() if k not in names}
        if spec.kwarg is not None:
            rest_kw = Container("dict")
            rest_kw.entries = [(Const(k), v) for k, v in extra.items()]
            if kw_unknown:
                rest_kw.exact = False
                rest_kw.loose = ANYTHING
            bound[spec.kwarg.arg] = vset(rest_kw)
        elif extra and not kw_unknown:
            return None
        return bound

    def run_function(
        self,
        fn: FunctionObj,
        args: list[VSet],
        keywords: dict[str, VSet],
        star_unknown: bool,
        kw_unknown: bool,
    ) -> Outcome:
        m = self.m
        bound = self.bind(fn, args, keywords, star_unknown, kw_unknown)
        if bound is None:
            return Outcome(live=False, raised=vset(External("builtins.TypeError")))
        m.enter(fn)
        if fn.is_generator:
            return Outcome(returns=vset(GeneratorObj(fn, bound)))
        if m.depth >= MAX_CALL_DEPTH or sum(1 for f in m.active if f is fn) >= 2:
            return Outcome(returns=ANYTHING)
        key: object = (
            fn,
            tuple(args),
            tuple(sorted(keywords.items(), key=lambda kv: kv[0])),
            star_unknown,
            kw_unknown,
            m.mode(),
        )
        try:
            cached = m.memo.get(key)
        except TypeError:  # an argument that cannot be a key
            cached, key = None, None
        if cached is not None:
            return cached
        since = next_serial()
        outcome = self._run_bound(fn, bound)
        if (
            key is not None
            and not m.unfinished
            and not _returns_new_mutable(outcome.returns, since)
        ):
            m.memo[key] = outcome
        return outcome

    def _run_bound(self, fn: FunctionObj, bound: dict[str, VSet]) -> Outcome:
        m = self.m
        receiver = NOTHING
        positional = [*fn.node.args.posonlyargs, *fn.node.args.args]
        if positional and fn.owner is not None:
            receiver = bound.get(positional[0].arg, NOTHING)
        frame = Frame(
            bound, fn.module, fn.closure, function=fn, receiver=receiver, qualname=fn.qualname
        )
        if isinstance(fn.node, ast.Lambda):
            flow = Flow()
            m.depth += 1
            m.active.append(fn)
            try:
                value = m.expressions.evaluate(fn.node.body, frame, flow)
            finally:
                m.depth -= 1
                m.active.pop()
            return Outcome(returns=value, ran=flow.ran, may_ran=flow.may_ran, live=flow.live)
        return self._run_body(fn, frame)

    def _run_body(self, fn: FunctionObj, frame: Frame) -> Outcome:
        m = self.m
        flow = Flow()
        m.depth += 1
        m.active.append(fn)
        try:
            assert not isinstance(fn.node, ast.Lambda)
            exit_ = m.statements.run_body(fn.node.body, frame, flow, returns=Exit())
        finally:
            m.depth -= 1
            m.active.pop()
        return _outcome(exit_, flow)

    def run_generator(self, gen: GeneratorObj) -> Outcome:
        """A generator's body run: what it yields, and the kernels run before its first
        ``yield`` on every path that yields."""
        m = self.m
        if gen.function is None or gen.bound is None:
            return Outcome(returns=ANYTHING)
        fn = gen.function
        if m.depth >= MAX_CALL_DEPTH:
            return Outcome(yields=ANYTHING)
        frame = Frame(dict(gen.bound), fn.module, fn.closure, function=fn, qualname=fn.qualname)
        return self._run_body(fn, frame)

    # ---------------------------------------------------------------- classes

    def instantiate(
        self,
        cls: ClassObj,
        args: list[VSet],
        keywords: dict[str, VSet],
        star_unknown: bool,
        kw_unknown: bool,
    ) -> Outcome:
        m = self.m
        if "enum" in cls.flags:
            return library.enum_member(cls, args)
        instance = InstanceObj(cls)
        instance.made_at = m.made_here()
        if cls.fields is not None and not defines(cls, "__init__"):
            given = list(args)
            for name, default in cls.fields:
                if given:
                    instance.attrs[name] = given.pop(0)
                elif name in keywords:
                    instance.attrs[name] = keywords[name]
                elif star_unknown or kw_unknown:
                    instance.attrs[name] = ANYTHING
                elif default is not None:
                    instance.attrs[name] = library.field_default(m, default)
                else:
                    return Outcome(live=False, raised=vset(External("builtins.TypeError")))
            for hook in ("__post_init__", "__attrs_post_init__"):
                if defines(cls, hook):  # the generated ``__init__`` calls it last
                    flow = Flow()
                    method = m.expressions.class_attribute(cls, cls, hook, flow, instance=instance)
                    ran = self._outcome_of(method, [], {}, False, False)
                    return Outcome(
                        returns=vset(instance), ran=ran.ran, may_ran=ran.may_ran, live=ran.live
                    )
            return Outcome(returns=vset(instance))
        if "exception" in cls.flags:
            holder = Container("tuple")
            holder.items = list(args)
            instance.attrs["args"] = vset(holder)
        flow = Flow()
        made = Outcome()
        if defines(cls, "__new__"):
            # ``cls.__new__(cls, ...)`` makes the object; ``__init__`` runs on it only when
            # it is an instance of ``cls``
            new = m.expressions.class_attribute(cls, cls, "__new__", flow, instance=None)
            made = self._outcome_of(new, [vset(cls), *args], keywords, star_unknown, kw_unknown)
            mine = [v for v in made.returns if isinstance(v, InstanceObj) and v.cls is cls]
            if not made.live or len(made.returns) != 1 or not mine:
                return made
            instance = mine[0]
        if instance.store is None and instance.cls is cls:
            instance.store = library.builtin_store(
                cls, given=bool(args or keywords or star_unknown or kw_unknown)
            )
        init = m.expressions.class_attribute(cls, cls, "__init__", flow, instance=instance)
        if init == ANYTHING or all(isinstance(v, External) for v in init):
            return Outcome(returns=vset(instance), ran=made.ran, may_ran=made.may_ran)
        outcome = self._outcome_of(init, args, keywords, star_unknown, kw_unknown)
        return Outcome(
            returns=vset(instance),
            ran=made.ran | outcome.ran,
            may_ran=made.may_ran | outcome.may_ran,
            live=outcome.live,
        )

    def enter(self, managers: VSet, flow: Flow) -> VSet:
        """What ``with manager as x`` binds ``x`` to (and run ``__enter__``)."""
        out: list[VSet] = []
        for manager in managers:
            if isinstance(manager, GeneratorObj):
                outcome = self.run_generator(manager)
                flow.may_ran = flow.may_ran | outcome.may_ran
                if outcome.yield_ran is not None:
                    flow.ran = flow.ran | outcome.yield_ran
                out.append(outcome.yields or ANYTHING)
            elif isinstance(manager, InstanceObj) and isinstance(manager.cls, ClassObj):
                method = self.m.expressions.class_attribute(
                    manager.cls, manager.cls, "__enter__", flow, instance=manager
                )
                out.append(self.call(method, [], {}, flow))
            else:
                out.append(ANYTHING)
        return join(*out) if out else ANYTHING


def _outcome(exit_: Exit, flow: Flow) -> Outcome:
    """A body's outcome from its exits (falling off the end returns ``None``)."""
    returns = list(exit_.returns)
    if flow.live:
        returns.append((vset(Const(None)), flow.ran, flow.may_ran))
    may: set[Kernel] = set(flow.may_ran)
    for _, _, more in returns:
        may |= more
    raised = join(*(r for r, _, _ in exit_.raises)) if exit_.raises else NOTHING
    yield_ran: frozenset[Kernel] | None = None
    yield_items: list[VSet] = []
    if exit_.yields:
        for value, ran in exit_.yields:
            yield_ran = ran if yield_ran is None else both_ran(yield_ran, ran)
            yield_items.append(value)
    outcome = Outcome(
        returns=join(*(v for v, _, _ in returns)) if returns else NOTHING,
        live=bool(returns),
        may_ran=frozenset(may),
        raised=raised,
        yields=join(*yield_items) if yield_items else NOTHING,
        yield_ran=yield_ran,
    )
    if returns:
        ran = returns[0][1]
        for _, more, _ in returns[1:]:
            ran = both_ran(ran, more)
        outcome.ran = ran
    if exit_.yields and not exit_.branched_yield and len(yield_items) <= 16:
        # the items one iteration gives, in order: no yield ran on one of several ways,
        # so the one path yields them all
        outcome.extra["yield_items"] = yield_items
        outcome.extra["yield_rans"] = [ran for _, ran in exit_.yields]
    return outcome


def _returns_new_mutable(values: VSet, since: int) -> bool:
    """Whether ``values`` hold a list, dict, set or instance made after serial ``since``
    (in a tuple too): each call makes a new one (``def table(): return []``), so the
    call's outcome is not the next call's."""
    for value in values:
        if not isinstance(value, (Container, InstanceObj)) or value.serial < since:
            continue
        if not isinstance(value, Container) or value.kind != "tuple":
            return True
        if any(_returns_new_mutable(item, since) for item in value.items):
            return True
    return False
