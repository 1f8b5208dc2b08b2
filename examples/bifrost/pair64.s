# 64-bit clause arithmetic (header message type 15, printed "64"): in such a
# clause every register operand is a pair rN:rN+1 (N even) and each instruction
# runs once on the low words and once on the high words (docs/bifrost.md
# "64-bit clauses"); an FAU source reads the uniform pair's word 0 for the low
# half and word 1 for the high half.
#   c[i] = (a[i].x * b[i].x + k.x, a[i].y * b[i].y + k.y)
#   d[i] = (max(a[i].x, b[i].x), max(a[i].y, b[i].y)),  e[i] = a[i] + b[i] as two u32 adds
# Uniform pairs: u0 = a, u1 = b, u2 = c, u3 = k (two f32), u4 = d, u5 = e.
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
ds(0) nbb 64 regs64
{
    *FMA.f32 r4:t0, r0, r2, u3.w0
    +NOP t1
    *NOP t0
    +FMAX.f32 r6:t1, r0, r2
    *MOV.i32 t0, r0
    +IADD.u32 r8:t1, t, r2
}
clause_3:
ds(0) nbb store
{
    *SHADDXL.u32 t0, u2.w0, r60, shift:3
    +STORE.i64 t1, t, u2.w1, @r4
}
clause_4:
ds(0) nbb store
{
    *SHADDXL.u32 t0, u4.w0, r60, shift:3
    +STORE.i64 t1, t, u4.w1, @r6
}
clause_5:
ds(0) eos store
{
    *SHADDXL.u32 t0, u5.w0, r60, shift:3
    +STORE.i64 t1, t, u5.w1, @r8
}
