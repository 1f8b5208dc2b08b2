.fvec arr[16]
.alias w arr[3].wzyx
.alias negR5 -r5.x
.proc main
    mova a0.xy, v0
    add r0, arr[a0.x+4].xyzw, r1
    mul r1, arr[a0.y+15], r0.x
    mov r2, arr[aL+1].w
    mov r3, w
    mov r4, w.x
    mov r5, -w.yx
    mov r6, negR5
    mov r7.xyz, arr[7].xyzw
    mov r8, c10[a0.x+1]
    end
.end
