# Divergent loop: thread gid runs (gid & 7) * 8 + 1 iterations of an integer
# hash step, so the lanes of a guest warp leave the loop at different times.
clause_0:
ds(0) nbb
{
    *LSHIFT_AND.i32 t0, r60, 0x00000007, #0
    +NOP t1
    *LSHIFT_OR.i32 t0, t0, 0x00000001, 0x00000003
    +MOV.i32 r1:t1, t
    *NOP t0
    +MOV.i32 r0:t1, r60
}
clause_3:
ds(0) nbb
{
    *IMUL.i32 t0, r0, 0x9e3779b1
    +NOP t1
    *LSHIFT_XOR.i32 t0, t0, #0, #0
    +IADD.s32 t1, t, r1
    *RSHIFT_XOR.i32 t0, t1, t1, 0x0000000d
    +ISUB.s32 r1:t1, r1, 0x00000001
    *MOV.i32 r0:t0, t0
    +BRANCHZ.i32.ne t1, t1, clause_3
}
clause_8:
ds(0) eos store
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +STORE.i32 t1, t, u0.w1, @r0
}
