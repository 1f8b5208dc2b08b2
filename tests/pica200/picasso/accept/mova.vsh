.fvec u
.proc main
    mova a0, v0
    mova a0.x, r1
    mova a1, u.yx
    mova a0.y, r2.w
    mova a01, r3
    mova a0.xy, u.zw
    mov r0, u[a0.x]
    mov r0, u[a1]
    mov r0, u[a2]
    mov r0, u[lcnt]
    mov r0, u[a0.y+3]
    mov r0, u[a0+2]
    end
.end
