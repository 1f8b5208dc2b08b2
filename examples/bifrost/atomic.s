# Atomic counter: every thread adds gid + 1 to one global word
# (*ATOM_C.i32 with +ATOM_CX: address from the FMA sources, operand in the
# staging register) and also increments a second word by one.
# Uniform pair u0 = the counters.
clause_0:
ds(0) nbb next_atomic
{
    *MOV.i32 t0, 0x00000001
    +IADD.s32 r0:t1, r60, t
}
clause_2:
ds(0) nbb atomic next_atomic
{
    *ATOM_C.i32.aadd t0, u0.w0, u0.w1, r0
    +ATOM_CX t1, r0, u0.w0, u0.w1, @r0
}
clause_3:
ds(0) nbb next_atomic
{
    *MOV.i32 t0, u0.w0
    +NOP t1
    *MOV.i32 r1:t0, 0x00000001
    +IADD.s32 r0:t1, t0, 0x00000004
    *NOP t0
    +NOP t1
}
clause_6:
ds(0) eos atomic
{
    *ATOM_C_RETURN.i32.aadd t0, r0, u0.w1, r1
    +ATOM_CX t1, r1, r0, u0.w1, @r1
}
