"""Kernels without a GPU: PTX, source, cubin and its resources, parameter layouts, user
templates from strings and directories, compile options, compile errors with their log, and
the memo that answers a repeated request."""
import os
import time

from _support import AXPY, BROKEN, SCALARS, ptxjit


def test_a_kernel_has_ptx_source_cubin_and_the_canonical_params():
    with ptxjit.Context(use_gpu=False) as ctx:
        k = ctx.kernel("reduce", variant="vectorized", tpb=256, batch=8)
        assert k.family == "reduce" and k.params == "batch=8 dtype=i32 tpb=256 variant=vectorized"
        assert ".entry reduce_kernel" in k.ptx and ".maxntid 256" in k.ptx
        assert "#define TPB 256" in k.source or "TPB = 256" in k.source
        assert k.cubin[:4] == b"\x7fELF" and len(k.key) == 32
        assert k.entries == ("reduce_kernel",)
        assert k.origin in ("compiled", "disk")
        assert isinstance(k.sass, (str, type(None)))


def test_keywords_and_a_params_string_give_one_kernel():
    with ptxjit.Context(use_gpu=False) as ctx:
        a = ctx.kernel("reduce", "tpb=256 batch=8")
        b = ctx.kernel("reduce", tpb=256, batch=8)
        c = ctx.kernel("reduce", "tpb=256", batch=8)
        assert a is b is c


def test_resources_come_from_the_cubin():
    with ptxjit.Context(use_gpu=False) as ctx:
        k = ctx.kernel("softmax", dtype="bf16")
        r = k.resources
        assert 0 < r["registers"] <= 255 and r["max_threads"] == 256
        assert r["param_bytes"] == 28 and r["spill_stores"] == 0 and r["local_bytes"] == 0
        assert k.resources_for("softmax_kernel") == r


def test_the_param_layout_gives_offsets_sizes_and_ptx_types():
    with ptxjit.Context(use_gpu=False, templates=[("axpy.cu", AXPY)]) as ctx:
        layout = ctx.kernel("axpy").param_layout()
        assert [(p["offset"], p["size"], p["type"]) for p in layout] == \
            [(0, 4, "f32"), (8, 8, "u64"), (16, 8, "u64"), (24, 8, "u64")]


def test_a_template_from_a_string_becomes_a_family():
    with ptxjit.Context(use_gpu=False) as ctx:
        ctx.add_template("axpy.cu", AXPY)
        assert "axpy" in ctx.families()
        info = ctx.info("axpy")
        assert info["origin"] == "memory:axpy.cu" and info["doc"].startswith("y = a*x")
        k = ctx.kernel("axpy", tpb=128)
        assert ".maxntid 128" in k.ptx
        # Replacing the template changes what the same request gives.
        ctx.add_template("axpy.cu", AXPY.replace("a * x[i] + y[i]", "a * x[i] - y[i]"))
        assert ctx.kernel("axpy", tpb=128).key != k.key


def test_templates_from_a_directory_and_compile_options(tmp_path):
    (tmp_path / "axpy.cu").write_text(AXPY.replace("a * x[i]", "SCALE * a * x[i]"))
    with ptxjit.Context(use_gpu=False, templates=[tmp_path]) as ctx:
        assert ctx.info("axpy")["origin"] == str(tmp_path / "axpy.cu")
        k = ctx.kernel("axpy", compile_options="-DSCALE=3")
        assert k.compile_options == "-DSCALE=3"
        try:
            ctx.kernel("axpy")
        except ptxjit.CompileError as error:
            assert "SCALE" in error.log
        else:
            raise AssertionError("SCALE undefined compiled")


def test_a_compile_error_carries_the_log_the_source_and_the_line():
    with ptxjit.Context(use_gpu=False, templates=[("broken.cu", BROKEN)]) as ctx:
        try:
            ctx.kernel("broken")
        except ptxjit.CompileError as error:
            assert "undeclared_name" in error.log and "undeclared_name" in error.source
            assert error.line == 5 and error.status_name == "PTXJIT_ERR_COMPILE"
        else:
            raise AssertionError("a broken template compiled")


def test_a_template_that_does_not_parse_is_a_template_error():
    with ptxjit.Context(use_gpu=False) as ctx:
        try:
            ctx.add_template("bad.cu", "//@ptxjit family bad\n//@ptxjit param x int(5..1)\n")
        except ptxjit.TemplateError as error:
            assert error.status_name == "PTXJIT_ERR_TEMPLATE"
        else:
            raise AssertionError("accepted")


def test_the_specialized_source_is_there_without_compiling():
    with ptxjit.Context(use_gpu=False, templates=[("broken.cu", BROKEN)]) as ctx:
        assert "undeclared_name" in ctx.specialize("broken")


def test_a_repeated_request_is_answered_from_memory_in_a_microsecond():
    with ptxjit.Context(use_gpu=False) as ctx:
        ctx.kernel("softmax", dtype="bf16", tpb=256)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(10000):
                ctx.kernel("softmax", dtype="bf16", tpb=256)
            best = min(best, (time.perf_counter() - start) / 10000)
        assert best < 5e-6, f"{best * 1e6:.2f} us per memory hit"  # ~0.2 us measured


def test_entries_and_layouts_of_a_two_entry_kernel():
    with ptxjit.Context(use_gpu=False, templates=[("scalars.cu", SCALARS)]) as ctx:
        k = ctx.kernel("scalars")
        assert k.entries == ("scalars_kernel", "second_kernel")
        types = [p["type"] for p in k.param_layout()]
        assert types[:5] == ["u64", "u32", "u64", "f32", "f64"]
        assert k.param_layout()[5]["size"] == 8
        assert [p["size"] for p in k.param_layout("second_kernel")] == [8]
        try:
            k.param_layout("third")
        except ptxjit.ParamError as error:
            assert "second_kernel" in str(error)
        else:
            raise AssertionError("an unknown entry accepted")


def test_the_disk_cache_answers_a_new_context(tmp_path):
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path) as ctx:
        first = ctx.kernel("reduce", tpb=128)
        assert first.origin == "compiled"
        key = first.key
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path) as ctx:
        again = ctx.kernel("reduce", tpb=128)
        assert again.origin == "disk" and again.key == key
        stats = ctx.cache_stats()
        assert stats["entries"] >= 1 and stats["hits"] >= 1
        assert os.path.isdir(ctx.cache_dir)


def test_include_dirs_reach_the_compile(tmp_path):
    headers = tmp_path / "include"
    headers.mkdir()
    (headers / "scale.cuh").write_text("#define SCALE 5\n")
    template = AXPY.replace("extern", '#include "scale.cuh"\nextern').replace(
        "a * x[i]", "SCALE * a * x[i]")
    with ptxjit.Context(use_gpu=False, templates=[("axpy.cu", template)],
                        include_dirs=[headers]) as ctx:
        k = ctx.kernel("axpy")
        assert k.compile_options == f"-I{headers}"
