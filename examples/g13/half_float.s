# 16-bit float arithmetic on halves of registers:
#   d[i] = a[i] * b[i] + a[i]   (fmadd16, one rounding)
#   e[i] = (a[i] + b[i]) * 0.5  (fadd16 then fmul16, two roundings)
# f16 elements; u0_u1 = a, u2_u3 = b, u4_u5 = d, u6_u7 = e.
get_sr r1, sr80 (thread_position_in_grid.x)
device_load 0, f16, x, r2l, u0_u1, r1, unsigned
device_load 0, f16, x, r2h, u2_u3, r1, unsigned
wait 0
fmadd16 r3l, r2l, r2h, r2l
fadd16 r3h, r2l, r2h
fmul16 r3h, r3h, 0.5
device_store 0, f16, x, r3l, u4_u5, r1, unsigned, 0
device_store 0, f16, x, r3h, u6_u7, r1, unsigned, 0
stop
