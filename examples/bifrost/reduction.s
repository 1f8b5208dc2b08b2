# Workgroup sum with a barrier: every thread stores a[gid] into wls[lid],
# waits at the barrier, reads the workgroup's 16 values back (four 16-byte
# wls loads) and stores their sum to out[gid]. lid = r55 (y = 0), gid = r60.
# Uniform pairs: u0 = a, u1 = out.
clause_0:
ds(0) nbb load next_store
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +LOAD.i32 t1, t, u0.w1, @r0
}
clause_1:
ds(0) nbb store next_barrier
{
    *SHADDXL.u32 t0, #0, r55, shift:2
    +STORE.i32.wls t1, t, t, @r0
}
clause_2:
ds(0) nbb barrier next_load
{
    *NOP t0
    +BARRIER t1
}
clause_3:
ds(0) nbb load next_load
{
    *MOV.i32 t0, #0
    +LOAD.i128.wls t1, t, t, @r4
}
clause_4:
ds(0) nbb load next_load
{
    *MOV.i32 t0, 0x00000010
    +LOAD.i128.wls t1, t, t, @r8
}
clause_5:
ds(0) nbb load next_load
{
    *MOV.i32 t0, 0x00000020
    +LOAD.i128.wls t1, t, t, @r12
}
clause_6:
ds(0) nbb load
{
    *MOV.i32 t0, 0x00000030
    +LOAD.i128.wls t1, t, t, @r16
}
clause_7:
ds(0) nbb next_store
{
    *FADD.f32 t0, r4, r5
    +FADD.f32 t1, t, r6
    *FADD.f32 t0, t1, r7
    +FADD.f32 t1, t, r8
    *FADD.f32 t0, t1, r9
    +FADD.f32 t1, t, r10
    *FADD.f32 t0, t1, r11
    +FADD.f32 t1, t, r12
    *FADD.f32 t0, t1, r13
    +FADD.f32 t1, t, r14
    *FADD.f32 t0, t1, r15
    +FADD.f32 t1, t, r16
    *FADD.f32 t0, t1, r17
    +FADD.f32 t1, t, r18
    *NOP t0
    +FADD.f32 r20:t1, t1, r19
}
clause_8:
ds(0) eos store
{
    *SHADDXL.u32 t0, u1.w0, r60, shift:2
    +STORE.i32 t1, t, u1.w1, @r20
}
