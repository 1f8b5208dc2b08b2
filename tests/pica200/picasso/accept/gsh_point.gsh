.gsh point c4
.fvec proj[4]
.fvec size
.constf k(1.0, -1.0, 0.0, 0.5)
.out outPos position
.out outClr color
.out - dummy o5
.proc main
    mov r0, v0
    dp4 outPos.x, proj[0], r0
    mov outClr, size
    setemit 0
    emit
    setemit 1, prim inv
    emit
    end
.end
