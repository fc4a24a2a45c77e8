//@ptxjit family f
//@ptxjit doc free text "with quotes"
//@ptxjit entry e
//@ptxjit entry g
//@ptxjit param s enum(x32B,64B) default=64B
//@ptxjit constraint "s == 64B" "must be \"64B\""
