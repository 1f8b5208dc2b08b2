# Cross-lane operations in a SIMD-group:
#   vote[i]  = ballot(x < 50) over the SIMD-group's threads
#   mixed[i] = x[i ^ 1] + x[first thread of the SIMD-group]
# u0_u1 = x, u2_u3 = vote, u4_u5 = mixed.
get_sr r1, sr80 (thread_position_in_grid.x)
device_load 0, i32, x, r2, u0_u1, r1, unsigned
wait 0
icmp_ballot r3, ult, r2, 50
simd_shuffle_xor r4, r2, 1
simd_shuffle r5, r2, 0
iadd r6, r4, r5
device_store 0, i32, x, r3, u2_u3, r1, unsigned, 0
device_store 0, i32, x, r6, u4_u5, r1, unsigned, 0
stop
