# Arithmetic: 64 iterations of an FMA/ADD chain per thread, result to out[gid].
clause_0:
ds(0) nbb
{
    *MOV.i32 t0, 0x00000040
    +MOV.i32 r1:t1, t
}
clause_2:
ds(0) nbb
{
    *FMA.f32 t0, r0, 0x3f7ff000, 0x3dcccccd
    +FADD.f32 t1, t, r0
    *FMA.f32 t0, t1, t1, #0
    +FMIN.f32 t1, t, 0x42c80000
    *FMA.f32 t0, t1, 0x3f7ff000, 0x3dcccccd
    +FADD.f32 r0:t1, t, t1
    *NOP t0
    +ISUB.s32 r1:t1, r1, 0x00000001
    *NOP t0
    +BRANCHZ.i32.ne t1, t1, clause_2
}
clause_8:
ds(0) eos store
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +STORE.i32 t1, t, u0.w1, @r0
}
