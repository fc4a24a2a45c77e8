"""Context(on_event=...): the library's events as dicts, from Python. A cold request, a memory
hit and a disk hit from a fresh context, in order with their tiers; a tuning search's start,
progress and end; a callback that raises (reported, the request unharmed); one that keeps its
context alive through a cycle (collected without a call after the close); events from many
threads at once; ctx.explain, why a request would miss."""
import gc
import sys
import threading

from _support import AXPY, ptxjit


def _open(tmp_path, seen, **options):
    return ptxjit.Context(use_gpu=False, cache_dir=tmp_path / "cache", process_cache=False,
                          templates=[("axpy", AXPY)], compile_worker="none",
                          on_event=seen.append, **options)


def test_a_cold_request_then_a_memory_hit_then_a_disk_hit(tmp_path):
    seen = []
    with _open(tmp_path, seen) as ctx:
        key = ctx.kernel("axpy", tpb=128).key
        kinds = [e["kind"] for e in seen]
        assert kinds == ["request_start", "compile_start", "compile_end", "request_end"]
        end = seen[-1]
        assert end["tier"] == "compile" and end["status"] == "PTXJIT_OK"
        assert end["family"] == "axpy" and end["params"] == "tpb=128" and end["key"] == key
        assert end["ms"] > 0 and end["stage_ms"][3] > 0
        del seen[:]
        ctx.kernel("axpy", "tpb=128 ")  # another spelling: not Python's memo, the context's
        assert [(e["kind"], e["tier"]) for e in seen] == [("request_start", "none"),
                                                          ("request_end", "memory")]
    seen.clear()
    with _open(tmp_path, seen) as ctx:
        ctx.kernel("axpy", tpb=128)
        assert [(e["kind"], e["tier"]) for e in seen] == [("request_start", "none"),
                                                          ("request_end", "disk")]
        seen.clear()
        try:
            ctx.kernel("axpy", tpb=3)
        except ptxjit.ParamError:
            pass
        assert seen[-1]["kind"] == "request_end" and seen[-1]["status"] == "PTXJIT_ERR_PARAM"
        assert seen[-1]["tier"] == "none" and seen[-1]["key"] == ""


def test_a_tuning_search_tells_start_progress_and_end(tmp_path):
    seen = []
    with _open(tmp_path, seen) as ctx:
        ctx.tune("axpy", "n=1000", compile_only=True, threads=2)
    tune = [e for e in seen if e["kind"].startswith("tune_")]
    assert tune[0]["kind"] == "tune_start" and tune[0]["detail"] == "n=1000"
    assert [e["done"] for e in tune[1:-1]] == [1, 2, 3]
    assert all(e["total"] == 3 for e in tune[1:-1])
    assert tune[-1]["kind"] == "tune_end" and tune[-1]["status"] == "PTXJIT_OK"
    assert tune[-1]["total"] == 3 and tune[-1]["params"] == ""


def test_a_callback_that_raises_is_reported_and_the_request_goes_on(tmp_path):
    calls = []
    unraisable = []

    def broken(event):
        calls.append(event["kind"])
        raise RuntimeError("observer bug")

    hook = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        with ptxjit.Context(use_gpu=False, cache_dir=tmp_path, templates=[("axpy", AXPY)],
                            on_event=broken) as ctx:
            assert ctx.kernel("axpy", tpb=64).ptx
    finally:
        sys.unraisablehook = hook
    assert calls[0] == "request_start" and calls[-1] == "request_end"
    assert len(unraisable) == len(calls)
    assert isinstance(unraisable[0].exc_value, RuntimeError)


def test_on_event_must_be_callable(tmp_path):
    try:
        ptxjit.Context(use_gpu=False, cache_dir=tmp_path, on_event=42)
    except TypeError as error:
        assert "on_event" in str(error)
    else:
        raise AssertionError("a non-callable on_event was taken")


def test_a_cycle_through_the_callback_is_collected(tmp_path):
    class Holder:
        pass

    holder = Holder()
    holder.seen = []
    holder.ctx = ptxjit.Context(use_gpu=False, cache_dir=tmp_path, templates=[("axpy", AXPY)],
                                on_event=lambda e: holder.seen.append(e["kind"]))
    holder.ctx.kernel("axpy", tpb=64)
    seen = holder.seen
    assert seen[-1] == "request_end"
    del holder
    gc.collect()
    assert seen[-1] == "request_end"  # nothing told after the context went


def test_events_from_many_threads(tmp_path):
    seen = []
    lock = threading.Lock()

    def on_event(event):
        with lock:
            seen.append((threading.get_ident(), event["kind"], event["params"]))

    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path, templates=[("axpy", AXPY)],
                        on_event=on_event) as ctx:
        tpbs = [32, 64, 128, 256, 512, 1024]
        threads = [threading.Thread(target=ctx.kernel, args=("axpy",), kwargs={"tpb": t})
                   for t in tpbs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    ends = {params for _, kind, params in seen if kind == "request_end"}
    assert ends == {f"tpb={t}" for t in tpbs}
    assert sum(kind == "compile_end" for _, kind, _ in seen) == len(tpbs)


def test_explain_names_what_differs_from_the_nearest_entry(tmp_path):
    with ptxjit.Context(use_gpu=False, cache_dir=tmp_path, templates=[("axpy", AXPY)]) as ctx:
        ctx.kernel("axpy", tpb=128)
        hit = ctx.explain("axpy", "tpb=128")
        assert hit.startswith("key ") and "disk: hit" in hit and "family axpy\n" in hit
        miss = ctx.explain("axpy", "tpb=128", "-lineinfo")
        assert "disk: miss" in miss and "    option -lineinfo added\n" in miss
        try:
            ctx.explain("axpy", "tpb=3")
        except ptxjit.ParamError as error:
            assert "tpb" in str(error)
        else:
            raise AssertionError("a bad request was explained")
