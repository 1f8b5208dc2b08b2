# Divergent branch and reconvergence: x = a[gid]; odd gid: y = x + x,
# even gid: y = x + 100; then out[gid] = y + 1 (all lanes together again).
# Uniform pairs: u0 = a, u1 = out.
clause_0:
ds(0) nbb load
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +LOAD.i32 t1, t, u0.w1, @r0
}
clause_1:
ds(0) nbb
{
    *LSHIFT_AND.i32 t0, r60, 0x00000001, #0
    +BRANCHZ.i32.eq t1, t, clause_5
}
clause_3:
ds(0) nbb
{
    *FADD.f32 r1:t0, r0, r0
    +JUMP t1, clause_7
}
clause_5:
ds(0) nbb next_store
{
    *FADD.f32 r1:t0, r0, 0x42c80000
    +NOP t1
}
clause_7:
ds(0) eos store
{
    *FADD.f32 r2:t0, r1, 0x3f800000
    +NOP t1
    *SHADDXL.u32 t0, u1.w0, r60, shift:2
    +STORE.i32 t1, t, u1.w1, @r2
}
