# A counted loop: acc = sum of i for i = 0 .. gid+2, out[gid] = acc.
# r0 = acc, r1 = iterations left, r2 = i (registers start at zero).
# Uniform pair u0 = out.
clause_0:
ds(0) nbb
{
    *NOP t0
    +IADD.s32 r1:t1, r60, 0x00000003
}
clause_2:
ds(0) nbb
{
    *NOP t0
    +IADD.s32 r0:t1, r0, r2
    *NOP t0
    +IADD.s32 r2:t1, r2, 0x00000001
    *NOP t0
    +ISUB.s32 r1:t1, r1, 0x00000001
    *NOP t0
    +BRANCHZ.i32.ne t1, t1, clause_2
}
clause_6:
ds(0) eos store
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +STORE.i32 t1, t, u0.w1, @r0
}
