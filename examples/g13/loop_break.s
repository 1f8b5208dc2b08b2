# Linear search with a break: each thread looks for its key in a 16-entry
# table and leaves the loop at the first match by writing r0l (depth 2 inside
# the if, so the if's pop_exec leaves it at 1 = out of the loop) and
# re-evaluating the exec mask with pop_exec 0.
#   idx = 99; for (j = 0; j < 16; j++) if (table[j] == key[i]) { idx = j; break; }
#   out[i] = idx; steps[i] = j (iterations the thread ran past its match)
# u0_u1 = key, u2_u3 = table, u4_u5 = out, u6_u7 = steps.
get_sr r1, sr80 (thread_position_in_grid.x)
device_load 0, i32, x, r3, u0_u1, r1, unsigned
wait 0
mov_imm r4, 0, 0b0
mov_imm r6, 99, 0b0
mov_imm r10, 500, 0b0
push_exec r0l, 1
while_icmp r0l, ult, r4, 16, 1
loop:
device_load 0, i32, x, r5, u2_u3, r4, unsigned
wait 0
if_icmp r0l, ueq, r5, r3, 1
iadd r6, r4, 0
mov_imm r0l, 2
pop_exec r0l, 0
iadd r6, r6, r10
pop_exec r0l, 1
iadd r4, r4, 1
while_icmp r0l, ult, r4, 16, 1
jmp_exec_any loop
pop_exec r0l, 1
device_store 0, i32, x, r6, u4_u5, r1, unsigned, 0
device_store 0, i32, x, r4, u6_u7, r1, unsigned, 0
stop
