; picasso warns and goes on: arbitrary destination swizzle, unknown setemit flag
.gsh point c0
.out p position
.proc main
    mov r0.yx, r1
    mov p.wzyx, r0
    setemit 1, prim sparkle
    emit
    end
.end
