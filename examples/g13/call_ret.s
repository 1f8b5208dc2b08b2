# A subroutine called twice: call leaves the return address in r1, ret r1
# jumps back.  f(v) = 2v + 7, so out[i] = f(f(x[i])) = 4x + 21 (mod 2^32).
# u0_u1 = x, u2_u3 = out.
get_sr r2, sr80 (thread_position_in_grid.x)
device_load 0, i32, x, r3, u0_u1, r2, unsigned
wait 0
call twice_plus_7
call twice_plus_7
device_store 0, i32, x, r3, u2_u3, r2, unsigned, 0
stop
twice_plus_7:
iadd r3, r3, r3
iadd r3, r3, 7
ret r1
