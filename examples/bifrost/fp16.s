# fp16 vector arithmetic on packed half pairs: x = a[gid] (two f16 values),
# y = x * x + 1.0 (both halves, one fused rounding), out[gid] = y + swap(x).
# Uniform pairs: u0 = a, u1 = out.
clause_0:
ds(0) nbb load
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +LOAD.i32 t1, t, u0.w1, @r0
}
clause_1:
ds(0) eos store
{
    *FMA.v2f16 t0, r0, r0, 0x3c003c00
    +FADD.v2f16 r1:t1, t, r0.h10
    *SHADDXL.u32 t0, u1.w0, r60, shift:2
    +STORE.i32 t1, t, u1.w1, @r1
}
