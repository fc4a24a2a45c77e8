"""The cache from Python: statistics, warm-up, bundles exported and imported, and tuning:
compile_only without a GPU, and a user family tuned with Python callables as its runner and
check (on tests/fake_cuda, which simulates the times)."""
import os
import tarfile

from _support import AXPY, needs_fake, ptxjit


def test_warm_compiles_a_list_and_says_what_it_refused(tmp_path):
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path, compile_worker="none") as ctx:
        result = ctx.warm(["reduce tpb=64", "reduce tpb=64 batch=2", "reduce tpb=3"],
                          threads=2)
        assert (result["count"], result["compiled"], result["refused"]) == (3, 2, 1)
        bad = result["items"][2]
        assert bad["status"] == "PTXJIT_ERR_PARAM" and "tpb" in bad["message"]
        again = ctx.warm(["reduce tpb=64"])
        assert again["items"][0]["origin"] in ("memory", "disk")
        assert ctx.cache_stats()["entries"] >= 2


def test_a_bundle_carries_entries_to_another_cache(tmp_path):
    bundle = tmp_path / "cache.tar"
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path / "a") as ctx:
        key = ctx.kernel("reduce", tpb=64).key
        stats = ctx.cache_export(bundle, families=["reduce"])
        assert stats["entries"] >= 1
    assert tarfile.is_tarfile(bundle)
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path / "b") as ctx:
        assert ctx.cache_import(bundle)["entries"] >= 1
        k = ctx.kernel("reduce", tpb=64)
        assert k.origin == "disk" and k.key == key
        assert ctx.cache_clear() >= 1
    try:
        with ptxjit.Context(use_gpu=False, cache_dir=tmp_path / "c") as ctx:
            ctx.cache_import(tmp_path / "missing.tar")
    except ptxjit.FileError as error:
        assert isinstance(error, OSError)
    else:
        raise AssertionError("a missing bundle imported")


def test_tune_compile_only_compiles_the_space_without_a_gpu(tmp_path):
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path, compile_worker="none") as ctx:
        result = ctx.tune("reduce", "n=1048576", space={"tpb": [128, 256]},
                          fixed="variant=vectorized batch=4", compile_only=True, threads=2)
        assert result.candidate_count == 2 and result.winner is None
        assert all(c["status"] == "PTXJIT_OK" for c in result.candidates)


def test_a_user_family_tunes_through_python_run_and_check_callables(tmp_path):
    needs_fake()
    with ptxjit.Context(cache_dir=tmp_path, templates=[("axpy.cu", AXPY)],
                        compile_worker="none") as ctx:
        x = ctx.array([1.0] * 256)
        runs, checks, progress = [], [], []

        def run(kernel, stream):
            runs.append(kernel.params)
            tpb = int(kernel.params.split("=")[1])
            kernel(256 // tpb, tpb, 2.0, x, x, 256, stream=stream)

        def check(kernel, stream):
            checks.append(kernel.params)
            if kernel.params == "tpb=64":
                raise ValueError("wrong answer at 3")
            return kernel.params != "tpb=128"

        result = ctx.tune("axpy", "n=256", run=run, check=check,
                          progress=lambda done, total, params: progress.append(done))
        assert result.winner == "tpb=256" and progress
        by_params = {c["params"]: c for c in result.candidates}
        assert "wrong answer at 3" in by_params["tpb=64"]["message"]
        assert "False" in by_params["tpb=128"]["message"]
        assert {"tpb=64", "tpb=128", "tpb=256"} <= set(runs)
        assert os.path.exists(result.record_path or "") or result.record_path is None
        records = ctx.tune_list()
        assert any(r["family"] == "axpy" for r in records)
        auto = ctx.kernel("axpy", tpb="auto", problem="n=256")
        assert auto.params == "tpb=256"
        assert ctx.tune_clear() >= 1


def test_a_failing_runner_excludes_every_candidate_with_its_message(tmp_path):
    needs_fake()
    with ptxjit.Context(cache_dir=tmp_path, templates=[("axpy.cu", AXPY)],
                        compile_worker="none") as ctx:
        def run(kernel, stream):
            raise RuntimeError("no launch today")
        try:
            ctx.tune("axpy", "n=1", run=run)
        except ptxjit.Error as error:
            assert "no launch today" in str(error) or error.status_name
        else:
            raise AssertionError("a tuning with no candidate that ran succeeded")
