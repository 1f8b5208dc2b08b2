# The reciprocal and reciprocal-square-root sequences for G71 (no FRCP/FRSQ):
# table estimate, mantissa/exponent split, one Newton-Raphson step in
# FMA_RSCALE (Mesa's lowering of the seed's algorithms).
#   rcp:  x1 = FRCP_APPROX a; m = FREXPM a; e = FREXPE -a
#         t = FMA_RSCALE.n(m, -x1, 1.0, 0); rcp = FMA_RSCALE(t, x1, x1, e)
#   rsq:  x1 = FRSQ_APPROX a; m = FREXPM.sqrt a; e = FREXPE.sqrt -a
#         s = x1 * x1; t = FMA_RSCALE.n(m, -s, 1.0, -1); rsq = FMA_RSCALE.n(t, x1, x1, e)
# Uniform pairs: u0 = a, u1 = rcp out, u2 = rsq out.
clause_0:
ds(0) nbb load
{
    *SHADDXL.u32 t0, u0.w0, r60, shift:2
    +LOAD.i32 t1, t, u0.w1, @r0
}
clause_1:
ds(0) nbb store
{
    *FREXPM.f32 t0, r0
    +FRCP_APPROX.f32 t1, r0
    *FMA_RSCALE.f32.n t0, t0, t1.neg, 0x3f800000, #0
    +MOV.i32 r1:t1, t1
    *MOV.i32 t0, t0
    +FREXPE.f32 t1, r0.neg
    *FMA_RSCALE.f32 r2:t0, t0, r1, r1, t1
    +NOP t1
    *SHADDXL.u32 t0, u1.w0, r60, shift:2
    +STORE.i32 t1, t, u1.w1, @r2
}
clause_5:
ds(0) eos store
{
    *FREXPM.f32.sqrt r3:t0, r0
    +FRSQ_APPROX.f32 t1, r0
    *FMA.f32 t0, t1, t1, #0
    +MOV.i32 r1:t1, t1
    *FMA_RSCALE.f32.n t0, r3, t0.neg, 0x3f800000, 0xffffffff
    +FREXPE.f32.sqrt t1, r0.neg
    *FMA_RSCALE.f32.n r2:t0, t0, r1, r1, t1
    +NOP t1
    *SHADDXL.u32 t0, u2.w0, r60, shift:2
    +STORE.i32 t1, t, u2.w1, @r2
}
