# c[i] = a[i] + b[i] (f32), one thread per element; i = global id x (r60).
# Uniform pairs: u0 = a, u1 = b, u2 = c (64-bit addresses, low word first).
clause_0:
ds(0) nbb load next_load
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +LOAD.i32 t1, t, u0.w1, @r0
}
clause_1:
ds(0) nbb load next_store
{
    *SHADDXL.u32 t0, u1.w0, r60, shift:2
    +LOAD.i32 t1, t, u1.w1, @r1
}
clause_2:
ds(0) eos store
{
    *FADD.f32 r2:t0, r0, r1
    +NOP t1
    *SHADDXL.u32 t0, u2.w0, r60, shift:2
    +STORE.i32 t1, t, u2.w1, @r2
}
