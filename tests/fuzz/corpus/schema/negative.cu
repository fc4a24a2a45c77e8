//@ptxjit family f
//@ptxjit entry e
//@ptxjit param n int(-5..5) pow2 default=1
//@ptxjit constraint "-n - -3 <= 10 % (n + 7)" "m"
