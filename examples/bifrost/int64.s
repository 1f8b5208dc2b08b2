# 64-bit integer addition inside a clause: c[i] = a[i] + b[i] (u64), the
# low words with IADD, the carry with ICMP.u32 (i1: a_lo > sum_lo), the high words with IADDC.
# Uniform pairs: u0 = a, u1 = b, u2 = c.
clause_0:
ds(0) nbb load
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:3
    +LOAD.i64 t1, t, u0.w1, @r0
}
clause_1:
ds(0) nbb load
{
    *SHADDXL.u32 t0, u1.w0, r60, shift:3
    +LOAD.i64 t1, t, u1.w1, @r2
}
clause_2:
ds(0) eos store
{
    *NOP t0
    +IADD.s32 r4:t1, r0, r2
    *NOP t0
    +ICMP.u32.gt t1, r0, t1
    *IADDC.i32 r5:t0, r1, r3, t1
    +NOP t1
    *SHADDXL.u32 t0, u2.w0, r60, shift:3
    +STORE.i64 t1, t, u2.w1, @r4
}
