; .gsh fixed cN cStart count (the 3-operand form): uniforms from c24, the
; fixed vertex array at c8; a dummy output sets the merge flag
.gsh fixed c24 c8 3
.fvec scale
.out pos position
.out clr color
.out - dummy o4
.proc main
    mova a0.x, v0
    mov pos, c8[a0.x]
    mov r0, c9[a0.x]
    mul clr, scale, r0
    setemit 0, prim
    emit
    end
.end
