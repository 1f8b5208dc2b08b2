# 64-bit accumulation: sum[i] = a[8i] + .. + a[8i+7] as u64 (carries into the
# high register of the pair r6_r7). u0_u1 = a (u32), u2_u3 = sum (u64).
get_sr r1, sr80 (thread_position_in_grid.x)
iadd r8, r1, r1
iadd r8, r8, r8
iadd r8, r8, r8
mov_imm r6, 0, 0b0
mov_imm r7, 0, 0b0
mov_imm r4, 0, 0b0
push_exec r0l, 1
while_icmp r0l, ult, r4, 8, 1
loop:
iadd r9, r8, r4
device_load 0, i32, x, r5, u0_u1, r9, unsigned
wait 0
iadd r6_r7, r6_r7, r5
iadd r4, r4, 1
while_icmp r0l, ult, r4, 8, 1
jmp_exec_any loop
pop_exec r0l, 1
device_store 0, i32, xy, r6_r7, u2_u3, r1, unsigned, lsl 1, 0
stop
