"""Families and their schemas as Python data, canonical requests, and bad requests raised as
the right exceptions (no GPU, nothing compiled)."""
from _support import ptxjit


def test_families_lists_the_built_in_four():
    with ptxjit.Context(use_gpu=False) as ctx:
        assert {"reduce", "transpose", "matmul", "softmax"} <= set(ctx.families())


def test_info_gives_each_parameter_with_kind_range_default_and_doc():
    with ptxjit.Context(use_gpu=False) as ctx:
        info = ctx.info("reduce")
        params = {p["name"]: p for p in info["params"]}
        assert info["name"] == "reduce" and info["origin"] == "built-in:reduce.cu"
        assert info["entries"] == ["reduce_kernel"]
        tpb = params["tpb"]
        assert (tpb["kind"], tpb["min"], tpb["max"], tpb["pow2"], tpb["default"]) == \
            ("int", 32, 1024, True, 512)
        variant = params["variant"]
        assert variant["kind"] == "enum" and "vectorized" in variant["values"]
        assert variant["default"] == "vectorized" and variant["doc"]
        assert params["dtype"]["kind"] == "dtype" and params["dtype"]["values"] == ["i32", "f32"]
        assert params["batch"]["when"] == "variant == batched || variant == vectorized"
        assert any("batch <= 16" in c["expression"] for c in info["constraints"])
        assert info["tune"]["tpb"] == "64..1024"


def test_info_lists_conditional_defaults_in_order():
    with ptxjit.Context(use_gpu=False) as ctx:
        tpb = next(p for p in ctx.info("softmax")["params"] if p["name"] == "tpb")
        assert tpb["default_if"][0] == {"condition": "variant == block", "value": "1024"}


def test_describe_and_canonical_fill_the_defaults():
    with ptxjit.Context(use_gpu=False) as ctx:
        assert "parameters:" in ctx.describe("transpose")
        assert ctx.canonical("reduce", "tpb=256") == \
            "batch=4 dtype=i32 tpb=256 variant=vectorized"
        assert ctx.canonical("reduce") == "batch=4 dtype=i32 tpb=512 variant=vectorized"


def test_a_bad_value_is_a_param_error_naming_the_parameter():
    with ptxjit.Context(use_gpu=False) as ctx:
        try:
            ctx.kernel("reduce", tpb=100)
        except ptxjit.ParamError as error:
            assert "tpb" in str(error) and error.status_name == "PTXJIT_ERR_PARAM"
            assert isinstance(error, ValueError) and isinstance(error, ptxjit.Error)
        else:
            raise AssertionError("tpb=100 accepted")


def test_an_unknown_family_or_parameter_is_a_param_error():
    with ptxjit.Context(use_gpu=False) as ctx:
        for call in (lambda: ctx.info("nope"), lambda: ctx.kernel("nope"),
                     lambda: ctx.kernel("reduce", "colour=red"),
                     lambda: ctx.canonical("reduce", "tpb=")):
            try:
                call()
            except ptxjit.ParamError as error:
                assert error.status in (1, 2, 3)
            else:
                raise AssertionError("accepted")


def test_keyword_values_may_be_dtypes_and_bools():
    with ptxjit.Context(use_gpu=False) as ctx:
        assert ptxjit.Context is type(ctx)
        from ptxjit._values import param_text
        assert param_text("dtype", "bfloat16") == "bf16"
        assert param_text("tpb", 256.0) == "256"
        try:
            param_text("tpb", object())
        except ptxjit.ParamError as error:
            assert "tpb" in str(error)
        else:
            raise AssertionError("accepted")


def test_plan_says_what_an_op_launches_for_a_shape():
    with ptxjit.Context(use_gpu=False) as ctx:
        request, why = ctx.plan("transpose", None, "rows=4099 cols=1001")
        assert "variant=smem" in request and why


def test_options_reach_the_context(tmp_path):
    with ptxjit.Context(use_gpu=False, arch="sm_80", cache_dir=tmp_path) as ctx:
        assert ctx.arch == "sm_80" and ctx.cache_dir.startswith(str(tmp_path))
    with ptxjit.Context(use_gpu=False, disk_cache=False) as ctx:
        assert ctx.cache_dir is None
    try:
        ptxjit.Context(use_gpu=False, compile_options="--evil")
    except ptxjit.ParamError as error:
        assert "--evil" in str(error)
    else:
        raise AssertionError("a bad compile option opened")


def test_a_closed_context_refuses_calls_and_its_kernels_too():
    ctx = ptxjit.Context(use_gpu=False)
    ctx.close()
    assert ctx.closed
    try:
        ctx.families()
    except ptxjit.Error as error:
        assert "closed" in str(error)
    else:
        raise AssertionError("a closed context answered")
    ctx.close()  # twice is fine
