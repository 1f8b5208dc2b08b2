# c[i] = a[i] + b[i] (f32), one thread per element.
# u0_u1 = a, u2_u3 = b, u4_u5 = c (64-bit device addresses).
# gpurc asm --isa g13 examples/g13/vector_add.s
get_sr r1, sr80 (thread_position_in_grid.x)
device_load 0, i32, x, r2, u0_u1, r1, unsigned
device_load 0, i32, x, r3, u2_u3, r1, unsigned
wait 0
fadd32 r4, r2, r3
device_store 0, i32, x, r4, u4_u5, r1, unsigned, 0
stop
