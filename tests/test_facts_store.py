"""``typed_pallas_mypy.transformers.facts_store``: the facts a module's cache keeps come
back as they were stored (a fact lost here is a finding lost in warm runs only)."""

from __future__ import annotations

import json

from typed_pallas_mypy.inference.model import Evidence
from typed_pallas_mypy.transformers.facts_store import (
    FunctionFacts,
    Requirement,
    Wrapper,
    facts_from_json,
    facts_to_json,
)


def _round_trip(facts: FunctionFacts) -> FunctionFacts:
    return facts_from_json(facts.name, json.loads(json.dumps(facts_to_json(facts))))


def test_a_wrapper_forwarding_kwargs_and_args_comes_back() -> None:
    wrapper = Wrapper(
        "jax.experimental.pallas.pallas_call",
        (("compiler_params", "params", 2),),
        7,
        kwargs="kwargs",
        args=("args", 1),
    )
    found = _round_trip(FunctionFacts("pkg.ops.call", wrapper=wrapper, where="ops.py:5"))
    assert found.wrapper == Wrapper(
        "jax.experimental.pallas.pallas_call",
        (("compiler_params", "params", 2),),
        7,
        kwargs="kwargs",
        args=("args", 1),
    )


def test_a_wrapper_without_kwargs_comes_back() -> None:
    wrapper = Wrapper("jax.experimental.pallas.pallas_call", (("kernel", "body", 0),), 3)
    found = _round_trip(FunctionFacts("pkg.ops.call", wrapper=wrapper))
    assert found.wrapper == Wrapper(
        "jax.experimental.pallas.pallas_call", (("kernel", "body", 0),), 3
    )


def test_device_parameter_positions_come_back() -> None:
    found = _round_trip(FunctionFacts("pkg.base.Op.supported_on", device_params=(1,)))
    assert found.device_params == (1,)
    assert not found.is_empty()


def test_a_function_without_facts_is_empty() -> None:
    found = _round_trip(FunctionFacts("pkg.base.helper"))
    assert found.device_params == ()
    assert found.is_empty()


def test_a_requirement_comes_back() -> None:
    requirement = Requirement(
        frozenset({"tpu"}), ("params", "tpu", "mosaic_tpu"), ("f (a.py:1) lowers only for tpu",)
    )
    found = _round_trip(FunctionFacts("pkg.a.f", requirement=requirement))
    assert found.requirement == Requirement(
        frozenset({"tpu"}), ("params", "tpu", "mosaic_tpu"), ("f (a.py:1) lowers only for tpu",)
    )


def test_a_variable_holding_a_keeping_decorator_comes_back() -> None:
    found = _round_trip(FunctionFacts("pkg.checks.jaxtyped", keeping_decorator=True))
    assert found.keeping_decorator is True
    assert not found.is_empty()


def test_body_evidence_comes_back() -> None:
    """A kernel body's evidence, as the inference records it (backends sorted)."""
    evidence = (
        Evidence(("mosaic_tpu",), "pltpu.make_async_copy", 7),
        Evidence(("mosaic_gpu", "triton"), "plgpu.some_op", 9),
    )
    found = _round_trip(FunctionFacts("pkg.k.body", evidence=evidence))
    assert found.evidence == (
        Evidence(("mosaic_tpu",), "pltpu.make_async_copy", 7),
        Evidence(("mosaic_gpu", "triton"), "plgpu.some_op", 9),
    )
    assert not found.is_empty()
