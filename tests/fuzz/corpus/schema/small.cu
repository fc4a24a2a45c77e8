//@ptxjit family scale
//@ptxjit entry scale_kernel
//@ptxjit param factor int(1..100) default=3 doc="x"
//@ptxjit param mode enum(a,b,c32) default=b when="factor > 2 && factor % 2 == 1"
//@ptxjit param t dtype(f16,bf16,f32) default=f32
//@ptxjit constraint "(factor * bytes(t)) / 2 < 400 || !(mode == c32) || sm >= 90" "msg"
extern "C" __global__ void scale_kernel(int *x) {}
