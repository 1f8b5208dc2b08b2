; descriptor sharing: unused components stay free
.fvec u[4]
.proc main
    mov r0.x, u[0].yzwx
    mov r1.xy, u[1].wz
    rcp r2, u[2].y
    rsq r3.z, u[3].wxyz
    dp3 r4, u[0].xyzx, r1.zyxw
    dph r5, r1.xyzx, u[1]
    mova a0.x, r0.yxzw
    mova a1, r0.wwzz
    mova a01, r1
    mova a0.xy, r1.zy
    cmp u[2].xy, lt, ge, r0.zw
    max r6.w, -r0, r1.xyzw
    min r6.yz, r0.yzwx, -r1
    flr r7.xz, u[1]
    ex2 r8, -r0.x
    lg2 r8, r0.xxxx
    litp r9, r0
    dst r9, r0, r1
    dp4 r10, -u[1], r2
    add r11.y, r0.xxxx, r1.wwww
    mov r12, -r0.yxzw
    sge r13.x, r1, r0
    slt r13.y, r1.y, r0.z
    end
.end
