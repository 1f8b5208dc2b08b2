# Integer hash, ALU bound: h[i] = 64 rounds of x = x * 1664525 + 1013904223;
# x ^= x + (x << 4) over x = a[i] (u32 arithmetic modulo 2^32). A uniform
# loop (every thread runs 64 rounds) with no memory access inside.
# u0_u1 = a, u2_u3 = h, u4 = 1664525, u5 = 1013904223.
get_sr r1, sr80 (thread_position_in_grid.x)
device_load 0, i32, x, r2, u0_u1, r1, unsigned
wait 0
mov_imm r5, 0, 0b0
push_exec r0l, 1
while_icmp r0l, ult, r5, 64, 1
loop:
imadd r2, r2, u4, u5
iadd r3, r2, r2, lsl 4
xor r2, r2, r3
iadd r5, r5, 1
while_icmp r0l, ult, r5, 64, 1
jmp_exec_any loop
pop_exec r0l, 1
device_store 0, i32, x, r2, u2_u3, r1, unsigned, 0
stop
