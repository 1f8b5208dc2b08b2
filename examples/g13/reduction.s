# Sum of 64 u32 per threadgroup through threadgroup memory: every thread
# stores its element, then a tree of halving steps (s = 32, 16, .., 1) adds
# tg[tid + s] into tg[tid] for tid < s, with a barrier after each step. The
# step loop is uniform; its exit runs through the exec-mask stack.
# u0_u1 = input (64 per threadgroup), u2_u3 = one sum per threadgroup.
get_sr r1, sr80 (thread_position_in_grid.x)
get_sr r2, sr48 (thread_position_in_threadgroup.x)
get_sr r9, sr0 (threadgroup_position_in_grid.x)
device_load 0, i32, x, r3, u0_u1, r1, unsigned
wait 0
threadgroup_store i32, x, r3, 0, r2l
threadgroup_barrier
mov_imm r5, 32, 0b0
push_exec r0l, 1
while_icmp r0l, ugt, r5, 0, 1
step:
if_icmp r0l, ult, r2, r5, 1
iadd r6, r2, r5
threadgroup_load i32, x, r7, 0, r6l
threadgroup_load i32, x, r8, 0, r2l
wait 0
iadd r8, r8, r7
threadgroup_store i32, x, r8, 0, r2l
pop_exec r0l, 1
threadgroup_barrier
asr r5, r5, 1
while_icmp r0l, ugt, r5, 0, 1
jmp_exec_any step
pop_exec r0l, 1
if_icmp r0l, ueq, r2, 0, 1
threadgroup_load i32, x, r7, 0, r2l
wait 0
device_store 0, i32, x, r7, u2_u3, r9, unsigned, 0
pop_exec r0l, 1
stop
