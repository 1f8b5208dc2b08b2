; automatic inverted forms; sgei/slti/dphi/dsti/madi spelled explicitly
.fvec c_a, c_b
.proc main
    sgei r0, r1, r2
    slti r0, r1, r2
    sgei r0, r1, c_a
    slt r0, r1, c_b
    dph r0, r1, c_a
    dphi r0, r1, r2
    dst r0, r1, c_a
    dsti r0, c_a, r1
    sge r0, c_a[a0.x], r1
    sge r0, r1, c_a[a0.y]
    mad r0, r1, r2, c_a
    madi r0, r1, c_a, r2
    mad r0, r1, r2, r3
    mad r0, v1, c_a[a0.x], r2
    mad r0, r1, r2, c_b[aL]
    mad r0.xy, -r1.x, r2.yx, -c_b.w
    end
.end
