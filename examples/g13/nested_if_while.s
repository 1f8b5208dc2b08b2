# Nested if/else and a while loop on the exec-mask stack (r0l):
#   y = x < 100 ? (x < 50 ? x + 1000 : x + 2000) : 7
#   t = x; n = 0; while (t >= 8) { t -= 3; n += 1; }
#   out_y[i] = y; out_n[i] = n; out_t[i] = t
# u0_u1 = x, u2_u3 = out_y, u4_u5 = out_n, u6_u7 = out_t.
get_sr r1, sr80 (thread_position_in_grid.x)
device_load 0, i32, x, r2, u0_u1, r1, unsigned
wait 0
mov_imm r10, 1000, 0b0
mov_imm r11, 2000, 0b0
if_icmp r0l, ult, r2, 100, 1
if_icmp r0l, ult, r2, 50, 1
iadd r3, r2, r10
else_fcmp r0l, eq, 0.0, 0.0, 1
iadd r3, r2, r11
pop_exec r0l, 1
else_fcmp r0l, eq, 0.0, 0.0, 1
mov_imm r3, 7, 0b0
pop_exec r0l, 1
mov_imm r4, 0, 0b0
iadd r5, r2, 0
push_exec r0l, 1
while_icmp r0l, ugte, r5, 8, 1
loop:
isub r5, r5, 3
iadd r4, r4, 1
while_icmp r0l, ugte, r5, 8, 1
jmp_exec_any loop
pop_exec r0l, 1
device_store 0, i32, x, r3, u2_u3, r1, unsigned, 0
device_store 0, i32, x, r4, u4_u5, r1, unsigned, 0
device_store 0, i32, x, r5, u6_u7, r1, unsigned, 0
stop
